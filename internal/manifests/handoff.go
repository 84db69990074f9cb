package manifests

import (
	"context"
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/unionfind"
)

// PhaseHandoff is the hand-off measurement's one pass over the texts.
const PhaseHandoff = "measuring what each engine does differently"

// MeasureHandoff measures on a manifest's dataset what each engine the manifest's
// settings are handed to will do differently from the manifest (handoff.Figures): the
// two verifications on the calibrated banding's candidates, and each handed-off
// program's run simulated over the dataset in its import order with that program's own
// signatures, banding and verification (the datasketch program's datasketch MinHash;
// Milvus's band split; datatrove's own hashing and its lack of a threshold). It reads
// every text once, holds each document's signatures and shingle hashes in memory (about
// 8 bytes a distinct shingle), writes nothing, and stops when ctx is cancelled.
//
// A dataset of more than maxBytes of text (0: no limit) is not measured: the result is
// an *TooLargeError, and the files are written without figures.
func MeasureHandoff(ctx context.Context, store *db.DB, m db.Manifest, maxBytes int64, report func(Progress)) (handoff.Figures, error) {
	if report == nil {
		report = func(Progress) {}
	}
	p := m.Params
	infos, err := store.DatasetDocs(ctx, m.Dataset.ID)
	if err != nil {
		return handoff.Figures{}, err
	}
	var total int64
	for _, di := range infos {
		total += int64(di.Bytes)
	}
	if maxBytes > 0 && total > maxBytes {
		return handoff.Figures{}, &TooLargeError{Bytes: total, Max: maxBytes}
	}
	rows, err := store.ManifestRows(ctx, m.ID)
	if err != nil {
		return handoff.Figures{}, err
	}
	index := make(map[int64]int, len(infos))
	for i, di := range infos {
		index[di.ID] = i
	}
	in, err := newHandoffInput(p, len(infos))
	if err != nil {
		return handoff.Figures{}, err
	}
	for _, r := range rows {
		d, k := index[r.Doc], index[r.Keeper]
		in.member[d], in.member[k], in.keeper[k] = true, true, true
		if r.Decision != review.Excluded {
			in.removed[d] = true
		}
	}
	report(Progress{Phase: PhaseHandoff, Total: len(infos)})
	err = store.EachDocument(ctx, m.Dataset.ID, func(doc db.Document) error {
		i, ok := index[doc.ID]
		if !ok {
			return fmt.Errorf("measure hand-off of manifest %d: document %d is not in dataset %d", m.ID, doc.ID, m.Dataset.ID)
		}
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			report(Progress{PhaseHandoff, i, len(infos)})
		}
		in.add(i, doc.Text)
		return nil
	})
	if err != nil {
		return handoff.Figures{}, err
	}
	f := in.figures()
	f.Dataset = fmt.Sprintf("dataset %s version %d", m.Dataset.Name, m.Dataset.Version)
	return f, ctx.Err()
}

// TooLargeError is a dataset over the text a measurement may read in one request.
type TooLargeError struct{ Bytes, Max int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("measure hand-off: the dataset holds %d bytes of text, more than the %d measured here", e.Bytes, e.Max)
}

// handoffInput is what the measurement holds of each document of a dataset, by its
// index in import order, and what the manifest says of it.
type handoffInput struct {
	p review.Params
	// The studio's signatures under the manifest's representation and each document's
	// distinct 64-bit shingle hashes (what exact Jaccard compares).
	studio *lsh.Hasher
	sigs   []lsh.Signature
	sets   [][]uint64
	// The datasketch program's own signatures: datasketch's permutations (seed's low 32
	// bits) over the same shingles and base hash; nil under scheme=milvus, where the
	// program reads the studio's.
	sketch *lsh.Hasher
	dsSigs []lsh.Signature
	// datatrove's signatures over the studio tokenizer's n-grams (empty for a document
	// of fewer tokens than the n-gram size); nil under scheme=milvus.
	trove *lsh.Datatrove
	dt    [][]uint64
	short []bool
	// The manifest: documents it removes, keepers of its clusters, members of them.
	removed, keeper, member []bool
	hashes                  []uint64
}

