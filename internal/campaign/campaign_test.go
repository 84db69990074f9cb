package campaign

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// fixture is a store with a ready dataset of real documents (the engine's test corpus,
// with an edited copy of every tenth one so there are near-duplicates) and its default
// campaign.
type fixture struct {
	t     *testing.T
	store *db.DB
	c     db.Campaign
	docs  []db.DocText
}

func newFixture(t *testing.T, n int) *fixture {
	t.Helper()
	var docs []db.NewDocument
	for _, rec := range realtext.Docs(t, n) {
		if len(docs) == n {
			break
		}
		docs = append(docs, db.NewDocument{ExtID: rec.ID, Text: rec.Text})
		if len(docs)%10 == 1 && len(docs) < n {
			words := strings.Fields(rec.Text)
			words[len(words)/2] = "EDITED"
			docs = append(docs, db.NewDocument{ExtID: rec.ID + "-edit", Text: strings.Join(words, " ")})
		}
	}
	store, texts, c := campaignOf(t, "corpus", docs)
	return &fixture{t: t, store: store, c: c, docs: texts}
}

// campaignOf is a store with docs as a ready dataset called name and its default
// campaign, without pairs yet; it returns the store, the stored documents in order and
// the campaign.
func campaignOf(t *testing.T, name string, docs []db.NewDocument) (*db.DB, []db.DocText, db.Campaign) {
	t.Helper()
	store := dbtest.Open(t)
	ds := dbtest.Dataset(t, store, name, docs)
	c, err := Start(context.Background(), store, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	texts, err := store.DatasetTexts(context.Background(), ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	return store, texts, c
}

// addPairs puts unscored pairs (i, i+1) of the first n+1 documents in the campaign and
// returns the campaign's pairs.
func (f *fixture) addPairs(n int) []db.PairRef {
	f.t.Helper()
	var pairs []db.NewPair
	for i := range n {
		pairs = append(pairs, db.NewPair{DocA: f.docs[i].ID, DocB: f.docs[i+1].ID, Origin: "test", Wanted: 1})
	}
	if _, err := f.store.AddPairs(context.Background(), f.c.ID, pairs, "test"); err != nil {
		f.t.Fatal(err)
	}
	refs, err := f.store.PairDocs(context.Background(), f.c.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return refs
}

func (f *fixture) campaign() db.Campaign {
	f.t.Helper()
	c, err := f.store.Campaign(context.Background(), f.c.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func (f *fixture) user(name string, role auth.Role) db.User {
	f.t.Helper()
	u, err := f.store.CreateUser(context.Background(), "test", name, role, "h")
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

// checkScores compares every pair's stored scores with the engine's under spec.
func (f *fixture) checkScores(spec lsh.Spec) {
	f.t.Helper()
	ctx := context.Background()
	h, err := lsh.NewHasher(spec)
	if err != nil {
		f.t.Fatal(err)
	}
	refs, _ := f.store.PairDocs(ctx, f.c.ID)
	stats, _ := f.store.PairStats(ctx, f.c.ID)
	text := map[int64]string{}
	for _, d := range f.docs {
		text[d.ID] = d.Text
	}
	for i, r := range refs {
		sim, est := labels.Score(h, text[r.DocA], text[r.DocB])
		s := stats[i]
		if !s.Similarity.Valid || s.Similarity.Float64 != sim || s.Estimate.Float64 != est {
			f.t.Fatalf("pair %d scores %v/%v; want %v/%v under %s", r.ID, s.Similarity, s.Estimate, sim, est, spec)
		}
	}
}

func TestScorePairsInBatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 320)
	f.addPairs(scoreBatch + 40) // two batches
	n, err := ScorePairs(context.Background(), f.store, f.c.ID)
	if err != nil || n != scoreBatch+40 {
		t.Fatalf("ScorePairs = %d, %v; want %d", n, err, scoreBatch+40)
	}
	f.checkScores(f.c.Spec)
	if n, err := ScorePairs(context.Background(), f.store, f.c.ID); n != 0 || err != nil {
		t.Errorf("ScorePairs with every pair scored = %d, %v; want 0", n, err)
	}
}

func TestUpdateRescoresWithTheSettings(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 60)
	ctx := context.Background()
	f.addPairs(20)
	if _, err := ScorePairs(ctx, f.store, f.c.ID); err != nil {
		t.Fatal(err)
	}
	ann := f.user("ann", auth.Annotator)
	refs, _ := f.store.PairDocs(ctx, f.c.ID)
	if err := Record(ctx, f.store, f.c, refs[0].ID, ann, Decision{Kind: labels.KindLabel, Category: "minor"}); err != nil {
		t.Fatal(err)
	}
	char, _ := lsh.ParseSpec("level=char size=4 k=64")
	settings := Settings{Spec: char, Threshold: 0.7, Overlap: 2, DoubleShare: 0.1}

	// Refused settings write nothing.
	before, _ := f.store.Fingerprint(ctx, "sessions")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		change  func(*Settings)
		wantErr string
	}{
		{"threshold", ctx, func(s *Settings) { s.Threshold = 1.5 }, "threshold"},
		{"threshold NaN", ctx, func(s *Settings) { s.Threshold = nan() }, "threshold"},
		{"overlap", ctx, func(s *Settings) { s.Overlap = 0 }, "labels per pair"},
		{"double share", ctx, func(s *Settings) { s.DoubleShare = -1 }, "share labeled twice"},
		{"spec", ctx, func(s *Settings) { s.Spec.Size = 0 }, "size"},
		{"a used category dropped", ctx, func(s *Settings) {
			s.Categories = []labels.Category{{Key: "a", Name: "a", Duplicate: labels.Yes}, {Key: "b", Name: "b", Duplicate: labels.No}}
		}, `category "minor" has 1 standing label: keep it in the list`},
		{"cancelled while rescoring", cancelled, func(*Settings) {}, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := settings
			tc.change(&s)
			err := Update(tc.ctx, f.store, "rev", f.c, s)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Update = %v; want an error about %s", err, tc.wantErr)
			}
			var inv *InvalidError
			if tc.ctx == ctx && !errors.As(err, &inv) {
				t.Errorf("Update = %T; want an *InvalidError", err)
			}
			if after, _ := f.store.Fingerprint(ctx, "sessions"); after != before {
				t.Error("a refused update changed the database")
			}
		})
	}
	// A good change: settings and every pair's new scores together.
	if err := Update(ctx, f.store, "rev", f.c, settings); err != nil {
		t.Fatal(err)
	}
	c := f.campaign()
	if c.Spec != char || c.Threshold != 0.7 || c.Overlap != 2 || fmt.Sprint(c.Categories) != fmt.Sprint(labels.DefaultCategories) {
		t.Errorf("campaign after Update %+v", c)
	}
	f.checkScores(char)
	// An update prepared against the old representation is stale: nothing changes.
	if err := Update(ctx, f.store, "rev", f.c, Settings{Spec: lsh.DefaultSpec(), Threshold: 0.1, Overlap: 1}); !errors.Is(err, db.ErrStale) {
		t.Errorf("Update from a stale campaign: %v; want db.ErrStale", err)
	}
	f.checkScores(char)
	// Keeping the used category, the list may change.
	own := []labels.Category{{Key: "minor", Name: "minor", Duplicate: labels.Yes}, {Key: "other", Name: "other", Duplicate: labels.No}}
	if err := Update(ctx, f.store, "rev", c, Settings{Spec: char, Threshold: 0.7, Overlap: 2, Categories: own}); err != nil {
		t.Fatal(err)
	}
	if got := f.campaign().Categories; fmt.Sprint(got) != fmt.Sprint(own) {
		t.Errorf("categories after Update = %v; want %v", got, own)
	}
}

