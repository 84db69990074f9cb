package corpus

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
)

// parquetReader reads rows group by group. Leaf columns are fields named by their path
// joined with "."; a repeated column gives a list.
type parquetReader struct {
	name    string
	opt     Options
	file    *parquet.File
	columns []string
	group   int
	rows    parquet.Rows
	row     int
	buf     []parquet.Row
	pending []parquet.Row
	read    int64
	size    int64
}

func newParquetReader(ra io.ReaderAt, size int64, name string, opt Options) (*parquetReader, error) {
	opt.defaults()
	f, err := parquet.OpenFile(ra, size)
	if err != nil {
		return nil, &FormatError{File: name, Msg: "not a readable Parquet file: " + err.Error()}
	}
	r := &parquetReader{name: name, opt: opt, file: f, buf: make([]parquet.Row, 64), size: size}
	var haveID, haveText bool
	for _, path := range f.Schema().Columns() {
		c := strings.Join(path, ".")
		r.columns = append(r.columns, c)
		haveID = haveID || c == opt.IDField
		haveText = haveText || c == opt.TextField
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
	if r.rows != nil {
		return r.rows.Close()
	}
	return nil
}

func (r *parquetReader) Next() (Record, error) {
	for len(r.pending) == 0 {
		if r.rows == nil {
			groups := r.file.RowGroups()
			if r.group >= len(groups) {
				return Record{}, io.EOF
			}
			r.rows = groups[r.group].Rows()
			r.row = 0
		}
		n, err := r.rows.ReadRows(r.buf)
		r.pending = r.buf[:n]
		if n == 0 && err != nil {
			if !errors.Is(err, io.EOF) {
				return Record{}, fmt.Errorf("%s: row group %d: %w", r.name, r.group, err)
			}
			r.rows.Close()
			r.rows = nil
			r.group++
		}
	}
	row := r.pending[0]
	r.pending = r.pending[1:]
	rec := Record{Place: Place{File: r.name, Parquet: true, RowGroup: r.group, Row: r.row}}
	r.row++
	r.read++
	values := map[string]any{}
	for _, v := range row {
		col := r.columns[v.Column()]
		var x any
		if !v.IsNull() {
			switch v.Kind() {
			case parquet.ByteArray, parquet.FixedLenByteArray:
				b := v.ByteArray()
				if !utf8.Valid(b) {
					return Record{}, &RecordError{Place: rec.Place, Field: col, Msg: fmt.Sprintf("invalid UTF-8 at byte %d", firstInvalid(b))}
				}
				x = string(b)
			case parquet.Boolean:
				x = v.Boolean()
			case parquet.Int32:
				x = int64(v.Int32())
			case parquet.Int64:
				x = v.Int64()
			case parquet.Float:
				x = float64(v.Float())
			case parquet.Double:
				x = v.Double()
			default:
				x = v.String()
			}
		}
		if prev, ok := values[col]; ok && v.RepetitionLevel() > 0 {
			list, isList := prev.([]any)
			if !isList {
				list = []any{prev}
			}
			values[col] = append(list, x)
		} else {
			values[col] = x
		}
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
