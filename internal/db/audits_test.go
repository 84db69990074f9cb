package db

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// fingerprint is the store's fingerprint, to show that a refused write wrote nothing.
func (d *DB) fingerprint(t *testing.T) string {
	t.Helper()
	fp, err := d.Fingerprint(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// A manifest's audit: stored with its frame and first draw (its pairs added to the
// campaign), refused when the manifest changed since its frame was read, when another
// audit is open or when the one to replace is not, topped up from the same frame,
// replaced by a new request, and refused after sign-off; a refused request writes
// nothing. The queue serves its pairs first, never to the manifest's author, and the
// audit's state says whose labels count.
func TestManifestAudit(t *testing.T) {
	t.Parallel()
	f := newReviewFixture(t)
	d, ctx := f.d, t.Context()
	k, x, y := f.docs["k"], f.docs["x"], f.docs["y"]
	c := f.cluster(t)
	camp, err := d.EnsureCampaign(ctx, f.m.DatasetID, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	frame := []FramePair{{Doc: x, Keeper: k}, {Doc: y, Keeper: k}}
	first := NewAudit{ManifestID: f.m.ID, Hash: f.m.ContentHash, CampaignID: camp.ID, Frame: frame,
		Picks: []AuditPick{{Doc: x, Keeper: k, Item: c.Items[0].ID}}, Seed: 7}

	before := d.fingerprint(t)
	for _, tc := range []struct {
		name  string
		na    NewAudit
		stale bool
	}{
		{"changed since its frame", NewAudit{ManifestID: f.m.ID, Hash: "other", CampaignID: camp.ID, Frame: frame}, true},
		{"replacing no open audit", NewAudit{ManifestID: f.m.ID, Hash: f.m.ContentHash, CampaignID: camp.ID, Frame: frame, Supersede: 99}, true},
		{"a seed JSON cannot hold", NewAudit{ManifestID: f.m.ID, Hash: f.m.ContentHash, CampaignID: camp.ID, Frame: frame, Seed: MaxSeed + 1}, false},
		{"a pick outside the campaign", NewAudit{ManifestID: f.m.ID, Hash: f.m.ContentHash, CampaignID: camp.ID + 1, Frame: frame, Picks: first.Picks}, false},
	} {
		if _, err := d.CreateAudit(ctx, f.prep, tc.na); err == nil || tc.stale && !errors.Is(err, ErrStale) {
			t.Errorf("CreateAudit %s = %v; want an error (ErrStale: %v)", tc.name, err, tc.stale)
		}
	}
	if _, err := d.CreateAudit(ctx, f.prep, NewAudit{ManifestID: f.m.ID + 1, Hash: "h", CampaignID: camp.ID}); !errors.Is(err, ErrNotFound) {
		t.Errorf("CreateAudit of no manifest = %v; want ErrNotFound", err)
	}
	if d.fingerprint(t) != before {
		t.Fatal("a refused audit request wrote to the store")
	}
	if _, err := d.OpenAudit(ctx, f.m.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("OpenAudit before any = %v; want ErrNotFound", err)
	}
	if _, err := d.AuditState(ctx, f.m.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("AuditState before any = %v; want ErrNotFound", err)
	}

	a, err := d.CreateAudit(ctx, f.prep, first)
	if err != nil {
		t.Fatal(err)
	}
	if a.ManifestID != f.m.ID || a.CampaignID != camp.ID || a.Removals != 2 || a.Certain != 0 || a.Size != 1 || a.Superseded ||
		a.Requester != "prep" || a.RequestedBy != f.prep.ID || a.RequestedAt.IsZero() || !strings.HasPrefix(a.Design, "audit-m") ||
		len(a.Draws) != 1 || a.Draws[0].Size != 1 || a.Draws[0].By != "prep" || !slices.Equal(a.Seeds(), []uint64{7}) {
		t.Errorf("CreateAudit = %+v", a)
	}
	if open, err := d.OpenAudit(ctx, f.m.ID); err != nil || open.ID != a.ID || open.Design != a.Design {
		t.Errorf("OpenAudit = %+v, %v; want audit %d", open, err, a.ID)
	}
	if got, err := d.AuditedManifests(ctx); err != nil || len(got) != 1 || !got[f.m.ID] {
		t.Errorf("AuditedManifests = %v, %v; want {%d}", got, err, f.m.ID)
	}
	if fr, drawn, err := d.AuditFrame(ctx, a.ID); err != nil || !slices.Equal(fr, frame) || len(drawn) != 1 || !drawn[x] {
		t.Errorf("AuditFrame = %v, %v, %v; want the frame and x drawn", fr, drawn, err)
	}
	if _, err := d.CreateAudit(ctx, f.other, first); !errors.Is(err, ErrStale) {
		t.Errorf("a second audit while one is open = %v; want ErrStale", err)
	}

	// The queue serves the audit's pair first, but never to the manifest's author.
	pairs, _ := d.PairDocs(ctx, camp.ID)
	if len(pairs) != 1 || pairs[0].DocA != min(x, k) || pairs[0].DocB != max(x, k) {
		t.Fatalf("campaign pairs = %+v; want the drawn pair (x, k)", pairs)
	}
	ann := mustUser(t, d, "ann", auth.Annotator)
	if id, err := d.NextPair(ctx, camp.ID, "ann", QueueFilter{}); err != nil || id != pairs[0].ID {
		t.Errorf("NextPair for ann = %d, %v; want the audit pair %d", id, err, pairs[0].ID)
	}
	if id, err := d.NextPair(ctx, camp.ID, "prep", QueueFilter{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("NextPair for the manifest's author = %d, %v; want ErrNotFound", id, err)
	}
	for _, l := range []NewLabel{{Annotator: "ann", UserID: ann.ID, Category: "exact", Duplicate: true},
		{Annotator: "prep", UserID: f.prep.ID, Category: "different"}} {
		if _, err := d.RecordEvent(ctx, camp.ID, pairs[0].ID, l, 0); err != nil {
			t.Fatal(err)
		}
	}
	st, err := d.AuditState(ctx, f.m.ID)
	if err != nil || st.ID != a.ID || st.Removals != 2 || st.Certain != 0 || st.Uncovered != 0 || len(st.Pairs) != 1 {
		t.Fatalf("AuditState = %+v, %v; want one pair over 2 removals, all covered", st, err)
	}
	if p := st.Pairs[0]; p.Position != 1 || p.PairID != pairs[0].ID || p.Doc != x || p.Keeper != k || !p.Removed || len(p.Labels) != 2 ||
		p.Labels[0].Annotator != "ann" || !p.Labels[0].Counts || !p.Labels[0].Duplicate || p.Labels[1].Annotator != "prep" || p.Labels[1].Counts {
		t.Errorf("the audit's pair = %+v; want x removed for k, ann's label counting and prep's not", p)
	}

	// A top-up: refused with a changed hash or an oversized seed (nothing written), then
	// drawn after the pairs the audit has.
	before = d.fingerprint(t)
	if _, err := d.TopUpAudit(ctx, f.prep, a.ID, "other", nil, 1); !errors.Is(err, ErrStale) {
		t.Errorf("TopUpAudit with a changed hash = %v; want ErrStale", err)
	}
	if _, err := d.TopUpAudit(ctx, f.prep, a.ID, f.m.ContentHash, []AuditPick{{Doc: y, Keeper: k, Item: c.Items[1].ID}}, MaxSeed+1); err == nil {
		t.Error("TopUpAudit with a seed over MaxSeed: no error")
	}
	if _, err := d.TopUpAudit(ctx, f.prep, a.ID+1, f.m.ContentHash, nil, 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("TopUpAudit of no audit = %v; want ErrNotFound", err)
	}
	if d.fingerprint(t) != before {
		t.Fatal("a refused top-up wrote to the store")
	}
	up, err := d.TopUpAudit(ctx, f.other, a.ID, f.m.ContentHash, []AuditPick{{Doc: y, Keeper: k, Item: c.Items[1].ID}}, 9)
	if err != nil || up.Size != 2 || len(up.Draws) != 2 || up.Draws[1].Draw != 2 || up.Draws[1].By != "other" || !slices.Equal(up.Seeds(), []uint64{7, 9}) {
		t.Fatalf("TopUpAudit = %+v, %v; want 2 pairs in 2 draws", up, err)
	}
	if st, _ := d.AuditState(ctx, f.m.ID); len(st.Pairs) != 2 || st.Pairs[1].Position != 2 || st.Pairs[1].Doc != y || len(st.Pairs[1].Labels) != 0 {
		t.Errorf("AuditState after the top-up = %+v; want y second, unlabelled", st.Pairs)
	}

	// A new request replaces the open audit, which can no longer be topped up.
	again := first
	again.Supersede = a.ID
	b, err := d.CreateAudit(ctx, f.other, again)
	if err != nil || b.ID == a.ID || b.Size != 1 {
		t.Fatalf("CreateAudit replacing %d = %+v, %v", a.ID, b, err)
	}
	if open, _ := d.OpenAudit(ctx, f.m.ID); open.ID != b.ID {
		t.Errorf("OpenAudit after the replacement = %d; want %d", open.ID, b.ID)
	}
	if _, err := d.TopUpAudit(ctx, f.prep, a.ID, f.m.ContentHash, nil, 1); !errors.Is(err, ErrStale) {
		t.Errorf("TopUpAudit of a replaced audit = %v; want ErrStale", err)
	}
	if got := strings.Join(auditActions(t, d), ","); strings.Count(got, "manifest.audit,") != 1 || !strings.HasSuffix(got, "manifest.audit-top-up,manifest.audit") {
		t.Errorf("audit log %s; want the request, the top-up and the replacement", got)
	}

	m := f.signOff(t)
	again.Hash, again.Supersede = m.ContentHash, b.ID
	if _, err := d.CreateAudit(ctx, f.prep, again); err == nil {
		t.Error("CreateAudit after sign-off: no error")
	}
}

// The team's audit gate: none until set, set and changed with an audit log event each,
// setting what is set writes nothing, and 0 takes it away.
func TestAuditGate(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	root := mustUser(t, d, "root", auth.Admin)
	if g, err := d.AuditGate(ctx); err != nil || g != (review.AuditGate{}) {
		t.Errorf("AuditGate before any = %+v, %v; want none", g, err)
	}
	for _, target := range []float64{5, 2.5} {
		if err := d.SetAuditGate(ctx, root, target); err != nil {
			t.Fatal(err)
		}
		if g, err := d.AuditGate(ctx); err != nil || g.Target != target || g.By != "root" || g.At.IsZero() {
			t.Errorf("AuditGate after setting %v = %+v, %v", target, g, err)
		}
	}
	before := d.fingerprint(t)
	if err := d.SetAuditGate(ctx, root, 2.5); err != nil {
		t.Fatal(err)
	}
	if d.fingerprint(t) != before {
		t.Error("setting the gate it has wrote to the store")
	}
	if err := d.SetAuditGate(ctx, root, 0); err != nil {
		t.Fatal(err)
	}
	if g, err := d.AuditGate(ctx); err != nil || g != (review.AuditGate{}) {
		t.Errorf("AuditGate after setting 0 = %+v, %v; want none", g, err)
	}
	if got := strings.Join(auditActions(t, d), ","); strings.Count(got, "team.settings") != 3 {
		t.Errorf("audit log %s; want three team.settings", got)
	}
}
