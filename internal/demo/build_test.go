package demo

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
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
// in the repository; where it is beside the checkout (as in CI), the build is redone, with
// the earlier blind rounds' pairs (which the new round leaves out) as the shipped ones.
func TestBuildIsReproducible(t *testing.T) {
	corpus := sharedCorpus(t)
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: the build takes about a minute")
	}
	dir := t.TempDir()
	for r := 1; r < BlindRound; r++ {
		b, err := os.ReadFile(BlindPairsPath(r))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, BlindPairsPath(r))), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, BlindPairsPath(r)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Build(corpus, dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sample.jsonl.gz", "labels.csv", BlindPairsPath(BlindRound), JudgeSheetPath(BlindRound)} {
		got, _ := os.ReadFile(filepath.Join(dir, name))
		want, _ := os.ReadFile(name)
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from a fresh build (%d vs %d bytes): rerun go run ./cmd/demosample", name, len(got), len(want))
		}
	}
}

// Without the earlier rounds' pairs the build stops before it writes anything: it could
// not keep them out of the new round.
func TestBuildNeedsEarlierRounds(t *testing.T) {
	dir := t.TempDir()
	err := Build(filepath.Join(dir, "no-corpus.jsonl.gz"), dir, io.Discard)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Build without round 1's pairs = %v; want the missing file", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Build wrote %d entries before failing; want none", len(entries))
	}
}
