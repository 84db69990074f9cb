package bulk

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// docLine is a document's line in docs.jsonl: what later stages need of it without its
// text.
type docLine struct {
	ID     string `json:"id"`
	Place  string `json:"place"`
	Len    int    `json:"len"`
	Hash   string `json:"hash"` // SHA-256 of the text, hex: a manifest row's content hash
	Norm   string `json:"norm"` // SHA-256 of the normalized text, hex: the exact pass's key
	Source string `json:"source,omitempty"`
	Lang   string `json:"lang,omitempty"`
	Date   string `json:"date,omitempty"`
}

// rejectLine is a line of rejects.jsonl, as an import's rejects file has it (without
// the record: the corpus has it at that place).
type rejectLine struct {
	Place  string `json:"place"`
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason"`
}

// chunk is ChunkDocs records of the input (the last one fewer): the documents, and the
// refused records as rejects.
type chunk struct {
	n       int // chunk number
	docs    []corpus.Record
	rejects []*corpus.RecordError
	pos     int64 // input bytes consumed at the chunk's end
	err     error
}

// countingFile counts the bytes read from the input file (compressed, for progress).
type countingFile struct {
	f *os.File
	n atomic.Int64
}

func (c *countingFile) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// source is the input opened for one streaming pass.
type source struct {
	r    corpus.Reader
	f    *countingFile // nil for Parquet
	size int64
}

func (r *run) open() (*source, error) {
	if r.opt.Format == corpus.Parquet {
		rd, err := corpus.OpenFile(r.opt.In, corpus.Parquet, r.opt.Corpus)
		if err != nil {
			return nil, err
		}
		return &source{r: rd, size: r.input.Size}, nil
	}
	f, err := os.Open(r.opt.In)
	if err != nil {
		return nil, err
	}
	cf := &countingFile{f: f}
	rd, err := corpus.NewReader(cf, filepath.Base(r.opt.In), r.opt.Format, r.opt.Corpus)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &source{r: rd, f: cf, size: r.input.Size}, nil
}

func (s *source) Close() error {
	err := s.r.Close()
	if s.f != nil {
		err = errors.Join(err, s.f.f.Close())
	}
	return err
}

// pos is how far through the input the pass is, in bytes of the file (Parquet: of the
// values read, roughly).
func (s *source) pos() int64 {
	if s.f != nil {
		return s.f.n.Load()
	}
	return min(s.r.BytesRead(), s.size)
}

// stream opens the input and streams it in chunks of r.opt.ChunkDocs records, skipping
// the first skip chunks (source.chunks). stop cancels the reading, drains what was sent
// and closes the input: a stage defers it, and leaves no reader behind however it
// returns.
func (r *run) stream(ctx context.Context, skip int) (src *source, chunks <-chan chunk, stop func(), err error) {
	if src, err = r.open(); err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	chunks = src.chunks(ctx, r.opt.ChunkDocs, skip)
	return src, chunks, func() {
		cancel()
		for range chunks {
		}
		src.Close()
	}, nil
}

// chunks streams the input in chunks of size records from the first, skipping the
// first skip chunks' records (read, not kept). It stops when ctx is done; the caller
// must drain the channel.
func (s *source) chunks(ctx context.Context, size, skip int) <-chan chunk {
	out := make(chan chunk, 2)
	go func() {
		defer close(out)
		c := chunk{n: 0}
		records := 0
		send := func() bool {
			c.pos = s.pos()
			if c.n >= skip {
				select {
				case out <- c:
				case <-ctx.Done():
					return false
				}
			}
			c = chunk{n: c.n + 1}
			records = 0
			return true
		}
		for {
			rec, err := s.r.Next()
			if errors.Is(err, io.EOF) {
				if records > 0 {
					send()
				}
				return
			}
			var re *corpus.RecordError
			switch {
			case errors.As(err, &re):
				if c.n >= skip {
					c.rejects = append(c.rejects, re)
				}
			case err != nil:
				c.err = err
				c.pos = s.pos()
				select {
				case out <- c:
				case <-ctx.Done():
				}
				return
			default:
				if c.n >= skip {
					c.docs = append(c.docs, rec)
				}
			}
			if records++; records == size {
				if !send() {
					return
				}
			}
		}
	}()
	return out
}

