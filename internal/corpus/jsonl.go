package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"
)

// jsonlReader reads one JSON object per line; blank lines are skipped.
type jsonlReader struct {
	name    string
	opt     Options
	r       *bufio.Reader
	closer  func() error
	line    int
	bytes   int64
	started bool
}

func (jr *jsonlReader) BytesRead() int64 { return jr.bytes }
func (jr *jsonlReader) Close() error     { return jr.closer() }

func (jr *jsonlReader) Next() (Record, error) {
	if !jr.started {
		jr.started = true
		if bom, _ := jr.r.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
			jr.r.Discard(3) // a byte order mark is not part of the first record
			jr.bytes += 3
		}
	}
	for {
		line, err := jr.readLine()
		if err != nil {
			return Record{}, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return jr.parse(line)
	}
}

// readLine reads a whole line, but stops keeping it past the document cap (plus room for
// the JSON around it), so one huge line cannot exhaust memory.
func (jr *jsonlReader) readLine() ([]byte, error) {
	limit := 2*jr.opt.MaxBytes + 1<<16
	var buf []byte
	tooLong := false
	for {
		chunk, err := jr.r.ReadSlice('\n')
		jr.bytes += int64(len(chunk))
		if !tooLong {
			if len(buf)+len(chunk) > limit {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && (len(buf) > 0 || tooLong) {
			err = nil
		}
		if err != nil {
			return nil, err
		}
		jr.line++
		if tooLong {
			return nil, &RecordError{Place: Place{File: jr.name, Line: jr.line}, Msg: fmt.Sprintf("line longer than %d bytes", limit)}
		}
		return buf, nil
	}
}

func (jr *jsonlReader) parse(line []byte) (Record, error) {
	rec := Record{Place: Place{File: jr.name, Line: jr.line}}
	fail := func(field, format string, args ...any) (Record, error) {
		return Record{}, &RecordError{Place: rec.Place, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		if !utf8.Valid(line) {
			return fail("", "invalid UTF-8 at byte %d", firstInvalid(line))
		}
		return fail("", "malformed JSON: %v", err)
	}
	// encoding/json would quietly replace invalid UTF-8 and lone surrogates with U+FFFD;
	// text is never altered, so such a record is rejected, naming the field.
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		raw := fields[k]
		if !utf8.Valid(raw) {
			return fail(k, "invalid UTF-8 at byte %d of the value", firstInvalid(raw))
		}
		if !validEscapes(raw) {
			return fail(k, "invalid UTF-16 surrogate escape")
		}
	}
	raw, ok := fields[jr.opt.IDField]
	if !ok {
		return fail(jr.opt.IDField, "missing")
	}
	if err := json.Unmarshal(raw, &rec.ID); err != nil {
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return fail(jr.opt.IDField, "want a string or a number")
		}
		rec.ID = n.String()
	}
	raw, ok = fields[jr.opt.TextField]
	if !ok {
		return fail(jr.opt.TextField, "missing")
	}
	if err := json.Unmarshal(raw, &rec.Text); err != nil {
		return fail(jr.opt.TextField, "want a string")
	}
	for _, k := range keys {
		if !jr.opt.keepMeta(k) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(fields[k]))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return fail(k, "%v", err)
		}
		if rec.Meta == nil {
			rec.Meta = map[string]any{}
		}
		rec.Meta[k] = v
	}
	if e := checkRecord(&rec, &jr.opt); e != nil {
		return Record{}, e
	}
	return rec, nil
}

// validEscapes reports whether every \uD800-\uDFFF escape in a JSON value is part of a
// high-low surrogate pair.
func validEscapes(raw []byte) bool {
	for i := 0; i+5 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // skip the escaped character
			continue
		}
		v := hex4(raw[i+2 : i+6])
		switch {
		case v >= 0xD800 && v < 0xDC00:
			if i+11 >= len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
				return false
			}
			if lo := hex4(raw[i+8 : i+12]); lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 11
		case v >= 0xDC00 && v <= 0xDFFF:
			return false
		default:
			i += 5
		}
	}
	return true
}

func hex4(b []byte) int {
	v := 0
	for _, c := range b {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= int(c - '0')
		case c >= 'a' && c <= 'f':
			v |= int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v |= int(c-'A') + 10
		default:
			return -1
		}
	}
	return v
}