func newHandoffInput(p review.Params, n int) (*handoffInput, error) {
	in := &handoffInput{p: p, sigs: make([]lsh.Signature, n), sets: make([][]uint64, n),
		removed: make([]bool, n), keeper: make([]bool, n), member: make([]bool, n)}
	var err error
	if in.studio, err = lsh.NewHasher(p.Spec); err != nil {
		return nil, err
	}
	if p.Spec.Scheme != lsh.Milvus {
		ds := p.Spec
		ds.Scheme, ds.Seed = lsh.Datasketch, p.Spec.Seed&0xFFFFFFFF
		if ds != p.Spec {
			if in.sketch, err = lsh.NewHasher(ds); err != nil {
				return nil, err
			}
			in.dsSigs = make([]lsh.Signature, n)
		}
		in.trove = lsh.NewDatatrove(uint32(p.Spec.Seed), p.Shape.Bands*p.Shape.Rows, p.Spec.Hash == lsh.SHA1)
		in.dt, in.short = make([][]uint64, n), make([]bool, n)
	}
	return in, nil
}

// add takes document i's text.
func (in *handoffInput) add(i int, text string) {
	in.sigs[i] = in.studio.Signature(text, nil)
	in.sets[i] = in.studio.ShingleSet(text)
	if in.sketch != nil {
		in.dsSigs[i] = in.sketch.Signature(text, nil)
	}
	if in.trove == nil {
		return
	}
	shingles := in.studio.Shingles(text)
	n := in.p.Spec.Size
	// datatrove makes no n-gram of fewer than n tokens; the studio makes one shingle of
	// them all, which has fewer than n words (or runes).
	if len(shingles) == 0 || len(shingles) == 1 && tokensIn(shingles[0], in.p.Spec.Level) < n {
		in.short[i] = true
		return
	}
	in.hashes = in.hashes[:0]
	for _, s := range shingles {
		if in.p.Spec.Level == lsh.Char {
			s = spaced(s) // datatrove joins a char n-gram's characters with spaces
		}
		in.hashes = append(in.hashes, in.trove.Hash(s))
	}
	in.dt[i] = in.trove.Signature(in.hashes, nil)
}

// tokensIn counts the tokens of one studio shingle: its words (joined by single spaces,
// and no word holds white space) or its runes.
func tokensIn(shingle string, level lsh.Level) int {
	if level == lsh.Char {
		return utf8.RuneCountInString(shingle)
	}
	n := 1
	for i := 0; i < len(shingle); i++ {
		if shingle[i] == ' ' {
			n++
		}
	}
	return n
}

