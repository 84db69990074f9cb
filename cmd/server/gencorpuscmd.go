package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/gencorpus"
	"github.com/klauspost/compress/gzip"
)

func gencorpusCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("gencorpus",
		"server gencorpus: write a synthetic corpus of real text for benchmarks and recall tests: the demo sample's\n"+
			"documents cut into paragraphs, recombined in seeded random order with small seeded random word edits, plus\n"+
			"planted near-duplicates (word edits at 0.2-2%) and exact duplicates of recent documents, listed in the truth\n"+
			"file (dup_id, original_id, kind, edit_rate). The same -seed gives the same bytes.",
		`go run ./cmd/server gencorpus -n 1000000 -seed 1 -out big.jsonl.gz -truth big.truth.csv`, stderr)
	n := fs.Int("n", 100000, "documents to write")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("out", "", "output file: .jsonl, or .jsonl.gz to compress")
	truth := fs.String("truth", "", "planted duplicates as CSV (default: OUT without its extension + .truth.csv)")
	maxBytes := fs.Int("max-doc-bytes", 8192, "cap on a fresh document's target length")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		fs.Usage()
		return fmt.Errorf("-out is required")
	}
	if *truth == "" {
		*truth = strings.TrimSuffix(strings.TrimSuffix(*out, ".gz"), ".jsonl") + ".truth.csv"
	}
	docs, err := demo.Sample()
	if err != nil {
		return err
	}
	sample := make([]gencorpus.Doc, len(docs))
	for i, d := range docs {
		sample[i] = gencorpus.Doc{Text: d.Text, Source: d.Source, Lang: d.Lang}
	}
	// Both files are written whole or not at all, and named together.
	files, err := createWhole(*out, *truth)
	if err != nil {
		return err
	}
	defer files.abort()
	var dst io.Writer = files.files[0]
	var zw *gzip.Writer
	if strings.HasSuffix(*out, ".gz") {
		zw, _ = gzip.NewWriterLevel(dst, gzip.BestSpeed)
		dst = zw
	}
	sum, err := gencorpus.Write(dst, files.files[1], sample, gencorpus.Options{N: *n, Seed: *seed, MaxBytes: *maxBytes})
	if err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	if err := files.commit(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d documents (%d fresh, %d planted near-duplicates, %d exact copies), %.1f MB of JSONL\n",
		sum.Docs, sum.Fresh, sum.Near, sum.Exact, float64(sum.Bytes)/1e6)
	return nil
}
