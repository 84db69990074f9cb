package review

import (
	"cmp"
	"slices"
)

// Change is a document whose fate differs between two manifests: A is its row in the
// first manifest, B in the second; the zero Row where the manifest does not remove it.
type Change struct {
	ExtID string
	A, B  Row
}

// Difference is what changes in the removal set from manifest A to manifest B,
// documents matched by external id (so two versions of a dataset compare too).
type Difference struct {
	Entered []Change // removed by B, not by A
	Left    []Change // removed by A, not by B
	// Rekept are removed by both, with a different document kept in their place.
	Rekept []Change
	Both   int // removed by both
}

// Diff compares the removal sets (rows whose decision removes) of two manifests. Each
// list is sorted by external id.
func Diff(a, b []Row) Difference {
	index := func(rows []Row) map[string]Row {
		m := make(map[string]Row, len(rows))
		for _, r := range rows {
			if r.Decision.Removes() {
				m[r.ExtID] = r
			}
		}
		return m
	}
	ia, ib := index(a), index(b)
	var d Difference
	for id, ra := range ia {
		rb, ok := ib[id]
		switch {
		case !ok:
			d.Left = append(d.Left, Change{ExtID: id, A: ra})
		case ra.KeeperExtID != rb.KeeperExtID:
			d.Rekept = append(d.Rekept, Change{ExtID: id, A: ra, B: rb})
			d.Both++
		default:
			d.Both++
		}
	}
	for id, rb := range ib {
		if _, ok := ia[id]; !ok {
			d.Entered = append(d.Entered, Change{ExtID: id, B: rb})
		}
	}
	for _, l := range [][]Change{d.Entered, d.Left, d.Rekept} {
		slices.SortFunc(l, func(x, y Change) int { return cmp.Compare(x.ExtID, y.ExtID) })
	}
	return d
}
