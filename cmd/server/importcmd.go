package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/words"
)

func importDocs(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import",
		"server import: import documents (JSONL, CSV/TSV or Parquet; .gz and .zst too) as a new version of a dataset.\n"+
			"All or nothing: one bad record and nothing is imported (every bad record is listed with file, line\n"+
			"or row, and field); with -skip-bad the good records are imported and the bad ones written, whole, with\n"+
			"their reasons, to -rejects. A file whose documents are those of the dataset's newest version with the\n"+
			"same content is refused unless -new-version.",
		"go run ./cmd/server import -db dedupstudio.db -in docs.jsonl.gz -dataset crawl -id-field id -text-field text", stderr)
	dbPath := fs.String("db", "dedupstudio.db", "database file")
	in := fs.String("in", "", "input file")
	dataset := fs.String("dataset", "", "dataset name (default: the file name without extensions)")
	format := fs.String("format", "", "jsonl, csv, tsv or parquet (default: from the file name)")
	idField := fs.String("id-field", "id", "field holding the document id")
	textField := fs.String("text-field", "text", "field holding the document text")
	meta := fs.String("meta", "", "comma-separated fields to keep as metadata (default: all others; - for none)")
	maxBytes := fs.Int("max-doc-bytes", corpus.DefaultMaxDocBytes, "largest document text accepted, in bytes")
	maxInputMB := fs.Int64("max-input-mb", ingest.DefaultMaxInputBytes>>20, "most data one import reads once decompressed, in MiB (0: no cap)")
	maxDocs := fs.Int("max-docs", ingest.DefaultMaxDocs, "most records one import reads, good or bad (0: no cap)")
	skipBad := fs.Bool("skip-bad", false, "import the good records and skip the bad ones")
	newVersion := fs.Bool("new-version", false, "import even when the documents are identical to an earlier version's")
	rejects := fs.String("rejects", "", "with -skip-bad: file for the rejected records, whole, with their reasons, as JSON lines\n(default: rejects-DATASET-TIME.jsonl in the current directory; the path is printed)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" {
		fs.Usage()
		return errors.New("-in is required")
	}
	ctx, stop := signalContext()
	defer stop()
	store, err := db.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	opt := ingest.DocumentChoices{Dataset: *dataset, Format: *format, IDField: *idField, TextField: *textField, Meta: *meta,
		MaxDocBytes: *maxBytes, SkipBad: *skipBad, NewVersion: *newVersion, MaxInputBytes: *maxInputMB << 20, MaxDocs: *maxDocs}.Options()
	opt.Actor = cliActor()
	if opt.Dataset == "" {
		opt.Dataset = ingest.DatasetName(*in)
	}
	if *skipBad {
		rf, err := createRejects(*rejects, opt.Dataset)
		if err != nil {
			return err
		}
		defer rf.finish(stderr)
		opt.Rejects = rf
	}
	var size int64
	if st, err := os.Stat(*in); err == nil {
		size = st.Size()
	}
	last := time.Time{}
	opt.Progress = func(p ingest.Progress) {
		if !p.Done && time.Since(last) < 500*time.Millisecond {
			return
		}
		last = time.Now()
		end := "\r"
		if p.Done {
			end = "\n"
		}
		fmt.Fprintf(stderr, "import: %d documents, %d rejected, %.1f MB read (file %.1f MB)%s",
			p.Docs, p.Rejected, float64(p.Bytes)/1e6, float64(size)/1e6, end)
	}
	rep, err := ingest.File(ctx, store, *in, opt)
	printRejects(stderr, rep.Errors, rep.Rejected)
	if _, ok := errors.AsType[*ingest.IdenticalError](err); ok {
		return fmt.Errorf("%w\n(to import it all the same, add -new-version)", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "imported %s into dataset %q version %d (content hash %s); %s rejected\n",
		words.Count(rep.Accepted, "document", "documents"), rep.Dataset.Name, rep.Dataset.Version, rep.Dataset.ContentHash[:12], words.Thousands(rep.Rejected))
	return nil
}

func printRejects(w io.Writer, errs []*corpus.RecordError, total int) {
	if total == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", review.Quantity(total, "bad record", "bad records"))
	for _, e := range errs {
		fmt.Fprintf(w, "  %s\n", e)
	}
	if total > len(errs) {
		fmt.Fprintf(w, "  ... and %d more\n", total-len(errs))
	}
}

func importLabels(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import-labels",
		"server import-labels: import labeled pairs from CSV/TSV (header row) or JSONL with the fields\n"+
			"a, b (external document ids), category, duplicate (yes/no; may be empty when the category settles\n"+
			"it), annotator and note, into a labeling campaign of a dataset (its newest version unless -version).\n"+
			"Optional design, stratum and frame_size (all three or none) name the stratified draw that chose\n"+
			"each pair and its stratum's size N_h, so sweeps can estimate over the whole dataset.\n"+
			"The campaign must exist unless -create. A label the annotator already gives the pair is counted\n"+
			"unchanged, not added again. A row whose duplicate answer contradicts its category is kept and warned about.",
		"go run ./cmd/server import-labels -db dedupstudio.db -dataset crawl -campaign gold -create -in labels.csv", stderr)
	dbPath := fs.String("db", "dedupstudio.db", "database file (must exist: the server's, or one an import made)")
	in := fs.String("in", "", "labels file (.csv, .tsv or .jsonl)")
	dataset := fs.String("dataset", "", "dataset name")
	version := fs.Int("version", 0, "dataset version (default: the newest)")
	campaign := fs.String("campaign", "default", "labeling campaign")
	create := fs.Bool("create", false, "create the campaign (default categories) if the dataset has none of that name")
	annotator := fs.String("annotator", "import", "annotator for rows that name none")
	skipBad := fs.Bool("skip-bad", false, "import the good rows and skip the bad ones")
	rejects := fs.String("rejects", "", "with -skip-bad: file for the rejected rows, whole, with their reasons, as JSON lines\n(default: rejects-DATASET-TIME.jsonl in the current directory; the path is printed)")
	as := fs.String("as", "", "the account the import is recorded under (else \"cli:$USER\"); rows of kind adjudication need\none that may adjudicate (a reviewer or admin) and become its adjudications")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" || *dataset == "" {
		fs.Usage()
		return errors.New("-in and -dataset are required")
	}
	ctx := context.Background()
	store, err := db.OpenExisting(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	ds, opt, err := ingest.LabelChoices{Dataset: *dataset, Version: *version, Campaign: *campaign, Create: *create,
		Annotator: *annotator, SkipBad: *skipBad}.Resolve(ctx, store)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "labels for dataset %q version %d (%d documents)\n", ds.Name, ds.Version, ds.Docs)
	opt.Actor = cliActor()
	if *as != "" {
		u, err := accountAs(ctx, store, *as)
		if err != nil {
			return err
		}
		opt.Actor, opt.UserID, opt.MayAdjudicate = u.Name, u.ID, u.Role.Can(auth.Adjudicate)
	}
	if *skipBad {
		rf, err := createRejects(*rejects, ds.Name)
		if err != nil {
			return err
		}
		defer rf.finish(stderr)
		opt.Rejects = rf
	}
	rep, err := ingest.LabelsFile(ctx, store, *in, opt)
	printRejects(stderr, rep.Errors, rep.Rejected)
	if rep.Overrides > 0 {
		fmt.Fprintf(stderr, "%s (kept as written):\n",
			review.Quantity(rep.Overrides, "row overrides what its category says", "rows override what their category says"))
		for _, w := range rep.Warnings {
			fmt.Fprintf(stderr, "  %s\n", w)
		}
	}
	if err != nil {
		return err
	}
	created := ""
	if rep.Created {
		created = " (created)"
	}
	fmt.Fprintf(stdout, "campaign %q%s of dataset %q version %d: %d new, %d unchanged, %d rejected of %d rows\n",
		rep.Campaign, created, ds.Name, ds.Version, rep.New, rep.Unchanged, rep.Rejected, rep.Rows)
	return nil
}

