package corpus

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"

	asmutf8 "github.com/segmentio/asm/utf8"
)

// A JSONL line is scanned once, in place, by a small validating scanner instead of being
// unmarshalled into a map: the id and text values are found and decoded straight into
// strings, metadata values only when they are kept, and every other value is checked
// for syntax and skipped. The checks are those of encoding/json plus the ones it does
// not make: invalid UTF-8 anywhere and unpaired UTF-16 surrogate escapes reject the
// record (encoding/json would replace them with U+FFFD), and so does a key given twice.

// maxDepth bounds the nesting of arrays and objects in a value, as encoding/json does.
const maxDepth = 10000

// jsonField is one top-level member of a line's object.
type jsonField struct {
	key        []byte // the key as written (escapes not decoded) unless keyEscaped is false
	keyEscaped bool
	start, end int  // the raw value, quotes included for strings
	kind       byte // '"' string, 'n' number, 't'/'f' boolean, 'z' null, '{' object, '[' array
	escaped    bool // a string value holds backslash escapes
	// escStart, escEnd delimit the string value's escapes in lineScanner.escapes.
	escStart, escEnd int
}

// lineScanner scans one line. It is reused from line to line by one parsing goroutine.
type lineScanner struct {
	b      []byte
	i      int
	fields []jsonField
	// syntax is the first syntax error, "" when the line is well-formed JSON.
	syntax string
	// badEscape is the index in fields of the first value (or key) with an unpaired
	// surrogate escape, -1 when there is none.
	badEscape int
	// badUTF8 is the offset of the first invalid UTF-8 byte in a string, -1 when none;
	// outside strings every byte from 0x80 is a syntax error.
	badUTF8 int
	// current is the index in fields of the member being scanned.
	current int
	seen    map[string]bool // duplicate-key check for objects with many members
	scratch []byte          // decoding buffer
	// escapes holds the offset of every escape in the line's top-level string values;
	// jsonField.escStart and escEnd index it.
	escapes []int
	record  bool // the string being scanned is a top-level value: record its escapes
}

// isSpace reports JSON white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// strStop marks the bytes that end the fast scan of a string's contents: the closing
// quote, a backslash, and the control characters that JSON forbids inside strings.
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func (s *lineScanner) fail(format string, args ...any) bool {
	if s.syntax == "" {
		s.syntax = fmt.Sprintf(format, args...)
	}
	return false
}

func (s *lineScanner) skipSpace() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}

func (s *lineScanner) unexpected() bool {
	if s.i >= len(s.b) {
		return s.fail("unexpected end of input")
	}
	return s.fail("invalid character %q at byte %d", s.b[s.i], s.i)
}

// scan checks the line and records its top-level members.
func (s *lineScanner) scan(line []byte) {
	s.b, s.i, s.fields, s.syntax, s.badEscape, s.badUTF8, s.current = line, 0, s.fields[:0], "", -1, -1, 0
	s.escapes = s.escapes[:0]
	s.skipSpace()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		s.unexpected()
		return
	}
	s.i++
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
	} else if !s.members() {
		return
	}
	s.skipSpace()
	if s.i < len(s.b) {
		s.fail("invalid character %q after the top-level object at byte %d", s.b[s.i], s.i)
	}
}

// members scans `"key": value` pairs up to and including the closing brace.
func (s *lineScanner) members() bool {
	for {
		s.current = len(s.fields)
		key, escaped, ok := s.key()
		if !ok {
			return false
		}
		f := jsonField{key: key, keyEscaped: escaped}
		f.start = s.i
		if s.i < len(s.b) {
			f.kind = s.b[s.i]
		}
		switch f.kind {
		case '"':
			s.record = true
			f.escStart = len(s.escapes)
			f.escaped, ok = s.string()
			f.escEnd = len(s.escapes)
			s.record = false
			if !ok {
				return false
			}
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			f.kind = 'n'
			if !s.value(0) {
				return false
			}
		case 'n':
			f.kind = 'z'
			if !s.value(0) {
				return false
			}
		default:
			if !s.value(0) {
				return false
			}
		}
		f.end = s.i
		s.fields = append(s.fields, f)
		if more, ok := s.next('}'); !more {
			return ok
		}
	}
}

// key scans a member's key, the colon after it and the spaces around that; key is the
// key's bytes between its quotes, escaped whether they hold escapes.
func (s *lineScanner) key() (key []byte, escaped, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, s.unexpected()
	}
	start := s.i
	if escaped, ok = s.string(); !ok {
		return nil, false, false
	}
	key = s.b[start+1 : s.i-1]
	s.skipSpace()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return nil, false, s.unexpected()
	}
	s.i++
	s.skipSpace()
	return key, escaped, true
}