func TestDrawPairs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 200)
	ctx := context.Background()
	cache := sigcache.New(f.store)
	plan := DrawPlan{PerBin: 3, Bin: -1, Boundary: 2, Random: 5, Seed: 7}
	added, err := Draw(ctx, f.store, cache, "rev", f.c, plan)
	if err != nil {
		t.Fatal(err)
	}
	stats, _ := f.store.PairStats(ctx, f.c.ID)
	origins := map[string]int{}
	for _, p := range stats {
		origins[strings.SplitN(p.Origin, ":", 2)[0]]++
	}
	if added < 10 || len(stats) != added || origins["random"] != 5 || origins["boundary"] != 2 || origins["bin"] == 0 {
		t.Errorf("drew %d pairs, origins %v; want 5 random, 2 boundary, some by bin", added, origins)
	}
	f.checkScores(f.c.Spec)
	if missing, _ := f.store.MissingSignatures(ctx, f.c.DatasetID, f.c.Spec); len(missing) != 0 {
		t.Errorf("%d signatures not cached after a draw", len(missing))
	}
	// A second draw never repeats a pair.
	again, err := Draw(ctx, f.store, cache, "rev", f.c, DrawPlan{PerBin: 3, Bin: -1, Random: 5, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	refs, _ := f.store.PairDocs(ctx, f.c.ID)
	if len(refs) != added+again {
		t.Errorf("%d pairs after two draws of %d and %d", len(refs), added, again)
	}
	// Every pair carries its draw: bin pairs their bin of exact Jaccard as the stratum
	// and the bin's listed size as its frame, the same in both draws; boundary and random
	// pairs the same design with strata of their own.
	stats, _ = f.store.PairStats(ctx, f.c.ID)
	origin := map[int64]string{}
	for _, p := range stats {
		origin[p.ID] = p.Origin
	}
	pairs, err := f.store.SweepPairs(ctx, f.c.ID)
	if err != nil {
		t.Fatal(err)
	}
	fr, _, err := cache.Frame(ctx, f.c.DatasetID, f.c.Spec, frame.Default)
	if err != nil {
		t.Fatal(err)
	}
	design := labels.DrawDesign(fr)
	frames, drawn := map[string]int{}, map[string]int{}
	for _, p := range pairs {
		o := origin[p.ID]
		if p.Design != design {
			t.Errorf("%s pair %d: design %q; want %q", o, p.ID, p.Design, design)
		}
		if !strings.HasPrefix(o, "bin:") {
			if p.Stratum != o {
				t.Errorf("%s pair %d: stratum %q; want %q", o, p.ID, p.Stratum, o)
			}
			continue
		}
		var b int
		fmt.Sscanf(o, "bin:%d", &b)
		if p.Stratum != fr.Scheme.Label(b) || p.FrameSize <= 0 || b > 0 && int64(p.FrameSize) != fr.Listed[b] {
			t.Errorf("bin pair %d (%s): stratum %q, frame %d; want %q, %d", p.ID, o, p.Stratum, p.FrameSize, fr.Scheme.Label(b), fr.Listed[b])
		}
		if n, ok := frames[o]; ok && n != p.FrameSize {
			t.Errorf("stratum %s: frame sizes %d and %d", o, n, p.FrameSize)
		}
		frames[o] = p.FrameSize
		drawn[o]++
	}
	for h, n := range drawn {
		if n > frames[h] {
			t.Errorf("stratum %s: %d pairs drawn from a frame of %d", h, n, frames[h])
		}
	}
	for _, tc := range []struct {
		name string
		plan DrawPlan
		want string
	}{
		{"per bin", DrawPlan{PerBin: -1, Bin: -1}, "pairs per bin"},
		{"bin", DrawPlan{Bin: frame.Default.Bins()}, "bin"},
		{"plan bins", DrawPlan{Bin: -1, Counts: []int{1, 2}}, "plan"},
		{"plan total", DrawPlan{Bin: -1, Counts: slices.Repeat([]int{1000}, 21)}, "at most"},
		{"boundary", DrawPlan{Bin: -1, Boundary: MaxDraw + 1}, "near the threshold"},
		{"random", DrawPlan{Bin: -1, Random: -5}, "random pairs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inv *InvalidError
			if _, err := Draw(ctx, f.store, cache, "rev", f.c, tc.plan); !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Draw(%+v) = %v; want an *InvalidError about %s", tc.plan, err, tc.want)
			}
		})
	}
}

