package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// LabelOptions tune a label import. The command line's flags and the web form's fields
// fill the same options.
type LabelOptions struct {
	DatasetID int64
	Campaign  string // default "default"
	// Create makes the campaign, with the default categories, when the dataset has none
	// of that name; without it a name that is not there is refused (a typo would
	// otherwise start a campaign of its own).
	Create    bool
	Annotator string // the source of rows without an annotator; default "import"
	SkipBad   bool
	// Rejects receives each refused row, with its reason, as a JSON line (with SkipBad).
	Rejects   io.Writer
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
	Phase string // "reading", "staging" (invisible yet), "publishing" (committed; becoming visible), "scoring" (the new pairs)
	Done  int    // rows staged or published so far
	Total int    // rows to stage or publish
}

// Phases of a label import.
const (
	PhaseReading    = "reading"
	PhaseStaging    = "staging"
	PhasePublishing = "publishing"
	PhaseScoring    = "scoring"
)

// LabelReport says what a label import did.
type LabelReport struct {
	CampaignID int64
	ImportID   int64 // the recorded import (label_imports), once staging began
	Campaign   string
	Created    bool // the import created the campaign
	Rows       int  // rows read, good and bad
	Accepted   int  // good rows: New + Unchanged
	New        int  // labels appended
	Unchanged  int  // good rows whose label the annotator's standing label says already
	Rejected   int
	Errors     []*corpus.RecordError
	// Warnings are rows kept as written whose duplicate answer overrides what their
	// category says (an "exact copy" that is not a duplicate); Overrides counts them.
	Warnings  []*corpus.RecordError
	Overrides int
}

// ErrNoCampaign is a label import into a campaign the dataset does not have, without
// the choice to create it.
var ErrNoCampaign = errkind.New(errkind.NotFound, "no such campaign")

// ErrNoLabels is a label file without a single row.
var ErrNoLabels = errkind.New(errkind.Invalid, "no labels in the file")

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
	msg := fmt.Sprintf("label import refused, nothing was imported: %s of %s", review.Quantity(e.Report.Rejected, "bad row", "bad rows"),
		review.Thousands(e.Report.Rows))
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
	record                                           any // the row as read, for a rejects file
	// The sampling design that drew the pair (optional): its name, the pair's stratum and
	// the stratum's frame size N_h.
	design, stratum, frameSize string
}

