// Package incremental is search-before-insert: an LSH index that grows one document at
// a time under a calibrated configuration, for streaming pipelines that ask "have I
// seen this already?" before they keep a document.
//
// A document's MinHash signature (the configuration's lsh.Spec) is cut into b bands of r
// rows (lsh.Shape.BandKeys); every indexed document sits in one bucket per band, keyed by
// that band's hash. A query collects the documents that share at least one bucket with
// it (the candidates: at Jaccard s a document becomes one with probability
// 1-(1-s^r)^b), then verifies each candidate as the configuration says: the MinHash
// estimate (share of agreeing signature positions over all k) or the exact Jaccard
// similarity of the two shingle sets, against the threshold. A candidate that passes is
// a near-duplicate. Inserting means adding the document to its b buckets; a document is
// inserted only when it has no near-duplicate, so the index keeps one representative of
// each group of near-duplicates, the first that arrived.
//
// Buckets are linked lists through one slice (head per band key, then the previous
// document in the same bucket), so an insert allocates nothing per band beyond the map
// entry and a query walks only its own buckets. Under exact verification the index also
// keeps every document's shingle-hash set (8 bytes per distinct shingle).
//
// An Index is safe for concurrent use: searches run in parallel under a read lock;
// searches that insert take turns (the check and the insert are one step, so two
// near-duplicates sent at once never both get in), and they hold the write lock only to
// add the documents after the caller's store has made them durable.
package incremental

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Config is what an index searches under: a representation, a banding, the threshold a
// candidate must reach and how it is measured.
type Config struct {
	Spec      lsh.Spec
	Shape     lsh.Shape
	Threshold float64
	// Exact verifies candidates on the exact Jaccard similarity of the shingle sets;
	// false verifies on the MinHash estimate.
	Exact bool
}

// Validate reports what makes c unusable.
func (c Config) Validate() error {
	if err := c.Spec.Validate(); err != nil {
		return err
	}
	if err := c.Shape.Validate(c.Spec.Hashes); err != nil {
		return err
	}
	if math.IsNaN(c.Threshold) || c.Threshold <= 0 || c.Threshold > 1 {
		return fmt.Errorf("threshold %v is not in (0, 1]", c.Threshold)
	}
	return nil
}

// Doc is a document to search for: the caller's id and its text.
type Doc struct {
	ID   string
	Text string
}

// Entry is a document as the index holds it and a store keeps it.
type Entry struct {
	ID        string
	Signature lsh.Signature
	Shingles  []uint64 // sorted distinct shingle hashes; nil unless Config.Exact
}

// Match is a near-duplicate of a searched document.
type Match struct {
	ID string
	// Estimate is the MinHash estimate of the Jaccard similarity.
	Estimate float64
	// Jaccard is the exact Jaccard similarity of the shingle sets; NaN unless the
	// configuration verifies exactly.
	Jaccard float64
}

// Result is the answer for one searched document.
type Result struct {
	ID string
	// Duplicates are the indexed documents (and, in a batch that inserts, the documents
	// inserted before it in the same batch) at or above the threshold, most similar
	// first; never the document itself.
	Duplicates []Match
	// Inserted says the document was added to the index by this search.
	Inserted bool
	// AlreadyIndexed says the index held the id before this search: nothing about it
	// changed (inserting is idempotent on the id).
	AlreadyIndexed bool
}

// Index is an incremental LSH index; see the package documentation.
type Index struct {
	cfg     Config
	bands   int
	k       int
	hashers sync.Pool // *lsh.Hasher: each is for one goroutine at a time

	turn sync.Mutex // one search that inserts at a time: check, store, add

	mu    sync.RWMutex
	ids   map[string]int32
	names []string
	sigs  []uint32   // slot i's signature at [i*k, (i+1)*k)
	sets  [][]uint64 // slot i's shingle set (Exact only)
	heads []map[uint64]int32
	next  []int32 // at slot*bands+band: the slot+1 before it in that bucket, 0 at the end
}

// New returns an empty index under c.
func New(c Config) (*Index, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	ix := &Index{cfg: c, bands: c.Shape.Bands, k: c.Spec.Hashes, ids: map[string]int32{}, heads: make([]map[uint64]int32, c.Shape.Bands)}
	for b := range ix.heads {
		ix.heads[b] = map[uint64]int32{}
	}
	ix.hashers.New = func() any {
		h, err := lsh.NewHasher(c.Spec)
		if err != nil {
			panic(err) // the Spec was validated above
		}
		return h
	}
	return ix, nil
}

// Len returns the number of documents the index holds.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.names)
}

// Add puts an entry into the index without searching: for rebuilding an index from its
// store. An id present already, or a signature of the wrong length, is an error.
func (ix *Index) Add(e Entry) error {
	if len(e.Signature) != ix.k {
		return fmt.Errorf("index add %q: signature has %d values; the index takes %d", e.ID, len(e.Signature), ix.k)
	}
	ix.turn.Lock() // SearchInsert reads the index under turn alone
	defer ix.turn.Unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if _, ok := ix.ids[e.ID]; ok {
		return fmt.Errorf("index add %q: already present", e.ID)
	}
	ix.add(e, ix.cfg.Shape.BandKeys(e.Signature, nil))
	return nil
}

// add appends e with its band keys; the caller holds mu for writing.
func (ix *Index) add(e Entry, keys []uint64) {
	slot := int32(len(ix.names))
	ix.ids[e.ID] = slot
	ix.names = append(ix.names, e.ID)
	ix.sigs = append(ix.sigs, e.Signature...)
	if ix.cfg.Exact {
		ix.sets = append(ix.sets, e.Shingles)
	}
	for b, key := range keys {
		ix.next = append(ix.next, ix.heads[b][key])
		ix.heads[b][key] = slot + 1
	}
}

