package db

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// stagedRows makes n label rows over docs: pairs (0, i) and (i, i+1), source "src".
func stagedRows(docs []int64, n int) []NewLabel {
	out := make([]NewLabel, n)
	for i := range out {
		a, b := docs[0], docs[1+i%(len(docs)-1)]
		if i%2 == 1 {
			a, b = docs[1+i%(len(docs)-2)], docs[2+i%(len(docs)-2)]
		}
		out[i] = NewLabel{DocA: a, DocB: b, Annotator: "import:src", Category: "exact", Duplicate: i%3 != 0, Note: fmt.Sprint(i)}
	}
	return out
}

func (d *DB) countWhere(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := d.r.QueryRowContext(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Staged rows are invisible; a discard or the janitor removes a staging import whole,
// and the janitor finishes a publishing one that stopped halfway.
func TestLabelImportStagingAndJanitor(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	ds, docs := withDocs(t, d, "s", 40)
	c, err := d.EnsureCampaign(ctx, ds.ID, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 3000
	if testing.Short() {
		n = 600 // still several batches: under -race on a busy machine each batch shrinks to a few rows
	}
	rows := stagedRows(docs, n)
	nothingVisible := func(when string) {
		t.Helper()
		if n := d.countWhere(t, `SELECT count(*) FROM label_events`); n != 0 {
			t.Errorf("%s: %d label events visible; want 0", when, n)
		}
		if n := d.countWhere(t, `SELECT count(*) FROM label_pairs`); n != 0 {
			t.Errorf("%s: %d pairs visible; want 0", when, n)
		}
	}

	// stage begins an import of f.csv by t and stages rows in it.
	stage := func(t *testing.T, rows []NewLabel) int64 {
		t.Helper()
		id, err := d.BeginLabelImport(ctx, NewLabelImport{CampaignID: c.ID, ImportedBy: "t", File: "f.csv"})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.StageLabels(ctx, id, rows, nil); err != nil {
			t.Fatal(err)
		}
		return id
	}

	t.Run("discard", func(t *testing.T) {
		id := stage(t, rows)
		nothingVisible("staged")
		if err := d.DiscardLabelImport(ctx, id); err != nil {
			t.Fatal(err)
		}
		if n := d.countWhere(t, `SELECT count(*) FROM label_import_rows`) + d.countWhere(t, `SELECT count(*) FROM label_imports`); n != 0 {
			t.Errorf("%d staging rows and imports after a discard; want 0", n)
		}
	})

	t.Run("janitor discards a staging import", func(t *testing.T) {
		id := stage(t, rows[:500])
		if n, err := d.CleanStaleImports(ctx, 0); err != nil || n != 1 {
			t.Errorf("CleanStaleImports = %d, %v; want 1 import handled", n, err)
		}
		if _, err := d.LabelImportByID(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("LabelImportByID after the janitor: %v; want ErrNotFound", err)
		}
		nothingVisible("cleaned")
	})

	t.Run("janitor finishes a publishing import", func(t *testing.T) {
		id := stage(t, rows)
		cut, cancel := context.WithCancel(ctx)
		_, err := d.PublishLabelImport(cut, id, func(published, total int) { cancel() }) // the process "dies" after one batch
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("PublishLabelImport cut short = %v; want context.Canceled", err)
		}
		li, err := d.LabelImportByID(ctx, id)
		if err != nil || li.State != "publishing" || li.Published == 0 || li.Published >= len(rows) {
			t.Fatalf("import after one batch = %+v, %v; want publishing, part published", li, err)
		}
		if n, err := d.CleanStaleImports(ctx, 0); err != nil || n != 1 {
			t.Errorf("CleanStaleImports = %d, %v; want 1 import handled", n, err)
		}
		if li, err = d.LabelImportByID(ctx, id); err != nil || li.State != "done" || li.Published != len(rows) {
			t.Errorf("import after the janitor = %+v, %v; want done, %d published", li, err, len(rows))
		}
		if n := d.countWhere(t, `SELECT count(*) FROM label_events WHERE import_id = ?`, id); n != len(rows) {
			t.Errorf("%d label events from the import; want %d, each row once", n, len(rows))
		}
		if n := d.countWhere(t, `SELECT count(*) FROM label_import_rows`); n != 0 {
			t.Errorf("%d staging rows left after publishing; want 0", n)
		}
		// Each event names the annotator's previous one on the pair, as AddLabels does.
		if n := d.countWhere(t, `SELECT count(*) FROM label_events e WHERE e.previous_id IS NOT
			(SELECT max(x.id) FROM label_events x WHERE x.pair_id = e.pair_id AND x.annotator = e.annotator AND x.id < e.id)`); n != 0 {
			t.Errorf("%d events whose previous_id is not the annotator's previous event", n)
		}
		// The standing labels follow the last row of each pair.
		hist, err := d.PairHistory(ctx, d.firstPair(t, c.ID))
		if err != nil || len(hist) == 0 || hist[0].Import.ID != id || hist[0].Import.File != "f.csv" || hist[0].Import.ImportedBy != "t" {
			t.Errorf("PairHistory = %+v, %v; want events of import %d from f.csv by t", hist, err, id)
		}
	})
}

func (d *DB) firstPair(t *testing.T, campaignID int64) int64 {
	t.Helper()
	refs, err := d.PairDocs(t.Context(), campaignID)
	if err != nil || len(refs) == 0 {
		t.Fatalf("PairDocs = %v, %v", refs, err)
	}
	return refs[0].ID
}

// Accounts cannot take the names rule-made and imported labels carry.
func TestReservedAccountNames(t *testing.T) {
	t.Parallel()
	d := openTest(t)
	for _, name := range []string{labels.RuleAnnotator, "Demo-Rules", "import:alice"} {
		if _, err := d.CreateUser(t.Context(), "test", name, "annotator", "x"); !errors.Is(err, labels.ErrReservedName) {
			t.Errorf("CreateUser(%q) = %v; want labels.ErrReservedName", name, err)
		}
	}
	if _, err := d.CreateUser(t.Context(), "test", "alice", "annotator", "x"); err != nil {
		t.Errorf("CreateUser(alice) = %v", err)
	}
}
