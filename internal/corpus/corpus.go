// Package corpus reads documents in: JSONL (plain or gzip-compressed) records with an id
// and a text field, validated, streamed with bounded memory. It does no SQL.
package corpus

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Doc is one document: an external id and its text.
type Doc struct {
	ID   string
	Text string
}

// DefaultMaxDocBytes is the default cap on one document's text.
const DefaultMaxDocBytes = 1 << 20

// RecordError is a record that was rejected, with the place it came from.
type RecordError struct {
	File  string
	Line  int
	Field string // empty when the whole record is at fault
	Msg   string
}

func (e *RecordError) Error() string {
	place := fmt.Sprintf("%s:%d", e.File, e.Line)
	if e.Field != "" {
		place += ": field " + e.Field
	}
	return place + ": " + e.Msg
}

// JSONLReader reads one JSON object per line. Blank lines are skipped.
type JSONLReader struct {
	File      string // for error messages
	IDField   string // default "id"
	TextField string // default "text"
	MaxBytes  int    // per document text; default DefaultMaxDocBytes

	r     *bufio.Reader
	line  int
	bytes int64
}

// NewJSONLReader reads r, which may be gzip-compressed (detected by its magic bytes).
func NewJSONLReader(r io.Reader, file string) (*JSONLReader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		br = bufio.NewReaderSize(zr, 1<<16)
	}
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		br.Discard(3) // a UTF-8 byte order mark is not part of the first record
	}
	return &JSONLReader{File: file, IDField: "id", TextField: "text", MaxBytes: DefaultMaxDocBytes, r: br}, nil
}

// BytesRead returns the uncompressed bytes consumed so far.
func (jr *JSONLReader) BytesRead() int64 { return jr.bytes }

// Line returns the number of the last line read.
func (jr *JSONLReader) Line() int { return jr.line }

// Next returns the next document, io.EOF at the end, a *RecordError for a bad record
// (reading may go on after it), or another error when the input itself fails.
func (jr *JSONLReader) Next() (Doc, error) {
	for {
		line, err := jr.readLine()
		if err != nil {
			return Doc{}, err
		}
		jr.line++
		jr.bytes += int64(len(line))
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return jr.parse(line)
	}
}

// readLine reads a whole line however long, but stops collecting past the document cap
// (plus room for the JSON around it) so a huge line cannot exhaust memory.
func (jr *JSONLReader) readLine() ([]byte, error) {
	limit := jr.MaxBytes*2 + 1<<16
	var buf []byte
	tooLong := false
	for {
		chunk, err := jr.r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > limit {
				tooLong = true
				buf = nil
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
		if tooLong {
			jr.line++
			return nil, &RecordError{File: jr.File, Line: jr.line, Msg: fmt.Sprintf("line longer than %d bytes", limit)}
		}
		return buf, nil
	}
}

func (jr *JSONLReader) parse(line []byte) (Doc, error) {
	fail := func(field, format string, args ...any) (Doc, error) {
		return Doc{}, &RecordError{File: jr.File, Line: jr.line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if !utf8.Valid(line) {
		return fail("", "invalid UTF-8 at byte %d", firstInvalid(line))
	}
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(line, &rec); err != nil {
		return fail("", "malformed JSON: %v", err)
	}
	var d Doc
	raw, ok := rec[jr.IDField]
	if !ok {
		return fail(jr.IDField, "missing")
	}
	var idNum json.Number
	if err := json.Unmarshal(raw, &d.ID); err != nil {
		if err := json.Unmarshal(raw, &idNum); err != nil {
			return fail(jr.IDField, "want a string or a number")
		}
		d.ID = idNum.String()
	}
	if d.ID == "" {
		return fail(jr.IDField, "empty")
	}
	raw, ok = rec[jr.TextField]
	if !ok {
		return fail(jr.TextField, "missing")
	}
	if err := json.Unmarshal(raw, &d.Text); err != nil {
		return fail(jr.TextField, "want a string")
	}
	if bytes.Contains(raw, []byte(`\ud`)) || bytes.Contains(raw, []byte(`\uD`)) {
		// encoding/json replaces lone surrogates with U+FFFD; reject instead of altering text.
		if !validEscapes(raw) {
			return fail(jr.TextField, "invalid UTF-16 surrogate escape")
		}
	}
	if len(d.Text) > jr.MaxBytes {
		return fail(jr.TextField, "document of %d bytes exceeds the %d-byte cap", len(d.Text), jr.MaxBytes)
	}
	return d, nil
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// validEscapes reports whether every \uD800-\uDFFF escape in a JSON string is part of a
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