// next scans what follows a member or an element: a comma (more follow; the spaces after
// it are skipped) or close, the object's or the array's closing byte (more is false). On
// anything else ok is false, and the error is recorded.
func (s *lineScanner) next(close byte) (more, ok bool) {
	s.skipSpace()
	if s.i >= len(s.b) {
		return false, s.unexpected()
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		s.skipSpace()
		return true, true
	case close:
		s.i++
		return false, true
	}
	return false, s.unexpected()
}

// value scans any JSON value.
func (s *lineScanner) value(depth int) bool {
	if depth > maxDepth {
		return s.fail("exceeded max depth %d", maxDepth)
	}
	if s.i >= len(s.b) {
		return s.unexpected()
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.string()
		return ok
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		return s.array(depth + 1)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return s.unexpected()
}

func (s *lineScanner) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		for j := 0; j < len(word); j, s.i = j+1, s.i+1 {
			if s.i >= len(s.b) || s.b[s.i] != word[j] {
				break
			}
		}
		return s.unexpected()
	}
	s.i += len(word)
	return true
}

func (s *lineScanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *lineScanner) number() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if s.digits() == 0 {
		return s.unexpected()
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return s.unexpected()
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return s.unexpected()
		}
	}
	return true
}

func (s *lineScanner) object(depth int) bool {
	s.i++ // {
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		if _, _, ok := s.key(); !ok {
			return false
		}
		if !s.value(depth) {
			return false
		}
		if more, ok := s.next('}'); !more {
			return ok
		}
	}
}

func (s *lineScanner) array(depth int) bool {
	s.i++ // [
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		if more, ok := s.next(']'); !more {
			return ok
		}
	}
}

// string scans a string from its opening quote to past its closing quote, checking its
// escapes and its UTF-8, and reports whether it holds escapes. An unpaired surrogate
// escape or invalid UTF-8 is recorded (badEscape, badUTF8): the string is well-formed
// JSON, but the record is rejected.
//
// Text is mostly long runs of plain bytes, so the scan takes 32 bytes at a time with AVX2
// (stringStopAVX2), then, and without AVX2, 8 at a time while none of them is a quote, a
// backslash or a control character (the bit tricks of "Bit Twiddling Hacks": a byte is
// zero after XOR with '"' or '\\', or below 0x20; the tests are exact for "is there such
// a byte", and the lowest byte they mark is the first such byte). Bytes from 0x80 are
// only noted; a string that has any is then checked by validUTF8.
func (s *lineScanner) string() (escaped, ok bool) {
	const (
		ones   = 0x0101010101010101
		highs  = 0x8080808080808080
		quotes = '"' * ones
		backs  = '\\' * ones
		ctrl   = 0x20 * ones
	)
	b := s.b
	start := s.i + 1
	i := start
	var high uint64
	for {
		if wideStringScan && len(b)-i >= 32 {
			n, h := stringStopAVX2(b[i:])
			i += n
			if h != 0 {
				high |= highs
			}
		}
		for i+8 <= len(b) {
			v := binary.LittleEndian.Uint64(b[i:])
			q, bs := v^quotes, v^backs
			if m := ((q-ones)&^q | (bs-ones)&^bs | (v-ctrl)&^v) & highs; m != 0 {
				// The lowest marked byte is the first stop: a borrow only marks bytes
				// above a byte that is truly marked.
				n := bits.TrailingZeros64(m) >> 3
				high |= v & (1<<(n<<3) - 1)
				i += n
				break
			}
			high |= v
			i += 8
		}
		for i < len(b) && !strStop[b[i]] {
			high |= uint64(b[i])
			i++
		}
		if i >= len(b) {
			s.i = i
			return escaped, s.fail("unexpected end of input in a string")
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			if high&highs != 0 && !validUTF8(b[start:i]) && s.badUTF8 < 0 {
				s.badUTF8 = start + firstInvalid(b[start:i])
			}
			return escaped, true
		case c == '\\':
			escaped = true
			if s.record {
				s.escapes = append(s.escapes, i)
			}
			n, ok := s.escape(i)
			if !ok {
				return escaped, false
			}
			i += n
		default:
			s.i = i
			return escaped, s.fail("invalid control character %#02x in a string at byte %d", c, i)
		}
	}
}

