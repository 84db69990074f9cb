// Package sigio computes signatures for a stream of documents and writes them out: JSONL
// ({"id":..,"signature":[..]}) or raw little-endian vectors ready for a Milvus
// BINARY_VECTOR field.
//
// Write runs a pipeline: one goroutine reads documents and groups them into small
// batches (256 documents or 1 MB of text, whichever comes first), one goroutine per core
// signs batches and encodes their output lines, and the caller's goroutine writes the
// batches in input order. A handful of batches are in flight at a time, so memory stays
// bounded whatever the input size, and no core waits for a slow batch to finish before
// starting the next.
package sigio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"slices"
	"sync"
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

// DefaultBatchSize is the number of documents in a batch unless Options.BatchSize says
// otherwise; a batch also ends once it holds batchBytes of text.
const DefaultBatchSize = 256

// batchBytes ends a batch of long documents early, so batches take similar time to sign.
const batchBytes = 1 << 20

// yieldBytes is how much text a signer signs between yields to the goroutines that
// feed it (encodeBatch): about half a millisecond of signing.
const yieldBytes = 64 << 10

// Progress is a snapshot of a running job.
type Progress struct {
	Docs    int   // documents written
	Skipped int   // bad records skipped (Options.SkipBad)
	Bytes   int64 // uncompressed input bytes read
	Elapsed time.Duration
	Done    bool
}

// Options tune Write.
type Options struct {
	Format    Format
	BatchSize int            // documents per batch; default DefaultBatchSize
	IDs       io.Writer      // with Binary: receives one id per line, in order
	Progress  func(Progress) // called after each batch written and at the end
	Every     time.Duration  // minimum time between Progress calls (0: every batch)
	// SkipBad skips the records the reader rejects (a *corpus.RecordError) instead of
	// stopping at the first; Skipped is called for each, in input order.
	SkipBad bool
	Skipped func(*corpus.RecordError)
}

// Summary is what Write did.
type Summary struct {
	Docs    int   // signatures written
	Skipped int   // bad records skipped
	Bytes   int64 // uncompressed input bytes read
}

// Write reads documents from r and writes their signatures under spec to w, in input
// order. Without SkipBad it stops at the first bad record, returning its
// *corpus.RecordError (which names the place); the signatures of the documents before it
// are written. Write returns only once all its goroutines have ended, so the caller may
// close r at once.
func Write(r corpus.Reader, w io.Writer, spec lsh.Spec, opt Options) (Summary, error) {
	if err := spec.Validate(); err != nil {
		return Summary{}, err
	}
	if opt.Format == "" {
		opt.Format = JSONL
	}
	if opt.Format != JSONL && opt.Format != Binary {
		return Summary{}, fmt.Errorf("unknown format %q (want jsonl or binary)", opt.Format)
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = DefaultBatchSize
	}
	p := startPipeline(r, spec, opt)
	sum, err := p.drain(w, opt)
	p.halt()
	return sum, err
}

// batch is a run of consecutive documents and, once done is closed, their encoded output.
type batch struct {
	ids, texts []string
	textBytes  int
	skipped    []*corpus.RecordError // bad records among them (SkipBad), in order
	bytesRead  int64                 // input read up to the end of the batch
	err        error                 // reading stopped after this batch, the last one

	done   chan struct{}
	out    []byte // JSONL lines or binary vectors
	idsOut []byte // with Binary: the ids, one a line
}

// pipeline is Write's goroutines: a reader and one signer per core.
type pipeline struct {
	order chan *batch // batches in input order, for drain
	stop  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
}

func startPipeline(r corpus.Reader, spec lsh.Spec, opt Options) *pipeline {
	workers := runtime.GOMAXPROCS(0)
	p := &pipeline{order: make(chan *batch, 2*workers+2), stop: make(chan struct{})}
	work := make(chan *batch, workers)
	// The reader starts first: a Hasher's normalization tables are built at the first
	// need (milliseconds, before any document is signed), meanwhile the first batches are
	// read.
	p.wg.Go(func() {
		defer close(p.order)
		defer close(work)
		p.read(r, work, opt)
	})
	for range workers {
		p.wg.Go(func() {
			h, _ := lsh.NewHasher(spec) // spec was validated
			var sig lsh.Signature
			for b := range work {
				sig = encodeBatch(h, b, opt.Format, opt.IDs != nil, sig)
				close(b.done)
			}
		})
	}
	return p
}

