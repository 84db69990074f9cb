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
