package corpus

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// defaultChunkBytes is how much input one parsing goroutine takes at a time: large enough
// that handing chunks around costs nothing next to parsing them, small enough that the
// chunks in flight (a few per core) stay a few megabytes.
const defaultChunkBytes = 1 << 20

// jsonlReader reads one JSON object per line; blank lines are skipped. One goroutine cuts
// the input into chunks of whole lines, the chunks are parsed on all cores, and Next hands
// the records out in input order. The goroutines start at the first Next and end at the
// end of the input or at Close.
type jsonlReader struct {
	name   string
	opt    Options
	src    io.Reader
	closer func() error
	// chunkBytes and workers default to defaultChunkBytes and GOMAXPROCS; tests make
	// chunks tiny to cut lines everywhere.
	chunkBytes int
	workers    int

	pipe  *jsonlPipe // nil until the first Next
	cur   *parsedChunk
	pos   int
	bytes int64
	err   error // once set (the input failed, or io.EOF), every Next returns it
}

// parsedChunk is one chunk's records in order, ready once done is closed.
type parsedChunk struct {
	done  chan struct{}
	items []parsed
	end   int64 // input bytes consumed up to the end of the chunk
	err   error // the input failed after this chunk, which is the last
}

type parsed struct {
	rec Record
	err *RecordError
}

// lineChunk is whole lines of input for one parsing goroutine.
type lineChunk struct {
	data    []byte
	buf     *[]byte // data's buffer, returned to the pool once parsed
	line    int     // number of the first line
	tooLong bool    // line `line` was longer than the limit and was dropped
	out     *parsedChunk
}

