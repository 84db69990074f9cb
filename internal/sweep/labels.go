package sweep

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"slices"

	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// Label is one standing label on a pair.
type Label struct {
	Annotator string
	Kind      string // "label" or "adjudication" (labels.Label's kinds)
	Category  string
	Duplicate bool
	// Rule marks a label made by a rule (the demo's "demo-rules", an import from a
	// heuristic) rather than by a person: it counts only when no person settles the pair.
	Rule bool
}

// Adjudication is the Kind of an adjudicator's label, which settles a pair.
const Adjudication = "adjudication"

// LabeledPair is a pair of documents of the dataset with its standing labels and, when
// the sampler recorded it, the sampling design that drew it.
type LabeledPair struct {
	ID int64 // the store's pair id; names the pair in outcomes and in the label-set version
	// A and B are document indexes, any order, different: [0, Documents.Count) the live
	// documents, from Documents.Count on the documents no longer live (Input.Gone).
	A, B   int
	Labels []Label
	// Flagged and Skipped are the pair's standing state; such pairs are left out.
	Flagged, Skipped bool
	// Design names the draw that chose the pair, Stratum its stratum in that draw (a
	// similarity bin, "random") and FrameSize N_h, the pairs that stratum held when the
	// pair was drawn. Empty or 0 when unknown (imported labels): the pair then counts on
	// the labeled-pairs basis only.
	Design    string
	Stratum   string
	FrameSize int
	// Origin says how the pair came into the campaign: "bin:<i>" (a bin of the studio's
	// draw), "boundary", "random", "audit" (a manifest's audit), "import"...
	Origin string `json:",omitempty"`
}

// LabelRule is the rule that decides which label of a pair counts, as the sweep page and
// the README quote it.
const LabelRule = "A pair counts with its adjudicated label if it has one; else with the " +
	"duplicate decision most of its current human labels give (and, among those, the most " +
	"common category, ties to the earlier category in the campaign's list); else (a tie, or " +
	"no human label) with its rule label where one exists. Flagged and skipped pairs are " +
	"left out and counted."

// Status says whether a pair counts and, if not, why.
type Status string

// Statuses of a pair under LabelRule.
const (
	Counted   Status = "counted"
	Flagged   Status = "flagged"
	Skipped   Status = "skipped"
	Tied      Status = "tied"      // human labels tie on the duplicate decision; no rule label
	Unlabeled Status = "unlabeled" // no label at all
)

// Source says which label a counted pair counts with.
type Source string

// Sources of a counted pair's label.
const (
	FromAdjudication Source = "adjudication"
	FromMajority     Source = "majority"
	FromRule         Source = "rule"
)

// Resolution is a pair's label under LabelRule.
type Resolution struct {
	Status    Status
	Source    Source // set when Status is Counted
	Category  string
	Duplicate bool
}

// Resolve applies LabelRule to one pair. cats orders categories for category ties.
// Labels are taken oldest first: of several adjudications or rule labels the last counts.
func Resolve(p LabeledPair, cats []labels.Category) Resolution {
	switch {
	case p.Flagged:
		return Resolution{Status: Flagged}
	case p.Skipped:
		return Resolution{Status: Skipped}
	}
	var adj, rule *Label
	var human []Label
	for i := range p.Labels {
		l := &p.Labels[i]
		switch {
		case l.Kind == Adjudication:
			adj = l
		case l.Rule:
			rule = l
		default:
			human = append(human, *l)
		}
	}
	if adj != nil {
		return Resolution{Status: Counted, Source: FromAdjudication, Category: adj.Category, Duplicate: adj.Duplicate}
	}
	yes := 0
	for _, l := range human {
		if l.Duplicate {
			yes++
		}
	}
	if no := len(human) - yes; yes != no {
		dup := yes > no
		return Resolution{Status: Counted, Source: FromMajority, Category: commonCategory(human, dup, cats), Duplicate: dup}
	}
	if rule != nil {
		return Resolution{Status: Counted, Source: FromRule, Category: rule.Category, Duplicate: rule.Duplicate}
	}
	if len(human) > 0 {
		return Resolution{Status: Tied}
	}
	return Resolution{Status: Unlabeled}
}

// commonCategory returns the most common category among the labels whose duplicate
// decision is dup, ties to the category earlier in cats (then to the smaller key).
func commonCategory(ls []Label, dup bool, cats []labels.Category) string {
	count := map[string]int{}
	for _, l := range ls {
		if l.Duplicate == dup {
			count[l.Category]++
		}
	}
	order := func(c string) int {
		for i, x := range cats {
			if x.Key == c {
				return i
			}
		}
		return len(cats)
	}
	best := ""
	for c, n := range count {
		if best == "" || n > count[best] ||
			n == count[best] && (order(c) < order(best) || order(c) == order(best) && c < best) {
			best = c
		}
	}
	return best
}