// prepared is a searched document with what the search needs of it, computed before
// any lock is taken.
type prepared struct {
	Entry
	keys []uint64
}

func (ix *Index) prepare(docs []Doc) []prepared {
	h := ix.hashers.Get().(*lsh.Hasher)
	defer ix.hashers.Put(h)
	out := make([]prepared, len(docs))
	for i, d := range docs {
		p := &out[i]
		p.ID = d.ID
		p.Signature = h.Signature(d.Text, make(lsh.Signature, ix.k))
		if ix.cfg.Exact {
			p.Shingles = h.ShingleSet(d.Text)
		}
		p.keys = ix.cfg.Shape.BandKeys(p.Signature, make([]uint64, 0, ix.bands))
	}
	return out
}

// Search answers each document's near-duplicates in the index, inserting nothing.
func (ix *Index) Search(docs []Doc) []Result {
	preps := ix.prepare(docs)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]Result, len(preps))
	for i := range preps {
		out[i] = ix.result(&preps[i])
	}
	return out
}

// result searches the index for p; the caller holds mu for reading or turn.
func (ix *Index) result(p *prepared) Result {
	_, present := ix.ids[p.ID]
	return Result{ID: p.ID, Duplicates: ix.matches(p), AlreadyIndexed: present}
}

// matches returns p's near-duplicates in the index, most similar first.
func (ix *Index) matches(p *prepared) []Match {
	var seen map[int32]bool
	var out []Match
	for b, key := range p.keys {
		for s := ix.heads[b][key]; s != 0; s = ix.next[int(s-1)*ix.bands+b] {
			slot := s - 1
			if seen[slot] {
				continue
			}
			if seen == nil {
				seen = map[int32]bool{}
			}
			seen[slot] = true
			id := ix.names[slot]
			if id == p.ID {
				continue
			}
			var set []uint64
			if ix.cfg.Exact {
				set = ix.sets[slot]
			}
			if m, ok := ix.verify(p, id, ix.sigs[int(slot)*ix.k:int(slot+1)*ix.k], set); ok {
				out = append(out, m)
			}
		}
	}
	sortMatches(out)
	return out
}

// verify measures the candidate (id, sig, set) against p and reports whether it
// reaches the threshold.
func (ix *Index) verify(p *prepared, id string, sig lsh.Signature, set []uint64) (Match, bool) {
	m := Match{ID: id, Estimate: lsh.Estimate(p.Signature, sig), Jaccard: math.NaN()}
	if !ix.cfg.Exact {
		return m, m.Estimate >= ix.cfg.Threshold
	}
	m.Jaccard = lsh.ExactJaccard(p.Shingles, set)
	return m, m.Jaccard >= ix.cfg.Threshold
}

func sortMatches(ms []Match) {
	slices.SortFunc(ms, func(x, y Match) int {
		sx, sy := x.Estimate, y.Estimate
		if !math.IsNaN(x.Jaccard) {
			sx, sy = x.Jaccard, y.Jaccard
		}
		switch {
		case sx > sy:
			return -1
		case sx < sy:
			return 1
		}
		return strings.Compare(x.ID, y.ID)
	})
}

// ErrDuplicateID is a batch naming one id twice.
var ErrDuplicateID = errkind.New(errkind.Invalid, "the batch names this id twice")

// SearchInsert answers each document's near-duplicates like Search and inserts, in
// order, each document that has none, neither in the index nor among the documents of
// the batch inserted before it, and whose id the index does not hold yet. store must
// make the inserted entries durable (all or none) before it returns nil; only then are
// they added to the index. When store fails nothing is inserted and its error is
// returned. Ids must be distinct within docs (ErrDuplicateID).
func (ix *Index) SearchInsert(ctx context.Context, docs []Doc, store func(context.Context, []Entry) error) ([]Result, error) {
	seen := make(map[string]bool, len(docs))
	for _, d := range docs {
		if seen[d.ID] {
			return nil, fmt.Errorf("document %q: %w", d.ID, ErrDuplicateID)
		}
		seen[d.ID] = true
	}
	preps := ix.prepare(docs)
	ix.turn.Lock()
	defer ix.turn.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Only searches holding turn change the index, so reading it here needs no mu.
	out := make([]Result, len(preps))
	var added []*prepared
	for i := range preps {
		p := &preps[i]
		r := ix.result(p)
		for _, q := range added {
			if sharesBucket(p.keys, q.keys) {
				if m, ok := ix.verify(p, q.ID, q.Signature, q.Shingles); ok {
					r.Duplicates = append(r.Duplicates, m)
				}
			}
		}
		sortMatches(r.Duplicates)
		if len(r.Duplicates) == 0 && !r.AlreadyIndexed {
			r.Inserted = true
			added = append(added, p)
		}
		out[i] = r
	}
	if len(added) == 0 {
		return out, nil
	}
	entries := make([]Entry, len(added))
	for i, p := range added {
		entries[i] = p.Entry
	}
	if err := store(ctx, entries); err != nil {
		return nil, err
	}
	ix.mu.Lock()
	for _, p := range added {
		ix.add(p.Entry, p.keys)
	}
	ix.mu.Unlock()
	return out, nil
}

// sharesBucket reports whether two documents' band keys agree in some band.
func sharesBucket(a, b []uint64) bool {
	for i := range a {
		if a[i] == b[i] {
			return true
		}
	}
	return false
}