// spaced puts a space between the runes of s.
func spaced(s string) string {
	b := make([]byte, 0, 2*len(s))
	for i, r := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// figures computes every measurement from what add took.
func (in *handoffInput) figures() handoff.Figures {
	p := in.p
	f := handoff.Figures{Docs: len(in.sigs)}
	for i := range in.sets {
		if in.removed[i] {
			f.ManifestRemovals++
		}
		if len(in.sets[i]) == 0 {
			f.NoShingle++
		}
	}

	// The calibrated banding's candidates, bounded as a run bounds them, both ways.
	if cands, _, err := lsh.CandidatesBounded(in.sigs, p.Shape, MaxBucket); err == nil {
		f.Candidates = len(cands)
		est, ex := in.estimate(in.sigs), in.exact
		for _, c := range cands {
			e, x := est(c.A, c.B), ex(c.A, c.B)
			switch {
			case e && x:
				f.AcceptedEstimate++
				f.AcceptedExact++
			case e:
				f.AcceptedEstimate++
				f.EstimateOnly++
			case x:
				f.AcceptedExact++
				f.ExactOnly++
			}
		}
	}

	ds, _ := in.datasketchRun()
	f.Datasketch = &ds
	// The Milvus programs: the studio's signatures, Milvus's band split, MHJACCARD.
	mv, _ := in.searchBeforeInsert(in.sigs, handoff.MilvusBanding(p.Spec.Hashes, p.Shape.Bands), in.estimate(in.sigs))
	f.Milvus = &mv
	if in.trove != nil {
		dt, _ := in.datatrove()
		f.Datatrove = &dt
	}
	return f
}

// estimate accepts a pair whose MinHash estimate under sigs reaches the threshold.
func (in *handoffInput) estimate(sigs []lsh.Signature) func(a, b int) bool {
	return func(a, b int) bool { return lsh.Estimate(sigs[a], sigs[b]) >= in.p.Threshold }
}

// exact accepts a pair whose exact Jaccard reaches the threshold.
func (in *handoffInput) exact(a, b int) bool {
	return lsh.ExactJaccard(in.sets[a], in.sets[b]) >= in.p.Threshold
}

// datasketchRun is the datasketch program's run: its own signatures (the studio's under
// scheme=milvus, where it reads them; the same ones under scheme=datasketch), the
// calibrated banding, the calibrated verification (the estimate where it reads
// signatures).
func (in *handoffInput) datasketchRun() (handoff.SearchRun, []bool) {
	sigs := in.sigs
	if in.dsSigs != nil {
		sigs = in.dsSigs
	}
	accept := in.estimate(sigs)
	if in.p.Verification == review.Exact && in.p.Spec.Scheme != lsh.Milvus {
		accept = in.exact
	}
	return in.searchBeforeInsert(sigs, in.p.Shape, accept)
}

// searchBeforeInsert simulates a search before insert in import order: each document is
// compared with the stored documents it shares a band of sh with; one that accept takes
// is reported, any other stored. It classifies every difference from the manifest, and
// returns which documents were reported.
func (in *handoffInput) searchBeforeInsert(sigs []lsh.Signature, sh lsh.Shape, accept func(a, b int) bool) (handoff.SearchRun, []bool) {
	n := len(sigs)
	stored, all := map[uint64][]int32{}, map[uint64][]int32{}
	reported, hit, earlier := make([]bool, n), make([]bool, n), make([]bool, n)
	seen := make([]int32, n) // seen[j] == i+1: j is a candidate of document i already
	var keys []uint64
	var run handoff.SearchRun
	for i := range n {
		keys = sh.BandKeys(sigs[i], keys[:0])
		mark := int32(i + 1)
		cands := 0
		for _, k := range keys {
			for _, j := range stored[k] {
				if seen[j] == mark {
					continue
				}
				seen[j] = mark
				cands++
				if accept(i, int(j)) {
					reported[i], hit[j] = true, true
				}
			}
		}
		if cands > 64 {
			run.Crowded++ // more than Milvus's refine_k
		}
		if !reported[i] {
			for _, k := range keys {
				stored[k] = append(stored[k], int32(i))
			}
			if in.removed[i] {
				// Kept here, removed by the manifest: did it match an earlier document
				// that had been reported (so nothing stored was left to match)?
				mark = -mark
			earlierLoop:
				for _, k := range keys {
					for _, j := range all[k] {
						if seen[j] == mark {
							continue
						}
						seen[j] = mark
						if accept(i, int(j)) {
							earlier[i] = true
							break earlierLoop
						}
					}
				}
			}
		}
		for _, k := range keys {
			all[k] = append(all[k], int32(i))
		}
	}
	for i := range n {
		switch {
		case reported[i] && in.removed[i]:
			run.Reported++
			run.Both++
		case reported[i]:
			run.Reported++
			run.EngineOnly++
			if in.keeper[i] {
				run.EngineOnlyKeepers++
			}
		case in.removed[i]:
			run.ManifestOnly++
			switch {
			case hit[i]:
				run.Order++
			case earlier[i]:
				run.KnockOn++
			default:
				run.NoMatch++
			}
		}
	}
	return run, reported
}

// datatrove simulates datatrove's clustering: documents that share a bucket (the same
// hashes_per_bucket values of its signature in one bucket) joined into components, one
// kept in each, with no threshold. It returns which documents are in a cluster too.
func (in *handoffInput) datatrove() (handoff.Components, []bool) {
	p := in.p
	n := len(in.dt)
	uf := unionfind.New(n)
	var c handoff.Components
	pairs := map[uint64]bool{}
	buf := make([]byte, 8*p.Shape.Rows)
	for band := range p.Shape.Bands {
		buckets := map[string][]int32{}
		for i, sig := range in.dt {
			if len(sig) == 0 {
				continue
			}
			for r := range p.Shape.Rows {
				binary.LittleEndian.PutUint64(buf[8*r:], sig[band*p.Shape.Rows+r])
			}
			buckets[string(buf)] = append(buckets[string(buf)], int32(i))
		}
		for _, docs := range buckets {
			for x, a := range docs {
				uf.Union(docs[0], a)
				if x >= MaxBucket {
					continue
				}
				for _, b := range docs[x+1 : min(len(docs), MaxBucket)] {
					pairs[uint64(a)<<32|uint64(b)] = true
				}
			}
		}
	}
	c.Pairs = len(pairs)
	for k := range pairs {
		if lsh.ExactJaccard(in.sets[k>>32], in.sets[k&0xFFFFFFFF]) < p.Threshold {
			c.BelowThreshold++
		}
	}
	clustered := make([]bool, n)
	for i := range n {
		if in.short[i] {
			c.Short++
		}
		if uf.Size(int32(i)) < 2 {
			continue
		}
		clustered[i] = true
		if uf.Find(int32(i)) == int32(i) {
			c.Clusters++
		} else {
			c.Removals++
		}
		if !in.member[i] {
			c.NotInManifest++
		}
	}
	for i := range n {
		if in.removed[i] && !clustered[i] {
			c.NotInDatatrove++
		}
	}
	return c, clustered
}
