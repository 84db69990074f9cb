package db

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// withDocs makes a ready dataset of n documents (ext ids d0, d1, ...) and returns it
// with its document ids in order.
func withDocs(t *testing.T, d *DB, name string, n int) (Dataset, []int64) {
	t.Helper()
	ctx := t.Context()
	ds, err := d.BeginDataset(ctx, name, name+".jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]NewDocument, n)
	ext := make([]string, n)
	for i := range docs {
		ext[i] = fmt.Sprintf("d%d", i)
		docs[i] = NewDocument{ExtID: ext[i], Text: fmt.Sprintf("text of document %d in %s", i, name), Source: "web", Lang: "en"}
	}
	if _, err := d.InsertDocuments(ctx, ds.ID, docs); err != nil {
		t.Fatal(err)
	}
	if ds, err = d.FinishDataset(ctx, ds.ID, "h", 0, "test"); err != nil {
		t.Fatal(err)
	}
	byExt, err := d.DocumentIDs(ctx, ds.ID, ext)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, n)
	for i, e := range ext {
		ids[i] = byExt[e]
	}
	return ds, ids
}

// withPairs makes a campaign over n documents with pairs (0,1), (0,2), ... (0,n-1).
func withPairs(t *testing.T, d *DB, n int) (Campaign, []int64) {
	t.Helper()
	ctx := t.Context()
	ds, docs := withDocs(t, d, "s", n)
	c, err := d.EnsureCampaign(ctx, ds.ID, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []NewPair
	for i := 1; i < n; i++ {
		pairs = append(pairs, NewPair{DocA: docs[0], DocB: docs[i], Origin: "test", Wanted: 1})
	}
	if _, err := d.AddPairs(ctx, c.ID, pairs, "test"); err != nil {
		t.Fatal(err)
	}
	refs, err := d.PairDocs(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	return c, ids
}

func TestCampaignValuesAreTyped(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	ds, _ := withDocs(t, d, "s", 2)
	own := []labels.Category{{Key: "dup", Name: "duplicate", Duplicate: labels.Yes}, {Key: "keep", Name: "keep", Duplicate: labels.No}}
	for _, tc := range []struct {
		name     string
		cats     []labels.Category
		wantCats []labels.Category
	}{
		{"default", nil, labels.DefaultCategories},
		{"own", own, own},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := d.EnsureCampaign(ctx, ds.ID, tc.name, tc.cats)
			if err != nil {
				t.Fatal(err)
			}
			again, err := d.Campaign(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(again.Categories) != fmt.Sprint(tc.wantCats) || again.Spec != lsh.DefaultSpec() || again.Overlap != 1 || again.Threshold != 0.8 {
				t.Errorf("Campaign = %+v; want categories %v and the default spec", again, tc.wantCats)
			}
			// Ensuring again returns the campaign as it is.
			if c2, _ := d.EnsureCampaign(ctx, ds.ID, tc.name, own); c2.ID != c.ID || fmt.Sprint(c2.Categories) != fmt.Sprint(tc.wantCats) {
				t.Errorf("EnsureCampaign again = %+v", c2)
			}
		})
	}
	// A row written by an older version: an empty list means the defaults; a list or a
	// spec that does not parse is an error naming the column.
	for _, tc := range []struct {
		name, column, value, wantErr string
	}{
		{"empty list", "categories", `[]`, ""},
		{"bad list", "categories", `{"key":1}`, "column categories"},
		{"bad spec", "spec", `level=sentence`, "column spec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := d.EnsureCampaign(ctx, ds.ID, tc.name, nil)
			if _, err := d.w.ExecContext(ctx, `UPDATE campaigns SET `+tc.column+` = ? WHERE id = ?`, tc.value, c.ID); err != nil {
				t.Fatal(err)
			}
			got, err := d.Campaign(ctx, c.ID)
			if tc.wantErr == "" {
				if err != nil || fmt.Sprint(got.Categories) != fmt.Sprint(labels.DefaultCategories) {
					t.Errorf("Campaign = %+v, %v; want the default categories", got.Categories, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Campaign = %v; want an error naming %s", err, tc.wantErr)
			}
		})
	}
	if _, err := d.Campaign(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Campaign(999) = %v; want ErrNotFound", err)
	}
}

func TestUpdateCampaignRescoresInOneTransaction(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	c, pairs := withPairs(t, d, 4) // three pairs
	if err := d.SetPairScores(ctx, c.ID, c.Spec, []PairScore{{pairs[0], 0.5, 0.5}, {pairs[1], 0.6, 0.6}, {pairs[2], 0.7, 0.7}}); err != nil {
		t.Fatal(err)
	}
	scores := func() map[int64]string {
		t.Helper()
		stats, err := d.PairStats(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int64]string{}
		for _, s := range stats {
			out[s.ID] = "-"
			if s.Similarity.Valid {
				out[s.ID] = fmt.Sprint(s.Similarity.Float64)
			}
		}
		return out
	}
	charSpec, _ := lsh.ParseSpec("level=char size=3")

	// Same representation: the scores stay whatever rescored says.
	same := c
	same.Threshold, same.Overlap = 0.6, 2
	if err := d.UpdateCampaign(ctx, "rev", c.Spec, same, []PairScore{{pairs[0], 0.1, 0.1}}); err != nil {
		t.Fatal(err)
	}
	if got := scores(); got[pairs[0]] != "0.5" || got[pairs[2]] != "0.7" {
		t.Errorf("scores after a change without a new spec: %v; want them unchanged", got)
	}
	if stats, _ := d.PairStats(ctx, c.ID); stats[0].Wanted != 2 {
		t.Errorf("wanted after overlap 2: %d; want 2", stats[0].Wanted)
	}
	// A new representation: scores are replaced, a pair left out becomes unscored.
	changed := same
	changed.Spec = charSpec
	if err := d.UpdateCampaign(ctx, "rev", c.Spec, changed, []PairScore{{pairs[0], 0.25, 0.3}, {pairs[1], 0.35, 0.4}}); err != nil {
		t.Fatal(err)
	}
	if got := scores(); got[pairs[0]] != "0.25" || got[pairs[1]] != "0.35" || got[pairs[2]] != "-" {
		t.Errorf("scores after the spec changed: %v; want 0.25, 0.35 and unscored", got)
	}
	if back, _ := d.Campaign(ctx, c.ID); back.Spec != charSpec || back.Threshold != 0.6 {
		t.Errorf("stored campaign %+v; want the char spec and threshold 0.6", back)
	}
	if refs, _ := d.PairsWithoutScores(ctx, c.ID); len(refs) != 1 || refs[0].ID != pairs[2] {
		t.Errorf("PairsWithoutScores = %v; want pair %d", refs, pairs[2])
	}
	// Prepared against a representation that is not the stored one: nothing is written.
	before, _ := d.Fingerprint(ctx)
	stale := changed
	stale.Spec, stale.Threshold = lsh.DefaultSpec(), 0.1
	if err := d.UpdateCampaign(ctx, "rev", lsh.DefaultSpec(), stale, nil); !errors.Is(err, ErrStale) {
		t.Errorf("UpdateCampaign from a stale spec: %v; want ErrStale", err)
	}
	if after, _ := d.Fingerprint(ctx); after != before {
		t.Error("a stale update changed the database")
	}
	missing := changed
	missing.ID = 999
	if err := d.UpdateCampaign(ctx, "rev", charSpec, missing, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdateCampaign of an unknown campaign: %v; want ErrNotFound", err)
	}
	if got := strings.Join(auditActions(t, d), ","); strings.Count(got, "campaign.update") != 2 {
		t.Errorf("audit log %s; want two campaign.update", got)
	}
}

func TestAddPairsSkipsWhatIsThere(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	c, _ := withPairs(t, d, 3) // pairs (0,1), (0,2)
	refs, _ := d.PairDocs(ctx, c.ID)
	a, b := refs[0].DocA, refs[0].DocB
	other := refs[1].DocB
	n, err := d.AddPairs(ctx, c.ID, []NewPair{
		{DocA: b, DocB: a}, // there already, reversed
		{DocA: a, DocB: a}, // not a pair
		{DocA: b, DocB: other, Scored: true, Similarity: 0.4, Estimate: 0.5}, // new
	}, "test")
	if err != nil || n != 1 {
		t.Fatalf("AddPairs = %d, %v; want 1 new", n, err)
	}
	stats, _ := d.PairStats(ctx, c.ID)
	last := stats[len(stats)-1]
	if len(stats) != 3 || !last.Similarity.Valid || last.Similarity.Float64 != 0.4 || last.Wanted != 1 {
		t.Errorf("pairs after AddPairs: %+v", stats)
	}
	if _, err := d.AddPairs(ctx, c.ID, []NewPair{{DocA: a, DocB: 9999}}, "test"); err == nil {
		t.Error("a pair with an unknown document: no error")
	}
}

func TestPairBelongsToItsCampaign(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	c, pairs := withPairs(t, d, 3)
	p, err := d.Pair(ctx, c.ID, pairs[0])
	if err != nil || p.A.Text == "" || p.B.Text == "" || p.Origin != "test" || p.Similarity.Valid {
		t.Fatalf("Pair = %+v, %v", p, err)
	}
	if _, err := d.Pair(ctx, c.ID+1, pairs[0]); !errors.Is(err, ErrNotFound) {
		t.Errorf("Pair through another campaign: %v; want ErrNotFound", err)
	}
	if _, err := d.RecordEvent(ctx, c.ID+1, pairs[0], NewLabel{Annotator: "ann", Category: "exact"}, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("RecordEvent through another campaign: %v; want ErrNotFound", err)
	}
}

func TestRecordEventHistory(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	c, pairs := withPairs(t, d, 3)
	p := pairs[0]
	rec := func(kind labels.Kind, cat string, prev int64) (LabelEvent, error) {
		return d.RecordEvent(ctx, c.ID, p, NewLabel{Annotator: "ann", Kind: kind, Category: cat, Duplicate: cat == "exact"}, prev)
	}
	first, err := rec("", "exact", 0)
	if err != nil || first.Kind != labels.KindLabel || first.PreviousID.Valid || first.At.IsZero() {
		t.Fatalf("first label = %+v, %v", first, err)
	}
	for _, tc := range []struct {
		name     string
		kind     labels.Kind
		category string
		previous int64
		wantErr  error
		wantID   int64 // 0: a new event
	}{
		{"stale edit", labels.KindLabel, "different", 0, ErrStale, 0},
		{"double submit", labels.KindLabel, "exact", 0, nil, first.ID},
		{"skip never checks", labels.KindSkip, "skip", 12345, nil, 0},
		{"flag", labels.KindFlag, "flag", 0, nil, 0},
		{"edit", labels.KindLabel, "different", first.ID, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := rec(tc.kind, tc.category, tc.previous)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("RecordEvent = %v; want %v", err, tc.wantErr)
			}
			if tc.wantID != 0 && ev.ID != tc.wantID {
				t.Errorf("event id %d; want the existing %d", ev.ID, tc.wantID)
			}
		})
	}
	latest, err := d.LatestEvent(ctx, p, "ann")
	if err != nil || latest.Category != "different" || latest.PreviousID.Int64 != first.ID {
		t.Errorf("LatestEvent = %+v, %v; want the edit naming the first label", latest, err)
	}
	// Undo: a retraction; the standing label is gone, the history keeps all.
	if _, err := rec(labels.KindRetract, "different", latest.ID); err != nil {
		t.Fatal(err)
	}
	if cur, _ := d.CurrentLabels(ctx, c.ID); len(cur) != 0 {
		t.Errorf("CurrentLabels after a retraction: %+v; want none", cur)
	}
	hist, err := d.PairHistory(ctx, p)
	var kinds []string
	for _, e := range hist {
		kinds = append(kinds, string(e.Kind))
	}
	if err != nil || strings.Join(kinds, ",") != "label,skip,flag,label,retract" {
		t.Errorf("PairHistory kinds %v, %v", kinds, err)
	}
	if flagged, _ := d.FlaggedPairs(ctx, c.ID); !flagged[p] {
		t.Error("FlaggedPairs misses the flagged pair")
	}
	if _, err := d.LatestEvent(ctx, pairs[1], "ann"); !errors.Is(err, ErrNotFound) {
		t.Errorf("LatestEvent on an unlabeled pair: %v; want ErrNotFound", err)
	}
}

