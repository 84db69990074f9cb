package db

import (
	"errors"
	"testing"
)

// Importing the same labels twice appends nothing the second time; the campaign's reads
// (answers, current and contested labels, labels among documents) see what was imported.
func TestImportLabelsTwiceAndTheReads(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	ds, docs := withDocs(t, d, "imp", 3)
	c, err := d.EnsureCampaign(ctx, ds.ID, "gold", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.CampaignNamed(ctx, ds.ID, "gold"); err != nil || got.ID != c.ID {
		t.Errorf("CampaignNamed(gold) = %+v, %v; want %d", got, err, c.ID)
	}
	if _, err := d.CampaignNamed(ctx, ds.ID, "silver"); !errors.Is(err, ErrNotFound) {
		t.Errorf("CampaignNamed(silver) = %v; want ErrNotFound", err)
	}
	if names, err := d.CampaignNames(ctx, ds.ID); err != nil || len(names) != 1 || names[0] != "gold" {
		t.Errorf("CampaignNames = %v, %v; want [gold]", names, err)
	}
	if all, err := d.Campaigns(ctx); err != nil || len(all) != 1 {
		t.Errorf("Campaigns = %+v, %v; want 1", all, err)
	}
	ls := []NewLabel{
		{DocA: docs[1], DocB: docs[0], Origin: "import", Annotator: "import:a", Category: "exact", Duplicate: true},
		{DocA: docs[0], DocB: docs[1], Origin: "import", Annotator: "import:b", Category: "different"},
		{DocA: docs[0], DocB: docs[2], Origin: "import", Annotator: "import:a", Category: "minor", Duplicate: true, Note: "n"},
	}
	for i, want := range []int{3, 0} {
		if n, err := d.ImportLabels(ctx, c.ID, ls, "cli:t"); err != nil || n != want {
			t.Fatalf("import %d: ImportLabels = %d, %v; want %d appended", i+1, n, err, want)
		}
	}
	ls[2].Note = "changed"
	if n, err := d.ImportLabels(ctx, c.ID, ls, "cli:t"); err != nil || n != 1 {
		t.Errorf("ImportLabels with one note changed = %d, %v; want 1", n, err)
	}
	answers, err := d.Answers(ctx, c.ID)
	if err != nil || len(answers) != 3 {
		t.Errorf("Answers = %+v, %v; want exact, different and minor", answers, err)
	}
	if cur, err := d.CurrentLabels(ctx, c.ID); err != nil || len(cur) != 3 {
		t.Errorf("CurrentLabels = %+v, %v; want 3", cur, err)
	}
	if con, err := d.ContestedLabels(ctx, c.ID); err != nil || len(con) != 2 {
		t.Errorf("ContestedLabels = %+v, %v; want the two labels of the pair a and b disagree on", con, err)
	}
	if among, err := d.LabelsAmong(ctx, docs[:2]); err != nil || len(among) != 1 || len(among[0].Labels) != 2 {
		t.Errorf("LabelsAmong(d0, d1) = %+v, %v; want their pair with 2 labels", among, err)
	}
	if qp, err := d.QueuePairs(ctx, c.ID); err != nil || len(qp) != 2 {
		t.Errorf("QueuePairs = %+v, %v; want 2", qp, err)
	}
	if _, err := d.LastServed(ctx, c.ID, "nobody"); err != nil && !errors.Is(err, ErrNotFound) {
		t.Errorf("LastServed(nobody) = %v", err)
	}
	mark, err := d.LabelMark(ctx, c.ID)
	if err != nil || mark.LastEvent == 0 {
		t.Errorf("LabelMark = %+v, %v; want a last event", mark, err)
	}
	events := 0
	if _, err := d.ReadLabels(ctx, c.ID, LabelRead{Revision: -1, Pairs: func(PairStat) error { return nil }, Event: func(EventRef) error { events++; return nil }}); err != nil || events == 0 {
		t.Errorf("ReadLabels read %d events, %v; want some", events, err)
	}
}
