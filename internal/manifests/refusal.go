package manifests

import (
	"context"
	"errors"
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/words"
)

// Every refusal in the review and export path is written to the audit log with its
// reason ("manifest.refused": the action, the reason, the manifest's hash), in a
// transaction of its own: the refused one wrote nothing.

// Action is a manifest action as the audit log names it when it is refused: one action,
// one name, whether this package or the page that posts it refuses it. A review is named
// by its verdict (Action(review.Approve), ...).
type Action string

// The actions on a manifest.
const (
	ActDecide               Action = "decide"
	ActDecideCluster        Action = "decide a cluster"
	ActMakeKeeper           Action = "make keeper"
	ActCut                  Action = "cut"
	ActComment              Action = "comment"
	ActBulkApproval         Action = "bulk approval"
	ActApproveOutsideSample Action = "approve outside the sample"
	ActUndo                 Action = "undo"
	ActRequestSignOff       Action = "request sign-off"
	ActSetApprovals         Action = "set approvals"
	ActPrepareAgain         Action = "prepare again"
	ActRequestAudit         Action = "request an audit"
	ActExport               Action = "export"
	ActRevoke               Action = "revoke"
	ActRestore              Action = "restore"
)

// refusal writes err to the audit log when it refuses action on manifest m (not for an
// internal failure, nor for something not found) and returns it, marked as recorded.
func refusal(ctx context.Context, store *db.DB, by db.User, m db.Manifest, action Action, err error) error {
	if err == nil || !refuses(err) {
		return err
	}
	return RecordRefusal(ctx, store, by, m, action, err.Error(), err)
}

// recorded marks a refusal written to the audit log already.
type recorded struct{ error }

func (r recorded) Unwrap() error { return r.error }

// Recorded reports whether err is a refusal already written to the audit log.
func Recorded(err error) bool {
	var r recorded
	return errors.As(err, &r)
}

// RecordRefusal writes a refusal of action on manifest m to the audit log with reason
// (what the person was told), unless err was recorded already, and returns err marked
// as recorded. The pages call it for what they refuse themselves (a malformed form).
//
// The state logged is the manifest's as the refusal saw it, read again after the
// refused transaction: m was read before it, and after a race (another export in
// between) its state would contradict the reason ("exported already; state: signed
// off"). If the read fails, m's is logged. The hash stays m's: the one acted on.
func RecordRefusal(ctx context.Context, store *db.DB, by db.User, m db.Manifest, action Action, reason string, err error) error {
	if Recorded(err) {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	if now, rerr := store.Manifest(ctx, m.ID); rerr == nil {
		m.State = now.State
	}
	// The reason may quote what someone typed; the log keeps it for good, so long values are cut.
	detail := map[string]any{"action": string(action), "reason": words.ClipQuoted(reason), "manifest_hash": m.ContentHash, "state": m.State.Label()}
	if aerr := store.AuditBy(ctx, by, "manifest.refused", fmt.Sprintf("manifest:%d", m.ID), detail); aerr != nil {
		return fmt.Errorf("%w (and its record in the audit log failed: %w)", err, aerr)
	}
	return recorded{err}
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
