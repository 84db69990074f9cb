package labels

import (
	"cmp"
	"math"
	"slices"
)

// Label is one annotator's standing label on a pair.
type Label struct {
	Annotator string
	Kind      Kind // KindLabel or KindAdjudication
	Category  string
	Duplicate bool
}

// PairState is a pair with its standing labels.
type PairState struct {
	ID         int64
	Similarity float64 // exact Jaccard; NaN when not computed
	Wanted     int
	Labels     []Label
}

// Resolved returns the pair's category and duplicate decision: the adjudication when
// there is one, else the majority (ties to the category first in the campaign's
// list); ok is false for an unlabeled pair.
func (p PairState) Resolved(cats []Category) (category string, duplicate, ok bool) {
	for _, l := range p.Labels {
		if l.Kind == KindAdjudication {
			return l.Category, l.Duplicate, true
		}
	}
	if len(p.Labels) == 0 {
		return "", false, false
	}
	count := map[string]int{}
	dups := map[string]int{}
	for _, l := range p.Labels {
		count[l.Category]++
		if l.Duplicate {
			dups[l.Category]++
		}
	}
	best := ""
	order := func(c string) int {
		for i, x := range cats {
			if x.Key == c {
				return i
			}
		}
		return len(cats)
	}
	for c, n := range count {
		if best == "" || n > count[best] || (n == count[best] && order(c) < order(best)) {
			best = c
		}
	}
	return best, 2*dups[best] >= count[best], true
}

// Disagreement is a pair whose annotators disagree and that nobody has adjudicated.
type Disagreement struct {
	PairID     int64
	Similarity float64
	Distance   float64 // from the campaign's threshold: the smaller, the more it matters
	Labels     []Label
}

// Overview is a campaign's progress, coverage and agreement.
type Overview struct {
	Pairs     int
	Complete  int // pairs with all wanted labels, or adjudicated
	Target    int // labels wanted in all
	Given     int // labels given towards the target
	Bins      int
	BinLabels []string
	// Coverage[i][b] counts pairs resolved to category i in similarity bin b; the last
	// row counts pairs still unlabeled and the last column pairs not scored yet.
	Coverage [][]int
	// CoverageDup counts the pairs of Coverage resolved as duplicates, so a category
	// whose pairs were answered both ways (boilerplate kept and removed) splits in two.
	CoverageDup   [][]int
	Agreement     Agreement
	Disagreements []Disagreement
}

// Summarize computes a campaign's overview from its pairs.
func Summarize(pairs []PairState, cats []Category, bins int, threshold float64) Overview {
	o := Overview{Pairs: len(pairs), Bins: bins}
	for b := range bins {
		o.BinLabels = append(o.BinLabels, binLabel(b, bins))
	}
	o.Coverage = make([][]int, len(cats)+1)
	o.CoverageDup = make([][]int, len(cats)+1)
	for i := range o.Coverage {
		o.Coverage[i] = make([]int, bins+1)
		o.CoverageDup[i] = make([]int, bins+1)
	}
	catIndex := map[string]int{}
	for i, c := range cats {
		catIndex[c.Key] = i
	}
	var units []Unit
	for _, p := range pairs {
		o.Target += p.Wanted
		adjudicated := false
		unit := Unit{}
		for _, l := range p.Labels {
			if l.Kind == KindAdjudication {
				adjudicated = true
				continue
			}
			unit[l.Annotator] = l.Category
		}
		given := min(len(unit), p.Wanted)
		if adjudicated {
			given = p.Wanted
		}
		o.Given += given
		if given >= p.Wanted {
			o.Complete++
		}
		if len(unit) >= 2 {
			units = append(units, unit)
		}
		col := bins
		if !math.IsNaN(p.Similarity) {
			col = Bin(p.Similarity, bins)
		}
		row, dup := len(cats), false
		if c, d, ok := p.Resolved(cats); ok {
			if i, known := catIndex[c]; known {
				row, dup = i, d
			}
		}
		o.Coverage[row][col]++
		if dup {
			o.CoverageDup[row][col]++
		}
		if !adjudicated && Disagree(p.Labels) {
			d := Disagreement{PairID: p.ID, Similarity: p.Similarity, Labels: p.Labels, Distance: math.Inf(1)}
			if !math.IsNaN(p.Similarity) {
				d.Distance = math.Abs(p.Similarity - threshold)
			}
			o.Disagreements = append(o.Disagreements, d)
		}
	}
	o.Agreement = Measure(units)
	slices.SortStableFunc(o.Disagreements, func(a, b Disagreement) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.PairID, b.PairID))
	})
	return o
}

// Disagree reports whether two labels of a pair (not adjudications) differ in category
// or duplicate answer: what puts a pair on the adjudication queue, here and in a
// campaign's running tally.
func Disagree(ls []Label) bool {
	var first *Label
	for i := range ls {
		if ls[i].Kind != KindLabel {
			continue
		}
		if first == nil {
			first = &ls[i]
			continue
		}
		if ls[i].Category != first.Category || ls[i].Duplicate != first.Duplicate {
			return true
		}
	}
	return false
}

func binLabel(b, bins int) string {
	lo := float64(b) / float64(bins)
	hi := float64(b+1) / float64(bins)
	return formatBin(lo) + "–" + formatBin(hi)
}

func formatBin(x float64) string {
	s := []byte{'0', '.', '0'}
	d := int(math.Round(x * 10))
	if d >= 10 {
		return "1.0"
	}
	s[2] = byte('0' + d)
	return string(s)
}
