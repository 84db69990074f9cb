package corpus

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// A Parquet file is read row by row, column by column, one page of each column it needs
// at a time: the id, the text and the metadata columns kept, never the others. A page is
// the smallest unit Parquet can decompress, so it bounds what reading holds: before a
// row group is read, the headers of its pages are checked, and a page larger than
// maxPageBytes (either way, compressed or not) refuses the file before anything is
// decompressed. A Parquet file of 6 MB can hold gigabytes of highly compressible text
// in a few huge pages; read as a whole row group at a time, such a file took 2.5 GB.
//
// parquet-go can panic on damaged input; every call into it here recovers, and the
// panic becomes a *FormatError naming the file and the row group and row.

// minPageCap is the smallest cap on a Parquet page: common writers cut pages at about
// 1 MB, but some only check the size every 1,024 values, so a page of long documents can
// be tens of megabytes.
const minPageCap = 64 << 20

// maxPageBytes is the largest Parquet page read with documents capped at maxDoc bytes.
func maxPageBytes(maxDoc int) int64 { return max(minPageCap, 4*int64(maxDoc)+1<<20) }

// parquetReader reads the rows of a Parquet file.
type parquetReader struct {
	name    string
	opt     Options
	ra      io.ReaderAt
	file    *parquet.File
	columns []string // leaf columns by index, named by their path joined with "."
	wanted  []int    // the leaf columns read
	group   int      // the row group being read
	inGroup bool     // its columns are open
	cols    []*pqColumn
	row     int // next row within the group
	read    int64
	size    int64
	decoded int64 // bytes of values read, for the decompressed-bytes cap
	err     error // once set, every Next returns it
}

// pqColumn reads the values of one leaf column of a row group, one page at a time.
type pqColumn struct {
	index  int
	pages  parquet.Pages
	page   parquet.Page // the current page, released before the next is read
	values parquet.ValueReader
	buf    [1]parquet.Value
	next   *parquet.Value // a value read ahead: the start of the next row
	done   bool
}

// nameReaderAt reports read failures under the file's name, never its path (an upload's
// path is the server's temporary file).
type nameReaderAt struct {
	ra   io.ReaderAt
	name string
}

func (n nameReaderAt) ReadAt(p []byte, off int64) (int, error) {
	k, err := n.ra.ReadAt(p, off)
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		err = &fs.PathError{Op: pe.Op, Path: n.name, Err: pe.Err}
	}
	return k, err
}

func newParquetReader(ra io.ReaderAt, size int64, name string, opt Options) (r *parquetReader, err error) {
	opt.defaults()
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, &FormatError{File: name, Msg: fmt.Sprintf("damaged Parquet file: %v", p)}
		}
	}()
	ra = nameReaderAt{ra: ra, name: name}
	if err := checkFooter(ra, size); err != nil {
		return nil, &FormatError{File: name, Msg: "not a readable Parquet file: " + err.Error()}
	}
	f, err := parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.FileReadMode(parquet.ReadModeSync))
	if err != nil {
		return nil, &FormatError{File: name, Msg: "not a readable Parquet file: " + err.Error()}
	}
	r = &parquetReader{name: name, opt: opt, ra: ra, file: f, size: size}
	var haveID, haveText bool
	for i, path := range f.Schema().Columns() {
		c := strings.Join(path, ".")
		r.columns = append(r.columns, c)
		haveID = haveID || c == opt.IDField
		haveText = haveText || c == opt.TextField
		if c == opt.IDField || c == opt.TextField || opt.keepMeta(c) {
			r.wanted = append(r.wanted, i)
		}
	}
	if !haveID || !haveText {
		missing := opt.IDField
		if haveID {
			missing = opt.TextField
		}
		return nil, &RecordError{Place: Place{File: name, Parquet: true}, Field: missing, Msg: "no such column (" + strings.Join(r.columns, ", ") + ")"}
	}
	return r, nil
}