// A dataset of one document has no pair: starting a campaign there is refused, naming
// why, and stores none; a draw in a campaign made before is refused for that reason
// whatever its plan (a plan out of range used to be refused by its field instead).
func TestOneDocumentHasNoPairs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.Open(t)
	ds := dbtest.Dataset(t, store, "one", []db.NewDocument{{ExtID: "only", Text: "the one and only document of this dataset"}})
	const why = "one has 1 document, so no pairs: a pair takes two documents; import a sample of at least two"
	var inv *InvalidError
	if _, err := Start(ctx, store, ds.ID); !errors.As(err, &inv) || err.Error() != why {
		t.Errorf("Start on one document = %v; want an *InvalidError %q", err, why)
	}
	if all, err := store.Campaigns(ctx); err != nil || len(all) != 0 {
		t.Errorf("after a refused Start: %d campaign(s), %v; want none", len(all), err)
	}
	c, err := store.EnsureCampaign(ctx, ds.ID, "default", nil) // made before the refusal
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range []DrawPlan{{Bin: -1, Random: 1}, {Bin: math.MinInt, PerBin: math.MinInt}} {
		if _, err := Draw(ctx, store, sigcache.New(store), "rev", c, plan); !errors.As(err, &inv) || err.Error() != why {
			t.Errorf("Draw(%+v) from one document = %v; want an *InvalidError %q", plan, err, why)
		}
	}
}

