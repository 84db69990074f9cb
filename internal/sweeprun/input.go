package sweeprun

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// snapPair is a counted pair of a label snapshot: its documents by store id, the label
// it counts with and the design that drew it.
type snapPair struct {
	ID        int64  `json:"id"`
	A         int64  `json:"a"`
	B         int64  `json:"b"`
	Category  string `json:"cat"`
	Duplicate bool   `json:"dup"`
	Design    string `json:"design,omitempty"`
	Stratum   string `json:"stratum,omitempty"`
	FrameSize int    `json:"n,omitempty"`
	Origin    string `json:"origin,omitempty"`
}

// snapshotAnnotator names the one label a snapshot pair carries when it is scored again.
const snapshotAnnotator = "sweep-snapshot"

// labelsNow reads a campaign's pairs and resolves them under sweep.LabelRule over the
// dataset's live documents ids (ascending) and those left out, no longer live (leftOut,
// ascending, at indexes len(ids)+i): a pair naming one of those still counts for the
// model's bins (sweep.LabelSet.Gone). outside counts the pairs naming a document that is
// in neither (not the dataset's): they cannot count. keep also keeps what it read for
// LabelsChanged (labelCache).
func (s *Service) labelsNow(ctx context.Context, c db.Campaign, ids, leftOut []int64, keep bool) (pairs []sweep.LabeledPair, ls sweep.LabelSet, outside int, err error) {
	index := docIndex(ids, leftOut)
	// Where the labels stand is read first: what is read next is at least that new, and
	// the comparisons with the sweeps start from it (labelCache).
	m, err := s.store.LabelMark(ctx, c.ID)
	if err != nil {
		return nil, sweep.LabelSet{}, 0, err
	}
	stored, err := s.store.SweepPairs(ctx, c.ID)
	if err != nil {
		return nil, sweep.LabelSet{}, 0, err
	}
	if keep {
		cl := s.labels.campaign(c.ID)
		cl.mu.Lock()
		cl.fill(c, m, stored)
		cl.mu.Unlock()
	}
	pairs = make([]sweep.LabeledPair, 0, len(stored))
	for _, p := range stored {
		a, okA := index[p.A]
		b, okB := index[p.B]
		if !okA || !okB {
			outside++
			continue
		}
		pairs = append(pairs, labeledPair(p, int(a), int(b)))
	}
	ls, err = sweep.ResolveOver(pairs, c.Categories, len(ids), len(leftOut))
	if err != nil {
		return nil, sweep.LabelSet{}, 0, err
	}
	return pairs, ls, outside, nil
}

// docIndex maps the store ids of a sweep's documents to their indexes in its pairs: the
// live documents ids first, then those no longer live (leftOut).
func docIndex(ids, leftOut []int64) map[int64]int32 {
	index := make(map[int64]int32, len(ids)+len(leftOut))
	for i, id := range ids {
		index[id] = int32(i)
	}
	for i, id := range leftOut {
		index[id] = int32(len(ids) + i)
	}
	return index
}