// BytesRead estimates progress as the share of rows read times the file size.
func (r *parquetReader) BytesRead() int64 {
	if n := r.file.NumRows(); n > 0 {
		return r.size * r.read / n
	}
	return 0
}

func (r *parquetReader) Close() error {
	r.closeGroup()
	return nil
}

// closeGroup releases the pages of the row group being read.
func (r *parquetReader) closeGroup() {
	for _, c := range r.cols {
		if c.page != nil {
			parquet.Release(c.page)
			c.page = nil
		}
		if c.pages != nil {
			c.pages.Close()
		}
	}
	r.cols, r.inGroup = nil, false
}

// openGroup checks the page headers of the wanted columns of row group g, then opens them.
func (r *parquetReader) openGroup(g int) error {
	groups := r.file.Metadata().RowGroups
	limit := maxPageBytes(r.opt.MaxBytes)
	chunks := r.file.RowGroups()[g].ColumnChunks()
	for _, i := range r.wanted {
		if i >= len(groups[g].Columns) || i >= len(chunks) {
			return r.damaged(g, -1, "row group %d has %d columns; the schema names %d", g, len(groups[g].Columns), len(r.columns))
		}
		if err := checkPages(r.ra, &groups[g].Columns[i].MetaData, limit); err != nil {
			return &FormatError{File: r.name, Msg: fmt.Sprintf("row group %d, column %s: %v", g, r.columns[i], err)}
		}
	}
	for _, i := range r.wanted {
		r.cols = append(r.cols, &pqColumn{index: i, pages: chunks[i].Pages()})
	}
	r.inGroup, r.row = true, 0
	return nil
}

// maxFooterBytes caps a Parquet file's footer (its schema and the metadata of every row
// group and column chunk): a few kB in common files, megabytes with thousands of row
// groups.
const maxFooterBytes = 64 << 20

// checkFooter checks the footer length a file declares before parquet-go allocates it:
// a damaged length would have it allocate up to 4 GB.
func checkFooter(ra io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("%d bytes is too short for a Parquet file", size)
	}
	var tail [8]byte
	if _, err := ra.ReadAt(tail[:], size-8); err != nil {
		return fmt.Errorf("reading the footer: %w", err)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 || n > maxFooterBytes {
		return fmt.Errorf("the footer claims %d bytes, more than the file (%d bytes) or the %d MiB cap", n, size, maxFooterBytes>>20)
	}
	return nil
}

// pageTooLarge is a page over the cap.
type pageTooLarge struct {
	n, limit int64
}

func (e *pageTooLarge) Error() string {
	return fmt.Sprintf("a page of %d bytes exceeds the %d MiB cap on a Parquet page (write the file with smaller pages, e.g. pyarrow's data_page_size, or raise the document size cap)", e.n, e.limit>>20)
}

// checkPages reads the headers of a column chunk's pages, skipping their data, and fails
// on a page larger than limit, compressed or not, header included. The headers are read
// here without parquet-go's decoder, which allocates whatever length a header declares.
func checkPages(ra io.ReaderAt, md *format.ColumnMetaData, limit int64) error {
	start := md.DataPageOffset
	if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
		start = md.DictionaryPageOffset
	}
	end := start + md.TotalCompressedSize
	sk := &skimmer{r: bufio.NewReaderSize(nil, 4096)}
	for off := start; off < end; {
		sk.r.Reset(io.NewSectionReader(ra, off, end-off))
		sk.n, sk.limit = 0, limit
		compressed, uncompressed, values, err := sk.pageHeader()
		if err != nil {
			return fmt.Errorf("page header at offset %d: %w", off, err)
		}
		if compressed < 0 || uncompressed < 0 || values < 0 {
			return fmt.Errorf("page header at offset %d: negative size", off)
		}
		if n := sk.n + max(compressed, uncompressed); n > limit {
			return &pageTooLarge{n: n, limit: limit}
		}
		// Run-length encoding packs any number of values into a few bytes, and a page's
		// values are decoded all at once: a page may hold at most about one value per
		// byte (a million in any page), more than any writer puts there.
		if values > max(1<<20, 2*uncompressed) {
			return fmt.Errorf("page header at offset %d: %d values in %d bytes: damaged, or too many values for one page", off, values, uncompressed)
		}
		off += sk.n + compressed
	}
	return nil
}