func chunkName(n int, ext string) string {
	return filepath.Join(chunkDir, fmt.Sprintf("%07d.%s", n, ext))
}

// signatures is stage 1: every document's signature, content hash and normalized hash,
// appended chunk by chunk to the parts of signatures.bin, docs.jsonl and rejects.jsonl
// (parts: a chunk's marker, written once its bytes are synced, marks it complete), which
// are given those names at the end.
func (r *run) signatures(ctx context.Context) error {
	if err := os.MkdirAll(r.path(chunkDir), 0o755); err != nil {
		return err
	}
	done := r.completeChunks()
	parts, err := r.openParts(&done)
	if err != nil {
		return err
	}
	defer parts.close()
	src, chunks, stop, err := r.stream(ctx, done)
	if err != nil {
		return err
	}
	defer stop()
	spec := r.opt.Params.Spec
	workers := make([]*signer, r.opt.Workers)
	for i := range workers {
		if workers[i], err = newSigner(spec); err != nil {
			return err
		}
	}
	// Chunk n's files are written in the background while chunk n+1 is signed: the
	// workers do not wait for the disk (each file is synced). A chunk counts as complete,
	// for progress and for crashAt, once its files are.
	// What is kept of the chunk being written is what progress needs: its texts can go.
	docs := int64(0)
	var writing chan error // the previous chunk's write, if one is under way
	var last struct {
		n, docs int
		pos     int64
	}
	finish := func() error {
		if writing == nil {
			return nil
		}
		err := <-writing
		writing = nil
		if err != nil {
			return err
		}
		docs += int64(last.docs)
		r.reportDocs(last.pos, src.size, docs)
		return r.crashAt(StageSignatures, last.n)
	}
	defer finish() // a stage that fails leaves no write behind
	for c := range chunks {
		if c.err != nil {
			return c.err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		signed := r.signChunk(c, workers)
		if err := finish(); err != nil {
			return err
		}
		done := make(chan error, 1)
		writing = done
		last.n, last.docs, last.pos = c.n, len(c.docs), c.pos
		n, rejects := c.n, c.rejects
		go func() { done <- r.writeChunk(parts, n, rejects, signed) }()
	}
	if err := finish(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil { // the reader stopped early: not the end of the input
		return err
	}
	return r.joinChunks(parts)
}

// completeChunks is how many chunks from the first are complete (their .done marker,
// written once the chunk is on disk, is there).
func (r *run) completeChunks() int {
	n := 0
	for {
		if _, err := os.Stat(r.path(chunkName(n, "done"))); err != nil {
			return n
		}
		n++
	}
}

// signer is one worker's state: a hasher is not safe to share.
type signer struct {
	h   *lsh.Hasher
	sig lsh.Signature
}

func newSigner(spec lsh.Spec) (*signer, error) {
	h, err := lsh.NewHasher(spec)
	if err != nil {
		return nil, err
	}
	return &signer{h: h}, nil
}

// signedChunk is a chunk's signatures (k little-endian uint32s a document) and document
// lines, in input order.
type signedChunk struct {
	sigs  []byte
	lines [][]byte
}

// signChunk signs c's documents on every worker: each document's signature, its content
// hash, and the hash of the normalized text the signature was computed from (the
// hasher's, not normalized again).
func (r *run) signChunk(c chunk, workers []*signer) signedChunk {
	k := r.opt.Params.Spec.Hashes
	sigs := make([]byte, len(c.docs)*k*4)
	lines := make([][]byte, len(c.docs))
	onWorkers(workers, len(c.docs), func(s *signer, i int) {
		rec := &c.docs[i]
		s.sig = s.h.Signature(rec.Text, s.sig)
		out := sigs[i*k*4 : (i+1)*k*4]
		for j, v := range s.sig {
			binary.LittleEndian.PutUint32(out[j*4:], v)
		}
		norm := sha256.Sum256(s.h.Normalized())
		sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(rec.Text), len(rec.Text))) // read only, no copy
		lines[i] = appendDocLine(nil, rec, sum, norm)
	})
	return signedChunk{sigs, lines}
}