// The pair page is blind: another annotator's label shows only once the viewer decided,
// or to an adjudicator.
func TestViewIsBlind(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	ctx := context.Background()
	p := f.addPairs(3)[0].ID
	ann, bob := f.user("ann", auth.Annotator), f.user("bob", auth.Annotator)
	if err := Record(ctx, f.store, f.c, p, bob, Decision{Kind: labels.KindLabel, Category: "exact"}); err != nil {
		t.Fatal(err)
	}
	view := func(who string, adjudicate bool) PairView {
		t.Helper()
		viewer := Viewer{Name: who, Labels: true, ReadLabels: who == "rev", Adjudicate: adjudicate}
		v, err := View(ctx, f.store, f.c, p, viewer)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := view("ann", false)
	if v.ShowOthers || len(v.Others) != 0 || len(v.History) != 0 || v.Mine != nil || v.Previous != 0 {
		t.Errorf("before deciding ann sees %+v", v)
	}
	// Scores are there even for a pair never scored, computed on the fly.
	if v.Similarity <= 0 || v.Estimate <= 0 || v.CharJaccard <= 0 {
		t.Errorf("scores %v/%v/%v; want them computed", v.Similarity, v.Estimate, v.CharJaccard)
	}
	if v := view("rev", true); !v.ShowOthers || len(v.Others) != 1 || v.Others[0].Annotator != "bob" {
		t.Errorf("an adjudicator sees others %+v", v.Others)
	}
	if err := Record(ctx, f.store, f.c, p, ann, Decision{Kind: labels.KindLabel, Category: "different", Note: " mine "}); err != nil {
		t.Fatal(err)
	}
	// Annotators stay blind after deciding (issue 8 item 5): their own label and
	// events only. A reviewer who decided sees the others'.
	v = view("ann", false)
	if v.ShowOthers || len(v.Others) != 0 || v.Mine == nil || v.Mine.Category != "different" || v.Mine.Note != "mine" ||
		len(v.History) != 1 || v.History[0].Annotator != "ann" {
		t.Errorf("after deciding ann sees %+v", v)
	}
	rev := f.user("rev", auth.Reviewer)
	if v := view("rev", false); v.ShowOthers || len(v.Others) != 0 {
		t.Errorf("a reviewer who has not labeled the pair sees others %+v; want blind", v.Others)
	}
	if err := Record(ctx, f.store, f.c, p, rev, Decision{Kind: labels.KindLabel, Category: "exact"}); err != nil {
		t.Fatal(err)
	}
	if v := view("rev", false); !v.ShowOthers || len(v.Others) != 2 || len(v.History) != 3 {
		t.Errorf("a reviewer who decided sees others %+v, history %d; want bob's and ann's, all 3 events", v.Others, len(v.History))
	}
	// Flags and undo.
	if err := Record(ctx, f.store, f.c, p, ann, Decision{Kind: labels.KindFlag}); err != nil {
		t.Fatal(err)
	}
	if !view("ann", false).Flagged {
		t.Error("flagged pair not flagged")
	}
	undone, ok, err := Undo(ctx, f.store, f.c, ann)
	if err != nil || !ok || undone.PairID != p || undone.Category != "different" {
		t.Fatalf("Undo = %+v, %v, %v; want ann's label on pair %d", undone, ok, err, p)
	}
	v = view("ann", false)
	if v.Mine != nil || v.Previous == 0 || v.ShowOthers {
		t.Errorf("after undo ann sees mine %v, previous %d, others shown %v; want blind again, built on the retraction", v.Mine, v.Previous, v.ShowOthers)
	}
	if _, ok, _ := Undo(ctx, f.store, f.c, ann); ok {
		t.Error("a second undo found something to undo")
	}
	if _, err := View(ctx, f.store, f.c, 9999, Viewer{Name: "ann"}); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("View of an unknown pair: %v; want db.ErrNotFound", err)
	}
}