// LabelsFile imports labels from a CSV/TSV or JSONL file with the fields a, b, category,
// duplicate, annotator and note; a and b are the documents' external ids. Optional
// fields design, stratum and frame_size say which stratified draw chose the pair (all
// three or none): the pair's inclusion probability, which sweeps need to estimate over
// the whole dataset. A stratum's frame size must be the same on every row of it.
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
	opt.defaults()
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
	camp, create, err := labelCampaign(ctx, store, opt)
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
	rep := LabelReport{CampaignID: camp.ID, Campaign: opt.Campaign, Rows: len(rows) + len(bad)}
	var refused []*corpus.RecordError // every bad row, in the file's order, for the rejects file
	addBad := func(e *corpus.RecordError) {
		rep.Rejected++
		refused = append(refused, e)
		if len(rep.Errors) < opt.MaxListed {
			rep.Errors = append(rep.Errors, e)
		}
	}
	var out []db.NewLabel
	frames := map[[2]string]int{} // (design, stratum) -> frame size, as first given
	// A file gives one answer per annotator, pair and kind: a later row that contradicts
	// an earlier one is refused, naming both (the same answer again is harmless).
	type labelKey struct {
		a, b            int64
		annotator, kind string
	}
	type given struct {
		place         corpus.Place
		category, dup string
	}
	first := map[labelKey]given{}
	for _, row := range rows {
		l, warning, e := checkLabelRow(row, known, categories, frames, opt)
		if e != nil {
			bad = append(bad, e)
			continue
		}
		key := labelKey{min(l.DocA, l.DocB), max(l.DocA, l.DocB), l.Annotator, string(l.Kind)}
		answerOf := given{row.place, l.Category, answer(l.Duplicate)}
		if g, ok := first[key]; !ok {
			first[key] = answerOf
		} else if g.category != answerOf.category || g.dup != answerOf.dup {
			field := "category"
			if g.category == answerOf.category {
				field = "duplicate"
			}
			bad = append(bad, &corpus.RecordError{Place: row.place, Field: field, Record: row.record,
				Msg: fmt.Sprintf("%s already gives %s's %s on this pair as %q (%s); this row says %q (%s): a file holds one answer per annotator and pair",
					g.place, l.Annotator, l.Kind, g.category, g.dup, answerOf.category, answerOf.dup)})
			continue
		}
		if warning != nil {
			rep.Overrides++
			if len(rep.Warnings) < opt.MaxListed {
				rep.Warnings = append(rep.Warnings, warning)
			}
		}
		out = append(out, l)
	}
	// The rows the reader refused and those the checks refused, listed in the file's
	// order, so that "first" is the first bad row.
	slices.SortStableFunc(bad, func(x, y *corpus.RecordError) int { return x.Line - y.Line })
	for _, e := range bad {
		addBad(e)
	}
	rep.Accepted = len(out)
	if rep.Rejected > 0 && !opt.SkipBad {
		return rep, &LabelError{Report: rep}
	}
	if len(out) == 0 {
		return rep, &LabelError{Report: rep, Err: ErrNoLabels}
	}
	if opt.Rejects != nil {
		if err := writeRejects(opt.Rejects, refused); err != nil {
			return LabelReport{}, err
		}
	}
	if create {
		if camp, err = store.EnsureCampaign(ctx, opt.DatasetID, opt.Campaign, nil); err != nil {
			return LabelReport{}, err
		}
		rep.CampaignID, rep.Created = camp.ID, true
	}
	if rep.ImportID, rep.New, err = writeLabels(ctx, store, camp.ID, name, out, opt, progress); err != nil {
		return LabelReport{}, err
	}
	rep.Unchanged = rep.Accepted - rep.New
	progress(LabelProgress{Phase: PhaseScoring})
	// The labels are in: a cancel no longer stops what follows from them.
	if _, err := campaign.ScorePairs(context.WithoutCancel(ctx), store, camp.ID); err != nil {
		return rep, err
	}
	return rep, nil
}

func (opt *LabelOptions) defaults() {
	if opt.Campaign == "" {
		opt.Campaign = "default"
	}
	if opt.Annotator == "" {
		opt.Annotator = "import"
	}
	if opt.MaxListed <= 0 {
		opt.MaxListed = 100
	}
}

// writeRejects writes the refused rows to a rejects file in the file's order.
func writeRejects(w io.Writer, refused []*corpus.RecordError) error {
	slices.SortStableFunc(refused, func(x, y *corpus.RecordError) int { return x.Line - y.Line })
	for _, e := range refused {
		if err := writeReject(w, e); err != nil {
			return err
		}
	}
	return nil
}

// labelCampaign finds the campaign opt names in the dataset. Without it, with
// opt.Create, it returns the campaign to make (with the default categories, made once
// the rows are good) and create; else the refusal names the campaigns there are.
func labelCampaign(ctx context.Context, store *db.DB, opt LabelOptions) (camp db.Campaign, create bool, err error) {
	camp, err = store.CampaignNamed(ctx, opt.DatasetID, opt.Campaign)
	switch {
	case errors.Is(err, db.ErrNotFound) && opt.Create:
		return db.Campaign{Name: opt.Campaign, Categories: labels.DefaultCategories}, true, nil
	case errors.Is(err, db.ErrNotFound):
		names, nerr := store.CampaignNames(ctx, opt.DatasetID)
		if nerr != nil {
			return db.Campaign{}, false, nerr
		}
		have := "it has none yet"
		if len(names) > 0 {
			have = "it has " + quoteList(names)
		}
		return db.Campaign{}, false, &LabelError{Err: fmt.Errorf("%w %q in this dataset (%s): choose one, or create it (-create on the command line, the \"Create the campaign\" box on the form)", ErrNoCampaign, opt.Campaign, have)}
	case err != nil:
		return db.Campaign{}, false, err
	}
	return camp, false, nil
}

