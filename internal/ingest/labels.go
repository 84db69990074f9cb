package ingest

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// LabelOptions tune a label import.
type LabelOptions struct {
	DatasetID int64
	Campaign  string // default "default"; created with the default categories if new
	Annotator string // the source of rows without an annotator; default "import"
	SkipBad   bool
	MaxListed int
	// Actor is who imports, as the audit log and the pages name them: an account's
	// name, or "cli:<user>" for the command line.
	Actor string
	// UserID is the importing account (0: the command line without -as, or the
	// program's own demo loader). Every row's annotator is stored as an import source
	// ("import:alice", see labels.ImportedAnnotator), never as an account's name; only
	// the program's own rule labels (labels.RuleAnnotator) imported without an account
	// keep their name, so the demo's rule labels stay rule labels.
	UserID int64
	// MayAdjudicate allows rows of kind adjudication (the importer may adjudicate:
	// reviewers and admins); each is recorded as the importer's own adjudication.
	MayAdjudicate bool
	// Progress, if set, is called as the import goes (outside any transaction).
	Progress func(LabelProgress)
}

// LabelProgress is how far a label import is.
type LabelProgress struct {
	Phase string // "reading", "staging" (invisible yet), "publishing" (committed; becoming visible)
	Done  int    // rows staged or published so far
	Total int    // rows to stage or publish
}

// Phases of a label import.
const (
	PhaseReading    = "reading"
	PhaseStaging    = "staging"
	PhasePublishing = "publishing"
)

// LabelReport says what a label import did.
type LabelReport struct {
	CampaignID int64
	ImportID   int64 // the recorded import (label_imports), once staging began
	Accepted   int
	Rejected   int
	Errors     []*corpus.RecordError
}

// ErrNoLabels is a label file without a single row.
var ErrNoLabels = errors.New("no labels in the file")

// LabelError is a refused label import: nothing landed. Either the file could not be
// read as labels at all (Err: no header row, an unreadable line, no rows), or rows were
// bad (Report lists them).
type LabelError struct {
	Report LabelReport
	Err    error
}

func (e *LabelError) Error() string {
	if e.Err != nil {
		return "label import refused, nothing was imported: " + e.Err.Error()
	}
	msg := fmt.Sprintf("label import refused, nothing was imported: %d bad row(s) of %d", e.Report.Rejected, e.Report.Accepted+e.Report.Rejected)
	if len(e.Report.Errors) > 0 {
		msg += "; first: " + e.Report.Errors[0].Error()
	}
	return msg
}

func (e *LabelError) Unwrap() error { return e.Err }

// labelRow is one row of a label file before validation.
type labelRow struct {
	place                                            corpus.Place
	a, b, category, duplicate, annotator, note, kind string
}

// LabelsFile imports labels from a CSV/TSV or JSONL file with the fields a, b, category,
// duplicate, annotator and note; a and b are the documents' external ids.
func LabelsFile(ctx context.Context, store *db.DB, path string, opt LabelOptions) (LabelReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return LabelReport{}, err
	}
	defer f.Close()
	return Labels(ctx, store, f, filepath.Base(path), opt)
}

