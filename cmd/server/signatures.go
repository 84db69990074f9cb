package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sigio"
)

func signatures(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("signatures",
		"server signatures: read documents (JSONL, CSV/TSV or Parquet; .gz and .zst too) and write MinHash signatures,\n"+
			"on all cores. -format jsonl writes {\"id\":..,\"signature\":[uint32...]} lines; -format binary writes k*4\n"+
			"little-endian bytes per document (a Milvus BINARY_VECTOR of dim 32*k) and the ids, one a line, to OUT.ids.",
		`go run ./cmd/server signatures -spec 'level=word size=5 k=128' -in docs.jsonl.gz -out sigs.jsonl`, stderr)
	specText := fs.String("spec", lsh.DefaultSpec().String(), "representation, e.g. 'level=word size=5 k=128' (omitted fields keep their defaults), or a Milvus MinHash\n"+
		"function's params, e.g. '{\"num_hashes\": 128, \"shingle_size\": 3, \"token_level\": \"word\"}' for signatures bit-identical to Milvus's")
	in := fs.String("in", "", "input file: .jsonl, .csv, .tsv or .parquet, optionally .gz or .zst (- for JSONL on standard input)")
	out := fs.String("out", "", "output file (- or empty for standard output)")
	format := fs.String("format", "jsonl", "output format: jsonl or binary")
	idField := fs.String("id-field", "id", "field (JSON key, CSV column, Parquet column) holding the document id")
	textField := fs.String("text-field", "text", "field holding the document text")
	quiet := fs.Bool("q", false, "no progress line on standard error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		fs.Usage()
		return fmt.Errorf("-in is required")
	}
	spec, err := lsh.ParseSpec(*specText)
	if err != nil {
		return err
	}
	opts := corpus.Options{IDField: *idField, TextField: *textField, MetaFields: []string{}}
	var r corpus.Reader
	if *in == "-" {
		r, err = corpus.NewReader(os.Stdin, "stdin", corpus.JSONL, opts)
	} else {
		r, err = corpus.OpenFile(*in, "", opts)
	}
	if err != nil {
		return err
	}
	defer r.Close()

	var dst io.Writer = stdout
	var outFile *os.File
	if *out != "" && *out != "-" {
		if outFile, err = os.Create(*out); err != nil {
			return err
		}
		defer outFile.Close()
		dst = outFile
	}
	opt := sigio.Options{Format: sigio.Format(*format), Every: 500 * time.Millisecond}
	if opt.Format == sigio.Binary {
		if outFile == nil {
			return fmt.Errorf("-format binary needs -out FILE (the ids go to FILE.ids)")
		}
		idf, err := os.Create(*out + ".ids")
		if err != nil {
			return err
		}
		defer idf.Close()
		opt.IDs = idf
	}
	if !*quiet {
		opt.Progress = func(p sigio.Progress) {
			secs := max(p.Elapsed.Seconds(), 1e-9)
			end := "\r"
			if p.Done {
				end = "\n"
			}
			fmt.Fprintf(stderr, "signatures: %d docs, %.1f MB, %.0f docs/s, %.1f MB/s%s",
				p.Docs, float64(p.Bytes)/1e6, float64(p.Docs)/secs, float64(p.Bytes)/1e6/secs, end)
		}
	}
	fmt.Fprintf(stderr, "spec %s (%s)\n", spec, spec.ID())
	if _, err := sigio.Write(r, dst, spec, opt); err != nil {
		if opt.Progress != nil {
			fmt.Fprintln(stderr)
		}
		return err
	}
	if outFile != nil {
		return outFile.Close()
	}
	return nil
}
