// Package sigio computes signatures for a stream of documents and writes them out: JSONL
// ({"id":..,"signature":[..]}) or raw little-endian vectors ready for a Milvus
// BINARY_VECTOR field. Documents are read in batches and each batch is signed on all
// cores, so memory stays bounded by the batch size whatever the input size.
package sigio

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Format is an output format.
type Format string

// Output formats.
const (
	JSONL  Format = "jsonl"
	Binary Format = "binary" // k*4 bytes per document, little-endian, in input order
)

// Progress is a snapshot of a running job.
type Progress struct {
	Docs    int
	Bytes   int64 // uncompressed input bytes read
	Elapsed time.Duration
	Done    bool
}

// Options tune Write.
type Options struct {
	Format    Format
	BatchSize int            // documents per parallel batch; default 4096
	IDs       io.Writer      // with Binary: receives one id per line, in order
	Progress  func(Progress) // called after each batch and at the end
	Every     time.Duration  // minimum time between Progress calls (0: every batch)
}

// Write reads documents from r and writes their signatures under spec to w. It stops at
// the first bad record, reporting its place.
func Write(r corpus.Reader, w io.Writer, spec lsh.Spec, opt Options) (int, error) {
	if err := spec.Validate(); err != nil {
		return 0, err
	}
	if opt.Format == "" {
		opt.Format = JSONL
	}
	if opt.Format != JSONL && opt.Format != Binary {
		return 0, fmt.Errorf("unknown format %q (want jsonl or binary)", opt.Format)
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = 4096
	}
	now := time.Now
	start := now()
	last := start
	bw := bufio.NewWriterSize(w, 1<<20)
	var idw *bufio.Writer
	if opt.IDs != nil {
		idw = bufio.NewWriter(opt.IDs)
	}
	total := 0
	ids := make([]string, 0, opt.BatchSize)
	texts := make([]string, 0, opt.BatchSize)
	report := func(done bool) {
		if opt.Progress == nil {
			return
		}
		t := now()
		if !done && t.Sub(last) < opt.Every {
			return
		}
		last = t
		opt.Progress(Progress{Docs: total, Bytes: r.BytesRead(), Elapsed: t.Sub(start), Done: done})
	}
	flush := func() error {
		if len(texts) == 0 {
			return nil
		}
		sigs, err := spec.Signatures(texts)
		if err != nil {
			return err
		}
		for i, sig := range sigs {
			if err := writeOne(bw, idw, opt.Format, ids[i], sig); err != nil {
				return err
			}
		}
		total += len(texts)
		ids, texts = ids[:0], texts[:0]
		report(false)
		return nil
	}
	for {
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return total, err
		}
		ids = append(ids, d.ID)
		texts = append(texts, d.Text)
		if len(texts) == opt.BatchSize {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if err := flush(); err != nil {
		return total, err
	}
	if err := bw.Flush(); err != nil {
		return total, err
	}
	if idw != nil {
		if err := idw.Flush(); err != nil {
			return total, err
		}
	}
	report(true)
	return total, nil
}

func writeOne(w, idw *bufio.Writer, f Format, id string, sig lsh.Signature) error {
	if f == Binary {
		if _, err := w.Write(sig.Bytes()); err != nil {
			return err
		}
		if idw != nil {
			_, err := fmt.Fprintln(idw, id)
			return err
		}
		return nil
	}
	b, err := json.Marshal(struct {
		ID        string   `json:"id"`
		Signature []uint32 `json:"signature"`
	}{id, sig})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}