// onWorkers calls do(w, i) for every i in [0, n) on one goroutine per worker w, each
// taking the next i as it comes free (documents differ in cost), and returns when all
// are done.
func onWorkers[W any](workers []W, n int, do func(w W, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				do(w, i)
			}
		})
	}
	wg.Wait()
}

// appendDocLine appends rec's line of docs.jsonl, a docLine as encoding/json writes it,
// and a newline: written field by field, since json.Marshal and hex.EncodeToString were
// a twentieth of the stage.
func appendDocLine(dst []byte, rec *corpus.Record, sum, norm [sha256.Size]byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = corpus.AppendJSONString(dst, rec.ID)
	dst = append(dst, `,"place":`...)
	dst = corpus.AppendJSONString(dst, rec.Place.String())
	dst = append(dst, `,"len":`...)
	dst = strconv.AppendInt(dst, int64(len(rec.Text)), 10)
	dst = append(dst, `,"hash":"`...)
	dst = hex.AppendEncode(dst, sum[:])
	dst = append(dst, `","norm":"`...)
	dst = hex.AppendEncode(dst, norm[:])
	dst = append(dst, '"')
	for _, f := range [...]string{"source", "lang", "date"} {
		if v := metaString(rec.Meta, f); v != "" {
			dst = append(append(append(dst, `,"`...), f...), `":`...)
			dst = corpus.AppendJSONString(dst, v)
		}
	}
	return append(dst, "}\n"...)
}

// writeChunk appends chunk n to the parts and writes its marker (parts.add).
func (r *run) writeChunk(p *parts, n int, rejects []*corpus.RecordError, s signedChunk) error {
	var rej []byte
	for _, re := range rejects {
		b, err := json.Marshal(rejectLine{Place: re.Place.String(), Field: re.Field, Reason: re.Msg})
		if err != nil {
			return err
		}
		rej = append(append(rej, b...), '\n')
	}
	return p.add(r, n, s.sigs, s.lines, rej, len(rejects))
}

// metaString is a metadata field's string value ("" when absent or not a string).
func metaString(m map[string]any, field string) string {
	s, _ := m[field].(string)
	return s
}

// joinChunks makes the parts signatures.bin, docs.jsonl and rejects.jsonl, with the
// counts of documents and rejects their last chunk's marker holds.
func (r *run) joinChunks(p *parts) error {
	docs, rejects := p.at.docs, p.at.rejects
	k := int64(r.opt.Params.Spec.Hashes) * 4
	if p.at.ends[0] != docs*k {
		return fmt.Errorf("%s: %d documents but %d bytes of signatures", sigFile, docs, p.at.ends[0])
	}
	if err := p.finish(r); err != nil {
		return err
	}
	if docs < 1 {
		return fmt.Errorf("%s: no documents to deduplicate (%d records refused, see %s)", r.input.Name, rejects, RejectsJSONL)
	}
	r.sum.Docs, r.sum.Rejected = int(docs), int(rejects)
	r.sum.Files = append(r.sum.Files, RejectsJSONL)
	return nil // the chunks go when the next stage starts, once this one is marked done
}

// parts are the stage's three outputs as the chunks are appended to them, in the chunk
// folder: signatures, document lines and rejects. Chunk n is complete once its marker
// (chunks/n.done) holds where the three files end after it and the documents and
// rejects so far; its bytes are synced before the marker is written. A resume cuts
// each part back to where the last complete chunk left it. The stage wrote each chunk
// to files of its own and copied them all together at its end: 2.6 s of a 1M-document
// run with nothing else to do (issue 29 item 5).
type parts struct {
	f  [3]*os.File
	at partsAt
	bw *bufio.Writer // for the document lines
}

// partsAt is a chunk marker's content.
type partsAt struct {
	ends          [3]int64
	docs, rejects int64
}

var partNames = [3]string{"signatures.part", "docs.part", "rejects.part"}

