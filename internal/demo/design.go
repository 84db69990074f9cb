package demo

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Design names the sampling design of the shipped labels (written in labels.csv's design
// column): population U = every unordered pair of the demo's documents, every pair
// classified by the rules, strata = rule category x exact-Jaccard bin, a simple random
// sample without replacement of n_h pairs in each stratum h of N_h pairs. A drawn pair in
// stratum h stands for N_h/n_h pairs of U. Change the name when the design changes.
const Design = "demo-strata-v6"

// categoryOrder is the order of the default categories; labels.csv follows it.
var categoryOrder = []string{"exact", "format", "minor", "boilerplate", "partial", "translation", "different"}

// categoryTarget is n for each category, spread as evenly as the strata allow over its
// Jaccard bins (equal allocation, capped at N_h), so that every category has enough
// labeled pairs for its own recall and every part of its similarity range is drawn.
var categoryTarget = map[string]int{
	"exact":       100,
	"format":      100,
	"minor":       130,
	"boilerplate": 120,
	"partial":     140,
	"translation": 120,
	"different":   140,
}

// Jaccard bins: J = 0, (0, 0.05), [0.05, 0.1), then tenths up to [0.9, 1]. The lowest bins
// are split so that hard negatives and near-misses get strata of their own.
const bins = 12

func binOf(inter, union int) int {
	switch {
	case inter == 0 && union > 0:
		return 0
	case union == 0: // two texts without words: J = 1 by convention
		return bins - 1
	case 20*inter < union:
		return 1
	case 10*inter < union:
		return 2
	}
	for k := 2; k <= 9; k++ { // [k/10 - 0.1 ... ) boundaries checked on integers
		if 10*inter < k*union {
			return k + 1
		}
	}
	return bins - 1
}

func binLabel(b int) string {
	switch b {
	case 0:
		return "j0"
	case 1:
		return "j0-0.05"
	case 2:
		return "j0.05-0.1"
	case bins - 1:
		return "j0.9-1"
	}
	return fmt.Sprintf("j0.%d-0.%d", b-2, b-1)
}

// pairInfo is one classified pair of U.
type pairInfo struct {
	a, b         int32
	inter, union int32
	c            float64
	verdict
}

func (p *pairInfo) j() float64 {
	if p.union == 0 {
		return 1
	}
	return float64(p.inter) / float64(p.union)
}

func (p *pairInfo) stratum() string {
	return p.category + "|" + binLabel(binOf(int(p.inter), int(p.union)))
}

// population is U, classified: every pair that shares a shingle or a section is listed;
// the others (no shingle, different sections) are all "different" with J = 0 and only
// counted.
type population struct {
	docs   []doc
	listed []pairInfo // sorted by (a, b)
	zero   int64      // pairs of U not listed
}

func (u *population) size() int64 { return int64(len(u.listed)) + u.zero }

// classifyAll computes exact Jaccard for every pair of docs and classifies the pairs that
// share a shingle or a section.
func classifyAll(docs []doc) *population {
	n := len(docs)
	workers := runtime.GOMAXPROCS(0)
	listed := make([][]pairInfo, workers)
	zero := make([]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for a := w; a < n; a += workers {
				x := &docs[a]
				for b := a + 1; b < n; b++ {
					y := &docs[b]
					inter := lsh.Intersection(x.set, y.set)
					if inter == 0 && (x.section() == "" || x.section() != y.section()) {
						zero[w]++
						continue
					}
					f := measure(x, y)
					listed[w] = append(listed[w], pairInfo{a: int32(a), b: int32(b), inter: int32(f.inter), union: int32(f.union), c: f.c, verdict: classify(x, y, &f)})
				}
			}
		})
	}
	wg.Wait()
	u := &population{docs: docs}
	for w := range workers {
		u.listed = append(u.listed, listed[w]...)
		u.zero += zero[w]
	}
	slices.SortFunc(u.listed, func(x, y pairInfo) int {
		return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b))
	})
	return u
}

func (u *population) categoryTotals() map[string]int64 {
	t := map[string]int64{"different": u.zero}
	for _, p := range u.listed {
		t[p.category]++
	}
	return t
}

// stratum is one cell of the design.
type stratum struct {
	key      string
	category string
	bin      int
	members  []int // indices into listed; nil for different|j0, whose pairs are not listed
	size     int64 // N_h
	n        int   // n_h
}