// checkLabelRow checks one row against the dataset's documents (known, by external id),
// the campaign's categories and the design's frame sizes so far (frames), and returns
// the label to append, or the row's refusal (bad). A duplicate answer that overrides
// what the category says is kept, with a warning.
func checkLabelRow(row labelRow, known map[string]int64, categories []labels.Category, frames map[[2]string]int, opt LabelOptions) (l db.NewLabel, warning, bad *corpus.RecordError) {
	fail := func(field, format string, args ...any) (db.NewLabel, *corpus.RecordError, *corpus.RecordError) {
		return db.NewLabel{}, nil, &corpus.RecordError{Place: row.place, Field: field, Msg: fmt.Sprintf(format, args...), Record: row.record}
	}
	switch {
	case row.a == "":
		return fail("a", "missing")
	case row.b == "":
		return fail("b", "missing")
	case row.a == row.b:
		return fail("b", "the same document as a")
	}
	if _, ok := known[row.a]; !ok {
		return fail("a", "unknown document id %q in this dataset", row.a)
	}
	if _, ok := known[row.b]; !ok {
		return fail("b", "unknown document id %q in this dataset", row.b)
	}
	cat, ok := labels.Find(categories, row.category)
	if !ok {
		return fail("category", "%q is not in the campaign's list (%s)", row.category, labels.Keys(categories))
	}
	dup, err := labels.ResolveDuplicate(cat, row.duplicate)
	if err != nil {
		return fail("duplicate", "%v", err)
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
			return fail("kind", "adjudication rows are accepted only from an account that may adjudicate (reviewers and admins), and become that account's adjudications")
		}
		kind, annotator = labels.KindAdjudication, opt.Actor
	default:
		return fail("kind", "%q is not label or adjudication", row.kind)
	}
	frame, field, msg := checkDesign(row, frames)
	if msg != "" {
		return fail(field, "%s", msg)
	}
	if labels.Overrides(cat, dup) {
		warning = &corpus.RecordError{Place: row.place, Field: "duplicate",
			Msg: fmt.Sprintf("category %q says %s, this row says %s: kept as the row says", cat.Name, answer(cat.Duplicate == labels.Yes), answer(dup))}
	}
	return db.NewLabel{DocA: known[row.a], DocB: known[row.b], Origin: "import", Annotator: annotator,
		Kind: kind, Category: cat.Key, Duplicate: dup, Note: row.note,
		Design: row.design, Stratum: row.stratum, FrameSize: frame}, warning, nil
}

// writeLabels records the import and its checked rows: staged in short transactions
// (invisible; discarded if staging fails or ctx is cancelled), then published in short
// transactions, so other writers (people labeling) wait for one batch at most. Once
// every row is staged the import is committed: publishing is not cancelled by ctx (an
// import half visible would be worse than a late cancel), and if the process dies
// meanwhile, the janitor (db.CleanStaleImports) finishes it.
//
// It returns the import's id and how many events it appended (rows whose label the
// annotator's standing label already says are not appended again).
func writeLabels(ctx context.Context, store *db.DB, campaignID int64, file string, out []db.NewLabel, opt LabelOptions, progress func(LabelProgress)) (id int64, added int, err error) {
	id, err = store.BeginLabelImport(ctx, db.NewLabelImport{CampaignID: campaignID, UserID: opt.UserID, ImportedBy: opt.Actor, File: file})
	if err != nil {
		return 0, 0, err
	}
	if err := store.StageLabels(ctx, id, out, func(n int) { progress(LabelProgress{Phase: PhaseStaging, Done: n, Total: len(out)}) }); err != nil {
		if derr := store.DiscardLabelImport(context.WithoutCancel(ctx), id); derr != nil {
			err = errors.Join(err, derr) // the janitor removes it later
		}
		return 0, 0, err
	}
	added, err = store.PublishLabelImport(context.WithoutCancel(ctx), id, func(n, total int) {
		progress(LabelProgress{Phase: PhasePublishing, Done: n, Total: total})
	})
	return id, added, err
}

