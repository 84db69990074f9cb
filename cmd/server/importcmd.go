package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
)

// metaList parses -meta: "" keeps every other field, "-" keeps none, else a comma list.
func metaList(s string) []string {
	switch s {
	case "":
		return nil
	case "-":
		return []string{}
	}
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func importDocs(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import",
		"server import: import documents (JSONL, CSV/TSV or Parquet; .gz and .zst too) as a new version of a dataset.\n"+
			"All or nothing: one bad record and nothing is imported (every bad record is listed with file, line\n"+
			"or row, and field); with -skip-bad the good records are imported and the bad ones written to -rejects.",
		"go run ./cmd/server import -db dedupstudio.db -in docs.jsonl.gz -dataset crawl -id-field id -text-field text", stderr)
	dbPath := fs.String("db", "dedupstudio.db", "database file")
	in := fs.String("in", "", "input file")
	dataset := fs.String("dataset", "", "dataset name (default: the file name without extensions)")
	format := fs.String("format", "", "jsonl, csv, tsv or parquet (default: from the file name)")
	idField := fs.String("id-field", "id", "field holding the document id")
	textField := fs.String("text-field", "text", "field holding the document text")
	meta := fs.String("meta", "", "comma-separated fields to keep as metadata (default: all others; - for none)")
	maxBytes := fs.Int("max-doc-bytes", corpus.DefaultMaxDocBytes, "largest document text accepted, in bytes")
	skipBad := fs.Bool("skip-bad", false, "import the good records and skip the bad ones")
	rejects := fs.String("rejects", "", "with -skip-bad: file for the rejected records as JSON lines (default: IN.rejects.jsonl)")
	if err := fs.Parse(args); err != nil {
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
	opt := ingest.Options{
		Dataset: *dataset,
		Format:  corpus.Format(*format),
		Corpus:  corpus.Options{IDField: *idField, TextField: *textField, MetaFields: metaList(*meta), MaxBytes: *maxBytes},
		SkipBad: *skipBad,
		Actor:   "cli:" + os.Getenv("USER"),
	}
	if *skipBad {
		path := *rejects
		if path == "" {
			path = *in + ".rejects.jsonl"
		}
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		opt.Rejects = f
		defer fmt.Fprintf(stderr, "rejected records: %s\n", path)
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
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "imported %d documents into dataset %q version %d (content hash %s); %d rejected\n",
		rep.Accepted, rep.Dataset.Name, rep.Dataset.Version, rep.Dataset.ContentHash[:12], rep.Rejected)
	return nil
}

func printRejects(w io.Writer, errs []*corpus.RecordError, total int) {
	if total == 0 {
		return
	}
	fmt.Fprintf(w, "%d bad record(s):\n", total)
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
			"it), annotator and note, into a labeling campaign of the newest version of a dataset.",
		"go run ./cmd/server import-labels -db dedupstudio.db -dataset crawl -in labels.csv", stderr)
	dbPath := fs.String("db", "dedupstudio.db", "database file")
	in := fs.String("in", "", "labels file (.csv, .tsv or .jsonl)")
	dataset := fs.String("dataset", "", "dataset name")
	campaign := fs.String("campaign", "default", "labeling campaign")
	annotator := fs.String("annotator", "import", "annotator for rows that name none")
	skipBad := fs.Bool("skip-bad", false, "import the good rows and skip the bad ones")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *dataset == "" {
		fs.Usage()
		return errors.New("-in and -dataset are required")
	}
	ctx := context.Background()
	store, err := db.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	ds, err := store.LatestDataset(ctx, *dataset)
	if errors.Is(err, db.ErrNotFound) {
		return fmt.Errorf("no dataset named %q in %s (import its documents first)", *dataset, *dbPath)
	}
	if err != nil {
		return err
	}
	rep, err := ingest.LabelsFile(ctx, store, *in, ingest.LabelOptions{DatasetID: ds.ID, Campaign: *campaign,
		Annotator: *annotator, SkipBad: *skipBad, Actor: "cli:" + os.Getenv("USER")})
	printRejects(stderr, rep.Errors, rep.Rejected)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "imported %d labels into campaign %q of dataset %q version %d; %d rejected\n",
		rep.Accepted, *campaign, ds.Name, ds.Version, rep.Rejected)
	return nil
}
