package manifests

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// CodeVersion is the version a manifest records: the build's version (set with
// -ldflags) and, when the binary was built from a repository, its commit and whether
// the work tree was modified.
func CodeVersion(version string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev == "" {
		return version
	}
	return version + " (" + rev[:min(12, len(rev))] + modified + ")"
}

// RequestSignOff sends a draft to review once every removal has a decision and nothing
// changed under it since its run.
func RequestSignOff(ctx context.Context, store *db.DB, by db.User, m db.Manifest) error {
	return refusal(ctx, store, by, m, ActRequestSignOff, store.RequestSignOff(ctx, by, m.ID))
}

// Review records an approver's verdict on the manifest as they saw it (shownHash: the
// content hash on their page; an approval of a manifest that changed since is
// db.ErrStale, of a stale one a *review.OutdatedError). The same verdict given twice on
// the same hash is stored once. The approval that completes the required number, with
// at least one approver who made none of its review decisions, signs the manifest off,
// writing the sign-off record, in the same transaction. codeVersion names the binary
// that signs.
func Review(ctx context.Context, store *db.DB, by db.User, m db.Manifest, v review.Verdict, comment, shownHash, codeVersion string) (db.ReviewResult, error) {
	res, err := addReview(ctx, store, by, m, v, comment, shownHash, codeVersion)
	return res, refusal(ctx, store, by, m, Action(v), err)
}

func addReview(ctx context.Context, store *db.DB, by db.User, m db.Manifest, v review.Verdict, comment, shownHash, codeVersion string) (db.ReviewResult, error) {
	comment = strings.TrimSpace(comment)
	if len(comment) > MaxComment {
		return db.ReviewResult{}, &review.InputError{Field: "comment", Msg: fmt.Sprintf("at most %d bytes", MaxComment)}
	}
	if v == review.Comment && comment == "" {
		return db.ReviewResult{}, &review.InputError{Field: "comment", Msg: "empty"}
	}
	var seal db.Seal
	if v == review.Approve {
		var err error
		if seal, err = prepareSeal(ctx, store, m, codeVersion); err != nil {
			return db.ReviewResult{}, err
		}
	}
	return store.AddReview(ctx, by, m.ID, db.NewReview{Verdict: v, Comment: comment, Hash: shownHash}, seal)
}