// checkDesign reads a row's design fields: none, or all three with a positive whole
// frame size that agrees with earlier rows of the same stratum (remembered in frames).
// It returns the frame size, or the field at fault and why.
func checkDesign(row labelRow, frames map[[2]string]int) (frame int, field, msg string) {
	if row.design == "" && row.stratum == "" && row.frameSize == "" {
		return 0, "", ""
	}
	switch {
	case row.design == "":
		return 0, "design", "missing (stratum and frame_size need the design that drew the pair)"
	case row.stratum == "":
		return 0, "stratum", "missing (a design needs the pair's stratum)"
	case row.frameSize == "":
		return 0, "frame_size", "missing (a design needs the stratum's frame size N_h)"
	}
	n, err := strconv.Atoi(row.frameSize)
	if err != nil || n <= 0 {
		return 0, "frame_size", fmt.Sprintf("%q is not a positive whole number", row.frameSize)
	}
	key := [2]string{row.design, row.stratum}
	if prev, ok := frames[key]; ok && prev != n {
		return 0, "frame_size", fmt.Sprintf("%d, but earlier rows give stratum %q of design %q a frame size of %d", n, row.stratum, row.design, prev)
	}
	frames[key] = n
	return n, "", ""
}

// labelFields are the fields a label file may have; a, b and category are needed.
var labelFields = []string{"a", "b", "category", "duplicate", "annotator", "note", "kind", "design", "stratum", "frame_size"}

// readLabelRows reads a label file through corpus's table reader (CSV, TSV or JSONL,
// plain, gzip or zstd): the rows, the rows refused as read, or the reason the file
// cannot be read as labels at all.
func readLabelRows(r io.Reader, name string, format corpus.Format) ([]labelRow, []*corpus.RecordError, error) {
	if format != corpus.CSV && format != corpus.TSV && format != corpus.JSONL {
		return nil, nil, fmt.Errorf("%s: labels come as CSV, TSV or JSONL", name)
	}
	tr, err := corpus.NewTableReader(r, name, format, labelFields[:3])
	if err != nil {
		return nil, nil, err
	}
	defer tr.Close()
	var rows []labelRow
	var bad []*corpus.RecordError
	for {
		rec, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return rows, bad, nil
		}
		var re *corpus.RecordError
		if errors.As(err, &re) {
			bad = append(bad, re)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		row, re := labelRowOf(rec, format != corpus.JSONL)
		if re != nil {
			bad = append(bad, re)
			continue
		}
		rows = append(rows, row)
	}
}

// labelRowOf takes a row's label fields as strings, trimmed: a JSONL number as the
// documents' ids are read (corpus.NumberID), a boolean as true or false; an object or
// a list is refused. In a CSV or TSV file (csv), a cell the export wrote as text for
// spreadsheets (review.SafeCell: an apostrophe before =, +, -, @, tab or CR) is read
// without that apostrophe.
func labelRowOf(rec corpus.Record, csv bool) (labelRow, *corpus.RecordError) {
	row := labelRow{place: rec.Place, record: rec.Raw}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"a", &row.a}, {"b", &row.b}, {"category", &row.category}, {"duplicate", &row.duplicate}, {"annotator", &row.annotator}, {"note", &row.note}, {"kind", &row.kind},
		{"design", &row.design}, {"stratum", &row.stratum}, {"frame_size", &row.frameSize}} {
		v, err := labelValue(rec.Meta[f.name])
		if err != nil {
			return labelRow{}, &corpus.RecordError{Place: rec.Place, Field: f.name, Msg: err.Error(), Record: rec.Raw}
		}
		if csv && len(v) > 1 && v[0] == '\'' && strings.ContainsRune("=+-@\t\r", rune(v[1])) {
			v = v[1:]
		}
		*f.dst = v
	}
	return row, nil
}

func labelValue(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	case bool:
		return fmt.Sprint(v), nil
	case json.Number:
		// Ids written as numbers follow the documents' rule; so do category numbers.
		return corpus.NumberID(string(v))
	}
	return "", errors.New("want a string")
}

func answer(dup bool) string {
	if dup {
		return "duplicate"
	}
	return "not a duplicate"
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