// finalNames are what the parts become (partNames in order).
var finalNames = [3]string{sigFile, docsFile, RejectsJSONL}

// openParts opens the parts for appending after the first *done chunks, cut back to the
// last one's marker; when a part or a marker does not agree with them, the stage starts
// over (*done becomes 0).
func (r *run) openParts(done *int) (*parts, error) {
	p := &parts{}
	if *done > 0 {
		at, err := r.readMarker(*done - 1)
		if err == nil {
			for i, name := range partNames {
				st, serr := os.Stat(r.partPath(i))
				if serr != nil || st.Size() < at.ends[i] {
					err = fmt.Errorf("%s: shorter than its chunks", name)
					break
				}
			}
		}
		if err != nil { // start over
			for n := range *done {
				if rerr := os.Remove(r.path(chunkName(n, "done"))); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
					return nil, rerr
				}
			}
			*done = 0
		} else {
			p.at = at
		}
	}
	for i := range partNames {
		f, err := os.OpenFile(r.partPath(i), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			p.close()
			return nil, err
		}
		p.f[i] = f
		if err := f.Truncate(p.at.ends[i]); err != nil {
			p.close()
			return nil, err
		}
		if _, err := f.Seek(p.at.ends[i], io.SeekStart); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

// partPath is where part i is written.
func (r *run) partPath(i int) string { return r.path(filepath.Join(chunkDir, partNames[i])) }

func (r *run) readMarker(n int) (partsAt, error) {
	var at partsAt
	b, err := os.ReadFile(r.path(chunkName(n, "done")))
	if err != nil {
		return at, err
	}
	_, err = fmt.Sscan(string(b), &at.ends[0], &at.ends[1], &at.ends[2], &at.docs, &at.rejects)
	return at, err
}

// add appends chunk n's signatures, document lines and rejects, syncs them and writes
// the chunk's marker.
func (p *parts) add(r *run, n int, sigs []byte, lines [][]byte, rej []byte, rejects int) error {
	if p.bw == nil {
		p.bw = bufio.NewWriterSize(p.f[1], 1<<20)
	}
	for _, l := range lines {
		p.bw.Write(l) // an error is kept for Flush
	}
	if err := p.bw.Flush(); err != nil {
		return err
	}
	if _, err := p.f[0].Write(sigs); err != nil {
		return err
	}
	if _, err := p.f[2].Write(rej); err != nil {
		return err
	}
	at := p.at
	at.ends[0] += int64(len(sigs))
	for _, l := range lines {
		at.ends[1] += int64(len(l))
	}
	at.ends[2] += int64(len(rej))
	at.docs += int64(len(lines))
	at.rejects += int64(rejects)
	for _, f := range p.f {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	err := writeFile(r.path(chunkName(n, "done")), func(w *bufio.Writer) error {
		_, err := fmt.Fprintf(w, "%d %d %d %d %d\n", at.ends[0], at.ends[1], at.ends[2], at.docs, at.rejects)
		return err
	})
	if err != nil {
		return err
	}
	p.at = at
	return nil
}

// finish syncs and closes the parts, checks that each ends where the last marker says,
// and gives them their final names (the output folder synced after).
func (p *parts) finish(r *run) error {
	for i, f := range p.f {
		if err := f.Sync(); err != nil {
			return err
		}
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if st.Size() != p.at.ends[i] {
			return fmt.Errorf("%s: %d bytes; its chunks end at %d", partNames[i], st.Size(), p.at.ends[i])
		}
		if err := f.Close(); err != nil {
			return err
		}
		p.f[i] = nil
	}
	for i := range partNames {
		if err := os.Rename(r.partPath(i), r.path(finalNames[i])); err != nil {
			return err
		}
	}
	// The renames are on disk before the stage is marked done (a filesystem that may
	// reorder them would otherwise leave a done stage without its files).
	dir, err := os.Open(r.path("."))
	if err != nil {
		return err
	}
	return errors.Join(dir.Sync(), dir.Close())
}

func (p *parts) close() {
	for i, f := range p.f {
		if f != nil {
			f.Close()
			p.f[i] = nil
		}
	}
}
