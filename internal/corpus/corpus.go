// Package corpus reads documents in: JSONL, CSV/TSV (plain, gzip or zstd) and Parquet,
// validated record by record and streamed with bounded memory. A bad record is a
// *RecordError that names its place (file, line or row group and row, field) and the
// reason; reading goes on after it. The package does no SQL.
package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Record is one document read from a file.
type Record struct {
	ID   string
	Text string
	// Meta holds the other fields chosen as metadata, with JSON-compatible values.
	Meta  map[string]any
	Place Place
	// Raw is a NewTableReader row as read, for a rejects file (see RecordError.Record);
	// nil for documents.
	Raw any
}

// Place says where a record came from.
type Place struct {
	File     string
	Line     int // JSONL and CSV: 1-based line where the record starts
	RowGroup int // Parquet: 0-based row group
	Row      int // Parquet: 0-based row within the group
	Parquet  bool
}

func (p Place) String() string {
	if p.Parquet {
		return fmt.Sprintf("%s: row group %d, row %d", p.File, p.RowGroup, p.Row)
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// RecordError is a rejected record.
type RecordError struct {
	Place
	Field string // empty when the whole record is at fault
	Msg   string
	// Record is the rejected record as read, for a rejects file (JSON-encodable): a JSONL
	// line as a json.RawMessage (or a string when it is not JSON), a CSV row or a Parquet
	// row as an object of its columns; nil when it could not be kept (a line over the
	// length limit, a broken CSV quote).
	Record any
}

// rawRecord keeps a JSONL line for a rejects file: itself when it is valid JSON in
// valid UTF-8, else as a string (invalid bytes become U+FFFD when encoded).
func rawRecord(line []byte) any {
	c := bytes.Clone(line)
	if utf8.Valid(c) && json.Valid(c) {
		return json.RawMessage(c)
	}
	return string(c)
}

func (e *RecordError) Error() string {
	s := e.Place.String()
	if e.Field != "" {
		s += ": field " + e.Field
	}
	return s + ": " + e.Msg
}

// FormatError is a file that cannot be read as its format at all (not gzip, not Parquet,
// no header row, a name that says no format).
type FormatError struct {
	File string
	Msg  string
}

func (e *FormatError) Error() string { return e.File + ": " + e.Msg }

// DefaultMaxDocBytes is the default cap on one document's text.
const DefaultMaxDocBytes = 1 << 20

// Options choose the fields.
type Options struct {
	IDField   string // default "id"
	TextField string // default "text"
	// MetaFields lists the fields kept as metadata; nil keeps every other field, an empty
	// non-nil slice keeps none.
	MetaFields []string
	MaxBytes   int // cap on a document's text; default DefaultMaxDocBytes
	// MaxInputBytes caps the data read, once decompressed (for Parquet: the bytes of the
	// values read); 0 is no cap. Past it, Next returns a *LimitError.
	MaxInputBytes int64
	// EmptyText accepts a record whose text is the empty string (a missing text is
	// still refused): the signatures command under scheme=milvus signs it as Milvus's
	// MinHash function does. Imports refuse empty documents.
	EmptyText bool

	table *tableOptions // set by NewTableReader: rows, not documents
}

// LimitError is an import over a cap: more than Bytes of data once decompressed
// (Options.MaxInputBytes; reading stops there) or more than Docs records (a cap the
// importer keeps). One of the two is set.
type LimitError struct {
	File  string
	Bytes int64
	Docs  int
}

func (e *LimitError) Error() string {
	what := fmt.Sprintf("more than %s of data once decompressed", FormatBytes(e.Bytes))
	if e.Docs > 0 {
		what = fmt.Sprintf("more than %d records", e.Docs)
	}
	return e.File + ": " + what + ", the cap on one import (split the file, or ask an admin to raise the cap)"
}

// FormatBytes writes a size in the largest binary unit that divides it.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

func (o *Options) defaults() {
	if o.IDField == "" {
		o.IDField = "id"
	}
	if o.TextField == "" {
		o.TextField = "text"
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxDocBytes
	}
}

func (o *Options) keepMeta(field string) bool {
	if field == o.IDField || field == o.TextField {
		return false
	}
	if o.MetaFields == nil {
		return true
	}
	for _, f := range o.MetaFields {
		if f == field {
			return true
		}
	}
	return false
}

// Reader yields records.
type Reader interface {
	// Next returns the next record, io.EOF at the end, a *RecordError for a bad record
	// (call Next again for the rest), or another error when the input itself fails.
	Next() (Record, error)
	// BytesRead is the input consumed so far (uncompressed, for JSONL and CSV).
	BytesRead() int64
	// Close releases what the reader opened.
	Close() error
}

// Format is a file format.
type Format string

// Formats.
const (
	JSONL   Format = "jsonl"
	CSV     Format = "csv"
	TSV     Format = "tsv"
	Parquet Format = "parquet"
)

// DetectFormat guesses the format from a file name, ignoring a .gz or .zst suffix.
func DetectFormat(name string) (Format, error) {
	base := strings.ToLower(name)
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".gz"), ".zst")
	switch filepath.Ext(base) {
	case ".jsonl", ".ndjson", ".json":
		return JSONL, nil
	case ".csv":
		return CSV, nil
	case ".tsv", ".tab":
		return TSV, nil
	case ".parquet", ".pq":
		return Parquet, nil
	}
	return "", &FormatError{File: name, Msg: "cannot tell the format from the name (want .jsonl, .csv, .tsv or .parquet, optionally .gz or .zst)"}
}

