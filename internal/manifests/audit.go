package manifests

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/dedupstudio/dedupstudio/internal/audit"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// A manifest's own audit (review's "The manifest's own audit"): RequestAudit draws it,
// AuditOf says what its labels bound, and the sign-off checks the team's rule on it.

// MaxAuditSize bounds the pairs one audit draws.
const MaxAuditSize = 5000

// AuditOutcome is what a request for an audit did.
type AuditOutcome struct {
	Audit db.Audit
	// Added is how many pairs this request drew; TopUp is true when it added them to
	// the open audit, Replaced names the audit it replaced (0: none).
	Added    int
	TopUp    bool
	Replaced int64
	// Uncertain is the frame's uncertain removals (the most pairs an audit can draw).
	Uncertain int
	// NewCampaign is set when the dataset had no campaign and one was started for the
	// audit's labels.
	NewCampaign bool
}

// RequestAudit draws an audit of n pairs (capped by the manifest's uncertain removals)
// of manifest m before its sign-off, as by, with seed (0: a random one), and queues its
// pairs first for labeling in the manifest's campaign (the dataset's oldest when the run
// had none; a new one when the dataset has none). While the manifest's audit still
// covers it, a request tops that audit up to n pairs (n must exceed what it has), from
// the same frame; when the manifest changed beyond its frame, the request replaces it.
// Refusals are written to the audit log.
func RequestAudit(ctx context.Context, store *db.DB, by db.User, m db.Manifest, n int, seed uint64) (AuditOutcome, error) {
	out, err := requestAudit(ctx, store, by, m, n, seed)
	return out, refusal(ctx, store, by, m, ActRequestAudit, err)
}

func requestAudit(ctx context.Context, store *db.DB, by db.User, m db.Manifest, n int, seed uint64) (AuditOutcome, error) {
	var out AuditOutcome
	if n < 1 || n > MaxAuditSize {
		return out, &review.InputError{Field: "pairs", Msg: fmt.Sprintf("%d: want a whole number from 1 to %d (%d by default)", n, MaxAuditSize, audit.DefaultSize)}
	}
	if err := review.CanRequestAudit(m.State); err != nil {
		return out, err
	}
	if seed == 0 {
		seed = rand.Uint64N(db.MaxSeed) + 1
	}
	if seed > db.MaxSeed {
		return out, &review.InputError{Field: "seed", Msg: fmt.Sprintf("%d: at most %d", seed, uint64(db.MaxSeed))}
	}
	st, err := store.AuditState(ctx, m.ID)
	switch {
	case err == nil && st.Uncovered == 0:
		return topUp(ctx, store, by, m, st.Audit, n, seed)
	case err == nil:
		out.Replaced = st.ID
	case !errors.Is(err, db.ErrNotFound):
		return out, err
	}
	rows, err := store.ManifestRows(ctx, m.ID)
	if err != nil {
		return out, err
	}
	itemOf, err := itemsByDoc(ctx, store, m.ID)
	if err != nil {
		return out, err
	}
	var frame []db.FramePair
	var uncertain []db.AuditPick
	for _, r := range rows {
		if !r.Decision.Removes() {
			continue
		}
		certain := r.Reason == cluster.Exact
		frame = append(frame, db.FramePair{Doc: r.Doc, Keeper: r.Keeper, Certain: certain})
		if !certain {
			uncertain = append(uncertain, db.AuditPick{Doc: r.Doc, Keeper: r.Keeper, Item: itemOf[r.Doc]})
		}
	}
	if len(frame) == 0 {
		return out, &review.RefusedError{Msg: "this manifest removes nothing: there is nothing to audit"}
	}
	c, created, err := auditCampaign(ctx, store, m)
	if err != nil {
		return out, err
	}
	picks := drawPicks(uncertain, n, seed)
	a, err := store.CreateAudit(ctx, by, db.NewAudit{ManifestID: m.ID, Hash: m.ContentHash, CampaignID: c.ID, Frame: frame,
		Picks: picks, Seed: seed, Supersede: out.Replaced})
	if err != nil {
		return out, err
	}
	out.Audit, out.Added, out.Uncertain, out.NewCampaign = a, len(picks), len(uncertain), created
	return out, scoreAudit(ctx, store, c.ID)
}