func (u *population) strata() []*stratum {
	byKey := map[string]*stratum{}
	for i := range u.listed {
		p := &u.listed[i]
		k := p.stratum()
		s := byKey[k]
		if s == nil {
			s = &stratum{key: k, category: p.category, bin: binOf(int(p.inter), int(p.union))}
			byKey[k] = s
		}
		s.members = append(s.members, i)
		s.size++
	}
	if u.zero > 0 {
		s := byKey["different|j0"]
		if s == nil {
			s = &stratum{key: "different|j0", category: "different", bin: 0}
			byKey[s.key] = s
		}
		s.size += u.zero
	}
	out := make([]*stratum, 0, len(byKey))
	for _, s := range byKey {
		out = append(out, s)
	}
	rank := map[string]int{}
	for i, c := range categoryOrder {
		rank[c] = i
	}
	slices.SortFunc(out, func(x, y *stratum) int {
		return cmp.Or(cmp.Compare(rank[x.category], rank[y.category]), cmp.Compare(x.bin, y.bin))
	})
	return out
}

// allocate sets n_h: each category's target spread round-robin over its strata from the
// lowest bin up, one pair at a time, never more than N_h.
func allocate(strata []*stratum) {
	byCat := map[string][]*stratum{}
	for _, s := range strata {
		byCat[s.category] = append(byCat[s.category], s)
	}
	for cat, ss := range byCat {
		left := categoryTarget[cat]
		for progress := true; progress && left > 0; {
			progress = false
			for _, s := range ss {
				if left > 0 && int64(s.n) < s.size {
					s.n++
					left--
					progress = true
				}
			}
		}
	}
}

// drawnPair is a pair of the sample with its design fields.
type drawnPair struct {
	a, b      int
	j, c      float64
	stratum   string
	frameSize int64
	verdict
}

// draw allocates and draws the sample: a simple random sample without replacement of n_h
// pairs in each stratum, each from its own seeded generator.
func (u *population) draw() []drawnPair {
	strata := u.strata()
	allocate(strata)
	var out []drawnPair
	for _, s := range strata {
		rng := rand.New(rand.NewPCG(seed, stratumSeed(s.key)))
		var picked []drawnPair
		if s.members != nil {
			idx := slices.Clone(s.members)
			for i := range s.n { // partial Fisher-Yates: the first n are a uniform n-subset
				k := i + rng.IntN(len(idx)-i)
				idx[i], idx[k] = idx[k], idx[i]
				p := &u.listed[idx[i]]
				picked = append(picked, drawnPair{a: int(p.a), b: int(p.b), j: p.j(), c: p.c, stratum: s.key, frameSize: s.size, verdict: p.verdict})
			}
		} else {
			picked = u.drawUnlisted(rng, s)
		}
		slices.SortFunc(picked, func(x, y drawnPair) int { return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b)) })
		out = append(out, picked...)
	}
	return out
}

// drawUnlisted draws n_h distinct pairs uniformly from the pairs of U that share neither a
// shingle nor a section: uniform pairs of documents, rejecting the listed ones and repeats.
func (u *population) drawUnlisted(rng *rand.Rand, s *stratum) []drawnPair {
	n := len(u.docs)
	seen := map[[2]int]bool{}
	var out []drawnPair
	for len(out) < s.n {
		a, b := rng.IntN(n), rng.IntN(n)
		if a == b {
			continue
		}
		a, b = min(a, b), max(a, b)
		if seen[[2]int{a, b}] || u.isListed(a, b) {
			continue
		}
		seen[[2]int{a, b}] = true
		out = append(out, drawnPair{a: a, b: b, stratum: s.key, frameSize: s.size,
			verdict: verdict{"different", false, "no shared shingle, different sections (uniform random pair)"}})
	}
	return out
}

func (u *population) isListed(a, b int) bool {
	_, ok := slices.BinarySearchFunc(u.listed, [2]int{a, b}, func(p pairInfo, t [2]int) int {
		return cmp.Or(cmp.Compare(int(p.a), t[0]), cmp.Compare(int(p.b), t[1]))
	})
	return ok
}

func stratumSeed(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

// parallel calls fn(i) for i in [0, n) on every core.
func parallel(n int, fn func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				fn(i)
			}
		})
	}
	wg.Wait()
}