// rejectsFile is where an import writes what it rejected. A default one is made in the
// current directory under a new name (never next to the input, which may be read-only
// or shared), and removed again if nothing was rejected.
type rejectsFile struct {
	*os.File
	wrote, made bool // made: the default name, not one the person gave
}

func (r *rejectsFile) Write(p []byte) (int, error) {
	r.wrote = true
	return r.File.Write(p)
}

func createRejects(path, dataset string) (*rejectsFile, error) {
	var f *os.File
	var err error
	if path != "" {
		f, err = os.Create(path)
	} else {
		name := fmt.Sprintf("rejects-%s-%s.jsonl", safeName(dataset), time.Now().UTC().Format("20060102T150405Z"))
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("rejects file: %w", err)
	}
	return &rejectsFile{File: f, made: path == ""}, nil
}

// finish closes the file and says where it is; a default one that stayed empty is removed.
func (r *rejectsFile) finish(stderr io.Writer) {
	r.Close()
	if !r.wrote {
		if r.made {
			os.Remove(r.Name())
		}
		return
	}
	abs, err := filepath.Abs(r.Name())
	if err != nil {
		abs = r.Name()
	}
	fmt.Fprintf(stderr, "rejected records, with their reasons: %s\n", abs)
}

// safeName keeps letters, digits, '-' and '_' of a dataset name for a file name.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
