// Package ingest brings documents and labels into the store. A document import streams
// its file in batches into a new dataset version that stays invisible until the import
// finishes, so a failing or killed import never changes what users see: by default one
// bad record means nothing lands (every bad record is still reported, with its place);
// with SkipBad the good records land and the bad ones go to a rejects file.
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// ErrEmpty is an import of a file without a single document.
var ErrEmpty = errkind.New(errkind.Invalid, "no documents in the file")

// Options tune a document import.
type Options struct {
	Dataset string         // dataset name; default: the file name without extensions
	Format  corpus.Format  // "" detects it from the file name
	Corpus  corpus.Options // fields and size cap
	SkipBad bool           // import the good records, report and skip the bad ones
	// NewVersion imports a file whose documents are those of an earlier version of the
	// dataset (the same ids and texts) as a new version all the same; without it such an
	// import is refused with an *IdenticalError.
	NewVersion bool
	Rejects    io.Writer      // receives each rejected record as a JSON line
	BatchSize  int            // documents per transaction; default 1000 (fewer past batchBytes of text)
	Progress   func(Progress) // called after every batch and at the end
	Actor      string         // who imports, for the audit log
	UserID     int64
	// MaxListed bounds the rejected records kept in the Report (all go to Rejects).
	MaxListed int
	// MaxDocs caps the records (good or bad) one import reads; 0 is no cap. Past it the
	// import fails with a *corpus.LimitError. Corpus.MaxInputBytes caps the bytes.
	MaxDocs int
}

// Default caps on one import, generous for a sample to calibrate on: the command line's
// and the server's flags start from them.
const (
	DefaultMaxInputBytes = 4 << 30 // data once decompressed
	DefaultMaxDocs       = 2_000_000
)

// Progress is a running import's state.
type Progress struct {
	Docs     int   // accepted so far
	Rejected int   // rejected so far
	Bytes    int64 // input read so far
	Total    int64 // input size when known, else 0
	Elapsed  time.Duration
	Done     bool
}

// Report says what an import did.
type Report struct {
	Dataset  db.Dataset // the new version (zero when nothing landed)
	Accepted int        // documents that landed
	Valid    int        // records that passed validation (all land unless the import is refused)
	Rejected int
	Errors   []*corpus.RecordError // the first MaxListed rejections
	Bytes    int64
}

// Error is a failed import: nothing landed. It carries the report of what was found.
type Error struct {
	Report Report
	Err    error // the cause when it was not bad records (I/O, cancellation)
}

func (e *Error) Error() string {
	if e.Err != nil {
		return "import failed, nothing was imported: " + e.Err.Error()
	}
	msg := fmt.Sprintf("import refused, nothing was imported: %s of %s", review.Quantity(e.Report.Rejected, "bad record", "bad records"),
		review.Thousands(e.Report.Valid+e.Report.Rejected))
	if len(e.Report.Errors) > 0 {
		msg += "; first: " + e.Report.Errors[0].Error()
	}
	return msg + " (fix them, or choose to skip bad records)"
}

func (e *Error) Unwrap() error { return e.Err }

// IdenticalError refuses an import whose documents (ids and texts, in the same order)
// are exactly those of an earlier version of the same dataset: a second copy would
// double the database and change nothing. Options.NewVersion imports it anyway.
type IdenticalError struct {
	Earlier db.Dataset
}

func (e *IdenticalError) Error() string {
	return fmt.Sprintf("the documents are identical to dataset %q version %d (%s, imported %s, content hash %.12s); import again as a new version only if you mean to",
		e.Earlier.Name, e.Earlier.Version, review.Quantity(e.Earlier.Docs, "document", "documents"), e.Earlier.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), e.Earlier.ContentHash)
}

// DatasetName derives a dataset name from a file name: its base without extensions.
func DatasetName(file string) string {
	base := filepath.Base(file)
	for {
		ext := filepath.Ext(base)
		if ext == "" || ext == base {
			return base
		}
		base = strings.TrimSuffix(base, ext)
	}
}

// File imports the documents of path.
func File(ctx context.Context, store *db.DB, path string, opt Options) (Report, error) {
	r, err := corpus.OpenFile(path, opt.Format, opt.Corpus)
	if err != nil {
		return Report{}, err
	}
	defer r.Close()
	if opt.Dataset == "" {
		opt.Dataset = DatasetName(path)
	}
	return Documents(ctx, store, r, filepath.Base(path), opt)
}

