package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
)

// The files under testdata hold real documents (Debian Administrator's Handbook
// appendix sections from the shared corpus, in the en-US and ar-MA editions, whose
// English texts are near copies) with ids written as JSON numbers in several forms.

// importNumeric imports testdata/numeric-ids.jsonl into a new store.
func importNumeric(t *testing.T) (*db.DB, db.Dataset) {
	t.Helper()
	store := dbtest.OpenFile(t, filepath.Join(t.TempDir(), "s.db"))
	rep, err := File(context.Background(), store, "testdata/numeric-ids.jsonl", Options{Dataset: "handbook"})
	if err != nil {
		t.Fatal(err)
	}
	return store, rep.Dataset
}

func TestNumericIDsMatchAcrossFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, ds := importNumeric(t)
	// Labels written with numbers in other forms (1e3 for 1000, 2.0 for 2, -0.0 for 0)
	// find the documents.
	rep, err := LabelsFile(ctx, store, "testdata/numeric-labels.jsonl", LabelOptions{DatasetID: ds.ID, Create: true})
	if err != nil {
		t.Fatalf("numeric-labels.jsonl: %v", err)
	}
	if rep.New != 4 || rep.Rows != 4 {
		t.Errorf("numeric-labels.jsonl: report %+v; want 4 new of 4 rows", rep)
	}
	// In CSV an id is text: "2" and "1000" match, "1e3" is not the id 1000's text.
	_, err = LabelsFile(ctx, store, "testdata/numeric-labels.csv", LabelOptions{DatasetID: ds.ID})
	var le *LabelError
	if !errors.As(err, &le) || le.Report.Rejected != 1 || le.Report.Errors[0].Error() != `numeric-labels.csv:4: field a: unknown document id "1e3" in this dataset` {
		t.Fatalf("numeric-labels.csv: err = %v; want one bad row, line 4", err)
	}
	rep, err = LabelsFile(ctx, store, "testdata/numeric-labels.csv", LabelOptions{DatasetID: ds.ID, SkipBad: true})
	if err != nil || rep.New != 2 {
		t.Errorf("numeric-labels.csv with SkipBad: %+v, %v; want 2 new", rep, err)
	}
}

func TestReimportOfIdenticalFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, first := importNumeric(t)
	_, err := File(ctx, store, "testdata/numeric-ids.jsonl", Options{Dataset: "handbook"})
	var same *IdenticalError
	if !errors.As(err, &same) || same.Earlier.ID != first.ID || !strings.Contains(err.Error(), `identical to dataset "handbook" version 1 (6 documents`) {
		t.Fatalf("second import: err = %v; want an *IdenticalError naming version 1", err)
	}
	if list, _ := store.Datasets(ctx); len(list) != 1 {
		t.Errorf("%d dataset versions after a refused identical import; want 1", len(list))
	}
	if n, _ := store.CountDocuments(ctx); n != 6 {
		t.Errorf("%d documents after a refused identical import; want 6", n)
	}
	// Another name is another dataset: no refusal.
	if _, err := File(ctx, store, "testdata/numeric-ids.jsonl", Options{Dataset: "copy"}); err != nil {
		t.Errorf("same file as another dataset: %v", err)
	}
	rep, err := File(ctx, store, "testdata/numeric-ids.jsonl", Options{Dataset: "handbook", NewVersion: true})
	if err != nil || rep.Dataset.Version != 2 {
		t.Errorf("with NewVersion: %+v, %v; want version 2", rep.Dataset, err)
	}
}

func TestLabelImportCampaignAndRepeats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, ds := importNumeric(t)
	// A campaign that is not there is refused unless the import may create it.
	_, err := LabelsFile(ctx, store, "testdata/numeric-labels.jsonl", LabelOptions{DatasetID: ds.ID, Campaign: "defualt"})
	if !errors.Is(err, ErrNoCampaign) || !strings.Contains(err.Error(), `"defualt" in this dataset (it has none yet)`) {
		t.Fatalf("unknown campaign: err = %v; want ErrNoCampaign", err)
	}
	if names, _ := store.CampaignNames(ctx, ds.ID); len(names) != 0 {
		t.Fatalf("campaigns after a refused import: %q", names)
	}
	rep, err := LabelsFile(ctx, store, "testdata/numeric-labels.jsonl", LabelOptions{DatasetID: ds.ID, Campaign: "gold", Create: true})
	if err != nil || !rep.Created || rep.New != 4 || rep.Unchanged != 0 {
		t.Fatalf("first import: %+v, %v", rep, err)
	}
	_, err = LabelsFile(ctx, store, "testdata/numeric-labels.jsonl", LabelOptions{DatasetID: ds.ID, Campaign: "gold-2"})
	if !errors.Is(err, ErrNoCampaign) || !strings.Contains(err.Error(), `it has "gold"`) {
		t.Errorf("second unknown campaign: err = %v; want the existing one named", err)
	}
	// The same file again: nothing new, every row unchanged, no event appended.
	before, _ := store.LabelMark(ctx, rep.CampaignID)
	again, err := LabelsFile(ctx, store, "testdata/numeric-labels.jsonl", LabelOptions{DatasetID: ds.ID, Campaign: "gold", Create: true})
	if err != nil || again.Created || again.New != 0 || again.Unchanged != 4 || again.CampaignID != rep.CampaignID {
		t.Errorf("repeat import: %+v, %v; want 0 new, 4 unchanged in the same campaign", again, err)
	}
	if after, _ := store.LabelMark(ctx, rep.CampaignID); after != before {
		t.Errorf("label log moved from %+v to %+v on a repeat import", before, after)
	}
	// A changed answer is new; the rest stay unchanged.
	changed := `{"a": 1, "b": 1000, "category": 5, "duplicate": "no", "annotator": "ann1"}` + "\n"
	rep2, err := Labels(ctx, store, strings.NewReader(changed), "changed.jsonl", LabelOptions{DatasetID: ds.ID, Campaign: "gold"})
	if err != nil || rep2.New != 1 || rep2.Unchanged != 0 {
		t.Errorf("changed label: %+v, %v; want 1 new", rep2, err)
	}
}

