package calib

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// MinJaccard is the lowest similarity of the pairs a Population lists: every pair of
// documents whose Jaccard similarity under the campaign's representation is at least
// this is in Population.Pairs, computed exactly.
const MinJaccard = 0.2

// Doc is a document of the population, with the fields of the team corpus.
type Doc struct {
	ID      string `json:"id"`
	Text    string `json:"text"`
	Source  string `json:"source"`
	Lang    string `json:"lang"`
	Title   string `json:"title"`
	Group   string `json:"group,omitempty"`
	Origin  string `json:"origin"`
	License string `json:"license"`
}

//go:embed testdata/extra.jsonl.gz
var extraJSONL []byte

// Documents returns the documents of the check's population in import order: the demo
// sample (internal/demo, 2,136 documents), then the extra documents of
// testdata/extra.jsonl.gz (see testdata/README.md).
func Documents() ([]Doc, error) {
	sample, err := demo.Sample()
	if err != nil {
		return nil, err
	}
	extra, err := demo.ReadDocs(bytes.NewReader(extraJSONL), "testdata/extra.jsonl.gz")
	if err != nil {
		return nil, fmt.Errorf("calib documents: %w", err)
	}
	docs := make([]Doc, 0, len(sample)+len(extra))
	seen := make(map[string]bool, cap(docs))
	for i, d := range slices.Concat(sample, extra) {
		if i >= len(sample) {
			if d.ID == "" || d.Text == "" {
				return nil, fmt.Errorf("calib documents: extra document %d: field id or text: empty", i-len(sample)+1)
			}
			if seen[d.ID] {
				return nil, fmt.Errorf("calib documents: extra document %q is in the demo sample too", d.ID)
			}
		}
		seen[d.ID] = true
		g := ""
		if d.Group != nil {
			g = *d.Group
		}
		docs = append(docs, Doc{ID: d.ID, Text: d.Text, Source: d.Source, Lang: d.Lang, Title: d.Title, Group: g,
			Origin: d.Origin, License: d.License})
	}
	return docs, nil
}

// Pair is a pair of documents A < B with their shingles in common (Inter) and in all
// (Union) under the population's representation. Identical says their texts are equal
// after the representation's normalization.
type Pair struct {
	A, B         int32
	Inter, Union int32
	Identical    bool
}

// Jaccard returns the pair's exact Jaccard similarity (1 for two empty sets).
func (p Pair) Jaccard() float64 { return jaccard(int(p.Inter), int(p.Union)) }

