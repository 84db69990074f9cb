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
		opt.BatchSize = 1024
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
	var bytesRead int64 // as of the last batch; the reader goroutine owns r
	report := func(done bool) {
		if opt.Progress == nil {
			return
		}
		t := now()
		if !done && t.Sub(last) < opt.Every {
			return
		}
		last = t
		opt.Progress(Progress{Docs: total, Bytes: bytesRead, Elapsed: t.Sub(start), Done: done})
	}
	// Reading (decompressing, parsing) runs in its own goroutine, a batch ahead of the
	// signing, so the two overlap.
	type batch struct {
		ids, texts []string
		bytes      int64 // input read up to the end of this batch
		err        error
	}
	batches := make(chan batch, 2)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(batches)
		for {
			b := batch{ids: make([]string, 0, opt.BatchSize), texts: make([]string, 0, opt.BatchSize)}
			for len(b.texts) < opt.BatchSize {
				d, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.err = err
					break
				}
				b.ids = append(b.ids, d.ID)
				b.texts = append(b.texts, d.Text)
			}
			b.bytes = r.BytesRead()
			if len(b.texts) == 0 && b.err == nil {
				select { // the final count, for the last report
				case batches <- batch{bytes: b.bytes}:
				case <-stop:
				}
				return
			}
			select {
			case batches <- b:
			case <-stop:
				return
			}
			if b.err != nil || len(b.texts) < opt.BatchSize {
				return
			}
		}
	}()
	for b := range batches {
		bytesRead = b.bytes
		if len(b.texts) > 0 {
			sigs, err := spec.Signatures(b.texts)
			if err != nil {
				return total, err
			}
			for i, sig := range sigs {
				if err := writeOne(bw, idw, opt.Format, b.ids[i], sig); err != nil {
					return total, err
				}
			}
			total += len(b.texts)
			report(false)
		}
		if b.err != nil {
			bw.Flush()
			return total, b.err
		}
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