func TestLabelCountsAndRejects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, ds := importNumeric(t)
	_, err := LabelsFile(ctx, store, "testdata/eight-rows.csv", LabelOptions{DatasetID: ds.ID, Create: true})
	var le *LabelError
	if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), "label import refused, nothing was imported: 5 bad rows of 8;") {
		t.Fatalf("err = %v; want 5 bad rows of 8", err)
	}
	if r := le.Report; r.Rows != 8 || r.Accepted != 3 || r.Rejected != 5 || r.New != 0 {
		t.Errorf("refused report %+v; want 8 rows, 3 good, 5 bad, none new", r)
	}
	var rejects bytes.Buffer
	rep, err := LabelsFile(ctx, store, "testdata/eight-rows.csv", LabelOptions{DatasetID: ds.ID, Create: true, SkipBad: true, Rejects: &rejects})
	if err != nil || rep.New != 3 || rep.Rejected != 5 || rep.Rows != 8 {
		t.Fatalf("skip-bad: %+v, %v", rep, err)
	}
	lines := strings.Split(strings.TrimSpace(rejects.String()), "\n")
	wantNotes := []string{"unknown id", "same document", "unknown category", "partial needs a duplicate answer", "not yes or no"}
	if len(lines) != len(wantNotes) {
		t.Fatalf("rejects file has %d lines; want %d:\n%s", len(lines), len(wantNotes), rejects.String())
	}
	for i, line := range lines {
		var got struct {
			Place, Field, Reason string
			Record               map[string]string
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("rejects line %d: %v", i+1, err)
		}
		if got.Place != fmt.Sprintf("eight-rows.csv:%d", i+5) || got.Reason == "" || got.Record["note"] != wantNotes[i] || got.Record["annotator"] != "ann1" {
			t.Errorf("rejects line %d = %+v; want the row of line %d (note %q) with its reason", i+1, got, i+5, wantNotes[i])
		}
	}
}

func TestDocumentRejectsHoldTheRecords(t *testing.T) {
	t.Parallel()
	store := dbtest.OpenFile(t, filepath.Join(t.TempDir(), "s.db"))
	var rejects bytes.Buffer
	rep, err := File(context.Background(), store, "testdata/fraction-ids.jsonl", Options{SkipBad: true, Rejects: &rejects})
	if err != nil || rep.Accepted != 2 || rep.Rejected != 2 {
		t.Fatalf("fraction-ids.jsonl: %+v, %v", rep, err)
	}
	lines := strings.Split(strings.TrimSpace(rejects.String()), "\n")
	for i, want := range []string{"2.5", "1e-3"} {
		var got struct {
			Place, Field, Reason string
			Record               map[string]json.RawMessage
		}
		if i >= len(lines) || json.Unmarshal([]byte(lines[i]), &got) != nil {
			t.Fatalf("rejects file:\n%s", rejects.String())
		}
		if got.Place != fmt.Sprintf("fraction-ids.jsonl:%d", i+2) || got.Field != "id" || string(got.Record["id"]) != want || len(got.Record["text"]) < 200 {
			t.Errorf("rejects line %d = place %q field %q id %s; want the whole record of line %d", i+1, got.Place, got.Field, got.Record["id"], i+2)
		}
	}
	for _, e := range rep.Errors {
		if e.Record != nil {
			t.Errorf("the report keeps the record of %v; want only the rejects file to", e)
		}
	}
}

func TestContradictingRowsWarnAndStay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, ds := importNumeric(t)
	rep, err := LabelsFile(ctx, store, "testdata/contradicting.csv", LabelOptions{DatasetID: ds.ID, Create: true})
	if err != nil || rep.New != 5 {
		t.Fatalf("contradicting.csv: %+v, %v; want 5 new", rep, err)
	}
	var got []string
	for _, w := range rep.Warnings {
		got = append(got, w.Error())
	}
	want := []string{
		`contradicting.csv:2: field duplicate: category "exact copy" says duplicate, this row says not a duplicate: kept as the row says`,
		`contradicting.csv:4: field duplicate: category "different" says not a duplicate, this row says duplicate: kept as the row says`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || rep.Overrides != 2 {
		t.Errorf("warnings = %q (%d overrides); want %q", got, rep.Overrides, want)
	}
	answers, err := store.Answers(ctx, rep.CampaignID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(answers) != "[{boilerplate false 1} {boilerplate true 1} {different true 1} {exact false 1} {format true 1}]" {
		t.Errorf("stored answers = %v", answers)
	}
}

// A refused label file lists its bad rows in the file's order, and "first" is the first
// bad row: a row the reader refuses (invalid UTF-8) does not jump ahead of an earlier row
// refused by the checks (an unknown document).
func TestLabelErrorsInFileOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, ds := importNumeric(t)
	file := "a,b,category,annotator\n999999,1,exact,\n1,2,exact,\n1,3,exact,\xff\n1,4,bogus,\n"
	_, err := Labels(ctx, store, strings.NewReader(file), "order.csv", LabelOptions{DatasetID: ds.ID, Create: true})
	var le *LabelError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v; want a LabelError", err)
	}
	if want := "; first: order.csv:2: "; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v; want it to name row 2 first (%q)", err, want)
	}
	var got []int
	for _, e := range le.Report.Errors {
		got = append(got, e.Line)
	}
	if want := []int{2, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("bad rows listed at lines %v; want %v", got, want)
	}
}
