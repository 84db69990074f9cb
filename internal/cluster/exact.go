package cluster

import (
	"crypto/sha256"
	"slices"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// ExactGroups is the exact-duplicate pass: it groups the documents whose texts are equal
// after normalization n (the representation's, so that an exact duplicate is one whose
// signature is certainly identical), comparing SHA-256 hashes of the normalized texts.
// Each group holds two documents or more in ascending order; groups are ordered by their
// first document. The result is Input.Exact.
func ExactGroups(texts []string, n lsh.Norm) [][]int {
	z := lsh.NewNormalizer(n)
	first := make(map[[32]byte]int, len(texts))
	groupOf := map[int]int{} // a group's first document -> its index in groups
	var groups [][]int
	for i, t := range texts {
		key := sha256.Sum256([]byte(z.Normalize(t)))
		f, ok := first[key]
		if !ok {
			first[key] = i
			continue
		}
		gi, ok := groupOf[f]
		if !ok {
			gi = len(groups)
			groupOf[f] = gi
			groups = append(groups, []int{f})
		}
		groups[gi] = append(groups[gi], i)
	}
	slices.SortFunc(groups, func(a, b []int) int { return a[0] - b[0] })
	return groups
}
