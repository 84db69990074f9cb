package cluster

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// benchCopies copies of the real-text graph (5,000 documents, 57,709 verified candidates
// from the generous realShape, 131 exact groups) make 100,000 documents and 1.15 million
// edges: real cluster sizes, chains and hubs, at a scale where the cost per document
// shows. Copies share no edge, and Sim is exact Jaccard of the real shingle sets.
const benchCopies = 20

var (
	benchOnce  sync.Once
	benchGraph *Graph
	benchCalls int
)

func benchInput(b *testing.B) *Graph {
	b.Helper()
	rt := loadRealText(b)
	benchOnce.Do(func() {
		n := len(rt.texts)
		in := Input{
			Docs:  make([]Doc, 0, n*benchCopies),
			Edges: make([]Edge, 0, len(rt.in.Edges)*benchCopies),
			Sim: func(a, b int) float64 {
				benchCalls++
				if a/n != b/n {
					return 0
				}
				return lsh.ExactJaccard(rt.sets[a%n], rt.sets[b%n])
			},
		}
		for c := range benchCopies {
			off := c * n
			in.Docs = append(in.Docs, rt.in.Docs...)
			for _, e := range rt.in.Edges {
				in.Edges = append(in.Edges, Edge{A: e.A + off, B: e.B + off, Sim: e.Sim})
			}
			for _, grp := range rt.in.Exact {
				g := make([]int, len(grp))
				for i, d := range grp {
					g[i] = d + off
				}
				in.Exact = append(in.Exact, g)
			}
		}
		var err error
		if benchGraph, err = NewGraph(in); err != nil {
			panic(err)
		}
	})
	return benchGraph
}

func reportDocs(b *testing.B, docs int) {
	b.ReportMetric(float64(docs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkCluster measures one clustering of 100,000 documents, everything after the
// Graph is built: union-find, the policy, removals, links and diagnostics. Sim calls per
// clustering are reported; each is an exact Jaccard of two real shingle sets.
func BenchmarkCluster(b *testing.B) {
	g := benchInput(b)
	for _, t := range []float64{0.3, 0.7} {
		for _, p := range Policies() {
			b.Run(fmt.Sprintf("%s/t=%.1f", p, t), func(b *testing.B) {
				cfg := Config{Threshold: t, Policy: p, Rule: longest}
				b.ReportAllocs()
				benchCalls = 0
				for b.Loop() {
					if _, err := g.Cluster(cfg); err != nil {
						b.Fatal(err)
					}
				}
				reportDocs(b, g.n)
				b.ReportMetric(float64(benchCalls)/float64(b.N), "sims/op")
			})
		}
	}
}

// BenchmarkNewGraph measures validating and indexing the 100,000 documents and 1.15
// million edges, done once per configuration before a sweep's thresholds.
func BenchmarkNewGraph(b *testing.B) {
	g := benchInput(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewGraph(g.in); err != nil {
			b.Fatal(err)
		}
	}
	reportDocs(b, g.n)
}

// BenchmarkKeeper measures choosing keepers under rules of one and of three criteria
// over 100,000 documents of the real-text corpus's lengths, a tenth of them dated: the
// comparisons a sweep's keeper tracking makes as clusters merge (Order.Less).
func BenchmarkKeeper(b *testing.B) {
	g := benchInput(b)
	docs := slices.Clone(g.in.Docs)
	for i := range docs {
		if i%10 == 0 {
			docs[i].Date = time.Date(2020, 1, 1+i%365, 0, 0, 0, 0, time.UTC)
		}
		docs[i].Source = []string{"debian", "spdx", "github"}[i%3]
	}
	members := make([]int, len(docs))
	for i := range members {
		members[i] = i
	}
	for _, rule := range []string{"longest", "earliest>source(spdx,debian)>shortest"} {
		r, err := ParseRule(rule)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(rule, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Keeper(docs, members)
			}
			reportDocs(b, len(docs))
		})
	}
}

// BenchmarkLevels follows the 100,000 documents down DefaultGrid's thresholds (0.95 to
// 0.30 in steps of 0.05) under each policy Levels follows, as a sweep scores one shape:
// every Lower, from a new Levels. docs/s counts the documents once per descent.
func BenchmarkLevels(b *testing.B) {
	g := benchInput(b)
	var ths []float64
	for i := 95; i >= 30; i -= 5 {
		ths = append(ths, float64(i)/100)
	}
	for _, p := range Policies() {
		if !FollowsLevels(p) {
			continue
		}
		b.Run(string(p), func(b *testing.B) {
			b.ReportAllocs()
			benchCalls = 0
			changed := 0
			for b.Loop() {
				l, err := g.Levels(Config{Policy: p, Rule: longest})
				if err != nil {
					b.Fatal(err)
				}
				for _, t := range ths {
					lv, err := l.Lower(t)
					if err != nil {
						b.Fatal(err)
					}
					changed += len(lv.Changed)
				}
			}
			reportDocs(b, g.n)
			b.ReportMetric(float64(benchCalls)/float64(b.N), "sims/op")
			b.ReportMetric(float64(changed)/float64(b.N), "changed/op")
		})
	}
}