// skimmer reads Thrift's compact protocol just far enough to find a page header's
// sizes, skipping every other field without keeping it.
type skimmer struct {
	r     *bufio.Reader
	n     int64 // bytes read
	limit int64 // the most a header may take
}

var errHeaderTooLarge = errors.New("header larger than the page cap")

func (s *skimmer) byte() (byte, error) {
	b, err := s.r.ReadByte()
	if err == nil {
		s.n++
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return b, err
}

func (s *skimmer) varint() (uint64, error) {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		b, err := s.byte()
		if err != nil {
			return 0, err
		}
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return x, nil
		}
	}
	return 0, errors.New("varint too long")
}

func (s *skimmer) zigzag() (int64, error) {
	u, err := s.varint()
	return int64(u>>1) ^ -int64(u&1), err
}

// pageHeader reads a PageHeader struct: fields 2 and 3 are the uncompressed and
// compressed sizes; 5, 7 and 8 the data page (v1), dictionary page and data page (v2)
// headers, whose field 1 is the number of values.
func (s *skimmer) pageHeader() (compressed, uncompressed, values int64, err error) {
	seen := 0
	err = s.fields(0, func(id int16, typ byte) (bool, error) {
		switch {
		case (id == 2 || id == 3) && typ == 5:
			v, err := s.zigzag()
			if id == 2 {
				uncompressed = v
			} else {
				compressed = v
			}
			seen++
			return true, err
		case (id == 5 || id == 7 || id == 8) && typ == 12:
			return true, s.fields(1, func(id int16, typ byte) (bool, error) {
				if id != 1 || typ != 5 {
					return false, nil
				}
				v, err := s.zigzag()
				values = max(values, v)
				return true, err
			})
		}
		return false, nil
	})
	if err == nil && seen < 2 {
		err = errors.New("no page sizes")
	}
	return compressed, uncompressed, values, err
}

// fields reads a struct's fields up to its stop byte; own reads a field and says so, or
// leaves it to be skipped.
func (s *skimmer) fields(depth int, own func(id int16, typ byte) (bool, error)) error {
	if depth > 32 {
		return errors.New("nested too deeply")
	}
	var last int16
	for {
		b, err := s.byte()
		if err != nil {
			return err
		}
		if b == 0 {
			return nil
		}
		typ, delta := b&0x0f, int16(b>>4)
		id := last + delta
		if delta == 0 {
			v, err := s.zigzag()
			if err != nil {
				return err
			}
			id = int16(v)
		}
		last = id
		if own != nil {
			done, err := own(id, typ)
			if err != nil {
				return err
			}
			if done {
				continue
			}
		}
		if err := s.skip(typ, depth); err != nil {
			return err
		}
	}
}

// skip reads past a value of compact type typ.
func (s *skimmer) skip(typ byte, depth int) error {
	switch typ {
	case 1, 2: // booleans live in the field header
		return nil
	case 3:
		_, err := s.byte()
		return err
	case 4, 5, 6:
		_, err := s.varint()
		return err
	case 7:
		for range 8 {
			if _, err := s.byte(); err != nil {
				return err
			}
		}
		return nil
	case 8:
		n, err := s.varint()
		if err != nil {
			return err
		}
		if int64(n) < 0 || s.n+int64(n) > s.limit {
			return errHeaderTooLarge
		}
		k, err := s.r.Discard(int(n))
		s.n += int64(k)
		if err != nil && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	case 9, 10:
		h, err := s.byte()
		if err != nil {
			return err
		}
		n, elem := uint64(h>>4), h&0x0f
		if n == 15 {
			if n, err = s.varint(); err != nil {
				return err
			}
		}
		return s.repeat(n, depth, func() error {
			if elem == 1 || elem == 2 { // a boolean element takes a byte
				_, err := s.byte()
				return err
			}
			return s.skip(elem, depth+1)
		})
	case 11:
		n, err := s.varint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := s.byte()
		if err != nil {
			return err
		}
		return s.repeat(n, depth, func() error {
			if err := s.skip(kv>>4, depth+1); err != nil {
				return err
			}
			return s.skip(kv&0x0f, depth+1)
		})
	case 12:
		return s.fields(depth+1, nil)
	}
	return fmt.Errorf("unknown Thrift type %d", typ)
}