// snapshot is the counted pairs of ls as stored with a sweep: those of live documents
// ids and those naming one no longer live (leftOut), by id.
func snapshot(ls sweep.LabelSet, ids, leftOut []int64) []snapPair {
	out := make([]snapPair, 0, len(ls.Pairs)+len(ls.Gone))
	id := func(i int) int64 {
		if i < len(ids) {
			return ids[i]
		}
		return leftOut[i-len(ids)]
	}
	for _, p := range slices.Concat(ls.Pairs, ls.Gone) {
		out = append(out, snapPair{ID: p.ID, A: id(p.A), B: id(p.B), Category: p.Category, Duplicate: p.Duplicate,
			Design: p.Design, Stratum: p.Stratum, FrameSize: p.FrameSize, Origin: p.Origin})
	}
	slices.SortFunc(out, func(a, b snapPair) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// fromSnapshot turns a snapshot back into labeled pairs over the live documents ids and
// those no longer live leftOut (as labelsNow indexes them): each with one adjudication
// carrying the label it counted with, which LabelRule resolves to the same label (and
// ResolveOver to the same version).
func fromSnapshot(snap []snapPair, ids, leftOut []int64) ([]sweep.LabeledPair, error) {
	index := docIndex(ids, leftOut)
	out := make([]sweep.LabeledPair, len(snap))
	one := make([]sweep.Label, len(snap)) // each pair's one label, in one allocation
	for i, p := range snap {
		a, okA := index[p.A]
		b, okB := index[p.B]
		if !okA || !okB {
			return nil, fmt.Errorf("label snapshot: pair %d names a document the dataset no longer holds", p.ID)
		}
		one[i] = sweep.Label{Annotator: snapshotAnnotator, Kind: sweep.Adjudication, Category: p.Category, Duplicate: p.Duplicate}
		out[i] = sweep.LabeledPair{ID: p.ID, A: int(a), B: int(b), Design: p.Design, Stratum: p.Stratum, FrameSize: p.FrameSize, Origin: p.Origin,
			Labels: one[i : i+1 : i+1]}
	}
	return out, nil
}

func (s *Service) readSnapshot(ctx context.Context, id int64) ([]snapPair, error) {
	text, err := s.store.SweepLabels(ctx, id)
	if err != nil {
		return nil, err
	}
	snap, err := decodeSnapshot(text)
	if err != nil {
		return nil, fmt.Errorf("label snapshot of sweep %d: %w", id, err)
	}
	return snap, nil
}

// decodeSnapshot decodes a stored snapshot (a JSON list of pairs, or null) pair by pair
// into a slice of the right size: a campaign may count a million pairs, and decoding the
// list whole grows it by copies.
func decodeSnapshot(text string) ([]snapPair, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	tok, err := dec.Token()
	switch {
	case err != nil:
		return nil, err
	case tok == nil: // null: no pair
		return nil, trailing(dec)
	case tok != json.Delim('['):
		return nil, fmt.Errorf("not a list: starts with %v", tok)
	}
	snap := make([]snapPair, 0, strings.Count(text, "{"))
	for dec.More() {
		var p snapPair
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("pair %d: %w", len(snap)+1, err)
		}
		snap = append(snap, p)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return snap, trailing(dec)
}

// trailing is an error if anything follows the decoded value.
func trailing(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the list")
	}
	return nil
}

// without returns ids (ascending) less those of out (ascending).
func without(ids, out []int64) []int64 {
	if len(out) == 0 {
		return ids
	}
	kept := make([]int64, 0, len(ids))
	j := 0
	for _, id := range ids {
		for j < len(out) && out[j] < id {
			j++
		}
		if j < len(out) && out[j] == id {
			continue
		}
		kept = append(kept, id)
	}
	return kept
}

// sweepDocs are the documents a sweep scores (the live ones when it started) and what
// it reads of those it left out, no longer live then.
type sweepDocs struct {
	db.SweepDocs
	// leftOut are the documents left out, ascending: index len(IDs)+i in the sweep's
	// pairs is leftOut[i]. goneText holds the texts of those the snapshot's pairs name,
	// by that i.
	leftOut  []int64
	goneText map[int]string
}

// sweepDocuments reads the documents a sweep scores: the dataset's, less those it left
// out when it started (under a standing tombstone then), and the texts of those left
// out that the pairs of its snapshot name.
func (s *Service) sweepDocuments(ctx context.Context, sweepID, datasetID int64, snap []snapPair) (sweepDocs, error) {
	docs, err := s.store.SweepDocuments(ctx, datasetID)
	if err != nil {
		return sweepDocs{}, err
	}
	leftOut, err := s.store.SweepLeftOut(ctx, sweepID)
	if err != nil || len(leftOut) == 0 {
		return sweepDocs{SweepDocs: docs}, err
	}
	named := map[int64]bool{}
	for _, p := range snap {
		named[p.A], named[p.B] = true, true
	}
	out := sweepDocs{leftOut: leftOut, goneText: map[int]string{}}
	j := 0
	for i, id := range docs.IDs {
		for j < len(leftOut) && leftOut[j] < id {
			j++
		}
		if j < len(leftOut) && leftOut[j] == id {
			if named[id] {
				out.goneText[j] = docs.Texts[i]
			}
			continue
		}
		out.IDs, out.Hashes, out.Texts = append(out.IDs, id), append(out.Hashes, docs.Hashes[i]), append(out.Texts, docs.Texts[i])
		if docs.Keep != nil {
			out.Keep = append(out.Keep, docs.Keep[i])
		}
	}
	return out, nil
}

// input builds what sweep.Run reads: the dataset's documents, their signatures from the
// cache (prefixes of a larger k where longs holds one, see sweep.CanPrefix) and pairs.
func (s *Service) input(ctx context.Context, c db.Campaign, docs sweepDocs, pairs []sweep.LabeledPair, longs []lsh.Spec) sweep.Input {
	return sweep.Input{
		Gone: sweep.GoneDocuments{Count: len(docs.leftOut), Text: func(i int) string { return docs.goneText[i] }},
		Docs: sweep.Documents{Count: len(docs.IDs), ContentHash: docs.Hashes, Text: func(i int) string { return docs.Texts[i] }, Keep: docs.Keep},
		Signatures: func(ctx context.Context, spec lsh.Spec) ([]lsh.Signature, error) {
			from := spec
			for _, l := range longs {
				if l.Hashes > from.Hashes && sweep.CanPrefix(spec, l) {
					from = l
				}
			}
			set, err := s.cache.Signatures(ctx, c.DatasetID, from, nil)
			if err != nil {
				return nil, err
			}
			if len(set.IDs) != len(docs.IDs) { // documents left out: the others' signatures
				kept := set.Sigs[:0:0]
				j := 0
				for i, id := range set.IDs {
					if j < len(docs.IDs) && docs.IDs[j] == id {
						kept = append(kept, set.Sigs[i])
						j++
					}
				}
				set.IDs, set.Sigs = docs.IDs, kept
				if j != len(docs.IDs) {
					return nil, fmt.Errorf("signatures of dataset %d under %s: %d of the %d documents read signed", c.DatasetID, from.ID(), j, len(docs.IDs))
				}
			}
			if !slices.Equal(set.IDs, docs.IDs) {
				return nil, fmt.Errorf("signatures of dataset %d under %s: %d documents signed, %d read", c.DatasetID, from.ID(),
					len(set.IDs), len(docs.IDs))
			}
			if from == spec {
				return set.Sigs, nil
			}
			out := make([]lsh.Signature, len(set.Sigs))
			for i, sig := range set.Sigs {
				out[i] = sig[:spec.Hashes]
			}
			return out, nil
		},
		Pairs:      pairs,
		Categories: c.Categories,
		Rep:        c.Spec,
	}
}