// batchBytes ends a batch early: a thousand documents of a megabyte each would hold a
// gigabyte in memory.
const batchBytes = 8 << 20

// promoted are metadata fields stored in their own columns.
var promoted = map[string]string{"source": "source", "domain": "domain", "lang": "lang", "language": "lang"}

// Documents imports the records of r as a new version of opt.Dataset.
func Documents(ctx context.Context, store *db.DB, r corpus.Reader, sourceFile string, opt Options) (rep Report, err error) {
	if opt.Dataset == "" {
		opt.Dataset = DatasetName(sourceFile)
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = 1000
	}
	if opt.MaxListed <= 0 {
		opt.MaxListed = 100
	}
	start := time.Now()
	ds, err := store.BeginDataset(ctx, opt.Dataset, sourceFile, opt.UserID)
	if err != nil {
		return rep, err
	}
	landed := false
	defer func() {
		if !landed {
			// Nothing from a failing import stays; a fresh context, since ctx may be done.
			cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if derr := store.DiscardDataset(cleanup, ds.ID); derr != nil && err == nil {
				err = derr
			}
		}
	}()
	im := &docImport{store: store, ds: ds, opt: opt, r: r, file: sourceFile, start: start, hash: sha256.New()}
	if err := im.read(ctx); err != nil {
		return im.rep, &Error{Report: im.rep, Err: err}
	}
	im.rep.Bytes = r.BytesRead()
	if im.failing() {
		im.report(true)
		return im.rep, &Error{Report: im.rep}
	}
	if im.rep.Accepted == 0 {
		return im.rep, &Error{Report: im.rep, Err: ErrEmpty}
	}
	finished, err := im.finish(ctx)
	if err != nil {
		return im.rep, &Error{Report: im.rep, Err: err}
	}
	landed = true
	im.rep.Dataset = finished
	im.report(true)
	return im.rep, nil
}

// docImport is one document import in progress: the staged dataset, the batch read but
// not inserted yet, the report so far and the hash of what landed.
type docImport struct {
	store  *db.DB
	ds     db.Dataset
	opt    Options
	r      corpus.Reader
	file   string
	start  time.Time
	hash   hash.Hash // of every accepted document's id and content hash, in order
	batch  []db.NewDocument
	places []corpus.Place
	held   int // bytes of text in batch
	seen   int // records read, good or bad
	rep    Report
}

func (im *docImport) report(done bool) {
	if im.opt.Progress != nil {
		im.opt.Progress(Progress{Docs: im.rep.Accepted, Rejected: im.rep.Rejected, Bytes: im.r.BytesRead(), Elapsed: time.Since(im.start), Done: done})
	}
}

// reject counts a refused record, lists it (up to MaxListed) and writes it to the
// rejects file.
func (im *docImport) reject(e *corpus.RecordError) error {
	im.rep.Rejected++
	if len(im.rep.Errors) < im.opt.MaxListed {
		im.rep.Errors = append(im.rep.Errors, e)
	}
	if im.opt.Rejects != nil {
		if err := writeReject(im.opt.Rejects, e); err != nil {
			return err
		}
	}
	e.Record = nil // the report keeps the reason, not a document of up to a megabyte
	return nil
}

// failing reports whether the import will be refused (a bad record without SkipBad).
func (im *docImport) failing() bool { return im.rep.Rejected > 0 && !im.opt.SkipBad }

// read reads every record, inserting the good ones in batches of BatchSize documents or
// batchBytes of text, and refuses an input over MaxDocs records.
func (im *docImport) read(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := im.r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if im.seen++; im.opt.MaxDocs > 0 && im.seen > im.opt.MaxDocs {
			return &corpus.LimitError{File: im.file, Docs: im.opt.MaxDocs}
		}
		var re *corpus.RecordError
		if errors.As(err, &re) {
			if err := im.reject(re); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		doc, bad := newDocument(rec)
		if bad != nil {
			if err := im.reject(bad); err != nil {
				return err
			}
			continue
		}
		im.rep.Valid++
		im.batch = append(im.batch, doc)
		im.places = append(im.places, rec.Place)
		im.held += len(doc.Text)
		if len(im.batch) >= im.opt.BatchSize || im.held >= batchBytes {
			if err := im.flush(ctx); err != nil {
				return err
			}
		}
	}
	return im.flush(ctx)
}

