package sweep

import (
	"context"
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// DefaultCapWork bounds the work of the clustering cap of one clustering: the
// (class, class) pairs looked at while its clusters are merged (Options.CapWork). A
// clustering whose within-cluster pairs need more keeps the plain zero-event bound.
const DefaultCapWork = 100_000

// capMemoPairs bounds the remembered bins of class pairs.
const capMemoPairs = 8 << 20

// binner computes the design's bin of any pair of documents, so that the zero-event
// bounds of the strata that share a bin can be capped by the pairs of that bin the
// clustering puts in one cluster (see the package documentation, "Estimating over the
// dataset"). Documents with equal shingle sets form a class: a pair inside a class has
// J = 1 and is counted, never compared.
type binner struct {
	bins  int
	class []int32    // per document
	sets  [][]uint64 // per class: its shingle set
	self  []uint8    // per class: the bin of two of its documents

	mu   sync.Mutex // guards memo and dense: a State may be rescored from several requests
	memo map[uint64]uint8
	// dense holds the bin of every class pair x < y at y(y-1)/2 + x, plus one (0: not
	// computed yet), when there are at most denseClasses classes; memo is used otherwise.
	dense []uint8
}

// denseClasses bounds the classes whose pair bins are kept in a table (8 MB at most).
const denseClasses = 4096

// newBinner shingles every document under rep; nil (no cap) when the sets would not
// fit budget bytes.
func newBinner(ctx context.Context, docs Documents, rep lsh.Spec, bins int, budget int64) (*binner, error) {
	h, err := lsh.NewHasher(rep)
	if err != nil {
		return nil, err
	}
	b := &binner{bins: bins, class: make([]int32, docs.Count), memo: map[uint64]uint8{}}
	byHash := map[uint64][]int32{}
	var bytes int64
	for i := range docs.Count {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		s := h.ShingleSet(docs.Text(i))
		hs := setHash(s)
		c := int32(-1)
		for _, k := range byHash[hs] {
			if slices.Equal(b.sets[k], s) {
				c = k
				break
			}
		}
		if c < 0 {
			if bytes += int64(len(s)) * 8; bytes > budget {
				return nil, nil
			}
			c = int32(len(b.sets))
			b.sets = append(b.sets, s)
			b.self = append(b.self, uint8(DemoJaccardBin(len(s), len(s))))
			byHash[hs] = append(byHash[hs], c)
		}
		b.class[i] = c
	}
	if c := len(b.sets); c <= denseClasses {
		b.dense = make([]uint8, c*(c-1)/2)
	}
	return b, nil
}

func setHash(s []uint64) uint64 {
	d := xxhash.New()
	var buf [8]byte
	for _, v := range s {
		for i := range buf {
			buf[i] = byte(v >> (8 * i))
		}
		d.Write(buf[:])
	}
	return d.Sum64()
}

// pairBin returns the bin of a pair of classes; the caller holds mu.
func (b *binner) pairBin(x, y int32) uint8 {
	if x == y {
		return b.self[x]
	}
	x, y = min(x, y), max(x, y)
	if b.dense != nil {
		at := int(y)*(int(y)-1)/2 + int(x)
		if v := b.dense[at]; v != 0 {
			return v - 1
		}
		v := b.compute(x, y)
		b.dense[at] = v + 1
		return v
	}
	key := pairKey(x, y)
	if v, ok := b.memo[key]; ok {
		return v
	}
	v := b.compute(x, y)
	if len(b.memo) < capMemoPairs {
		b.memo[key] = v
	}
	return v
}

func (b *binner) compute(x, y int32) uint8 {
	sx, sy := b.sets[x], b.sets[y]
	inter := intersect(sx, sy)
	return uint8(DemoJaccardBin(inter, len(sx)+len(sy)-inter))
}

// intersect counts the values two sorted sets share, as lsh.Intersection, without
// branches in the loop: pairs of unrelated documents (most of the pairs a loose
// clustering holds) share nothing, so the merge walks both sets to the end, and a
// mispredicted branch per step would cost more than the step.
func intersect(a, b []uint64) int {
	inter, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		inter += b2i(x == y)
		i += b2i(x <= y)
		j += b2i(y <= x)
	}
	return inter
}

// ceilShare is share rounded up: the cap must not fall below the truth.
func ceilShare(m int) int64 {
	if m < 2 {
		return 0
	}
	return (2*fixedOne + int64(m) - 1) / int64(m)
}

// classCount is a class of documents and how many of them a cluster holds.
type classCount struct{ class, n int32 }

// capComp is one cluster of two or more documents: its size, its documents by class
// (sorted by class) and its pairs per bin.
type capComp struct {
	m       int
	classes []classCount
	pairs   []int64
}