func TestNextPairOrder(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	c, pairs := withPairs(t, d, 5) // four pairs
	if _, err := d.AskSecondLabels(ctx, c.ID, 1); err != nil {
		t.Fatal(err)
	}
	// bob labeled the third pair: it comes first for ann (completing a double label).
	d.RecordEvent(ctx, c.ID, pairs[2], NewLabel{Annotator: "bob", Category: "exact"}, 0)
	// ann skipped the first pair: it comes last.
	d.RecordEvent(ctx, c.ID, pairs[0], NewLabel{Annotator: "ann", Kind: labels.KindSkip, Category: "skip"}, 0)
	// The queue's ranks put the last pair first among those nobody started.
	if err := d.SetQueueRanks(ctx, c.ID, []int64{pairs[3], pairs[0], pairs[1], pairs[2]}); err != nil {
		t.Fatal(err)
	}
	next := func(who string) (int64, error) {
		id, err := d.NextPair(ctx, c.ID, who, QueueFilter{})
		if errors.Is(err, ErrNotFound) {
			id, err = d.NextPair(ctx, c.ID, who, QueueFilter{Skipped: true})
		}
		return id, err
	}
	var order []int64
	for range len(pairs) + 1 {
		id, err := next("ann")
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, id)
		if _, err := d.RecordEvent(ctx, c.ID, id, NewLabel{Annotator: "ann", Category: "exact"}, 0); err != nil {
			t.Fatal(err)
		}
	}
	want := []int64{pairs[2], pairs[3], pairs[1], pairs[0]}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("ann's queue %v; want %v", order, want)
	}
	recent, err := d.RecentDecisions(ctx, c.ID, "ann", 2)
	if err != nil || len(recent) != 2 || recent[0].PairID != pairs[0] || recent[1].PairID != pairs[1] {
		t.Errorf("RecentDecisions = %+v, %v; want pairs %d, %d", recent, err, pairs[0], pairs[1])
	}
	// Every pair wants two labels and has ann's; bob's queue holds all but the one he
	// labeled. An undo puts a pair back in its annotator's queue.
	if id, err := next("bob"); err != nil || id != pairs[3] {
		t.Errorf("bob's next pair %d, %v; want %d", id, err, pairs[3])
	}
	latest, _ := d.LatestEvent(ctx, pairs[1], "ann")
	if _, err := d.RecordEvent(ctx, c.ID, pairs[1], NewLabel{Annotator: "ann", Kind: labels.KindRetract, Category: "exact"}, latest.ID); err != nil {
		t.Fatal(err)
	}
	if id, err := next("ann"); err != nil || id != pairs[1] {
		t.Errorf("after an undo ann's next pair is %d, %v; want %d back", id, err, pairs[1])
	}
}

