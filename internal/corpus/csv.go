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
	closer func() error
	header []string
	idCol  int
	txtCol int
}

func newCSVReader(src *bufio.Reader, closer func() error, name string, format Format, opt Options) (*csvReader, error) {
	count := &countingReader{r: src}
	cr := csv.NewReader(count)
	if format == TSV {
		cr.Comma = '\t'
		cr.LazyQuotes = true
	}
	cr.FieldsPerRecord = 0 // every row as long as the header
	cr.ReuseRecord = false
	r := &csvReader{name: name, opt: opt, cr: cr, count: count, closer: closer, idCol: -1, txtCol: -1}
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FormatError{File: name, Msg: "empty file: want a header row naming the fields"}
		}
		return nil, &RecordError{Place: Place{File: name, Line: 1}, Msg: "header: " + err.Error()}
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
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
		row, err := r.cr.Read()
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return Record{}, &RecordError{Place: Place{File: r.name, Line: pe.StartLine}, Msg: pe.Err.Error()}
			}
			return Record{}, err
		}
		line, _ := r.cr.FieldPos(0)
		if len(row) == 1 && row[0] == "" {
			continue // blank line
		}
		rec := Record{Place: Place{File: r.name, Line: line}, ID: row[r.idCol], Text: row[r.txtCol]}
		for i, v := range row {
			if !utf8.ValidString(v) {
				return Record{}, &RecordError{Place: rec.Place, Field: r.header[i], Msg: fmt.Sprintf("invalid UTF-8 at byte %d", firstInvalid([]byte(v)))}
			}
			if i == r.idCol || i == r.txtCol || !r.opt.keepMeta(r.header[i]) {
				continue
			}
			if rec.Meta == nil {
				rec.Meta = map[string]any{}
			}
			rec.Meta[r.header[i]] = v
		}
		if e := checkRecord(&rec, &r.opt); e != nil {
			return Record{}, e
		}
		return rec, nil
	}
}