func TestRecordChecksTheDecision(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	ctx := context.Background()
	p := f.addPairs(2)[0].ID
	ann := f.user("ann", auth.Annotator)
	for _, tc := range []struct {
		name    string
		d       Decision
		wantErr string // "" for none; "stale" for db.ErrStale
	}{
		{"no category", Decision{Kind: labels.KindLabel}, "choose a category (keys 1-7)"},
		{"category 8", Decision{Kind: labels.KindLabel, Category: "8"}, "choose a category"},
		{"ask without y/n", Decision{Kind: labels.KindLabel, Category: "partial"}, "press y or n"},
		{"bad y/n", Decision{Kind: labels.KindLabel, Category: "partial", Duplicate: "maybe"}, "press y or n"},
		{"long note", Decision{Kind: labels.KindLabel, Category: "1", Note: strings.Repeat("x", MaxNote+1)}, "4,000"},
		{"retract is undo's", Decision{Kind: labels.KindRetract}, "unknown action"},
		{"by number", Decision{Kind: labels.KindLabel, Category: "5", Duplicate: "y"}, ""},
		{"stale", Decision{Kind: labels.KindLabel, Category: "exact"}, "stale"},
		{"skip", Decision{Kind: labels.KindSkip}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Record(ctx, f.store, f.c, p, ann, tc.d)
			var inv *InvalidError
			switch tc.wantErr {
			case "":
				if err != nil {
					t.Errorf("Record = %v; want it recorded", err)
				}
			case "stale":
				if !errors.Is(err, db.ErrStale) {
					t.Errorf("Record = %v; want db.ErrStale", err)
				}
			default:
				if !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Record = %v; want an *InvalidError about %q", err, tc.wantErr)
				}
			}
		})
	}
	ev, _ := f.store.LatestEvent(ctx, p, "ann")
	if ev.Category != "partial" || !ev.Duplicate {
		t.Errorf("standing label %+v; want partial, a duplicate", ev)
	}
	if err := Record(ctx, f.store, f.c, 9999, ann, Decision{Kind: labels.KindSkip}); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("Record on an unknown pair: %v; want db.ErrNotFound", err)
	}
}

func TestNextComesRound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	ctx := context.Background()
	refs := f.addPairs(3)
	ann := f.user("ann", auth.Annotator)
	for _, tc := range []struct {
		name   string
		after  int64
		want   int64
		wantOK bool
	}{
		{"from the start", 0, refs[0].ID, true},
		{"after the first", refs[0].ID, refs[1].ID, true},
		{"after the last comes round", refs[2].ID, refs[0].ID, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, ok, err := Next(ctx, f.store, f.c, "ann", tc.after)
			if err != nil || ok != tc.wantOK || id != tc.want {
				t.Errorf("Next(after %d) = %d, %v, %v; want %d", tc.after, id, ok, err, tc.want)
			}
		})
	}
	for _, r := range refs {
		if err := Record(ctx, f.store, f.c, r.ID, ann, Decision{Kind: labels.KindLabel, Category: "exact"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := Next(ctx, f.store, f.c, "ann", refs[0].ID); ok || err != nil {
		t.Errorf("Next with everything labeled = %v, %v; want an empty queue", ok, err)
	}
	v, err := View(ctx, f.store, f.c, refs[1].ID, Viewer{Name: "ann", Labels: true})
	if err != nil || len(v.Recent) != 3 || v.PrevPair != refs[0].ID {
		t.Errorf("recent %d, previous pair %d (%v); want 3 and pair %d", len(v.Recent), v.PrevPair, err, refs[0].ID)
	}
}

func TestSummaryAndStart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	ctx := context.Background()
	f.addPairs(3)
	if _, err := ScorePairs(ctx, f.store, f.c.ID); err != nil {
		t.Fatal(err)
	}
	refs, _ := f.store.PairDocs(ctx, f.c.ID)
	ann, bob := f.user("ann", auth.Annotator), f.user("bob", auth.Annotator)
	Record(ctx, f.store, f.c, refs[0].ID, ann, Decision{Kind: labels.KindLabel, Category: "exact"})
	Record(ctx, f.store, f.c, refs[0].ID, bob, Decision{Kind: labels.KindLabel, Category: "different"})
	o, err := Summary(ctx, f.store, f.c)
	if err != nil || o.Pairs != 3 || o.Given != 1 || len(o.Disagreements) != 1 || o.Disagreements[0].PairID != refs[0].ID {
		t.Errorf("Summary = %+v, %v; want 3 pairs, 1 label counted, 1 disagreement", o, err)
	}
	again, err := Start(ctx, f.store, f.c.DatasetID)
	if err != nil || again.ID != f.c.ID {
		t.Errorf("Start again = %+v, %v; want campaign %d", again, err, f.c.ID)
	}
	if _, err := Start(ctx, f.store, 9999); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("Start of an unknown dataset: %v; want db.ErrNotFound", err)
	}
}

func nan() float64 { return math.NaN() }