// escape checks the escape at b[i] == '\\' and returns its length.
func (s *lineScanner) escape(i int) (int, bool) {
	b := s.b
	if i+1 >= len(b) {
		s.i = i + 1
		return 0, s.fail("unexpected end of input in a string")
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
	default:
		s.i = i + 1
		return 0, s.fail("invalid escape \\%c at byte %d", b[i+1], i)
	}
	v := hex4(b[i+2 : min(i+6, len(b))])
	if i+6 > len(b) || v < 0 {
		s.i = i
		return 0, s.fail("invalid \\u escape at byte %d", i)
	}
	switch {
	case v >= 0xD800 && v < 0xDC00:
		if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
			if lo := hex4(b[i+8 : i+12]); lo >= 0xDC00 && lo <= 0xDFFF {
				return 12, true
			}
		}
		s.markBadEscape()
	case v >= 0xDC00 && v <= 0xDFFF:
		s.markBadEscape()
	}
	return 6, true
}

func (s *lineScanner) markBadEscape() {
	if s.badEscape < 0 {
		s.badEscape = s.current
	}
}

func hex4(b []byte) int {
	if len(b) != 4 {
		return -1
	}
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

// keyName returns the field's key decoded.
func (f *jsonField) keyName() string {
	if !f.keyEscaped {
		return string(f.key)
	}
	return decodeString(f.key, true)
}

// is reports whether the field's key is name.
func (f *jsonField) is(name string) bool {
	if !f.keyEscaped {
		return string(f.key) == name
	}
	return f.keyName() == name
}

// decodeString returns the contents of a scanned, well-formed string (quotes stripped)
// with its escapes decoded.
func decodeString(raw []byte, escaped bool) string {
	if !escaped {
		return string(raw)
	}
	return string(appendDecoded(nil, raw))
}

// decode is decodeString for a top-level value whose escapes the scan recorded in
// f.escapes: the runs between them are copied once, straight into the string's memory
// (a strings.Builder grown once does not zero it first).
func (s *lineScanner) decode(line []byte, f *jsonField) string {
	raw := line[f.start+1 : f.end-1]
	if !f.escaped {
		return string(raw)
	}
	// One allocation (the text decoded is never longer than raw); the one-byte escapes,
	// nearly all of them in real text (line ends and quotes), are written in place.
	var sb strings.Builder
	sb.Grow(len(raw))
	i := 0
	for _, at := range s.escapes[f.escStart:f.escEnd] {
		at -= f.start + 1 // relative to raw
		if at < i {
			continue // the low half of a surrogate pair, decoded with the high half
		}
		sb.Write(raw[i:at])
		if c := unescaped[raw[at+1]]; c != 0 {
			sb.WriteByte(c)
			i = at + 2
			continue
		}
		n := escapeLen(raw[at:])
		s.scratch = appendDecoded(s.scratch[:0], raw[at:at+n])
		sb.Write(s.scratch)
		i = at + n
	}
	sb.Write(raw[i:])
	return sb.String()
}

// unescaped maps the byte after a backslash to the byte it stands for, for the escapes
// of one byte; 0 for 'u' and anything else.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escapeLen is the length of the escape at raw[0] == '\\', a surrogate pair counting as
// one.
func escapeLen(raw []byte) int {
	if raw[1] != 'u' {
		return 2
	}
	if r := hex4(raw[2:6]); r >= 0xD800 && r < 0xDC00 && len(raw) >= 12 && raw[6] == '\\' && raw[7] == 'u' {
		if lo := hex4(raw[8:12]); lo >= 0xDC00 && lo <= 0xDFFF {
			return 12
		}
	}
	return 6
}

// appendDecoded appends raw, the contents of a well-formed string, with its escapes
// decoded.
func appendDecoded(out, raw []byte) []byte {
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			out = append(out, raw[i:]...)
			break
		}
		out = append(out, raw[i:i+j]...)
		i += j
		switch c := raw[i+1]; c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := rune(hex4(raw[i+2 : i+6]))
			if r >= 0xD800 && r < 0xDC00 && i+12 <= len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if lo := rune(hex4(raw[i+8 : i+12])); lo >= 0xDC00 && lo <= 0xDFFF {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
					i += 6
				}
			}
			out = utf8.AppendRune(out, r) // an unpaired surrogate (only in error messages) becomes U+FFFD
			i += 6
			continue
		default: // '"', '\\', '/'
			out = append(out, c)
		}
		i += 2
	}
	return out
}

