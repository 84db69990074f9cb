package dedup

import (
	"context"
	"errors"
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Every refusal in the review and export path is written to the audit log with its
// reason ("manifest.refused": the action, the reason, the manifest's hash), in a
// transaction of its own: the refused one wrote nothing.

// refusal writes err to the audit log when it refuses action on manifest m (not for an
// internal failure, nor for something not found) and returns it.
func refusal(ctx context.Context, store *db.DB, by db.User, m db.Manifest, action string, err error) error {
	if err == nil || !refuses(err) {
		return err
	}
	detail := map[string]any{"action": action, "reason": err.Error(), "manifest_hash": m.ContentHash, "state": m.State.Label()}
	if aerr := store.AuditBy(context.WithoutCancel(ctx), by, "manifest.refused", fmt.Sprintf("manifest:%d", m.ID), detail); aerr != nil {
		return fmt.Errorf("%w (and its record in the audit log failed: %w)", err, aerr)
	}
	return err
}

// refuses reports whether err is the manifest's rules saying no: a state, a stale or
// changed manifest, a conflict, separation of duties, input that does not apply.
func refuses(err error) bool {
	var (
		re *review.RefusedError
		se *review.StaleError
		oe *review.OutdatedError
		ce *review.ConflictError
		pe *review.SeparationError
		ie *review.InputError
		ke *cluster.InputError
	)
	return errors.As(err, &re) || errors.As(err, &se) || errors.As(err, &oe) || errors.As(err, &ce) || errors.As(err, &pe) ||
		errors.As(err, &ie) || errors.As(err, &ke) || errors.Is(err, review.ErrSelfApproval) || errors.Is(err, db.ErrStale) ||
		errors.Is(err, db.ErrConflict) || errors.Is(err, db.ErrSampleUndecided)
}