// prepareSeal computes, before the signing transaction, everything of the sign-off
// record that the transaction does not decide (counts, impact, labels, the preparer),
// and returns the function that completes it inside the transaction.
func prepareSeal(ctx context.Context, store *db.DB, m db.Manifest, codeVersion string) (db.Seal, error) {
	base := review.Record{Manifest: m.ID, Params: m.Params, CodeVersion: codeVersion, Labels: m.Estimates,
		Comparison: m.Comparison, ApprovalsRequired: m.ApprovalsRequired, ApprovalsLowered: m.ApprovalsLowered,
		CarriedOver: m.CarriedOver, Origin: m.Origin, ReviewedSample: m.Origin != nil && m.Origin.Sample != nil}
	if m.LabelMark > 0 {
		base.LabelMark = m.LabelMark
	}
	ds, err := store.Dataset(ctx, m.DatasetID)
	if err != nil {
		return nil, err
	}
	base.Dataset = review.DatasetRecord{ID: ds.ID, Name: ds.Name, Version: ds.Version, ContentHash: ds.ContentHash, Documents: ds.Docs}
	counts, err := store.CountManifest(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	base.Removals, base.Excluded, base.Clusters = counts.Proposed+counts.Approved, counts.Excluded, counts.Clusters
	byReason, bySize, err := store.RemovalCounts(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	for _, r := range []cluster.Reason{cluster.Exact, cluster.Near} {
		base.ByReason = append(base.ByReason, review.Count{Key: string(r), N: byReason[r]})
	}
	base.BySize = sizeCounts(bySize)
	for _, g := range []struct {
		by  db.GroupBy
		dst *[]review.GroupRow
	}{{"source", &base.ByGroup.Source}, {"domain", &base.ByGroup.Domain}, {"lang", &base.ByGroup.Language}} {
		counts, err := store.ImpactCounts(ctx, m, g.by)
		if err != nil {
			return nil, err
		}
		*g.dst = review.GroupRows(review.Groups(LumpGroups(counts, MaxGroups)))
	}
	if base.BulkApprovals, err = store.BulkApprovals(ctx, m.ID); err != nil {
		return nil, err
	}
	preparer := review.Person{Name: m.Preparer, At: m.CreatedAt}
	if m.PreparedBy != 0 {
		u, err := store.UserByID(ctx, m.PreparedBy)
		if err != nil {
			return nil, err
		}
		preparer.Role = string(u.Role)
	}
	base.Preparer = preparer
	return func(s db.Sealing) (review.Record, error) {
		rec := base
		// The team's rule on audits, on the audit as the signing transaction read it.
		var a *review.Audit
		if s.Audit != nil {
			fig, err := auditFigure(*s.Audit)
			if err != nil {
				return rec, err
			}
			a = &fig
		}
		if err := review.CheckAuditGate(s.Gate, a); err != nil {
			return rec, err
		}
		gate := s.Gate
		rec.Audit, rec.AuditGate = a, &gate
		rec.ManifestHash, rec.DatasetHash, rec.SignedAt = s.Manifest.ContentHash, s.DatasetHash, s.At
		head := s.AuditHead
		rec.AuditHead = &head
		rec.Deciders = append([]string{}, s.Deciders...)
		for _, a := range s.Tally.Approvals {
			rec.Approvals = append(rec.Approvals, person(a))
		}
		for _, r := range s.Reviews {
			p := person(r)
			if r.Dismissed {
				p.Verdict += " (dismissed: the manifest changed after it)"
			}
			rec.Reviews = append(rec.Reviews, p)
		}
		return rec, nil
	}, nil
}

func person(r review.Review) review.Person {
	return review.Person{Name: r.Name, Role: r.Role, At: r.At, Verdict: string(r.Verdict), Comment: r.Comment, Hash: r.Hash}
}

// sizeCounts turns removals by cluster size into the bins of review.SizeBin.
func sizeCounts(bySize map[int]int) []review.Count {
	n := map[string]int{}
	for size, k := range bySize {
		n[review.SizeBin(size)] += k
	}
	out := make([]review.Count, len(review.SizeBins))
	for i, b := range review.SizeBins {
		out[i] = review.Count{Key: b, N: n[b]}
	}
	return out
}

// MaxGroups is how many groups of one grouping the impact tables test; the smaller ones
// are lumped together as "(other)".
const MaxGroups = 30

// LumpGroups keeps the max largest groups (counts come largest first) and lumps the
// rest into one "(other)" group, so that a key with thousands of values still gives a
// readable table and a test with a meaningful correction.
func LumpGroups(counts []review.GroupCount, max int) []review.GroupCount {
	if len(counts) <= max {
		return counts
	}
	out := slices.Clone(counts[:max-1])
	other := review.GroupCount{Key: "(other)"}
	for _, c := range counts[max-1:] {
		other.Docs += c.Docs
		other.Removed += c.Removed
	}
	return append(out, other)
}

// ApproveOutsideSample approves the undecided removals outside an imported manifest's
// review sample once the sample is decided (db.DB.ApproveOutsideSample).
func ApproveOutsideSample(ctx context.Context, store *db.DB, by db.User, m db.Manifest) (items, clusters int, err error) {
	items, clusters, err = store.ApproveOutsideSample(ctx, by, m.ID)
	return items, clusters, refusal(ctx, store, by, m, ActApproveOutsideSample, err)
}

// Export applies a signed-off manifest as shown to by (shownHash: the content hash on
// their page): it refuses when the manifest changed since it was shown, when the live
// documents changed since the run, when a removal's document or keeper is tombstoned
// already, or when the content hash or the dataset snapshot differ from the sign-off;
// otherwise it tombstones the approved removals (db.DB.Export), all in one transaction.
func Export(ctx context.Context, store *db.DB, by db.User, m db.Manifest, shownHash string) (int, error) {
	if shownHash != m.ContentHash {
		err := fmt.Errorf("export of manifest %d: hash %s shown, %s now: %w", m.ID, review.Short(shownHash), review.Short(m.ContentHash), db.ErrStale)
		return 0, refusal(ctx, store, by, m, ActExport, err)
	}
	rows, err := store.Export(ctx, by, m.ID)
	return len(review.ApprovedRows(rows)), refusal(ctx, store, by, m, ActExport, err)
}

// Revoke ends a signed-off or exported manifest and restores its tombstones.
func Revoke(ctx context.Context, store *db.DB, by db.User, m db.Manifest, reason string) (int, error) {
	reason = strings.TrimSpace(reason)
	var err error
	switch {
	case reason == "":
		err = &review.InputError{Field: "reason", Msg: "say why the sign-off is revoked"}
	case len(reason) > MaxComment:
		err = &review.InputError{Field: "reason", Msg: fmt.Sprintf("at most %d bytes", MaxComment)}
	}
	n := 0
	if err == nil {
		n, err = store.Revoke(ctx, by, m.ID, reason)
	}
	return n, refusal(ctx, store, by, m, ActRevoke, err)
}

// Restore brings one document a manifest's export removed back into the dataset.
func Restore(ctx context.Context, store *db.DB, by db.User, m db.Manifest, doc int64) error {
	return refusal(ctx, store, by, m, ActRestore, store.RestoreTombstone(ctx, by, m.ID, doc))
}

// Undo withdraws by's latest change to a manifest (db.DB.Undo).
func Undo(ctx context.Context, store *db.DB, by db.User, m db.Manifest) (clusterID int64, ok bool, err error) {
	clusterID, ok, err = store.Undo(ctx, by, m.ID)
	return clusterID, ok, refusal(ctx, store, by, m, ActUndo, err)
}

// SetApprovals sets how many approvals sign a draft off; fewer than
// review.DefaultApprovals is recorded as a lowering, team saying why.
func SetApprovals(ctx context.Context, store *db.DB, by db.User, m db.Manifest, n int, team string) error {
	return refusal(ctx, store, by, m, ActSetApprovals, store.SetApprovalsRequired(ctx, by, m.ID, n, team))
}