// jsonlPipe is the goroutines of one reader; it holds no reference to the reader, so an
// abandoned reader can be collected and its cleanup stop them.
type jsonlPipe struct {
	order    chan *parsedChunk // the chunks in input order
	free     chan *[]byte      // parsed chunks' buffers
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

func (p *jsonlPipe) halt() { p.stopOnce.Do(func() { close(p.stop) }) }

// getBuf returns a chunk buffer of length size, reusing a parsed chunk's.
func (p *jsonlPipe) getBuf(size int) *[]byte {
	select {
	case b := <-p.free:
		if cap(*b) >= size {
			*b = (*b)[:size]
			return b
		}
	default:
	}
	b := make([]byte, size)
	return &b
}

// putBuf keeps a buffer for reuse, if there is room.
func (p *jsonlPipe) putBuf(b *[]byte) {
	select {
	case p.free <- b:
	default:
	}
}

func (jr *jsonlReader) BytesRead() int64 { return jr.bytes }

// Close stops the reading goroutines, waits for them to end, then closes the input.
func (jr *jsonlReader) Close() error {
	if jr.pipe != nil {
		jr.pipe.halt()
		jr.pipe.wg.Wait()
	}
	return jr.closer()
}

func (jr *jsonlReader) Next() (Record, error) {
	if jr.pipe == nil {
		jr.start()
	}
	for {
		if jr.cur != nil && jr.pos < len(jr.cur.items) {
			it := jr.cur.items[jr.pos]
			jr.cur.items[jr.pos] = parsed{} // the caller owns the record now
			jr.pos++
			if it.err != nil {
				return Record{}, it.err
			}
			return it.rec, nil
		}
		if jr.cur != nil && jr.cur.err != nil && jr.err == nil {
			jr.err = jr.cur.err
		}
		if jr.err != nil {
			return Record{}, jr.err
		}
		c, ok := <-jr.pipe.order
		if !ok {
			jr.err = io.EOF
			continue
		}
		<-c.done
		jr.cur, jr.pos, jr.bytes = c, 0, c.end
	}
}

func (jr *jsonlReader) start() {
	if jr.chunkBytes <= 0 {
		jr.chunkBytes = defaultChunkBytes
	}
	jr.chunkBytes = max(jr.chunkBytes, 16) // room for the byte order mark
	if jr.workers <= 0 {
		jr.workers = runtime.GOMAXPROCS(0)
	}
	p := &jsonlPipe{order: make(chan *parsedChunk, 2*jr.workers), free: make(chan *[]byte, 3*jr.workers+2), stop: make(chan struct{})}
	jr.pipe = p
	work := make(chan lineChunk)
	// The goroutines share nothing with jr, so that an abandoned reader can be collected.
	name, opt, limit := jr.name, jr.opt, lineLimit(&jr.opt)
	for range jr.workers {
		p.wg.Go(func() {
			var s lineScanner
			for c := range work {
				s.parseChunk(c, name, &opt, limit)
				if c.buf != nil {
					p.putBuf(c.buf)
				}
				close(c.out.done)
			}
		})
	}
	split := &splitter{src: jr.src, size: jr.chunkBytes, limit: limit, pipe: p, work: work, line: 1}
	p.wg.Go(func() {
		defer close(p.order)
		defer close(work)
		split.run()
	})
	runtime.AddCleanup(jr, func(p *jsonlPipe) { p.halt() }, p)
}

// lineLimit is the longest line kept: the document cap plus room for the JSON around it,
// so one huge line cannot exhaust memory.
func lineLimit(opt *Options) int { return 2*opt.MaxBytes + 1<<16 }

// splitter cuts the input into chunks of whole lines.
type splitter struct {
	src      io.Reader
	size     int // chunk size
	limit    int // longest line kept
	pipe     *jsonlPipe
	work     chan<- lineChunk
	line     int   // number of the next line
	consumed int64 // input bytes read
}

// send queues a chunk for parsing and for Next, in order; false once the reader stops.
func (sp *splitter) send(c lineChunk, end int64, err error) bool {
	c.out = &parsedChunk{done: make(chan struct{}), end: end, err: err}
	select {
	case sp.pipe.order <- c.out:
	case <-sp.pipe.stop:
		return false
	}
	if c.buf == nil && !c.tooLong { // nothing to parse
		close(c.out.done)
		return true
	}
	select {
	case sp.work <- c:
		return true
	case <-sp.pipe.stop:
		close(c.out.done)
		return false
	}
}

func (sp *splitter) run() {
	buf := sp.pipe.getBuf(sp.size)
	filled := 0
	var base int64 // input offset of (*buf)[0]
	first := true
	for {
		n, rerr := io.ReadFull(sp.src, (*buf)[filled:])
		filled += n
		sp.consumed += int64(n)
		eof := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		if rerr != nil && !eof {
			// Parse the whole lines before the failure, then report it.
			cut := bytes.LastIndexByte((*buf)[:filled], '\n') + 1
			sp.send(lineChunk{data: (*buf)[:cut], buf: buf, line: sp.line}, base+int64(cut), rerr)
			return
		}
		if first {
			first = false
			if bytes.HasPrefix((*buf)[:filled], []byte("\xef\xbb\xbf")) {
				// A byte order mark is not part of the first record.
				copy(*buf, (*buf)[3:filled])
				filled -= 3
				base += 3
			}
		}
		cut := filled
		if !eof {
			cut = bytes.LastIndexByte((*buf)[:filled], '\n') + 1
		}
		if cut == 0 && !eof {
			// A full buffer and no line end: a long line.
			if filled <= sp.limit {
				grown := sp.pipe.getBuf(min(2*len(*buf), sp.limit+1))
				copy(*grown, (*buf)[:filled])
				sp.pipe.putBuf(buf)
				buf = grown
				continue
			}
			var ok bool
			if buf, filled, ok = sp.dropLongLine(buf); !ok {
				return
			}
			base = sp.consumed - int64(filled)
			continue
		}
		next := sp.pipe.getBuf(max(sp.size, filled-cut))
		rest := copy(*next, (*buf)[cut:filled])
		c := lineChunk{data: (*buf)[:cut], buf: buf, line: sp.line}
		sp.line += bytes.Count(c.data, []byte{'\n'})
		if cut == 0 {
			sp.pipe.putBuf(buf)
			c.buf = nil
		}
		if !sp.send(c, base+int64(cut), nil) {
			return
		}
		if eof {
			sp.pipe.putBuf(next)
			return
		}
		buf, filled, base = next, rest, base+int64(cut)
	}
}

// dropLongLine reads past the end of a line longer than the limit, queues its rejection,
// and returns a buffer holding what follows the line.
func (sp *splitter) dropLongLine(buf *[]byte) (*[]byte, int, bool) {
	for {
		n, rerr := io.ReadFull(sp.src, *buf)
		sp.consumed += int64(n)
		if end := bytes.IndexByte((*buf)[:n], '\n'); end >= 0 {
			rest := copy(*buf, (*buf)[end+1:n])
			ok := sp.send(lineChunk{line: sp.line, tooLong: true}, sp.consumed-int64(rest), nil)
			sp.line++
			return buf, rest, ok
		}
		if rerr != nil {
			// The long line ends the input (or the input fails): reject it, then stop.
			var err error
			if rerr != io.EOF && rerr != io.ErrUnexpectedEOF {
				err = rerr
			}
			sp.send(lineChunk{line: sp.line, tooLong: true}, sp.consumed, err)
			return buf, 0, false
		}
	}
}

// parseChunk parses the lines of c into c.out.items.
func (s *lineScanner) parseChunk(c lineChunk, name string, opt *Options, limit int) {
	if c.tooLong {
		c.out.items = []parsed{{err: &RecordError{Place: Place{File: name, Line: c.line}, Msg: fmt.Sprintf("line longer than %d bytes", limit)}}}
		return
	}
	data, line := c.data, c.line
	items := make([]parsed, 0, 64)
	for len(data) > 0 {
		var l []byte
		if j := bytes.IndexByte(data, '\n'); j >= 0 {
			l, data = data[:j+1], data[j+1:]
		} else {
			l, data = data, nil
		}
		place := Place{File: name, Line: line}
		line++
		if len(l) > limit {
			items = append(items, parsed{err: &RecordError{Place: place, Msg: fmt.Sprintf("line longer than %d bytes", limit)}})
			continue
		}
		l = bytes.TrimRight(l, "\r\n")
		if len(l) == 0 || l[0] != '{' && len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		rec, err := s.parseLine(l, place, opt)
		if err != nil {
			err.Record = rawRecord(l)
		}
		items = append(items, parsed{rec: rec, err: err})
	}
	c.out.items = items
}
