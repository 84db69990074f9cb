package corpus

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// csvReader reads CSV or TSV with a header row naming the fields.
type csvReader struct {
	name   string
	opt    Options
	cr     *csv.Reader
	count  *countingReader
	guard  *recordGuard
	line   int // last line of the last record read
	closer func() error
	header []string
	idCol  int
	txtCol int
}

func newCSVReader(src *bufio.Reader, closer func() error, name string, format Format, opt Options) (*csvReader, error) {
	count := &countingReader{r: src}
	guard := &recordGuard{r: count, limit: 2*int64(opt.MaxBytes) + 1<<16}
	cr := csv.NewReader(guard)
	if format == TSV {
		cr.Comma = '\t'
		cr.LazyQuotes = true
	}
	cr.FieldsPerRecord = 0 // every row as long as the header
	cr.ReuseRecord = false
	r := &csvReader{name: name, opt: opt, cr: cr, count: count, guard: guard, closer: closer, idCol: -1, txtCol: -1}
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FormatError{File: name, Msg: "empty file: want a header row naming the fields"}
		}
		return nil, &RecordError{Place: Place{File: name, Line: 1}, Msg: "header: " + err.Error()}
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
		r.line, _ = cr.FieldPos(len(header) - 1) // a record too long to read is placed after it
	}
	if opt.table != nil {
		return r.tableHeader(header)
	}
	for i, h := range header {
		if !utf8.ValidString(h) {
			return nil, &RecordError{Place: Place{File: name, Line: 1}, Msg: fmt.Sprintf("header column %d: invalid UTF-8", i+1)}
		}
		switch h {
		case opt.IDField:
			r.idCol = i
		case opt.TextField:
			r.txtCol = i
		}
	}
	if r.idCol < 0 || r.txtCol < 0 {
		missing := opt.IDField
		if r.idCol >= 0 {
			missing = opt.TextField
		}
		return nil, &RecordError{Place: Place{File: name, Line: 1}, Field: missing, Msg: "no such column in the header (" + strings.Join(header, ", ") + ")"}
	}
	r.header = header
	return r, nil
}

func (r *csvReader) BytesRead() int64 { return r.count.n }
func (r *csvReader) Close() error     { return r.closer() }

func (r *csvReader) Next() (Record, error) {
	for {
		r.guard.reset()
		row, err := r.cr.Read()
		if errors.Is(err, errRecordTooLong) {
			// csv cannot resume inside a record: the import stops here, saying where.
			return Record{}, &FormatError{File: r.name, Msg: fmt.Sprintf("after line %d: a record longer than %d bytes (raise the document size cap or fix the file)", r.line, r.guard.limit)}
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return Record{}, &RecordError{Place: Place{File: r.name, Line: pe.StartLine}, Msg: pe.Err.Error()}
			}
			return Record{}, err
		}
		line, _ := r.cr.FieldPos(0)
		r.line, _ = r.cr.FieldPos(len(row) - 1)
		if len(row) == 1 && row[0] == "" {
			continue // blank line
		}
		if r.opt.table != nil {
			return r.tableRow(row, line)
		}
		rec := Record{Place: Place{File: r.name, Line: line}, ID: row[r.idCol], Text: row[r.txtCol]}
		for i, v := range row {
			if !utf8.ValidString(v) {
				return Record{}, &RecordError{Place: rec.Place, Field: r.header[i], Msg: fmt.Sprintf("invalid UTF-8 at byte %d", firstInvalid([]byte(v))), Record: r.rowObject(row)}
			}
			if i == r.idCol || i == r.txtCol || !r.opt.keepMeta(r.header[i]) {
				continue
			}
			if rec.Meta == nil {
				rec.Meta = map[string]any{}
			}
			rec.Meta[r.header[i]] = v
		}
		if e := checkRecord(&rec, &r.opt, false); e != nil {
			e.Record = r.rowObject(row)
			return Record{}, e
		}
		return rec, nil
	}
}

// rowObject is a CSV row as an object of its header's columns, for a rejects file.
func (r *csvReader) rowObject(row []string) map[string]string {
	m := make(map[string]string, len(row))
	for i, v := range row {
		if i < len(r.header) {
			m[r.header[i]] = v
		}
	}
	return m
}

var errRecordTooLong = errors.New("record too long")

// recordGuard fails a read once more than limit bytes were read since the last reset, so
// one huge CSV record cannot exhaust memory. csv.Reader reads ahead in 4 KB chunks, which
// the limit's slack covers.
type recordGuard struct {
	r     io.Reader
	n     int64
	limit int64
}

func (g *recordGuard) reset() { g.n = 0 }

func (g *recordGuard) Read(p []byte) (int, error) {
	if g.n > g.limit {
		return 0, errRecordTooLong
	}
	n, err := g.r.Read(p)
	g.n += int64(n)
	return n, err
}