// topUp draws more pairs for audit a, still covering manifest m, from the frame's
// uncertain pairs it has not drawn, so that it holds min(n, uncertain) pairs.
func topUp(ctx context.Context, store *db.DB, by db.User, m db.Manifest, a db.Audit, n int, seed uint64) (AuditOutcome, error) {
	out := AuditOutcome{TopUp: true, Uncertain: a.Removals - a.Certain}
	if a.Size >= out.Uncertain {
		return out, &review.RefusedError{Msg: fmt.Sprintf("this manifest's audit draws every one of its %d uncertain removals already: "+
			"label them; no larger audit exists", out.Uncertain)}
	}
	if n <= a.Size {
		return out, &review.RefusedError{Msg: fmt.Sprintf("this manifest has an audit of %d pairs: ask for more than %d to draw more "+
			"from the same removals (at most %d), or label the ones it has", a.Size, a.Size, out.Uncertain)}
	}
	frame, drawn, err := store.AuditFrame(ctx, a.ID)
	if err != nil {
		return out, err
	}
	itemOf, err := itemsByDoc(ctx, store, m.ID)
	if err != nil {
		return out, err
	}
	var rest []db.AuditPick
	for _, f := range frame {
		if !f.Certain && !drawn[f.Doc] {
			rest = append(rest, db.AuditPick{Doc: f.Doc, Keeper: f.Keeper, Item: itemOf[f.Doc]})
		}
	}
	picks := drawPicks(rest, min(n, out.Uncertain)-a.Size, seed)
	if out.Audit, err = store.TopUpAudit(ctx, by, a.ID, m.ContentHash, picks, seed); err != nil {
		return out, err
	}
	out.Added = len(picks)
	return out, scoreAudit(ctx, store, a.CampaignID)
}

// itemsByDoc maps each document the manifest removes to its review item, the item an
// audit pick of it labels.
func itemsByDoc(ctx context.Context, store *db.DB, manifestID int64) (map[int64]int64, error) {
	items, err := store.Items(ctx, manifestID)
	if err != nil {
		return nil, err
	}
	itemOf := make(map[int64]int64, len(items))
	for _, it := range items {
		itemOf[it.Doc] = it.ID
	}
	return itemOf, nil
}

// drawPicks draws n of pool (ordered by document) with audit.Choose, in a random order
// (the order the queue serves them, so that the pairs labeled first are a random part of
// those drawn): a simple random sample in random order, repeatable from seed.
func drawPicks(pool []db.AuditPick, n int, seed uint64) []db.AuditPick {
	idx := audit.Choose(len(pool), n, seed)
	rng := rand.New(rand.NewPCG(seed, 0x0dde7))
	rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	out := make([]db.AuditPick, len(idx))
	for i, k := range idx {
		out[i] = pool[k]
	}
	return out
}

// auditCampaign is the campaign an audit of m labels in: the one its run scored it on,
// else the dataset's oldest, else a new one (created true).
func auditCampaign(ctx context.Context, store *db.DB, m db.Manifest) (c db.Campaign, created bool, err error) {
	if c, err = campaignFor(ctx, store, m.DatasetID, m.CampaignID); err != nil || c.ID != 0 {
		return c, false, err
	}
	c, err = campaign.Start(ctx, store, m.DatasetID)
	return c, err == nil, err
}

// scoreAudit scores the campaign's pairs that have no similarity yet (the audit's new
// ones) under its representation, and ranks its queue.
func scoreAudit(ctx context.Context, store *db.DB, campaignID int64) error {
	if _, err := campaign.ScorePairs(ctx, store, campaignID); err != nil {
		return fmt.Errorf("score the audit's pairs: %w", err)
	}
	return nil
}

// AuditOf returns manifest m's audit as it stands, or nil when it has none.
func AuditOf(ctx context.Context, store *db.DB, m db.Manifest) (*review.Audit, error) {
	st, err := store.AuditState(ctx, m.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	a, err := auditFigure(st)
	if err != nil {
		return nil, fmt.Errorf("audit of manifest %d: %w", m.ID, err)
	}
	return &a, nil
}

// auditFigure resolves each drawn pair under sweep.LabelRule over the labels that count
// for the audit (an adjudication, else the majority) and bounds the manifest's mistakes.
// Only the duplicate decision matters here, which the rule takes before any category.
func auditFigure(st db.AuditState) (review.Audit, error) {
	c := review.AuditCounts{ID: st.ID, Design: st.Design, Campaign: st.CampaignID, RequestedBy: st.Requester, RequestedAt: st.RequestedAt,
		Seeds: st.Seeds(), FrameRemovals: st.Audit.Removals, FrameCertain: st.Audit.Certain, Drawn: len(st.Pairs),
		Removals: st.Removals, Certain: st.Certain, Uncovered: st.Uncovered}
	for _, p := range st.Pairs {
		var ls []sweep.Label
		for _, l := range p.Labels {
			if l.Counts {
				ls = append(ls, sweep.Label{Annotator: l.Annotator, Kind: string(l.Kind), Category: l.Category, Duplicate: l.Duplicate})
			}
		}
		switch r := sweep.Resolve(sweep.LabeledPair{ID: p.PairID, Labels: ls}, nil); r.Status {
		case sweep.Counted:
			c.Labeled++
			if !r.Duplicate {
				c.Mistakes++
				if !p.Removed {
					c.MistakesGone++
				}
			}
		case sweep.Tied:
			c.Tied++
		}
	}
	return review.AuditOf(c)
}

// SetAuditGate sets the team's rule on audits from its form value (a percentage; "" or
// 0: none), as by; the change is in the audit log.
func SetAuditGate(ctx context.Context, store *db.DB, by db.User, target string) (float64, error) {
	v, err := review.ParseAuditGate(target)
	if err != nil {
		return 0, err
	}
	return v, store.SetAuditGate(ctx, by, v)
}