// parseLine turns one line (line ends trimmed, not blank) into a record. It makes the
// same checks in the same order of importance as before the scanner: well-formed JSON,
// valid UTF-8, paired surrogates, then the fields.
func (s *lineScanner) parseLine(line []byte, place Place, opt *Options) (Record, *RecordError) {
	rec := Record{Place: place}
	fail := func(field, format string, args ...any) (Record, *RecordError) {
		return Record{}, &RecordError{Place: place, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	s.scan(line)
	if s.syntax != "" {
		if !utf8.Valid(line) {
			return fail("", "invalid UTF-8 at byte %d", firstInvalid(line))
		}
		return fail("", "malformed JSON: %s", s.syntax)
	}
	if s.badUTF8 >= 0 {
		at := s.badUTF8
		for i := range s.fields {
			if f := &s.fields[i]; at >= f.start && at < f.end {
				off := at - f.start
				if f.kind == '"' {
					// Counted in the decoded string, as the CSV and Parquet readers count
					// it: without the opening quote, an escape being what it stands for.
					off = len(appendDecoded(s.scratch[:0], line[f.start+1:at]))
				}
				return fail(f.keyName(), "invalid UTF-8 at byte %d of the value", off)
			}
		}
		return fail("", "invalid UTF-8 at byte %d", at)
	}
	if s.badEscape >= 0 {
		return fail(s.fields[s.badEscape].keyName(), "invalid UTF-16 surrogate escape")
	}
	if key, dup := s.duplicateKey(); dup {
		return fail(key, "key given twice")
	}
	if opt.table != nil {
		return s.tableRecord(line, place)
	}
	var id, text *jsonField
	for i := range s.fields {
		switch f := &s.fields[i]; {
		case f.is(opt.IDField):
			id = f
		case f.is(opt.TextField):
			text = f
		}
	}
	if id == nil {
		return fail(opt.IDField, "missing")
	}
	switch id.kind {
	case '"':
		rec.ID = s.decode(line, id)
	case 'n':
		n, err := NumberID(string(line[id.start:id.end]))
		if err != nil {
			return fail(opt.IDField, "%v", err)
		}
		rec.ID = n
	case 'z':
		// null leaves the id empty, as encoding/json does: rejected below as missing
	default:
		return fail(opt.IDField, "want a string or a number")
	}
	if text == nil {
		return fail(opt.TextField, "missing")
	}
	switch text.kind {
	case '"':
		rec.Text = s.decode(line, text)
	case 'z':
		// null is the empty text, as encoding/json decodes it into a string
	default:
		return fail(opt.TextField, "want a string")
	}
	if e := s.collectMeta(line, &rec, opt, id, text); e != nil {
		return Record{}, e
	}
	if e := checkRecord(&rec, opt, true); e != nil {
		return Record{}, e
	}
	return rec, nil
}

// collectMeta decodes the fields kept as metadata into rec.Meta.
func (s *lineScanner) collectMeta(line []byte, rec *Record, opt *Options, id, text *jsonField) *RecordError {
	for i := range s.fields {
		f := &s.fields[i]
		if f == id || f == text {
			continue
		}
		key := f.keyName()
		if !opt.keepMeta(key) {
			continue
		}
		v, err := metaValue(line[f.start:f.end], f)
		if err != nil {
			return &RecordError{Place: rec.Place, Field: key, Msg: err.Error()}
		}
		if rec.Meta == nil {
			rec.Meta = map[string]any{}
		}
		rec.Meta[key] = v
	}
	return nil
}

// duplicateKey reports the first key given twice. Lines have few keys, so pairs are
// compared; a map takes over for objects with many.
func (s *lineScanner) duplicateKey() (string, bool) {
	const few = 16
	fs := s.fields
	if len(fs) <= few {
		for i := 1; i < len(fs); i++ {
			for j := range i {
				if fs[i].keyEscaped || fs[j].keyEscaped {
					if fs[i].keyName() == fs[j].keyName() {
						return fs[i].keyName(), true
					}
				} else if bytes.Equal(fs[i].key, fs[j].key) {
					return string(fs[i].key), true
				}
			}
		}
		return "", false
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	clear(s.seen)
	for i := range fs {
		k := fs[i].keyName()
		if s.seen[k] {
			return k, true
		}
		s.seen[k] = true
	}
	return "", false
}

// metaValue decodes a kept metadata value to what encoding/json with UseNumber gives:
// string, json.Number, bool, nil, map[string]any or []any.
func metaValue(raw []byte, f *jsonField) (any, error) {
	switch f.kind {
	case '"':
		return decodeString(raw[1:len(raw)-1], f.escaped), nil
	case 'n':
		return json.Number(raw), nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'z':
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// validUTF8 is utf8.Valid, 32 bytes a step with AVX2 where the CPU has it
// (github.com/segmentio/asm/utf8; the same answer, TestValidUTF8): text in other
// scripts than Latin has a byte from 0x80 in nearly every word, and unicode/utf8
// checks those a rune at a time (2.2 GB/s against 7.7 on the shared corpus's texts, a
// twentieth of the signatures command's CPU).
func validUTF8(b []byte) bool { return asmutf8.Valid(b) }