// repeat calls each n times; every element takes at least a byte, so a count beyond
// the limit is refused before reading.
func (s *skimmer) repeat(n uint64, depth int, each func() error) error {
	if depth > 32 {
		return errors.New("nested too deeply")
	}
	if n > uint64(s.limit) {
		return errHeaderTooLarge
	}
	for range n {
		if err := each(); err != nil {
			return err
		}
		if s.n > s.limit {
			return errHeaderTooLarge
		}
	}
	return nil
}

// damaged is a *FormatError for broken data at row group g (row -1: the group itself).
func (r *parquetReader) damaged(g, row int, format string, args ...any) error {
	where := fmt.Sprintf("row group %d", g)
	if row >= 0 {
		where += fmt.Sprintf(", row %d", row)
	}
	return &FormatError{File: r.name, Msg: where + ": damaged Parquet data: " + fmt.Sprintf(format, args...)}
}

// value reads the column's next value; false at the end of the column chunk.
func (c *pqColumn) value() (parquet.Value, bool, error) {
	if c.next != nil {
		v := *c.next
		c.next = nil
		return v, true, nil
	}
	for !c.done {
		if c.values != nil {
			n, err := c.values.ReadValues(c.buf[:])
			if n == 1 {
				return c.buf[0], true, nil
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return parquet.Value{}, false, err
			}
			parquet.Release(c.page)
			c.page, c.values = nil, nil
		}
		page, err := c.pages.ReadPage()
		if errors.Is(err, io.EOF) {
			c.done = true
			break
		}
		if err != nil {
			return parquet.Value{}, false, err
		}
		c.page, c.values = page, page.Values()
	}
	return parquet.Value{}, false, nil
}

// rowValues reads the values of the column's next row: one, or a list when the column
// repeats. false at the end of the column chunk.
func (c *pqColumn) rowValues(each func(parquet.Value) error) (bool, error) {
	v, ok, err := c.value()
	if !ok || err != nil {
		return false, err
	}
	if v.RepetitionLevel() != 0 {
		return false, errors.New("a row starts with a repeated value")
	}
	for {
		if err := each(v); err != nil {
			return true, err
		}
		v, ok, err = c.value()
		if err != nil {
			return true, err
		}
		if !ok {
			return true, nil
		}
		if v.RepetitionLevel() == 0 {
			c.next = &v
			return true, nil
		}
	}
}

