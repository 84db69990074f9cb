package corpus

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// smallParquet is a valid Parquet file of five rows in three row groups.
func smallParquet(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[pqRow](&buf, parquet.MaxRowsPerRowGroup(2))
	rows := []pqRow{{"a", "one", "en", 1}, {"b", "two", "de", 2}, {"c", "three", "en", 3}, {"d", "four", "fr", 4}, {"e", "five", "fr", 5}}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A damaged Parquet file gives an error naming the file (and, once rows are read, the
// row group and row), never a panic, whichever byte is damaged.
func TestParquetDamagedNeverPanics(t *testing.T) {
	t.Parallel()
	good := smallParquet(t)
	damagedRows := 0
	for i := 4; i < len(good)-8; i++ {
		for _, flip := range []byte{0xff, 0x80, 0x01} {
			data := bytes.Clone(good)
			data[i] ^= flip
			r, err := newParquetReader(bytes.NewReader(data), int64(len(data)), "bad.parquet", Options{})
			for err == nil {
				_, err = r.Next()
			}
			if errors.Is(err, io.EOF) {
				continue
			}
			var (
				fe *FormatError
				re *RecordError
			)
			switch {
			case errors.As(err, &fe):
				if strings.Contains(fe.Msg, "row group") {
					damagedRows++
				}
			case errors.As(err, &re):
			default:
				t.Fatalf("byte %d ^ %#x: %T %v; want a *FormatError or a *RecordError", i, flip, err, err)
			}
			if !strings.HasPrefix(err.Error(), "bad.parquet") {
				t.Fatalf("byte %d ^ %#x: %v; want the file named first", i, flip, err)
			}
		}
	}
	if damagedRows == 0 {
		t.Errorf("no damaged byte was reported at a row group; want some")
	}
}

// A failure to read the file names the file as given, never the path it was read from
// (an upload's path is the server's temporary file).
func TestParquetErrorsNameTheFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secret-dir", "docs.parquet")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, smallParquet(t), 0o644)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close() // every read fails, with the path in the error
	_, err = newParquetReader(f, 1000, "docs.parquet", Options{})
	if err == nil || strings.Contains(err.Error(), "secret-dir") || !strings.HasPrefix(err.Error(), "docs.parquet: ") {
		t.Errorf("err = %v; want docs.parquet named, and not its directory", err)
	}
}

// FuzzParquet reads damaged Parquet files: whatever the bytes, reading ends with
// io.EOF or an error naming the file, and never panics.
func FuzzParquet(f *testing.F) {
	var t testing.T
	f.Add(smallParquet(&t))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := newParquetReader(bytes.NewReader(data), int64(len(data)), "fuzz.parquet", Options{MaxBytes: 1 << 10, MaxInputBytes: 1 << 20})
		for n := 0; err == nil; n++ {
			if n > 1<<20 {
				t.Fatal("more than a million records from a fuzzed file")
			}
			_, err = r.Next()
			var re *RecordError
			if errors.As(err, &re) {
				err = nil // reading goes on after a bad record
			}
		}
		if !errors.Is(err, io.EOF) && !strings.HasPrefix(err.Error(), "fuzz.parquet") {
			t.Fatalf("%v; want the file named first", err)
		}
	})
}

// checkPages refuses, from the headers alone, a page larger than the cap, a page whose
// header is larger than the cap, and a page that claims far more values than bytes (run-
// length encoding would decode them all at once); it skips the data of the others.
func TestCheckPages(t *testing.T) {
	t.Parallel()
	page := func(h format.PageHeader, data int) []byte {
		var p thrift.CompactProtocol
		b, err := thrift.Marshal(&p, &h)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, make([]byte, data)...)
	}
	data := func(values int32, size int32) format.PageHeader {
		return format.PageHeader{Type: format.DataPage, UncompressedPageSize: size, CompressedPageSize: 100,
			DataPageHeader: thrift.New(format.DataPageHeader{NumValues: values})}
	}
	big := data(10, 100)
	big.DataPageHeader.V.Statistics.MaxValue = make([]byte, 2<<20) // a header of 2 MB
	for _, c := range []struct {
		name  string
		pages [][]byte
		want  string
	}{
		{"fine", [][]byte{page(data(10, 100), 100), page(data(1<<20, 1000), 100)}, ""},
		{"large page", [][]byte{page(data(10, 100), 100), page(data(10, 2<<20), 100)}, "a page of 20"},
		{"large header", [][]byte{page(big, 100)}, "header larger than the page cap"},
		{"values bomb", [][]byte{page(data(1<<30, 100), 100)}, "1073741824 values in 100 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := bytes.Join(c.pages, nil)
			err := checkPages(bytes.NewReader(file), &format.ColumnMetaData{DataPageOffset: 0, TotalCompressedSize: int64(len(file))}, 1<<20)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("checkPages = %v; want %q", err, c.want)
			}
		})
	}
}
