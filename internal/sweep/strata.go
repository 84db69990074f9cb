package sweep

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Measure names the similarity a stratum's bin is taken over.
type Measure string

// Measures a stratum key can name.
const (
	// NoMeasure: the stratum's name says nothing computable about its pairs (imported
	// labels, a design this package does not know).
	NoMeasure Measure = ""
	// JaccardMeasure: exact Jaccard of the shingle sets of StratumKey.Rep, binned by
	// StratumKey.Scheme.
	JaccardMeasure Measure = "jaccard"
	// EstimateMeasure: the MinHash estimate under the spec whose ID is StratumKey.RepID,
	// in StratumKey.Bins equal bins over [0, 1] (labels.Bin).
	EstimateMeasure Measure = "estimate"
)

// BinScheme names how a similarity is cut into bins.
type BinScheme string

// Bin schemes.
const (
	// DemoBins are the demo design's 12 bins of exact Jaccard: J = 0 (no shared
	// shingle), (0, 0.05), [0.05, 0.1), then tenths [0.1, 0.2) ... [0.8, 0.9), and
	// [0.9, 1]; two sets both empty have J = 1 (DemoJaccardBin).
	DemoBins BinScheme = "demo12"
	// EqualBins are Bins equal bins over [0, 1], the last closed (labels.Bin).
	EqualBins BinScheme = "equal"
)

// DemoDesignPrefix starts the names of the demo sample's designs (demo-strata-v6).
const DemoDesignPrefix = "demo-strata-"

// DemoRep is the representation the demo design's exact Jaccard is computed with
// (internal/demo: lowercase, white space collapsed, word 5-shingles, each shingle its
// words joined by one space, hashed with XXH64; a text of fewer than five words is one
// shingle). Only the shingle sets matter: k, seed and scheme do not change them.
// internal/demo's tests check that its sets equal this spec's on every demo document.
var DemoRep = lsh.Spec{
	Scheme: lsh.Classic,
	Norm:   lsh.Norm{Lower: true, CollapseSpace: true},
	Level:  lsh.Word,
	Size:   5,
	Hashes: 128,
	Hash:   lsh.XXHash,
	Seed:   1,
}

// demoBinLabels are the demo design's bin names, in bin order.
var demoBinLabels = []string{"j0", "j0-0.05", "j0.05-0.1", "j0.1-0.2", "j0.2-0.3", "j0.3-0.4",
	"j0.4-0.5", "j0.5-0.6", "j0.6-0.7", "j0.7-0.8", "j0.8-0.9", "j0.9-1"}

// DemoJaccardBin is the demo design's bin of a pair whose shingle sets share inter
// shingles of union (DemoBins), on integers so that no rounding moves a pair across
// a boundary.
func DemoJaccardBin(inter, union int) int {
	last := len(demoBinLabels) - 1
	switch {
	case inter == 0 && union > 0:
		return 0
	case union == 0: // two texts without words: J = 1 by convention
		return last
	case 20*inter < union:
		return 1
	case 10*inter < union:
		return 2
	}
	for k := 2; k <= 9; k++ {
		if 10*inter < k*union {
			return k + 1
		}
	}
	return last
}

// DemoBinLabel is the name of demo bin b (DemoJaccardBin) in the demo's stratum names.
func DemoBinLabel(b int) string { return demoBinLabels[b] }

// StratumKey is what a stratum's name says about its pairs that can be computed
// without labels: the similarity bin every pair of the stratum lies in. The demo
// design's strata are rule category × bin; the category comes from the rules, which
// need a judgement, so only the bin is computable.
type StratumKey struct {
	Measure  Measure
	Rep      lsh.Spec // JaccardMeasure: the representation of the shingle sets
	RepID    string   // EstimateMeasure: the spec ID (lsh.Spec.ID) in the design's name
	Scheme   BinScheme
	Bins     int    // number of bins of the scheme
	Bin      int    // the stratum's bin, 0-based
	Category string // the category part of the name, "" when it has none
}

// Computable reports whether the key names a bin (else the stratum keeps its plain
// zero-event bound).
func (k StratumKey) Computable() bool { return k.Measure != NoMeasure }

// ParseStratum reads what a stratum name of design encodes. It knows two kinds of
// design, and is the one place their names are read:
//
//   - the demo sample's, "demo-strata-v6", strata "<category>|<bin>" with bin one of
//     j0, j0-0.05, j0.05-0.1, j0.1-0.2 ... j0.8-0.9, j0.9-1 (DemoBins over DemoRep);
//   - the studio's own draws, "draw-<spec ID>-bins<N>" (optionally "-seed<S>"),
//     strata "bin:<i>": the i-th of N equal bins of the MinHash estimate under that
//     spec (labels.DrawDesign).
//
// Any other design, or a name that does not parse, gives a key with NoMeasure.
func ParseStratum(design, stratum string) StratumKey {
	switch {
	case strings.HasPrefix(design, DemoDesignPrefix):
		cat, bin, ok := strings.Cut(stratum, "|")
		if !ok || cat == "" {
			return StratumKey{}
		}
		for b, l := range demoBinLabels {
			if l == bin {
				return StratumKey{Measure: JaccardMeasure, Rep: DemoRep, Scheme: DemoBins, Bins: len(demoBinLabels), Bin: b, Category: cat}
			}
		}
	case strings.HasPrefix(design, "draw-"):
		rest := strings.TrimPrefix(design, "draw-")
		id, bins, ok := strings.Cut(rest, "-bins")
		if !ok || len(id) != 13 || id[0] != 'r' {
			return StratumKey{}
		}
		if s, _, ok := strings.Cut(bins, "-seed"); ok {
			bins = s
		}
		n, err := strconv.Atoi(bins)
		if err != nil || n <= 0 || fmt.Sprint(n) != bins {
			return StratumKey{}
		}
		i, err := strconv.Atoi(strings.TrimPrefix(stratum, "bin:"))
		if !strings.HasPrefix(stratum, "bin:") || err != nil || i < 0 || i >= n {
			return StratumKey{}
		}
		return StratumKey{Measure: EstimateMeasure, RepID: id, Scheme: EqualBins, Bins: n, Bin: i}
	}
	return StratumKey{}
}
