package bulk

import (
	"os"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/gencorpus"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// TestRecallOfARun measures, for a finished dedup run over a gencorpus corpus, how many
// planted near-duplicates ended in their original's cluster, by their true Jaccard under
// the default spec (word 5-shingles). It runs only when DEDUP_RECALL_IN (the corpus),
// DEDUP_RECALL_TRUTH (its truth file) and DEDUP_RECALL_OUT (the run's -out) are set: it is
// how the README's recall figures were measured, not part of the suite.
func TestRecallOfARun(t *testing.T) {
	in, truthPath, out := os.Getenv("DEDUP_RECALL_IN"), os.Getenv("DEDUP_RECALL_TRUTH"), os.Getenv("DEDUP_RECALL_OUT")
	if in == "" || truthPath == "" || out == "" {
		t.Skip("set DEDUP_RECALL_IN, DEDUP_RECALL_TRUTH and DEDUP_RECALL_OUT to measure a run's recall")
	}
	tf, err := os.Open(truthPath)
	if err != nil {
		t.Fatal(err)
	}
	planted, err := gencorpus.ReadTruth(tf)
	tf.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, p := range planted {
		want[p.Dup], want[p.Original] = true, true
	}
	text := map[string]string{}
	for _, r := range readCorpus(t, in) {
		if want[r.ID] {
			text[r.ID] = r.Text
		}
	}
	clusterOf := clustersOf(t, out)
	h, err := lsh.NewHasher(lsh.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	together := func(p gencorpus.Planted) bool {
		return clusterOf[p.Dup] != 0 && clusterOf[p.Dup] == clusterOf[p.Original]
	}
	var n, found [3]int // true Jaccard < 0.8, [0.8, 0.85), >= 0.85
	var exact, exactFound int
	for _, p := range planted {
		if p.Kind == "exact" {
			exact++
			if together(p) {
				exactFound++
			}
			continue
		}
		j := lsh.ExactJaccard(h.ShingleSet(text[p.Dup]), h.ShingleSet(text[p.Original]))
		b := 0
		switch {
		case j >= 0.85:
			b = 2
		case j >= 0.8:
			b = 1
		}
		n[b]++
		if together(p) {
			found[b]++
		}
	}
	t.Logf("exact copies %d/%d; planted near pairs by true Jaccard: < 0.8 %d/%d, [0.8, 0.85) %d/%d, >= 0.85 %d/%d",
		exactFound, exact, found[0], n[0], found[1], n[1], found[2], n[2])
}
