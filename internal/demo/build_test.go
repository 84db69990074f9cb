package demo

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// sharedCorpus finds the team's shared corpus: $DEMO_CORPUS, or shared/ beside the
// checkout (as in CI). Tests that need it skip without it.
func sharedCorpus(t *testing.T) string {
	t.Helper()
	corpus := os.Getenv("DEMO_CORPUS")
	if corpus == "" {
		corpus = filepath.Join("..", "..", "..", "shared", "data", "corpus.jsonl.gz")
	}
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("SKIPPED: shared corpus not found at %s (set DEMO_CORPUS)", corpus)
	}
	return corpus
}

// The shipped files are what the builder makes from the shared corpus. The corpus is not
// in the repository; where it is beside the checkout (as in CI), the build is redone.
func TestBuildIsReproducible(t *testing.T) {
	corpus := sharedCorpus(t)
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: the build takes about a minute")
	}
	dir := t.TempDir()
	if err := Build(corpus, dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sample.jsonl.gz", "labels.csv", "testdata/blind/pairs.jsonl"} {
		got, _ := os.ReadFile(filepath.Join(dir, name))
		want, _ := os.ReadFile(name)
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from a fresh build (%d vs %d bytes): rerun go run ./cmd/demosample", name, len(got), len(want))
		}
	}
}