// binTracker follows a clustering as clusters merge and keeps, per bin, Σ 2/m over the
// pairs of that bin inside one cluster of m documents (fixed point, each 2/m rounded
// up). It stops (ok false) before a merge would take its class comparisons past limit.
type binTracker struct {
	b     *binner
	comps map[int32]*capComp
	total []int64
	work  int
	limit int
	ok    bool
}

func (b *binner) tracker(limit int) *binTracker {
	return &binTracker{b: b, comps: map[int32]*capComp{}, total: make([]int64, b.bins), limit: limit, ok: true}
}

func (t *binTracker) comp(root int32) *capComp {
	if c := t.comps[root]; c != nil {
		return c
	}
	return &capComp{m: 1, classes: []classCount{{t.b.class[root], 1}}, pairs: make([]int64, t.b.bins)}
}

// merge joins the clusters whose roots are keep and gone; keep is the root after.
func (t *binTracker) merge(keep, gone int32) {
	if !t.ok {
		return
	}
	x, y := t.comp(keep), t.comp(gone)
	if t.work += len(x.classes) * len(y.classes); t.work > t.limit {
		t.ok, t.comps, t.total = false, nil, nil
		return
	}
	sx, sy := ceilShare(x.m), ceilShare(y.m)
	for i := range t.total {
		t.total[i] -= x.pairs[i]*sx + y.pairs[i]*sy
	}
	t.b.mu.Lock()
	for _, cy := range y.classes {
		for _, cx := range x.classes {
			x.pairs[t.b.pairBin(cx.class, cy.class)] += int64(cx.n) * int64(cy.n)
		}
	}
	t.b.mu.Unlock()
	for i, p := range y.pairs {
		x.pairs[i] += p
	}
	merged := make([]classCount, 0, len(x.classes)+len(y.classes))
	i, j := 0, 0
	for i < len(x.classes) || j < len(y.classes) {
		switch {
		case j == len(y.classes) || i < len(x.classes) && x.classes[i].class < y.classes[j].class:
			merged = append(merged, x.classes[i])
			i++
		case i == len(x.classes) || y.classes[j].class < x.classes[i].class:
			merged = append(merged, y.classes[j])
			j++
		default:
			merged = append(merged, classCount{x.classes[i].class, x.classes[i].n + y.classes[j].n})
			i++
			j++
		}
	}
	x.classes = merged
	x.m += y.m
	s := ceilShare(x.m)
	for i := range t.total {
		t.total[i] += x.pairs[i] * s
	}
	delete(t.comps, gone)
	t.comps[keep] = x
}

// caps returns the totals per bin, nil when the work bound was passed.
func (t *binTracker) caps() []int64 {
	if !t.ok {
		return nil
	}
	return slices.Clone(t.total)
}

// capsOf computes the caps of a clustering given as cluster ids per document.
func (b *binner) capsOf(ids []int32, limit int) []int64 {
	t := b.tracker(limit)
	first := make(map[int32]int32, 64)
	for i, id := range ids {
		r, ok := first[id]
		if !ok {
			first[id] = int32(i)
			continue
		}
		if t.merge(r, int32(i)); !t.ok {
			return nil
		}
	}
	return t.caps()
}

// prepareCap shingles the documents under the design's bin representation when its
// strata's zero-event bounds can be capped (Design.CapRep). When the sets do not fit
// Options.SetBudget the bounds stay uncapped and a note says so.
func (e *engine) prepareCap(ctx context.Context) error {
	if e.des.CapRep == nil || e.opt.CapWork < 0 || e.bin != nil {
		return nil
	}
	b, err := newBinner(ctx, e.in.Docs, *e.des.CapRep, len(demoBinLabels), e.opt.SetBudget)
	if err != nil {
		return err
	}
	if b == nil {
		e.des.CapRep = nil
		e.des.Notes = append(e.des.Notes, "the shingle sets the strata's bins need do not fit the set budget: zero-event bounds are not capped by the clustering")
		return nil
	}
	e.bin = b
	e.des.Notes = append(e.des.Notes, "the strata name bins of exact Jaccard under "+e.des.CapRep.String()+
		": for each configuration, the zero-event bounds of the strata of one bin are capped by Σ 2/m over its pairs of that bin inside one cluster of m documents, which no count of false removals there can exceed")
	return nil
}

// capTracker returns a tracker for one clustering pass, nil without a cap.
func (e *engine) capTracker() *binTracker {
	if e.bin == nil {
		return nil
	}
	return e.bin.tracker(e.opt.CapWork)
}

// capsOf is binner.capsOf, nil without a cap.
func (e *engine) capsOf(ids []int32) []int64 {
	if e.bin == nil {
		return nil
	}
	return e.bin.capsOf(ids, e.opt.CapWork)
}
