package labels

import (
	"slices"
	"sort"
)

// Unit is one labeled pair's values: annotator -> category. Units with fewer than two
// values carry no information about agreement and are ignored.
type Unit map[string]string

// Agreement summarizes how far annotators agree.
type Agreement struct {
	Units            int     // units with at least two values
	Values           int     // values in those units
	Alpha            float64 // Krippendorff's alpha, nominal; NaN when undefined
	PercentAgreement float64 // share of agreeing pairs of values within units
	Pairs            []PairAgreement
	Categories       []string
	// Confusion counts, over every pair of annotators on a shared unit, how often one
	// said Categories[i] and the other Categories[j] (both orders, so it is symmetric).
	Confusion [][]int
}

// PairAgreement is Cohen's kappa for two annotators over the units both labeled.
type PairAgreement struct {
	A, B     string
	Units    int
	Observed float64 // share of shared units where they agree
	Kappa    float64 // NaN when undefined (both always said the same one category)
}

// Measure computes Krippendorff's alpha (nominal), percent agreement, Cohen's kappa per
// annotator pair and the confusion matrix.
//
// Alpha follows Krippendorff's coincidence-matrix method: each unit with m_u values adds
// 1/(m_u-1) to o[c][k] for every ordered pair of its values (c, k) from different
// annotators; n_c are the marginals and n their sum; alpha = 1 - (n-1) *
// sum_{c!=k} o[c][k] / sum_{c!=k} n_c*n_k.
func Measure(units []Unit) Agreement {
	var a Agreement
	catIndex := map[string]int{}
	for _, u := range units {
		for _, v := range u {
			if _, ok := catIndex[v]; !ok {
				catIndex[v] = len(a.Categories)
				a.Categories = append(a.Categories, v)
			}
		}
	}
	sort.Strings(a.Categories)
	for i, c := range a.Categories {
		catIndex[c] = i
	}
	nc := len(a.Categories)
	o := make([][]float64, nc)
	a.Confusion = make([][]int, nc)
	for i := range o {
		o[i] = make([]float64, nc)
		a.Confusion[i] = make([]int, nc)
	}
	var agreePairs, allPairs int
	type pairKey struct{ a, b string }
	perPair := map[pairKey][][2]string{}
	for _, u := range units {
		if len(u) < 2 {
			continue
		}
		a.Units++
		a.Values += len(u)
		names := make([]string, 0, len(u))
		for n := range u {
			names = append(names, n)
		}
		slices.Sort(names)
		m := float64(len(u))
		for i, x := range names {
			for j, y := range names {
				if i == j {
					continue
				}
				ci, cj := catIndex[u[x]], catIndex[u[y]]
				o[ci][cj] += 1 / (m - 1)
				a.Confusion[ci][cj]++
				if i < j {
					allPairs++
					if ci == cj {
						agreePairs++
					}
					k := pairKey{x, y}
					perPair[k] = append(perPair[k], [2]string{u[x], u[y]})
				}
			}
		}
	}
	if allPairs > 0 {
		a.PercentAgreement = float64(agreePairs) / float64(allPairs)
	}
	a.Alpha = Alpha(o)
	keys := make([]pairKey, 0, len(perPair))
	for k := range perPair {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y pairKey) int {
		if x.a != y.a {
			return compare(x.a, y.a)
		}
		return compare(x.b, y.b)
	})
	for _, k := range keys {
		obs, kappa := CohenKappa(perPair[k])
		a.Pairs = append(a.Pairs, PairAgreement{A: k.a, B: k.b, Units: len(perPair[k]), Observed: obs, Kappa: kappa})
	}
	return a
}

// Alpha is Krippendorff's alpha (nominal) from the coincidence matrix o of Measure: n_c
// are its row sums and n their sum; alpha = 1 - (n-1) * sum_{c!=k} o[c][k] /
// sum_{c!=k} n_c*n_k. It is NaN when n <= 1, or when a single category is in use (the
// expected disagreement is 0: agreement is not measurable).
func Alpha(o [][]float64) float64 {
	var n float64
	nMarg := make([]float64, len(o))
	for i := range o {
		for j := range o[i] {
			nMarg[i] += o[i][j]
		}
		n += nMarg[i]
	}
	var observed, expected float64
	for c := range o {
		for k := range o {
			if c != k {
				observed += o[c][k]
				expected += nMarg[c] * nMarg[k]
			}
		}
	}
	if n <= 1 || expected == 0 {
		return nan()
	}
	return 1 - (n-1)*observed/expected
}

// CohenKappa returns the observed agreement and Cohen's kappa of paired ratings.
func CohenKappa(ratings [][2]string) (observed, kappa float64) {
	counts := make(map[[2]string]int, 8)
	for _, r := range ratings {
		counts[r]++
	}
	_, observed, kappa = CohenKappaCounts(counts)
	return observed, kappa
}

// CohenKappaCounts is CohenKappa from counts of each (category by A, category by B), for
// callers that keep running counts instead of the ratings; units is their sum. With no
// units both rates are NaN.
func CohenKappaCounts(counts map[[2]string]int) (units int, observed, kappa float64) {
	ca, cb := map[string]float64{}, map[string]float64{}
	agree := 0.0
	for k, c := range counts {
		units += c
		ca[k[0]] += float64(c)
		cb[k[1]] += float64(c)
		if k[0] == k[1] {
			agree += float64(c)
		}
	}
	if units == 0 {
		return 0, nan(), nan()
	}
	n := float64(units)
	observed = agree / n
	pe := 0.0
	for c, x := range ca {
		pe += (x / n) * (cb[c] / n)
	}
	if pe == 1 {
		return units, observed, nan()
	}
	return units, observed, (observed - pe) / (1 - pe)
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