// LabelSet is what a sweep is scored on: the counted pairs under LabelRule, how many
// pairs were left out and why, and a version naming the resolved labels.
type LabelSet struct {
	Pairs []ResolvedPair // counted pairs between live documents, in input order
	// Gone are the counted pairs that name a document no longer live (an export
	// tombstoned it), in input order. A label stays evidence about its bin of similarity
	// after one of its documents is gone: such pairs count for the model's bins (their
	// bin is computed from the stored texts), never in what counts the live dataset's
	// pairs (candidates, clusters, the labeled-pairs figures).
	Gone        []ResolvedPair
	Resolutions []Resolution // one per input pair
	// Counts by status and, for counted pairs (Pairs and Gone), by source.
	Counted, Flagged, Skipped, Tied, Unlabeled int
	Adjudicated, Majority, RuleOnly            int
	// Version is a hash of the counted pairs' ids, documents and resolved labels in id
	// order (Pairs and Gone): equal versions were scored on the same labels. A sweep
	// records it; when the campaign's version differs, the page offers a re-run.
	Version string
}

// ResolvedPair is a counted pair with the label it counts with.
type ResolvedPair struct {
	LabeledPair
	Category  string
	Duplicate bool
	Source    Source
}

// ResolveAll applies LabelRule to every pair of documents in [0, docs). A pair naming a
// document outside [0, docs) or the same document twice is an error naming the pair.
func ResolveAll(pairs []LabeledPair, cats []labels.Category, docs int) (LabelSet, error) {
	return ResolveOver(pairs, cats, docs, 0)
}

// ResolveOver is ResolveAll over live documents [0, live) and gone documents no longer
// live [live, live+gone): a counted pair naming a gone document goes to LabelSet.Gone.
func ResolveOver(pairs []LabeledPair, cats []labels.Category, live, gone int) (LabelSet, error) {
	docs := live + gone
	ls := LabelSet{Resolutions: make([]Resolution, 0, len(pairs)), Pairs: make([]ResolvedPair, 0, len(pairs))}
	for i, p := range pairs {
		if p.A < 0 || p.B < 0 || p.A >= docs || p.B >= docs {
			msg := fmt.Sprintf("pair id %d: documents %d and %d; the dataset has %d", p.ID, p.A, p.B, live)
			if gone > 0 {
				msg += fmt.Sprintf(" live and %d no longer live", gone)
			}
			return LabelSet{}, &InputError{Field: "pairs", Index: i, Msg: msg}
		}
		if p.A == p.B {
			return LabelSet{}, &InputError{Field: "pairs", Index: i, Msg: fmt.Sprintf("pair id %d names document %d twice", p.ID, p.A)}
		}
		r := Resolve(p, cats)
		ls.Resolutions = append(ls.Resolutions, r)
		switch r.Status {
		case Flagged:
			ls.Flagged++
		case Skipped:
			ls.Skipped++
		case Tied:
			ls.Tied++
		case Unlabeled:
			ls.Unlabeled++
		case Counted:
			ls.Counted++
			switch r.Source {
			case FromAdjudication:
				ls.Adjudicated++
			case FromMajority:
				ls.Majority++
			case FromRule:
				ls.RuleOnly++
			}
			p.A, p.B = min(p.A, p.B), max(p.A, p.B)
			rp := ResolvedPair{LabeledPair: p, Category: r.Category, Duplicate: r.Duplicate, Source: r.Source}
			if p.B >= live {
				ls.Gone = append(ls.Gone, rp)
			} else {
				ls.Pairs = append(ls.Pairs, rp)
			}
		}
	}
	if len(ls.Gone) == 0 {
		ls.Version = labelVersion(ls.Pairs)
	} else {
		ls.Version = labelVersion(slices.Concat(ls.Pairs, ls.Gone))
	}
	return ls, nil
}

// labelVersion hashes (id, a, b, duplicate, category) of each pair in (id, a, b) order.
func labelVersion(ps []ResolvedPair) string {
	order := func(x, y ResolvedPair) int {
		return cmp.Or(cmp.Compare(x.ID, y.ID), cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B))
	}
	sorted := ps // pairs read from the store come in id order: no copy then
	if !slices.IsSortedFunc(ps, order) {
		sorted = slices.Clone(ps)
		slices.SortFunc(sorted, order)
	}
	var v VersionHash
	for _, p := range sorted {
		v.Add(p.ID, p.A, p.B, p.Duplicate, p.Category)
	}
	return v.Sum()
}

// VersionHash computes LabelSet.Version pair by pair, for a caller that keeps resolved
// labels its own way (a page comparing a sweep's labels with the campaign's): Add each
// counted pair, documents as indexes with A < B, in (ID, A, B) order. The zero value is
// ready.
type VersionHash struct {
	h   hash.Hash
	buf []byte
}

// Add adds one counted pair.
func (v *VersionHash) Add(id int64, a, b int, duplicate bool, category string) {
	if v.h == nil {
		v.h, v.buf = sha256.New(), make([]byte, 0, 64<<10)
	}
	v.buf = binary.LittleEndian.AppendUint64(v.buf, uint64(id))
	v.buf = binary.LittleEndian.AppendUint64(v.buf, uint64(a))
	v.buf = binary.LittleEndian.AppendUint64(v.buf, uint64(b))
	d := byte(0)
	if duplicate {
		d = 1
	}
	v.buf = append(append(append(v.buf, d), category...), 0)
	if len(v.buf) >= 60<<10 {
		v.h.Write(v.buf)
		v.buf = v.buf[:0]
	}
}

// Sum returns the version of the pairs added.
func (v *VersionHash) Sum() string {
	if v.h == nil {
		v.h = sha256.New()
	}
	v.h.Write(v.buf)
	v.buf = v.buf[:0]
	return "l" + hex.EncodeToString(v.h.Sum(nil)[:6])
}