// halt stops the goroutines and waits for them to end.
func (p *pipeline) halt() {
	p.once.Do(func() { close(p.stop) })
	p.wg.Wait()
}

// read groups the documents of r into batches and queues each for signing and for drain.
func (p *pipeline) read(r corpus.Reader, work chan<- *batch, opt Options) {
	for {
		b, more := readBatch(r, opt)
		select {
		case p.order <- b:
		case <-p.stop:
			return
		}
		select {
		case work <- b:
		case <-p.stop:
			return
		}
		if !more {
			return
		}
	}
}

// readBatch reads up to one batch; more is false at the end of the input or at an error.
func readBatch(r corpus.Reader, opt Options) (b *batch, more bool) {
	b = &batch{done: make(chan struct{})}
	defer func() { b.bytesRead = r.BytesRead() }()
	for len(b.texts) < opt.BatchSize && b.textBytes < batchBytes {
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			return b, false
		}
		var re *corpus.RecordError
		if opt.SkipBad && errors.As(err, &re) {
			b.skipped = append(b.skipped, re)
			continue
		}
		if err != nil {
			b.err = err
			return b, false
		}
		b.ids = append(b.ids, d.ID)
		b.texts = append(b.texts, d.Text)
		b.textBytes += len(d.Text)
	}
	return b, true
}

// encodeBatch signs b's documents and encodes the output; sig is the signer's buffer.
func encodeBatch(h *lsh.Hasher, b *batch, f Format, ids bool, sig lsh.Signature) lsh.Signature {
	k := h.Spec().Hashes
	if f == Binary {
		b.out = make([]byte, 0, 4*k*len(b.texts))
	} else {
		b.out = make([]byte, 0, (12*k+32)*len(b.texts))
	}
	since := 0 // text bytes signed since this goroutine last yielded
	for i, text := range b.texts {
		if since >= yieldBytes {
			// Let the reader and the parsers run: with a signer on every core they get a
			// core only when a signer blocks, so they fell behind and the signers then
			// waited for batches (the signatures command used 1.75-1.82 of 2 cores).
			runtime.Gosched()
			since = 0
		}
		since += len(text)
		sig = h.Signature(text, sig)
		if f == Binary {
			for _, v := range sig {
				b.out = binary.LittleEndian.AppendUint32(b.out, v)
			}
			if ids {
				b.idsOut = append(append(b.idsOut, b.ids[i]...), '\n')
			}
			continue
		}
		b.out = appendJSONL(b.out, b.ids[i], sig)
	}
	b.texts = nil // the texts can go before the batch is written
	return sig
}

// appendJSONL appends {"id":ID,"signature":[v,...]} and a newline, the id escaped as
// encoding/json escapes it and the values in decimal, as strconv writes them. The numbers
// are written in place, eight digits at once (eightDigits) and a value's digits as one
// 8-byte store, with no call and no loop per digit: a signature is a few hundred numbers
// and this was a tenth of the fast scheme's time.
func appendJSONL(dst []byte, id string, sig lsh.Signature) []byte {
	dst = append(dst, `{"id":`...)
	dst = corpus.AppendJSONString(dst, id)
	dst = append(dst, `,"signature":[`...)
	// Each number takes at most 11 bytes with its comma, and no store reaches past them:
	// under 10^8 a comma and 8 bytes stored (t of them kept), above it a comma, two
	// digits at most and 8.
	dst = slices.Grow(dst, 11*len(sig)+3)
	out := dst[:cap(dst)]
	n := len(dst)
	for i, v := range sig {
		if i > 0 {
			out[n] = ','
			n++
		}
		if v < 1e8 {
			// Digits: t or t+1, t from the bit length (1233/4096 is just above log10(2)).
			// Without a branch: the digit counts of real values vary at random (the
			// classic scheme's run 1% faster than with an if, in paired runs).
			t := bits.Len32(v|1) * 1233 >> 12
			t += int(1 ^ (uint64(v|1)-uint64(pow10[t]))>>63)
			// The last t of the eight digits, the bytes past them overwritten later.
			binary.LittleEndian.PutUint64(out[n:], eightDigits(v)>>(64-8*t))
			n += t
			continue
		}
		hi := v / 1e8 // 1 to 42
		if hi >= 10 {
			out[n], out[n+1] = decimalPairs[2*hi], decimalPairs[2*hi+1]
			n += 2
		} else {
			out[n] = byte('0' + hi)
			n++
		}
		binary.LittleEndian.PutUint64(out[n:], eightDigits(v-hi*1e8))
		n += 8
	}
	return append(dst[:n], "]}\n"...)
}

