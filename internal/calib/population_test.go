package calib

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// population is the default population, built once per test binary.
var population = sync.OnceValues(func() (*Population, error) {
	docs, err := Documents()
	if err != nil {
		return nil, err
	}
	return NewPopulation(context.Background(), docs, Word5())
})

func testPopulation(t *testing.T) *Population {
	t.Helper()
	p, err := population()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDocuments(t *testing.T) {
	t.Parallel()
	docs, err := Documents()
	if err != nil {
		t.Fatal(err)
	}
	sample, err := demo.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3062 || len(sample) != 2136 {
		t.Fatalf("%d documents (%d of the demo); want 3,062 (2,136)", len(docs), len(sample))
	}
	for i, d := range sample {
		if docs[i].ID != d.ID || docs[i].Text != d.Text {
			t.Fatalf("document %d is %q; want the demo's %q first, in order", i, docs[i].ID, d.ID)
		}
	}
	bySource := map[string]int{}
	for _, d := range docs[len(sample):] {
		bySource[d.Source]++
	}
	if bySource["spdx-license-list"] != 76 || bySource["debian-handbook"] != 50*17 || len(bySource) != 2 {
		t.Errorf("extra documents by source %v; want 76 SPDX licenses and 850 Handbook sections", bySource)
	}
	info, err := os.Stat(filepath.Join("testdata", "extra.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > 3<<20 {
		t.Errorf("testdata/extra.jsonl.gz is %d bytes; keep it under 3 MB", info.Size())
	}
}

// TestExtrasReproducible rebuilds testdata/extra.jsonl.gz from the team corpus when it
// is beside the checkout (or named by CALIB_CORPUS) and compares the bytes.
func TestExtrasReproducible(t *testing.T) {
	// Beside the checkout (as in CI), or beside a worktree's parent.
	paths := []string{filepath.Join("..", "..", "..", "shared", "data", "corpus.jsonl.gz"),
		filepath.Join("..", "..", "..", "..", "shared", "data", "corpus.jsonl.gz")}
	if env := os.Getenv("CALIB_CORPUS"); env != "" {
		paths = []string{env}
	}
	var f *os.File
	for _, p := range paths {
		if g, err := os.Open(p); err == nil {
			f = g
			break
		}
	}
	if f == nil {
		t.Skipf("no team corpus at %v (set CALIB_CORPUS)", paths)
	}
	defer f.Close()
	sample, err := demo.Sample()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, d := range sample {
		ids[d.ID] = true
	}
	extra, err := BuildExtras(f, ids)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "extra.jsonl.gz")
	if err := WriteDocs(out, extra); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "extra.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("rebuilt extra.jsonl.gz (%d bytes) differs from testdata's (%d bytes)", len(got), len(want))
	}
}

// TestAllPairsExact compares the population's pair list with a brute-force comparison
// of every pair of a fifth of its documents (every fifth, demo and extras): the
// inverted index must find exactly the pairs at or over MinJaccard, with the same counts.
func TestAllPairsExact(t *testing.T) {
	t.Parallel()
	full := testPopulation(t)
	var docs []Doc
	for i := 0; i < len(full.Docs); i += 5 {
		docs = append(docs, full.Docs[i])
	}
	pop, err := NewPopulation(context.Background(), docs, Word5())
	if err != nil {
		t.Fatal(err)
	}
	h, err := lsh.NewHasher(Word5())
	if err != nil {
		t.Fatal(err)
	}
	sets := make([][]uint64, len(docs))
	norm := lsh.NewNormalizer(Word5().Norm)
	texts := make([]string, len(docs))
	for i, d := range docs {
		sets[i] = h.ShingleSet(d.Text)
		texts[i] = norm.Normalize(d.Text)
	}
	var want []Pair
	for a := range docs {
		for b := a + 1; b < len(docs); b++ {
			inter := lsh.Intersection(sets[a], sets[b])
			union := len(sets[a]) + len(sets[b]) - inter
			if jaccard(inter, union) >= MinJaccard {
				want = append(want, Pair{A: int32(a), B: int32(b), Inter: int32(inter), Union: int32(union), Identical: texts[a] == texts[b]})
			}
		}
	}
	if len(want) < 1000 {
		t.Fatalf("only %d pairs over %v among the %d documents: the subset tests too little", len(want), MinJaccard, len(docs))
	}
	if len(pop.Pairs) != len(want) {
		t.Fatalf("%d pairs; brute force finds %d", len(pop.Pairs), len(want))
	}
	for i := range want {
		if pop.Pairs[i] != want[i] {
			t.Fatalf("pair %d = %+v; brute force %+v", i, pop.Pairs[i], want[i])
		}
	}
	t.Logf("%d pairs over %v among %d documents, as brute force finds them", len(want), MinJaccard, len(docs))
}

func TestPopulationFigures(t *testing.T) {
	t.Parallel()
	p := testPopulation(t)
	t.Logf("%d documents, %d pairs with J >= %v, built in %v", len(p.Docs), len(p.Pairs), MinJaccard, p.Took)
	if got := len(p.Pairs); got != 21179 {
		t.Errorf("%d pairs with J >= %v; want 21,179", got, MinJaccard)
	}
	if d5, d7 := p.Duplicates(Cut(0.5)), p.Duplicates(Cut(0.7)); d5 != 10753 || d7 != 7973 {
		t.Errorf("duplicates %d at 0.5 and %d at 0.7; want 10,753 and 7,973", d5, d7)
	}
	// Every listed pair's counts agree with frame.Sets' on demand.
	for _, q := range p.Pairs[:min(len(p.Pairs), 2000)] {
		inter, union, same := p.Counts(int(q.A), int(q.B))
		if int32(inter) != q.Inter || int32(union) != q.Union || same != q.Identical {
			t.Fatalf("pair %+v: Counts says %d, %d, %v", q, inter, union, same)
		}
	}
}
