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
	Annotator string // for rows without an annotator; default "import"
	SkipBad   bool
	Actor     string
	MaxListed int
}

// LabelReport says what a label import did.
type LabelReport struct {
	CampaignID int64
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
		annotator := row.annotator
		if annotator == "" {
			annotator = opt.Annotator
		}
		var kind labels.Kind
		switch row.kind {
		case "", string(labels.KindLabel):
			kind = labels.KindLabel
		case string(labels.KindAdjudication):
			kind = labels.KindAdjudication
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
	if err := store.AddLabels(ctx, camp.ID, out, opt.Actor); err != nil {
		return LabelReport{}, err
	}
	if _, err := campaign.ScorePairs(ctx, store, camp.ID); err != nil {
		return rep, err
	}
	return rep, nil
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