// eightDigits returns the eight decimal digits of x < 10^8, zeros in front, as ASCII
// bytes in memory order (the first digit in the lowest byte): x split into two 4-digit
// halves in 32-bit lanes, each into two 2-digit quarters in 16-bit lanes, each into two
// digits in bytes, every lane divided at once by a multiplication and a shift (x*10486>>20
// is x/100 below 10,000, x*103>>10 is x/10 below 100; TestEightDigits checks every lane
// value).
func eightDigits(x uint32) uint64 {
	v := uint64(x/10000) | uint64(x%10000)<<32
	q := v * 10486 >> 20 & 0x0000007F0000007F
	v = q | (v-q*100)<<16
	q = v * 103 >> 10 & 0x000F000F000F000F
	v = q | (v-q*10)<<8
	return v | 0x3030303030303030
}

var pow10 = [...]uint32{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// decimalPairs holds "00" to "99", for writing numbers two digits at a time.
const decimalPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// writeOut writes a batch's output: a large one straight to w (bw flushed first), not
// copied through bw's buffer (a batch of 1 MB of text makes about 330 KB of JSONL).
// bufio.Writer does the same only for a write larger than its free room, and a smaller
// buffer (64 KB) made the classic scheme's run 1.5-3% slower in paired runs.
func writeOut(bw *bufio.Writer, w io.Writer, out []byte) error {
	if len(out) < 64<<10 {
		_, err := bw.Write(out)
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(out)
	return err
}

// drain writes the batches in order as they are done, reporting progress and skipped
// records, until the input ends, the reader fails, or writing fails.
func (p *pipeline) drain(w io.Writer, opt Options) (Summary, error) {
	var sum Summary
	bw := bufio.NewWriterSize(w, 1<<20)
	var idw *bufio.Writer
	if opt.IDs != nil {
		idw = bufio.NewWriterSize(opt.IDs, 1<<16)
	}
	prog := progressReporter{fn: opt.Progress, every: opt.Every, start: time.Now()}
	for b := range p.order {
		<-b.done
		for _, re := range b.skipped {
			sum.Skipped++
			if opt.Skipped != nil {
				opt.Skipped(re)
			}
		}
		if err := writeOut(bw, w, b.out); err != nil {
			return sum, err
		}
		if idw != nil {
			if _, err := idw.Write(b.idsOut); err != nil {
				return sum, err
			}
		}
		sum.Docs += len(b.ids)
		sum.Bytes = b.bytesRead
		if b.err != nil {
			// Keep what was signed before the bad record; its error is the one to report.
			bw.Flush()
			if idw != nil {
				idw.Flush()
			}
			return sum, b.err
		}
		if len(b.ids) > 0 || len(b.skipped) > 0 {
			prog.report(sum, false)
		}
	}
	if err := bw.Flush(); err != nil {
		return sum, err
	}
	if idw != nil {
		if err := idw.Flush(); err != nil {
			return sum, err
		}
	}
	prog.report(sum, true)
	return sum, nil
}

// progressReporter calls Options.Progress at most every `every`, and always at the end.
type progressReporter struct {
	fn    func(Progress)
	every time.Duration
	start time.Time
	last  time.Time
}

func (pr *progressReporter) report(sum Summary, done bool) {
	if pr.fn == nil {
		return
	}
	now := time.Now()
	if !done && now.Sub(pr.last) < pr.every {
		return
	}
	pr.last = now
	pr.fn(Progress{Docs: sum.Docs, Skipped: sum.Skipped, Bytes: sum.Bytes, Elapsed: now.Sub(pr.start), Done: done})
}
