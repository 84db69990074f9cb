// Package realtext gives tests the repository's samples of real text, so that every test
// that wants real documents reads them the same way and names them once. It is imported
// by test files only.
//
// The samples are gzipped JSONL files kept beside the code that made them: Corpus (the
// engine's 5,000 documents cut to 2,000 bytes), Whole (1,273 of them whole, with all
// their fields) and Demo (the demo's sample). A name is a path from the module's root,
// found from the test's working directory, so any package's tests can read any sample.
package realtext

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The samples, as paths from the module's root.
const (
	// Corpus is 5,000 real documents (Debian books in 17 languages, SPDX licenses, npm
	// READMEs and LICENSE files), each cut to 2,000 bytes, with an id and a text.
	Corpus = "internal/lsh/testdata/corpus5000.jsonl.gz"
	// Whole is 1,273 whole documents (every fourth of Corpus) with all their fields,
	// 10.2 MB of JSONL.
	Whole = "internal/lsh/testdata/corpus-whole.jsonl.gz"
	// Demo is the demo's sample, with source, language and title.
	Demo = "internal/demo/sample.jsonl.gz"
)

// Doc is one document of a sample, as its JSONL line names it.
type Doc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// DemoDoc is one document of Demo.
type DemoDoc struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Source string `json:"source"`
	Lang   string `json:"lang"`
}

// DemoDocs returns the documents of Demo, in file order.
func DemoDocs(tb testing.TB) []DemoDoc {
	tb.Helper()
	return Records[DemoDoc](tb, Demo, 0)
}

// Concat returns a document of the size people bring: the texts of docs from source in
// lang, in order, with a blank line between them, cut at a line end to at most size
// bytes.
func Concat(docs []DemoDoc, source, lang string, size int) string {
	var sb strings.Builder
	for _, d := range docs {
		if d.Source != source || d.Lang != lang {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString(d.Text)
		if sb.Len() >= size {
			break
		}
	}
	s := sb.String()
	if len(s) > size {
		s = s[:size]
		if i := strings.LastIndexByte(s, '\n'); i > 0 {
			s = s[:i+1]
		}
	}
	return s
}

// Path returns where the file name (a path from the module's root) is: the test's
// working directory is its package's folder, somewhere below go.mod.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, filepath.FromSlash(name))
		}
		up := filepath.Dir(dir)
		if up == dir {
			tb.Fatalf("find %s: no go.mod above the test's folder", name)
		}
		dir = up
	}
}

// Open returns the uncompressed content of the gzipped file name (a path from the
// module's root, such as Corpus), closed when the test ends.
func Open(tb testing.TB, name string) io.Reader {
	tb.Helper()
	f, err := os.Open(Path(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("read %s: %v", name, err)
	}
	return zr
}

// Bytes returns the whole uncompressed content of the gzipped file name.
func Bytes(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := io.ReadAll(Open(tb, name))
	if err != nil {
		tb.Fatalf("read %s: %v", name, err)
	}
	return b
}

// Records decodes the first n lines of the gzipped JSONL file name into T, in file
// order; all of them when n <= 0. A line that does not decode fails the test.
func Records[T any](tb testing.TB, name string, n int) []T {
	tb.Helper()
	var out []T
	each(tb, name, func(rec T) bool {
		out = append(out, rec)
		return n <= 0 || len(out) < n
	})
	return out
}

// each decodes the lines of the gzipped JSONL file name into T and hands them to fn, in
// file order, until fn returns false.
func each[T any](tb testing.TB, name string, fn func(T) bool) {
	tb.Helper()
	sc := bufio.NewScanner(Open(tb, name))
	sc.Buffer(nil, 1<<24)
	for line := 1; sc.Scan(); line++ {
		var rec T
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatalf("read %s line %d: %v", name, line, err)
		}
		if !fn(rec) {
			return
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("read %s: %v", name, err)
	}
}

// Docs returns the first n documents of Corpus; all 5,000 when n <= 0.
func Docs(tb testing.TB, n int) []Doc {
	tb.Helper()
	return Records[Doc](tb, Corpus, n)
}

// Texts returns the first n texts of Corpus that have at least minWords words, in file
// order; fewer than n fails the test.
func Texts(tb testing.TB, n, minWords int) []string {
	tb.Helper()
	var out []string
	each(tb, Corpus, func(d Doc) bool {
		if len(strings.Fields(d.Text)) >= minWords {
			out = append(out, d.Text)
		}
		return len(out) < n
	})
	if len(out) < n {
		tb.Fatalf("%s has %d texts of %d words or more; want %d", Corpus, len(out), minWords, n)
	}
	return out
}

// Columns returns the documents' ids and texts as two lists, in the documents' order.
func Columns(docs []Doc) (ids, texts []string) {
	for _, d := range docs {
		ids, texts = append(ids, d.ID), append(texts, d.Text)
	}
	return ids, texts
}
