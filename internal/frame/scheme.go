package frame

import (
	"fmt"
	"strconv"
)

// Scheme names how exact Jaccard similarity is cut into bins. Every scheme puts J = 0
// (no shared shingle) in bin 0 and J = 1 in its last bin; two empty sets have J = 1.
// Bins are decided on the integers (shared shingles, union) so that no rounding moves
// a pair across an edge.
type Scheme string

// Schemes.
const (
	// Demo12 are the demo design's 12 bins: J = 0, (0, 0.05), [0.05, 0.1), then tenths
	// [0.1, 0.2) ... [0.8, 0.9), and [0.9, 1].
	Demo12 Scheme = "demo12"
	// J21 are 21 bins: J = 0, (0, 0.05), then twentieths [0.05, 0.1) ... [0.9, 0.95),
	// and [0.95, 1]. Every edge of Demo12 is an edge of J21, and the sweep's default
	// thresholds (steps of 0.05) fall on its edges, so exact-Jaccard verification under
	// the bins' representation accepts whole bins.
	J21 Scheme = "j21"
)

// Default is the scheme the studio's own draws use.
const Default = J21

// ParseScheme returns the scheme named s.
func ParseScheme(s string) (Scheme, error) {
	switch Scheme(s) {
	case Demo12, J21:
		return Scheme(s), nil
	}
	return "", fmt.Errorf("unknown bin scheme %q (want %s or %s)", s, Demo12, J21)
}

// edges returns the scheme's inner edges as fractions num/den: bin i (i >= 1) holds
// edge[i-1] <= J < edge[i], with edge[-1] = 0 exclusive.
func (s Scheme) edges() (num []int, den int) {
	switch s {
	case Demo12:
		return []int{1, 2, 4, 6, 8, 10, 12, 14, 16, 18}, 20
	default:
		out := make([]int, 19)
		for i := range out {
			out[i] = i + 1
		}
		return out, 20
	}
}

// Bins returns the number of bins.
func (s Scheme) Bins() int {
	num, _ := s.edges()
	return len(num) + 2
}

// Bin returns the bin of a pair whose shingle sets share inter shingles of union.
func (s Scheme) Bin(inter, union int) int {
	num, den := s.edges()
	last := len(num) + 1
	switch {
	case union == 0: // two texts without shingles: J = 1 by convention
		return last
	case inter == 0:
		return 0
	}
	for i, e := range num {
		if den*inter < e*union {
			return i + 1
		}
	}
	return last
}

// Lower returns the lowest similarity of bin b (0 for the bins 0 and 1).
func (s Scheme) Lower(b int) float64 {
	num, den := s.edges()
	if b <= 1 {
		return 0
	}
	return float64(num[b-2]) / float64(den)
}

// Upper returns the least similarity above bin b (0 for bin 0, 1 for the last).
func (s Scheme) Upper(b int) float64 {
	num, den := s.edges()
	switch {
	case b == 0:
		return 0
	case b > len(num):
		return 1
	}
	return float64(num[b-1]) / float64(den)
}

// Label names bin b: "j0", "j0-0.05", "j0.05-0.1" ... "j0.95-1" (Demo12: "j0.9-1").
func (s Scheme) Label(b int) string {
	if b == 0 {
		return "j0"
	}
	return "j" + trim(s.Lower(b)) + "-" + trim(s.Upper(b))
}

// BinOfLabel returns the bin a label names, false when it names none.
func (s Scheme) BinOfLabel(l string) (int, bool) {
	for b := range s.Bins() {
		if s.Label(b) == l {
			return b, true
		}
	}
	return 0, false
}

func trim(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