func (r *parquetReader) Next() (rec Record, err error) {
	if r.err != nil {
		return Record{}, r.err
	}
	defer func() {
		if p := recover(); p != nil {
			rec, err = Record{}, r.damaged(r.group, r.row, "%v", p)
		}
		var fe *FormatError
		if errors.As(err, &fe) {
			r.err = err
			r.closeGroup()
		}
	}()
	for {
		if !r.inGroup {
			if r.group >= len(r.file.RowGroups()) {
				return Record{}, io.EOF
			}
			if err := r.openGroup(r.group); err != nil {
				return Record{}, err
			}
		}
		if int64(r.row) < r.file.RowGroups()[r.group].NumRows() {
			break
		}
		r.closeGroup()
		r.group++
	}
	rec = Record{Place: Place{File: r.name, Parquet: true, RowGroup: r.group, Row: r.row}}
	r.row++
	r.read++
	values := map[string]any{}
	var bad *RecordError
	tooLong := false // the row was not kept
	start, limit := r.decoded, int64(lineLimit(&r.opt))
	for _, c := range r.cols {
		col := r.columns[c.index]
		first := true
		ok, err := c.rowValues(func(v parquet.Value) error {
			x, err := r.convert(v)
			if err == nil && r.decoded-start > limit {
				err, tooLong = fmt.Errorf("row longer than %d bytes", limit), true
			}
			if err != nil || bad != nil {
				if bad == nil {
					bad = &RecordError{Place: rec.Place, Field: col, Msg: err.Error()}
				}
				return nil // the rest of the row is read past, not kept
			}
			if first {
				values[col], first = x, false
				return nil
			}
			list, isList := values[col].([]any)
			if !isList {
				list = []any{values[col]}
			}
			values[col] = append(list, x)
			return nil
		})
		if err != nil {
			return Record{}, r.damaged(rec.Place.RowGroup, rec.Place.Row, "column %s: %v", col, err)
		}
		if !ok {
			return Record{}, r.damaged(rec.Place.RowGroup, rec.Place.Row, "column %s ends before the row group's %d rows", col, r.file.RowGroups()[rec.Place.RowGroup].NumRows())
		}
	}
	if r.opt.MaxInputBytes > 0 && r.decoded > r.opt.MaxInputBytes {
		return Record{}, &LimitError{File: r.name, Bytes: r.opt.MaxInputBytes}
	}
	if bad != nil {
		if !tooLong {
			bad.Record = values
		}
		return Record{}, bad
	}
	switch id := values[r.opt.IDField].(type) {
	case string:
		rec.ID = id
	case int64:
		rec.ID = fmt.Sprint(id)
	case float64:
		// A float column holds ids only when they are whole: the same rule as a JSON number.
		n, err := NumberID(strconv.FormatFloat(id, 'g', -1, 64))
		if err != nil || id != math.Trunc(id) || math.Abs(id) > 1<<53 {
			return Record{}, &RecordError{Place: rec.Place, Field: r.opt.IDField, Msg: fmt.Sprintf("%v is not a whole number below 2^53: ids written as numbers must be integers", id), Record: values}
		}
		rec.ID = n
	case nil:
	default:
		return Record{}, &RecordError{Place: rec.Place, Field: r.opt.IDField, Msg: "want a string or an integer", Record: values}
	}
	switch text := values[r.opt.TextField].(type) {
	case string:
		rec.Text = text
	case nil:
		return Record{}, &RecordError{Place: rec.Place, Field: r.opt.TextField, Msg: "missing (null)", Record: values}
	default:
		return Record{}, &RecordError{Place: rec.Place, Field: r.opt.TextField, Msg: "want a string column", Record: values}
	}
	for k, v := range values {
		if r.opt.keepMeta(k) {
			if rec.Meta == nil {
				rec.Meta = map[string]any{}
			}
			rec.Meta[k] = v
		}
	}
	if e := checkRecord(&rec, &r.opt, false); e != nil {
		e.Record = values
		return Record{}, e
	}
	return rec, nil
}

// convert turns a Parquet value into a JSON-compatible one, copying what it holds (the
// page it points into is reused).
func (r *parquetReader) convert(v parquet.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		b := v.ByteArray()
		r.decoded += int64(len(b))
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("invalid UTF-8 at byte %d", firstInvalid(b))
		}
		return string(b), nil
	case parquet.Boolean:
		r.decoded++
		return v.Boolean(), nil
	case parquet.Int32:
		r.decoded += 4
		return int64(v.Int32()), nil
	case parquet.Int64:
		r.decoded += 8
		return v.Int64(), nil
	case parquet.Float:
		r.decoded += 4
		return float64(v.Float()), nil
	case parquet.Double:
		r.decoded += 8
		return v.Double(), nil
	}
	r.decoded += 12
	return v.String(), nil
}

// OpenParquet reads Parquet from ra (size bytes) as OpenFile does from a path: for
// callers that hold the file already (an upload, a file they opened).
func OpenParquet(ra io.ReaderAt, size int64, name string, opt Options) (Reader, error) {
	return newParquetReader(ra, size, name, opt)
}