func TestScoresAndTexts(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	c, pairs := withPairs(t, d, 3)
	refs, err := d.PairsWithoutScores(ctx, c.ID)
	if err != nil || len(refs) != 2 {
		t.Fatalf("PairsWithoutScores = %v, %v; want both pairs", refs, err)
	}
	texts, err := d.DocumentTexts(ctx, []int64{refs[0].DocB, refs[0].DocA, refs[0].DocB})
	if err != nil || len(texts) != 3 || texts[0] != texts[2] || !strings.Contains(texts[1], "document 0") {
		t.Errorf("DocumentTexts = %q, %v; want texts aligned with the ids", texts, err)
	}
	if _, err := d.DocumentTexts(ctx, []int64{refs[0].DocA, 9999}); !errors.Is(err, ErrNotFound) {
		t.Errorf("DocumentTexts with an unknown id: %v; want ErrNotFound", err)
	}
	if err := d.SetPairScores(ctx, c.ID, c.Spec, []PairScore{{ID: pairs[0], Similarity: 0.5, Estimate: math.Nextafter(0.5, 1)}}); err != nil {
		t.Fatal(err)
	}
	other, _ := lsh.ParseSpec("k=7")
	if err := d.SetPairScores(ctx, c.ID, other, []PairScore{{ID: pairs[1], Similarity: 0.5, Estimate: 0.5}}); !errors.Is(err, ErrStale) {
		t.Errorf("SetPairScores under another spec: %v; want ErrStale", err)
	}
	if refs, _ := d.PairsWithoutScores(ctx, c.ID); len(refs) != 1 || refs[0].ID != pairs[1] {
		t.Errorf("PairsWithoutScores after scoring one: %v", refs)
	}
}