func jaccard(inter, union int) float64 {
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// Population is a set of real documents with the exact similarity of every pair that
// matters: every pair whose Jaccard similarity under Rep is at least MinJaccard, found by
// an exact all-pairs count of shared shingles (no banding, no sampling), and any other
// pair on demand (Counts).
type Population struct {
	Docs []Doc
	Rep  lsh.Spec
	// Sets holds the documents' shingle sets under Rep (frame.Sets: one per class of
	// equal sets, intersections remembered) and tells identical normalized texts.
	Sets *frame.Sets
	// Pairs lists every pair of documents with Jaccard >= MinJaccard, sorted by (A, B).
	Pairs []Pair
	// Took is the time the shingling and the all-pairs count took.
	Took time.Duration
}

// NewPopulation shingles docs under rep and lists every pair with Jaccard >= MinJaccard.
func NewPopulation(ctx context.Context, docs []Doc, rep lsh.Spec) (*Population, error) {
	start := time.Now()
	sets, err := frame.NewSets(ctx, len(docs), func(i int) string { return docs[i].Text }, rep, 0)
	if err != nil {
		return nil, fmt.Errorf("population: %w", err)
	}
	pairs, err := allPairs(ctx, sets)
	if err != nil {
		return nil, fmt.Errorf("population: %w", err)
	}
	return &Population{Docs: docs, Rep: rep, Sets: sets, Pairs: pairs, Took: time.Since(start)}, nil
}

// Texts returns the documents' texts in order.
func (p *Population) Texts() []string {
	out := make([]string, len(p.Docs))
	for i, d := range p.Docs {
		out[i] = d.Text
	}
	return out
}

// Counts returns the shingles documents a and b share under Rep, their union, and
// whether their normalized texts are identical: exact, for any pair.
func (p *Population) Counts(a, b int) (inter, union int, identical bool) {
	inter, union = p.Sets.Counts(a, b)
	return inter, union, p.Sets.Identical(a, b)
}

// Duplicates returns the number of pairs of documents that are duplicates under rule
// (whose lowest duplicate similarity is at least MinJaccard).
func (p *Population) Duplicates(rule LabelRule) int64 { return duplicates(p.Pairs, rule) }

// duplicates counts the pairs that are duplicates under rule.
func duplicates(pairs []Pair, rule LabelRule) int64 {
	var n int64
	for _, q := range pairs {
		if rule.Duplicate(q.A, q.B, int(q.Inter), int(q.Union), q.Identical) {
			n++
		}
	}
	return n
}

// allPairs lists every document pair with Jaccard >= MinJaccard. It counts shared
// shingles through an inverted index over the classes of equal sets (one posting per
// distinct set and shingle): the cost is Σ df²/2 over shingles, exact, with no pair
// left out. Pairs inside one class have J = 1.
func allPairs(ctx context.Context, sets *frame.Sets) ([]Pair, error) {
	nc := sets.Classes()
	members := make([][]int32, nc)
	for d := range sets.Docs() {
		c := sets.Class(d)
		members[c] = append(members[c], int32(d))
	}
	// Postings: every (shingle, class), sorted by shingle then class; each class's list
	// of the postings its shingles start.
	type entry struct {
		h uint64
		c int32
	}
	var total int
	for c := range nc {
		total += len(sets.Set(c))
	}
	entries := make([]entry, 0, total)
	for c := range nc {
		for _, h := range sets.Set(c) {
			entries = append(entries, entry{h, int32(c)})
		}
	}
	slices.SortFunc(entries, func(x, y entry) int { return cmp.Or(cmp.Compare(x.h, y.h), cmp.Compare(x.c, y.c)) })
	postOff := []int32{0}
	classes := make([]int32, len(entries))
	byClass := make([][]int32, nc) // posting ids of each class's shingles
	for i, e := range entries {
		if i > 0 && e.h != entries[i-1].h {
			postOff = append(postOff, int32(i))
		}
		classes[i] = e.c
		byClass[e.c] = append(byClass[e.c], int32(len(postOff)-1))
	}
	postOff = append(postOff, int32(len(entries)))

	type classPair struct{ x, y, inter int32 }
	workers := runtime.GOMAXPROCS(0)
	found := make([][]classPair, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			cnt := make([]int32, nc)
			var touched []int32
			for x := w; x < nc; x += workers {
				if x%256 == w && ctx.Err() != nil {
					return
				}
				touched = touched[:0]
				for _, p := range byClass[x] {
					for _, y := range classes[postOff[p]:postOff[p+1]] {
						if y >= int32(x) {
							break // postings are sorted by class: only y < x
						}
						if cnt[y] == 0 {
							touched = append(touched, y)
						}
						cnt[y]++
					}
				}
				nx := len(sets.Set(x))
				for _, y := range touched {
					inter := int(cnt[y])
					cnt[y] = 0
					union := nx + len(sets.Set(int(y))) - inter
					if jaccard(inter, union) >= MinJaccard {
						found[w] = append(found[w], classPair{y, int32(x), int32(inter)})
					}
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Pair
	add := func(a, b int32, inter, union int) {
		a, b = min(a, b), max(a, b)
		out = append(out, Pair{A: a, B: b, Inter: int32(inter), Union: int32(union), Identical: sets.Identical(int(a), int(b))})
	}
	for c, ms := range members {
		u := len(sets.Set(c))
		for i, a := range ms {
			for _, b := range ms[i+1:] {
				add(a, b, u, u)
			}
		}
	}
	for _, f := range found {
		for _, cp := range f {
			union := len(sets.Set(int(cp.x))) + len(sets.Set(int(cp.y))) - int(cp.inter)
			for _, a := range members[cp.x] {
				for _, b := range members[cp.y] {
					add(a, b, int(cp.inter), union)
				}
			}
		}
	}
	slices.SortFunc(out, func(p, q Pair) int { return cmp.Or(cmp.Compare(p.A, q.A), cmp.Compare(p.B, q.B)) })
	return out, nil
}
