package lsh_test

import (
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// A Spec turns documents into signatures; a Shape turns signatures into candidate pairs;
// Estimate and ExactJaccard score a pair.
func Example() {
	spec, err := lsh.ParseSpec("level=word size=3 k=128 seed=1")
	if err != nil {
		panic(err)
	}
	docs := []string{
		"The quick brown fox jumps over the lazy dog near the river bank today",
		"The quick brown fox jumps over the lazy dog near the river bank today!",
		"The quick brown fox jumped over a lazy dog near the river bank today",
		"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod",
	}
	sigs, err := spec.Signatures(docs)
	if err != nil {
		panic(err)
	}
	cands, err := lsh.Candidates(sigs, lsh.Shape{Bands: 32, Rows: 4})
	if err != nil {
		panic(err)
	}
	h, _ := lsh.NewHasher(spec)
	for _, c := range cands {
		exact := lsh.ExactJaccard(h.ShingleSet(docs[c.A]), h.ShingleSet(docs[c.B]))
		fmt.Printf("docs %d and %d: %d bands, estimate %.2f, exact %.2f\n",
			c.A, c.B, c.Bands, lsh.Estimate(sigs[c.A], sigs[c.B]), exact)
	}
	// Output:
	// docs 0 and 1: 20 bands, estimate 0.89, exact 0.85
}