// flush inserts the batch. A refused import keeps reading to report every bad record,
// duplicate ids too: its batches still go in, which finds them, but without their
// texts, since nothing of it will stay.
func (im *docImport) flush(ctx context.Context) error {
	if len(im.batch) == 0 {
		return nil
	}
	insert := im.batch
	if im.failing() {
		insert = make([]db.NewDocument, len(im.batch))
		for i, d := range im.batch {
			insert[i] = db.NewDocument{ExtID: d.ExtID}
		}
	}
	dups, err := im.store.InsertDocuments(ctx, im.ds.ID, insert)
	if err != nil {
		return err
	}
	isDup := map[int]bool{}
	for _, i := range dups {
		isDup[i] = true
		im.rep.Valid--
		if err := im.reject(&corpus.RecordError{Place: im.places[i], Field: im.opt.Corpus.IDFieldName(), Msg: fmt.Sprintf("duplicate id %q", im.batch[i].ExtID),
			Record: documentRecord(im.batch[i], im.opt.Corpus)}); err != nil {
			return err
		}
	}
	if !im.failing() {
		for i, d := range im.batch {
			if !isDup[i] {
				im.rep.Accepted++
				fmt.Fprintf(im.hash, "%s\x00%s\n", d.ExtID, d.ContentHash)
			}
		}
	}
	clear(im.batch) // let the texts go
	im.batch, im.places, im.held = im.batch[:0], im.places[:0], 0
	im.report(false)
	return nil
}

// finish makes the staged dataset visible, unless it holds what an earlier version of
// the dataset holds already (then an *IdenticalError, unless NewVersion).
func (im *docImport) finish(ctx context.Context) (db.Dataset, error) {
	sum := hex.EncodeToString(im.hash.Sum(nil))
	if !im.opt.NewVersion {
		earlier, err := im.store.SameContent(ctx, im.opt.Dataset, sum)
		if err == nil {
			return db.Dataset{}, &IdenticalError{Earlier: earlier}
		}
		if !errors.Is(err, db.ErrNotFound) {
			return db.Dataset{}, err
		}
	}
	return im.store.FinishDataset(ctx, im.ds.ID, sum, im.rep.Rejected, im.opt.Actor)
}

func newDocument(rec corpus.Record) (db.NewDocument, *corpus.RecordError) {
	sum := sha256.Sum256([]byte(rec.Text))
	d := db.NewDocument{ExtID: rec.ID, Text: rec.Text, ContentHash: hex.EncodeToString(sum[:])}
	meta := map[string]any{}
	for k, v := range rec.Meta {
		col, ok := promoted[strings.ToLower(k)]
		if !ok {
			meta[k] = v
			continue
		}
		s, isString := v.(string)
		if !isString && v != nil {
			return d, &corpus.RecordError{Place: rec.Place, Field: k, Msg: "want a string", Record: rec.Meta}
		}
		switch col {
		case "source":
			d.Source = s
		case "domain":
			d.Domain = s
		case "lang":
			d.Lang = s
		}
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return d, &corpus.RecordError{Place: rec.Place, Msg: "metadata: " + err.Error()}
	}
	d.Meta = b
	return d, nil
}

// writeReject writes one line of a rejects file: where, which field, why, and the
// rejected record itself as read (null when it could not be kept), so the file can be
// fixed and imported again.
func writeReject(w io.Writer, e *corpus.RecordError) error {
	b, err := json.Marshal(struct {
		Place  string `json:"place"`
		Field  string `json:"field,omitempty"`
		Reason string `json:"reason"`
		Record any    `json:"record"`
	}{e.Place.String(), e.Field, e.Msg, e.Record})
	if err != nil {
		return fmt.Errorf("rejects file: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("rejects file: %w", err)
	}
	return nil
}

// documentRecord is a document refused after reading (a duplicate id) in its file's
// field names, for the rejects file.
func documentRecord(d db.NewDocument, opt corpus.Options) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(d.Meta, &m)
	for k, v := range map[string]string{"source": d.Source, "domain": d.Domain, "lang": d.Lang} {
		if v != "" {
			m[k] = v
		}
	}
	m[opt.IDFieldName()] = d.ExtID
	m[opt.TextFieldName()] = d.Text
	return m
}