// Labels imports labels from r; the format comes from the name's extension.
func Labels(ctx context.Context, store *db.DB, r io.Reader, name string, opt LabelOptions) (LabelReport, error) {
	format, err := corpus.DetectFormat(name)
	if err != nil {
		return LabelReport{}, err
	}
	if opt.Campaign == "" {
		opt.Campaign = "default"
	}
	if opt.Annotator == "" {
		opt.Annotator = "import"
	}
	if opt.MaxListed <= 0 {
		opt.MaxListed = 100
	}
	progress := func(p LabelProgress) {
		if opt.Progress != nil {
			opt.Progress(p)
		}
	}
	progress(LabelProgress{Phase: PhaseReading})
	rows, bad, err := readLabelRows(r, name, format)
	if err != nil {
		return LabelReport{}, &LabelError{Err: err}
	}
	camp, err := store.EnsureCampaign(ctx, opt.DatasetID, opt.Campaign, nil)
	if err != nil {
		return LabelReport{}, err
	}
	categories := camp.Categories
	var ext []string
	for _, row := range rows {
		ext = append(ext, row.a, row.b)
	}
	known, err := store.DocumentIDs(ctx, opt.DatasetID, ext)
	if err != nil {
		return LabelReport{}, err
	}
	rep := LabelReport{CampaignID: camp.ID}
	addBad := func(e *corpus.RecordError) {
		rep.Rejected++
		if len(rep.Errors) < opt.MaxListed {
			rep.Errors = append(rep.Errors, e)
		}
	}
	for _, e := range bad {
		addBad(e)
	}
	var out []db.NewLabel
	for _, row := range rows {
		fail := func(field, format string, args ...any) {
			addBad(&corpus.RecordError{Place: row.place, Field: field, Msg: fmt.Sprintf(format, args...)})
		}
		switch {
		case row.a == "":
			fail("a", "missing")
			continue
		case row.b == "":
			fail("b", "missing")
			continue
		case row.a == row.b:
			fail("b", "the same document as a")
			continue
		}
		if _, ok := known[row.a]; !ok {
			fail("a", "unknown document id %q in this dataset", row.a)
			continue
		}
		if _, ok := known[row.b]; !ok {
			fail("b", "unknown document id %q in this dataset", row.b)
			continue
		}
		cat, ok := labels.Find(categories, row.category)
		if !ok {
			fail("category", "%q is not in the campaign's list (%s)", row.category, labels.Keys(categories))
			continue
		}
		dup, err := labels.ResolveDuplicate(cat, row.duplicate)
		if err != nil {
			fail("duplicate", "%v", err)
			continue
		}
		source := row.annotator
		if source == "" {
			source = opt.Annotator
		}
		annotator := labels.ImportedAnnotator(source)
		if opt.UserID == 0 && source == labels.RuleAnnotator {
			annotator = source // the program's own rule labels (the demo's)
		}
		var kind labels.Kind
		switch row.kind {
		case "", string(labels.KindLabel):
			kind = labels.KindLabel
		case string(labels.KindAdjudication):
			if !opt.MayAdjudicate || opt.UserID == 0 {
				fail("kind", "adjudication rows are accepted only from an account that may adjudicate (reviewers and admins), and become that account's adjudications")
				continue
			}
			kind, annotator = labels.KindAdjudication, opt.Actor
		default:
			fail("kind", "%q is not label or adjudication", row.kind)
			continue
		}
		out = append(out, db.NewLabel{DocA: known[row.a], DocB: known[row.b], Origin: "import", Annotator: annotator,
			Kind: kind, Category: cat.Key, Duplicate: dup, Note: row.note})
	}
	rep.Accepted = len(out)
	if rep.Rejected > 0 && !opt.SkipBad {
		rep.Accepted = 0
		return rep, &LabelError{Report: rep}
	}
	if len(out) == 0 {
		return rep, &LabelError{Report: rep, Err: ErrNoLabels}
	}
	if rep.ImportID, err = writeLabels(ctx, store, camp.ID, name, out, opt, progress); err != nil {
		return LabelReport{}, err
	}
	if _, err := campaign.ScorePairs(ctx, store, camp.ID); err != nil {
		return rep, err
	}
	return rep, nil
}

// writeLabels records the import and its checked rows: staged in short transactions
// (invisible; discarded if staging fails or ctx is cancelled), then published in short
// transactions, so other writers (people labeling) wait for one batch at most. Once
// every row is staged the import is committed: publishing is not cancelled by ctx (an
// import half visible would be worse than a late cancel), and if the process dies
// meanwhile, the janitor (db.CleanStaleImports) finishes it.
func writeLabels(ctx context.Context, store *db.DB, campaignID int64, file string, out []db.NewLabel, opt LabelOptions, progress func(LabelProgress)) (int64, error) {
	id, err := store.BeginLabelImport(ctx, db.NewLabelImport{CampaignID: campaignID, UserID: opt.UserID, ImportedBy: opt.Actor, File: file})
	if err != nil {
		return 0, err
	}
	if err := store.StageLabels(ctx, id, out, func(n int) { progress(LabelProgress{Phase: PhaseStaging, Done: n, Total: len(out)}) }); err != nil {
		if derr := store.DiscardLabelImport(context.WithoutCancel(ctx), id); derr != nil {
			err = errors.Join(err, derr) // the janitor removes it later
		}
		return 0, err
	}
	err = store.PublishLabelImport(context.WithoutCancel(ctx), id, func(n, total int) {
		progress(LabelProgress{Phase: PhasePublishing, Done: n, Total: total})
	})
	return id, err
}

