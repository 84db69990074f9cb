package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// tableOptions mark a reader of rows that are not documents (see NewTableReader).
type tableOptions struct {
	need []string // columns a CSV header must name
}

// NewTableReader reads a stream of JSONL objects or CSV/TSV rows that are not documents,
// such as label files, with what the document readers do: gzip or zstd by their magic
// bytes, the line and record length limits, the UTF-8 and JSON checks (a key given
// twice, an unpaired surrogate), and a *RecordError naming file, line and field for a
// bad row. No id or text field is looked for: a Record's ID and Text are empty, Meta
// holds every field of the row, and Raw the row as read, for a rejects file.
//
// A CSV header's names are matched without case or surrounding space (Meta's keys are
// the names trimmed and lowercased, every value a string), and the header must name each
// column in need. A JSONL object's members keep their keys and come as metadata values
// do (string, json.Number, bool, nil, map[string]any or []any); any may be left out.
func NewTableReader(r io.Reader, name string, format Format, need []string) (Reader, error) {
	switch format {
	case JSONL, CSV, TSV:
	default:
		return nil, &FormatError{File: name, Msg: "a table comes as JSONL, CSV or TSV"}
	}
	return NewReader(r, name, format, Options{table: &tableOptions{need: need}})
}

// tableRecord turns a checked JSONL line into a table row: every member in Meta.
func (s *lineScanner) tableRecord(line []byte, place Place) (Record, *RecordError) {
	rec := Record{Place: place, Meta: make(map[string]any, len(s.fields)), Raw: rawRecord(line)}
	for i := range s.fields {
		f := &s.fields[i]
		key := f.keyName()
		v, err := metaValue(line[f.start:f.end], f)
		if err != nil {
			return Record{}, &RecordError{Place: place, Field: key, Msg: err.Error()}
		}
		rec.Meta[key] = v
	}
	return rec, nil
}

// tableHeader takes a table's CSV header: names trimmed and lowercased, each needed
// column present.
func (r *csvReader) tableHeader(header []string) (*csvReader, error) {
	for i, h := range header {
		if !utf8.ValidString(h) {
			return nil, &RecordError{Place: Place{File: r.name, Line: 1}, Msg: fmt.Sprintf("header column %d: invalid UTF-8", i+1)}
		}
		header[i] = strings.ToLower(strings.TrimSpace(h))
	}
	for _, need := range r.opt.table.need {
		if !slices.Contains(header, need) {
			return nil, &RecordError{Place: Place{File: r.name, Line: 1}, Field: need, Msg: "no such column in the header (" + strings.Join(header, ", ") + ")"}
		}
	}
	r.header = header
	return r, nil
}

// tableRow turns a CSV row into a table row: every column in Meta, as a string.
func (r *csvReader) tableRow(row []string, line int) (Record, error) {
	rec := Record{Place: Place{File: r.name, Line: line}, Meta: make(map[string]any, len(row)), Raw: orderedRow{r.header, row}}
	for i, v := range row {
		if !utf8.ValidString(v) {
			return Record{}, &RecordError{Place: rec.Place, Field: r.header[i], Msg: fmt.Sprintf("invalid UTF-8 at byte %d", firstInvalid([]byte(v))), Record: rec.Raw}
		}
		rec.Meta[r.header[i]] = v
	}
	return rec, nil
}

// orderedRow is a CSV row for a rejects file: an object of the header's columns in
// their order, built only when it is written.
type orderedRow struct{ header, row []string }

func (o orderedRow) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, v := range o.row {
		if i >= len(o.header) {
			break
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(o.header[i])
		val, _ := json.Marshal(v)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(val)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// NewTableReaderLimits is NewTableReader with the record cap of rows that carry a
// document's text (maxBytes, as Options.MaxBytes: lines up to about twice that) and a
// cap on the data read once decompressed (as Options.MaxInputBytes; 0 for none).
func NewTableReaderLimits(r io.Reader, name string, format Format, need []string, maxBytes int, maxInput int64) (Reader, error) {
	switch format {
	case JSONL, CSV, TSV:
	default:
		return nil, &FormatError{File: name, Msg: "a table comes as JSONL, CSV or TSV"}
	}
	return NewReader(r, name, format, Options{table: &tableOptions{need: need}, MaxBytes: maxBytes, MaxInputBytes: maxInput})
}