func TestSignatureStore(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	ds, docs := withDocs(t, d, "s", 3)
	spec, _ := lsh.ParseSpec("k=4")
	other, _ := lsh.ParseSpec("k=8")
	if err := d.StoreSignatures(ctx, spec, docs[:2], []lsh.Signature{{1, 2, 3, 4}, {5, 6, 7, 8}}); err != nil {
		t.Fatal(err)
	}
	// A signature of the wrong length (another k under a colliding id) counts as missing.
	if _, err := d.w.ExecContext(ctx, `UPDATE signatures SET signature = x'0102' WHERE document_id = ?`, docs[1]); err != nil {
		t.Fatal(err)
	}
	ids, sigs, err := d.DatasetSignatures(ctx, ds.ID, spec)
	if err != nil || fmt.Sprint(ids) != fmt.Sprint(docs) || fmt.Sprint(sigs) != "[[1 2 3 4] [] []]" {
		t.Errorf("DatasetSignatures = %v %v, %v; want the first stored only", ids, sigs, err)
	}
	for _, tc := range []struct {
		name string
		spec lsh.Spec
		want []int64
	}{
		{"stored spec", spec, docs[1:]},
		{"other spec", other, docs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			missing, err := d.MissingSignatures(ctx, ds.ID, tc.spec)
			if err != nil || fmt.Sprint(missing) != fmt.Sprint(tc.want) {
				t.Errorf("MissingSignatures = %v, %v; want %v", missing, err, tc.want)
			}
		})
	}
	if err := d.StoreSignatures(ctx, spec, docs, nil); err == nil {
		t.Error("StoreSignatures with fewer signatures than ids: no error")
	}
}
