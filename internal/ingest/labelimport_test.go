package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// withDocs imports n documents d0 ... d<n-1> as dataset "big" and returns it.
func withDocs(t *testing.T, store *db.DB, dir string, n int) db.Dataset {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"d%d","text":"document number %d says %d things"}`+"\n", i, i, i*7)
	}
	rep, err := File(context.Background(), store, writeFile(t, dir, "docs.jsonl", b.String()), Options{Dataset: "big"})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Dataset
}

// standing returns a campaign's standing labels by pair id and annotator.
func standing(t *testing.T, store *db.DB, campaignID int64) map[string]db.StandingLabel {
	t.Helper()
	pls, err := store.CampaignLabels(context.Background(), campaignID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]db.StandingLabel{}
	for _, pl := range pls {
		for _, l := range pl.Labels {
			out[fmt.Sprintf("%d/%s", pl.PairID, l.Annotator)] = l
		}
	}
	return out
}

// An import cannot make a label pass for an account's own, nor overwrite a person's or
// the rules' labels: rows are stored under import sources (import:alice), adjudication
// rows only from someone who may adjudicate and as theirs, and the pages can name the
// importer and the file.
func TestImportedLabelsCannotPassForAccounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := dbtest.OpenFile(t, filepath.Join(dir, "s.db"))
	ctx := context.Background()
	ds := withDocs(t, store, dir, 6)
	alice, err := store.CreateUser(ctx, "test", "alice", auth.Annotator, "x")
	if err != nil {
		t.Fatal(err)
	}
	rev, err := store.CreateUser(ctx, "test", "rev", auth.Reviewer, "x")
	if err != nil {
		t.Fatal(err)
	}
	byRev := LabelOptions{DatasetID: ds.ID, Create: true, Actor: rev.Name, UserID: rev.ID, MayAdjudicate: true}
	importCSV := func(name, body string, opt LabelOptions) (LabelReport, error) {
		return LabelsFile(ctx, store, writeFile(t, dir, name, "a,b,category,duplicate,annotator,note,kind\n"+body), opt)
	}

	// The demo loader (no account) keeps the rules' own name: rule labels stay rules.
	rep, err := importCSV("rules.csv", "d0,d1,minor,,demo-rules,rule fired,\n", LabelOptions{DatasetID: ds.ID, Create: true, Actor: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	camp := rep.CampaignID
	pair01 := onlyPair(t, store, camp, "")
	if l, ok := standing(t, store, camp)[pair01+"/"+labels.RuleAnnotator]; !ok || l.ByAccount {
		t.Errorf("the demo loader's rule label = %+v (found %v); want a rule label named %s", l, ok, labels.RuleAnnotator)
	}

	// A reviewer's file naming alice and the rules.
	if _, err := importCSV("first.csv", "d0,d1,different,,demo-rules,,\nd0,d2,minor,,alice,,\n", byRev); err != nil {
		t.Fatal(err)
	}
	st := standing(t, store, camp)
	if l := st[pair01+"/"+labels.RuleAnnotator]; l.Category != "minor" {
		t.Errorf("a person's import naming %s changed the rule label to %q; want it untouched", labels.RuleAnnotator, l.Category)
	}
	if l := st[pair01+"/import:demo-rules"]; l.Category != "different" || l.ByAccount {
		t.Errorf("the row naming demo-rules = %+v; want stored as source import:demo-rules, not by an account", l)
	}
	pair02 := onlyPair(t, store, camp, "d2")
	if _, ok := st[pair02+"/alice"]; ok {
		t.Errorf("an imported row naming alice stands as alice's own label")
	}
	if l, ok := st[pair02+"/import:alice"]; !ok || l.ByAccount {
		t.Errorf("the row naming alice = %+v (found %v); want source import:alice, not by an account", l, ok)
	}
	// Alice labels the pair herself: the import is not her previous label, so her first
	// decision is not refused as stale, and a later import naming her does not touch it.
	id02, _ := strconv.ParseInt(pair02, 10, 64)
	if _, err := store.RecordEvent(ctx, camp, id02, db.NewLabel{Annotator: alice.Name, UserID: alice.ID, Category: "different"}, 0); err != nil {
		t.Fatalf("alice's own first label after an import naming her: %v", err)
	}
	if _, err := importCSV("second.csv", "d0,d2,exact,,alice,,\n", byRev); err != nil {
		t.Fatal(err)
	}
	if l := standing(t, store, camp)[pair02+"/alice"]; l.Category != "different" || !l.ByAccount {
		t.Errorf("alice's label after a second import naming her = %+v; want her own 'different'", l)
	}
	hist, err := store.PairHistory(ctx, id02)
	if err != nil {
		t.Fatal(err)
	}
	if e := hist[0]; e.Annotator != "import:alice" || e.Import.ImportedBy != "rev" || e.Import.File != "first.csv" {
		t.Errorf("first event of the pair = %+v; want source import:alice, imported by rev from first.csv", e)
	}

	// Adjudications: only from someone who may adjudicate, and recorded as theirs.
	if _, err := importCSV("adj.csv", "d0,d2,exact,,alice,settled,adjudication\n", byRev); err != nil {
		t.Fatal(err)
	}
	if l, ok := standing(t, store, camp)[pair02+"/rev"]; !ok || l.Kind != labels.KindAdjudication || !l.ByAccount {
		t.Errorf("an adjudication row imported by rev = %+v (found %v); want rev's own adjudication", l, ok)
	}
	for _, tc := range []struct {
		name string
		opt  LabelOptions
	}{
		{"an account that may not adjudicate", LabelOptions{DatasetID: ds.ID, Actor: alice.Name, UserID: alice.ID}},
		{"the command line without an account", LabelOptions{DatasetID: ds.ID, Actor: "cli:root", MayAdjudicate: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := importCSV("adj2.csv", "d0,d3,exact,,rev,,adjudication\n", tc.opt)
			var le *LabelError
			if !errors.As(err, &le) || len(le.Report.Errors) != 1 || le.Report.Errors[0].Field != "kind" {
				t.Fatalf("adjudication row from %s: %v; want the row refused on field kind", tc.name, err)
			}
			if _, ok := standing(t, store, camp)[onlyPair(t, store, camp, "d3")+"/rev"]; ok {
				t.Errorf("the refused adjudication was stored")
			}
		})
	}
}

// onlyPair returns the id (as text) of the campaign's pair of d0 and other ("" for d1),
// or "none".
func onlyPair(t *testing.T, store *db.DB, campaignID int64, other string) string {
	t.Helper()
	if other == "" {
		other = "d1"
	}
	pls, err := store.CampaignLabels(context.Background(), campaignID)
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range pls {
		a, _ := store.Document(context.Background(), pl.A)
		b, _ := store.Document(context.Background(), pl.B)
		if ids := []string{a.ExtID, b.ExtID}; slices.Contains(ids, "d0") && slices.Contains(ids, other) {
			return strconv.FormatInt(pl.PairID, 10)
		}
	}
	return "none"
}

// labelFile writes rows label rows over the documents d0 ... d<docs-1>, from five
// sources, with the row at bad (if >= 0) naming a document that is not there.
func labelFile(t testing.TB, dir string, rows, docs, bad int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, uint64(rows)))
	path := filepath.Join(dir, fmt.Sprintf("labels-%d.csv", rows))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "a,b,category,duplicate,annotator,note")
	cats := []string{"exact", "minor", "different", "translation"}
	for i := range rows {
		a := rng.IntN(docs)
		b := (a + 1 + rng.IntN(docs-1)) % docs
		bID := "d" + strconv.Itoa(b)
		if i == bad {
			bID = "missing-document"
		}
		// One answer per source and pair, as a file holds: a pair drawn again by the same
		// source gets the same category.
		src := rng.IntN(5)
		cat := cats[(min(a, b)*31+max(a, b)*17+src)%len(cats)]
		fmt.Fprintf(f, "d%d,%s,%s,,src%d,row %d\n", a, bID, cat, src, i)
	}
	return path
}

// A large label import stages and publishes in short transactions: people labeling
// meanwhile get their writes in (none refused), nothing of the import is visible before
// every row is staged, and the import lands whole. DEDUP_LABEL_ROWS sets its size (the
// report's 300,000: DEDUP_LABEL_ROWS=300000); the test logs the import's time and the
// writers' worst wait.
func TestLargeLabelImportLetsOthersWrite(t *testing.T) {
	rows, writers := 10000, 4
	if v := os.Getenv("DEDUP_LABEL_WRITERS"); v != "" {
		writers, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("DEDUP_LABEL_ROWS"); v != "" {
		var err error
		if rows, err = strconv.Atoi(v); err != nil {
			t.Fatalf("DEDUP_LABEL_ROWS=%q: %v", v, err)
		}
	}
	dir := t.TempDir()
	store := dbtest.OpenFile(t, filepath.Join(dir, "s.db"))
	ctx := context.Background()
	const docs = 2000
	ds := withDocs(t, store, dir, docs)
	camp, err := store.EnsureCampaign(ctx, ds.ID, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := store.DocumentIDs(ctx, ds.ID, []string{"d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"})
	if err != nil {
		t.Fatal(err)
	}
	var pairs []db.NewPair
	for i := 1; i <= 8; i++ {
		pairs = append(pairs, db.NewPair{DocA: ids["d0"], DocB: ids["d"+strconv.Itoa(i)], Origin: "test", Wanted: 1})
	}
	if _, err := store.AddPairs(ctx, camp.ID, pairs, "test"); err != nil {
		t.Fatal(err)
	}
	refs, err := store.PairDocs(ctx, camp.ID)
	if err != nil {
		t.Fatal(err)
	}
	path := labelFile(t, dir, rows, docs, -1)

	// People labeling while the import runs: each writer labels its own pairs over and
	// over (an edit names the writer's previous event).
	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		mu       sync.Mutex
		worst    time.Duration
		worstAt  string // the import's phase when the worst wait began
		phase    atomic.Value
		writes   int
		failures []error
	)
	label := func(w int, prev *int64) error {
		p := refs[w%len(refs)]
		start := time.Now()
		during, _ := phase.Load().(string)
		ev, err := store.RecordEvent(ctx, camp.ID, p.ID, db.NewLabel{Annotator: fmt.Sprintf("writer%d", w), UserID: 0,
			Category: []string{"minor", "different"}[rand.IntN(2)]}, *prev)
		took := time.Since(start)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failures = append(failures, err)
			return err
		}
		*prev = ev.ID
		writes++
		if took > worst {
			worst, worstAt = took, during
		}
		return nil
	}
	for w := range writers {
		wg.Go(func() {
			var prev int64
			for !stop.Load() {
				if label(w, &prev) != nil {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}

	var midway atomic.Bool
	var midwayErr error
	phases := map[string]time.Time{} // when each phase was first and last reported
	opt := LabelOptions{DatasetID: ds.ID, Actor: "cli:test", Progress: func(p LabelProgress) {
		if _, ok := phases[p.Phase]; !ok {
			phases[p.Phase] = time.Now()
		}
		phase.Store(p.Phase)
		phases[p.Phase+" end"] = time.Now()
		if p.Phase != PhaseStaging || p.Done < p.Total/2 || midway.Swap(true) {
			return
		}
		// Halfway through staging: none of the import is visible, and a label can be
		// written now (were the import holding the write lock, this would wait for all
		// of it).
		for k, l := range standing(t, store, camp.ID) {
			if _, ok := labels.ImportSource(l.Annotator); ok {
				midwayErr = fmt.Errorf("label %s of the import visible halfway through staging", k)
				return
			}
		}
		var prev int64
		midwayErr = label(99, &prev)
	}}
	start := time.Now()
	phase.Store("before the import")
	rep, err := LabelsFile(ctx, store, path, opt)
	took := time.Since(start)
	mu.Lock()
	during := writes
	mu.Unlock()
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !midway.Load() || midwayErr != nil {
		t.Errorf("halfway through staging: reached %v, %v; want reached, nothing visible and a label written", midway.Load(), midwayErr)
	}
	if len(failures) > 0 {
		t.Errorf("%d of the writers' labels failed while the import ran; first: %v", len(failures), failures[0])
	}
	if during == 0 {
		t.Errorf("no writer's label landed while the import ran")
	}
	if rep.New+rep.Unchanged != rows || rep.Rejected != 0 {
		t.Errorf("report = %d new + %d unchanged, %d rejected; want %d rows", rep.New, rep.Unchanged, rep.Rejected, rows)
	}
	// Every row of the file stands, or was replaced by a later row of the same source.
	imported := 0
	for _, l := range standing(t, store, camp.ID) {
		if _, ok := labels.ImportSource(l.Annotator); ok {
			imported++
		}
	}
	if imported == 0 || imported > rows {
		t.Errorf("%d imported standing labels; want between 1 and %d", imported, rows)
	}
	t.Logf("imported %d label rows (%d standing) in %.1f s (%.0f rows/s): reading %.1f s, staging %.1f s, publishing %.1f s, scoring and ranking the new pairs %.1f s; "+
		"%d labels written beside it, worst wait %v (began while %s)",
		rows, imported, took.Seconds(), float64(rows)/took.Seconds(), phases[PhaseStaging].Sub(start).Seconds(),
		phases[PhaseStaging+" end"].Sub(phases[PhaseStaging]).Seconds(), phases[PhasePublishing+" end"].Sub(phases[PhasePublishing]).Seconds(),
		start.Add(took).Sub(phases[PhaseScoring]).Seconds(), during, worst.Round(time.Millisecond), worstAt)
}

// A bad row halfway through a large file, or a cancel halfway through staging, leaves
// nothing stored: no label, no pair, no staged row for the janitor to find.
func TestLargeLabelImportAllOrNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := dbtest.OpenFile(t, filepath.Join(dir, "s.db"))
	ctx := context.Background()
	const docs, rows = 500, 8000
	ds := withDocs(t, store, dir, docs)
	camp, err := store.EnsureCampaign(ctx, ds.ID, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	nothing := func(t *testing.T) {
		t.Helper()
		if pls, err := store.CampaignLabels(ctx, camp.ID); err != nil || len(pls) != 0 {
			t.Errorf("CampaignLabels = %d pairs, %v; want none", len(pls), err)
		}
		if refs, err := store.PairDocs(ctx, camp.ID); err != nil || len(refs) != 0 {
			t.Errorf("PairDocs = %d pairs, %v; want none", len(refs), err)
		}
		if n, err := store.CleanStaleImports(ctx, 0); err != nil || n != 0 {
			t.Errorf("CleanStaleImports = %d, %v; want nothing left behind", n, err)
		}
	}
	t.Run("bad row halfway", func(t *testing.T) {
		_, err := LabelsFile(ctx, store, labelFile(t, t.TempDir(), rows, docs, rows/2), LabelOptions{DatasetID: ds.ID, Actor: "t"})
		var le *LabelError
		if !errors.As(err, &le) || le.Report.Rejected != 1 || le.Report.Errors[0].Line != rows/2+2 {
			t.Fatalf("import with a bad row at line %d: %v; want a LabelError naming it", rows/2+2, err)
		}
		nothing(t)
	})
	t.Run("cancel halfway", func(t *testing.T) {
		cut, cancel := context.WithCancel(ctx)
		defer cancel()
		staged := 0
		_, err := LabelsFile(cut, store, labelFile(t, t.TempDir(), rows, docs, -1), LabelOptions{DatasetID: ds.ID, Actor: "t",
			Progress: func(p LabelProgress) {
				if p.Phase == PhaseStaging && p.Done >= p.Total/2 && staged == 0 {
					staged = p.Done
					cancel()
				}
			}})
		if !errors.Is(err, context.Canceled) || staged == 0 {
			t.Fatalf("import cancelled after %d staged rows: %v; want context.Canceled", staged, err)
		}
		nothing(t)
	})
}