var labelFields = []string{"a", "b", "category", "duplicate", "annotator", "note", "kind"}

func readLabelRows(r io.Reader, name string, format corpus.Format) ([]labelRow, []*corpus.RecordError, error) {
	switch format {
	case corpus.CSV, corpus.TSV:
		return readLabelCSV(r, name, format)
	case corpus.JSONL:
		return readLabelJSONL(r, name)
	}
	return nil, nil, fmt.Errorf("%s: labels come as CSV, TSV or JSONL", name)
}

func readLabelCSV(r io.Reader, name string, format corpus.Format) ([]labelRow, []*corpus.RecordError, error) {
	cr := csv.NewReader(r)
	if format == corpus.TSV {
		cr.Comma = '\t'
	}
	header, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s:1: header: %v", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, need := range []string{"a", "b", "category"} {
		if _, ok := col[need]; !ok {
			return nil, nil, &corpus.RecordError{Place: corpus.Place{File: name, Line: 1}, Field: need, Msg: "no such column in the header (want " + strings.Join(labelFields, ", ") + ")"}
		}
	}
	get := func(rec []string, field string) string {
		if i, ok := col[field]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var rows []labelRow
	var bad []*corpus.RecordError
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, bad, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				bad = append(bad, &corpus.RecordError{Place: corpus.Place{File: name, Line: pe.StartLine}, Msg: pe.Err.Error()})
				continue
			}
			return nil, nil, err
		}
		line, _ := cr.FieldPos(0)
		place := corpus.Place{File: name, Line: line}
		valid := true
		for i, v := range rec {
			if !utf8.ValidString(v) {
				bad = append(bad, &corpus.RecordError{Place: place, Field: header[i], Msg: "invalid UTF-8"})
				valid = false
				break
			}
		}
		if !valid {
			continue
		}
		rows = append(rows, labelRow{place: place, a: get(rec, "a"), b: get(rec, "b"), category: get(rec, "category"),
			duplicate: get(rec, "duplicate"), annotator: get(rec, "annotator"), note: get(rec, "note"), kind: get(rec, "kind")})
	}
}

func readLabelJSONL(r io.Reader, name string) ([]labelRow, []*corpus.RecordError, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var rows []labelRow
	var bad []*corpus.RecordError
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		place := corpus.Place{File: name, Line: line}
		if !utf8.Valid(b) {
			bad = append(bad, &corpus.RecordError{Place: place, Msg: "invalid UTF-8"})
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			bad = append(bad, &corpus.RecordError{Place: place, Msg: "malformed JSON: " + err.Error()})
			continue
		}
		str := func(k string) (string, bool) {
			switch v := m[k].(type) {
			case nil:
				return "", true
			case string:
				return strings.TrimSpace(v), true
			case bool:
				return fmt.Sprint(v), true
			case float64:
				return fmt.Sprint(v), true
			}
			return "", false
		}
		row := labelRow{place: place}
		ok := true
		for _, f := range []struct {
			name string
			dst  *string
		}{{"a", &row.a}, {"b", &row.b}, {"category", &row.category}, {"duplicate", &row.duplicate}, {"annotator", &row.annotator}, {"note", &row.note}, {"kind", &row.kind}} {
			v, good := str(f.name)
			if !good {
				bad = append(bad, &corpus.RecordError{Place: place, Field: f.name, Msg: "want a string"})
				ok = false
				break
			}
			*f.dst = v
		}
		if ok {
			rows = append(rows, row)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return rows, bad, nil
}