// OpenFile opens path in the given format ("" to detect it from the name).
func OpenFile(path string, format Format, opt Options) (Reader, error) {
	if format == "" {
		var err error
		if format, err = DetectFormat(path); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(path)
	if format == Parquet {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		r, err := newParquetReader(f, st.Size(), name, opt)
		if err != nil {
			f.Close()
			return nil, err
		}
		return r, nil
	}
	r, err := NewReader(f, name, format, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &closeBoth{Reader: r, c: f}, nil
}

type closeBoth struct {
	Reader
	c io.Closer
}

func (c *closeBoth) Close() error { return errors.Join(c.Reader.Close(), c.c.Close()) }

// NewReader reads a stream of JSONL or CSV/TSV, decompressing gzip or zstd when the
// stream starts with their magic bytes. Parquet needs random access: use OpenFile.
func NewReader(r io.Reader, name string, format Format, opt Options) (Reader, error) {
	opt.defaults()
	src, closer, err := decompress(r, name, opt.MaxInputBytes)
	if err != nil {
		return nil, err
	}
	switch format {
	case JSONL:
		return &jsonlReader{name: name, opt: opt, src: src, closer: closer}, nil
	case CSV, TSV:
		return newCSVReader(src, closer, name, format, opt)
	case Parquet:
		return nil, &FormatError{File: name, Msg: "Parquet needs a file, not a stream"}
	}
	return nil, &FormatError{File: name, Msg: fmt.Sprintf("unknown format %q", format)}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func decompress(r io.Reader, name string, maxBytes int64) (*bufio.Reader, func() error, error) {
	src := &sourceReader{r: r}
	br := bufio.NewReaderSize(src, 1<<16)
	magic, _ := br.Peek(4)
	var out io.Reader = br
	closer := func() error { return nil }
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			if src.err != nil {
				return nil, nil, src.err
			}
			return nil, nil, &FormatError{File: name, Msg: "bad gzip data: " + err.Error()}
		}
		out, closer = &streamReader{r: zr, src: src, name: name, kind: "gzip"}, zr.Close
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, &FormatError{File: name, Msg: "bad zstd data: " + err.Error()}
		}
		out, closer = &streamReader{r: zr, src: src, name: name, kind: "zstd"}, func() error { zr.Close(); return nil }
	}
	if maxBytes > 0 {
		out = &capReader{r: out, left: maxBytes, err: &LimitError{File: name, Bytes: maxBytes}}
	}
	if out == io.Reader(br) {
		return br, closer, nil
	}
	return bufio.NewReaderSize(out, 1<<16), closer, nil
}

// sourceReader keeps the error of the compressed input, so that a decompressor's failure
// can be told from the input's own.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// streamReader names a decompressor's failure: a stream cut short or corrupt data is a
// *FormatError saying how far it got; a failure of the input itself passes as it is.
type streamReader struct {
	r    io.Reader
	src  *sourceReader
	name string
	kind string // gzip or zstd
	n    int64  // decompressed bytes so far
}

func (s *streamReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	switch {
	case err == nil || err == io.EOF:
	case s.src.err != nil:
		err = s.src.err
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = &FormatError{File: s.name, Msg: fmt.Sprintf("truncated %s stream after %d bytes", s.kind, s.n)}
	default:
		err = &FormatError{File: s.name, Msg: fmt.Sprintf("corrupt %s stream after %d bytes: %v", s.kind, s.n, err)}
	}
	return n, err
}

// capReader fails with err once more than left bytes were asked of it.
type capReader struct {
	r    io.Reader
	left int64
	err  error
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, c.err
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, c.err
	}
	return n, err
}

// checkRecord validates an id and a text, returning the field at fault. validUTF8 says
// the reader has checked the UTF-8 already (the JSONL scanner does, in the same pass).
func checkRecord(rec *Record, opt *Options, validUTF8 bool) *RecordError {
	fail := func(field, format string, args ...any) *RecordError {
		return &RecordError{Place: rec.Place, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if rec.ID == "" {
		return fail(opt.IDField, "missing or empty")
	}
	if !validUTF8 && !utf8.ValidString(rec.ID) {
		return fail(opt.IDField, "invalid UTF-8")
	}
	if len(rec.ID) > maxIDBytes {
		return fail(opt.IDField, "id longer than 1024 bytes")
	}
	if rec.Text == "" && !opt.EmptyText {
		return fail(opt.TextField, "empty")
	}
	if !validUTF8 && !utf8.ValidString(rec.Text) {
		return fail(opt.TextField, "invalid UTF-8 at byte %d", firstInvalid([]byte(rec.Text)))
	}
	if len(rec.Text) > opt.MaxBytes {
		return fail(opt.TextField, "document of %d bytes exceeds the %d-byte cap", len(rec.Text), opt.MaxBytes)
	}
	if strings.ContainsRune(rec.Text, 0) {
		return fail(opt.TextField, "contains a NUL character")
	}
	return nil
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

// IDFieldName is the id field's name, defaults applied.
func (o Options) IDFieldName() string {
	o.defaults()
	return o.IDField
}

// TextFieldName is the text field's name, defaults applied.
func (o Options) TextFieldName() string {
	o.defaults()
	return o.TextField
}
