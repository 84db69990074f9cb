package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// sweepCorpus is a small labeled sample whose answers a sweep can get wrong in known
// ways: per family a base text, a minor edit (a duplicate every configuration finds),
// a heavy edit (a duplicate labeled "partial" that high thresholds miss) and an
// unrelated text labeled "different"; and a chain A ~ B ~ C whose ends are labeled
// different, which connected components merge at low thresholds (a false merge).
type sweepCorpus struct {
	ids    []string
	texts  []string
	labels []corpusLabel
}

type corpusLabel struct {
	a, b      int
	category  string
	duplicate bool
}

func newSweepCorpus(families int) sweepCorpus {
	rng := rand.New(rand.NewPCG(9, 9))
	vocab := make([]string, 400)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%03d", i)
	}
	words := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = vocab[rng.IntN(len(vocab))]
		}
		return out
	}
	edit := func(ws []string, every int) []string {
		out := append([]string(nil), ws...)
		for i := every / 2; i < len(out); i += every {
			out[i] = "x" + vocab[rng.IntN(len(vocab))]
		}
		return out
	}
	var c sweepCorpus
	add := func(ws []string) int {
		c.ids = append(c.ids, fmt.Sprintf("d%03d", len(c.ids)))
		c.texts = append(c.texts, strings.Join(ws, " "))
		return len(c.texts) - 1
	}
	for range families {
		base := words(80)
		b := add(base)
		minor := add(edit(base, 40))
		heavy := add(edit(base, 6))
		other := add(words(80))
		c.labels = append(c.labels, corpusLabel{b, minor, "minor", true}, corpusLabel{b, heavy, "partial", true}, corpusLabel{b, other, "different", false})
	}
	// The chain: B shares the first half with A and the second with C.
	a, cc := words(80), words(80)
	ia := add(a)
	add(append(append([]string(nil), a[:40]...), cc[40:]...))
	ic := add(cc)
	c.labels = append(c.labels, corpusLabel{ia, ic, "different", false})
	return c
}

// jsonl is the documents as an upload.
func (c sweepCorpus) jsonl() string {
	var b strings.Builder
	for i, t := range c.texts {
		line, _ := json.Marshal(map[string]string{"id": c.ids[i], "text": t})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// labelsCSV is the labels as a label import (one annotator).
func (c sweepCorpus) labelsCSV() string {
	var b strings.Builder
	b.WriteString("a,b,category,duplicate,annotator\n")
	for _, l := range c.labels {
		fmt.Fprintf(&b, "%s,%s,%s,%s,seed\n", c.ids[l.a], c.ids[l.b], l.category, yesNo(l.duplicate))
	}
	return b.String()
}

// labelsDesignCSV is labelsCSV with a stratified draw behind it: the duplicates from a
// stratum of 2 frame pairs per labeled one, the non-duplicates from a "random" stratum of
// randomFrame pairs, so the sweep estimates over the dataset.
func (c sweepCorpus) labelsDesignCSV(randomFrame int) string {
	dups := 0
	for _, l := range c.labels {
		if l.duplicate {
			dups++
		}
	}
	var b strings.Builder
	b.WriteString("a,b,category,duplicate,annotator,design,stratum,frame_size\n")
	for _, l := range c.labels {
		stratum, frame := "random", randomFrame
		if l.duplicate {
			stratum, frame = "high", 2*dups
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s,seed,draw-1,%s,%d\n", c.ids[l.a], c.ids[l.b], l.category, yesNo(l.duplicate), stratum, frame)
	}
	return b.String()
}

// labelsDemoDesignCSV is labelsCSV drawn under the demo's design (demo-strata-v6):
// strata category|bin, each pair's bin its exact Jaccard under sweep.DemoRep; the
// non-duplicates' strata (every one of them shares no shingle: different|j0) stand for
// randomFrame pairs, the others for 2 pairs per labeled one.
func (c sweepCorpus) labelsDemoDesignCSV(tb testing.TB, randomFrame int) string {
	tb.Helper()
	h, err := lsh.NewHasher(sweep.DemoRep)
	if err != nil {
		tb.Fatal(err)
	}
	strata := make([]string, len(c.labels))
	count := map[string]int{}
	for i, l := range c.labels {
		x, y := h.ShingleSet(c.texts[l.a]), h.ShingleSet(c.texts[l.b])
		inter := lsh.Intersection(x, y)
		strata[i] = l.category + "|" + sweep.DemoBinLabel(sweep.DemoJaccardBin(inter, len(x)+len(y)-inter))
		count[strata[i]]++
	}
	var b strings.Builder
	b.WriteString("a,b,category,duplicate,annotator,design,stratum,frame_size\n")
	for i, l := range c.labels {
		frame := 2 * count[strata[i]]
		if !l.duplicate {
			if strata[i] != "different|j0" {
				tb.Fatalf("non-duplicate %d shares shingles: %s", i, strata[i])
			}
			frame = randomFrame
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s,seed,demo-strata-v6,%s,%d\n", c.ids[l.a], c.ids[l.b], l.category, yesNo(l.duplicate), strata[i], frame)
	}
	return b.String()
}

// smallGrid is a grid that sweeps the corpus in well under a second.
func smallGrid() sweep.Grid {
	base := lsh.DefaultSpec()
	base.Size, base.Hashes = 3, 64
	return sweep.Grid{Specs: []lsh.Spec{base}, Thresholds: sweep.Steps(0.3, 0.9, 0.2),
		Verifications: []sweep.Verification{sweep.MinHashEstimate, sweep.ExactJaccard}, Policies: []cluster.Policy{cluster.Components}}
}

// input is the corpus as a sweep input, labels as human labels of one annotator.
func (c sweepCorpus) input(tb testing.TB, g sweep.Grid) sweep.Input {
	tb.Helper()
	sigs := map[lsh.Spec][]lsh.Signature{}
	for _, s := range sweep.Requests(g.Specs) {
		v, err := s.Signatures(c.texts)
		if err != nil {
			tb.Fatal(err)
		}
		sigs[s] = v
	}
	in := sweep.Input{
		Docs: sweep.Documents{Count: len(c.texts), Text: func(i int) string { return c.texts[i] }},
		Signatures: func(_ context.Context, s lsh.Spec) ([]lsh.Signature, error) {
			return sigs[s], nil
		},
		Categories: labels.DefaultCategories,
	}
	for i, l := range c.labels {
		in.Pairs = append(in.Pairs, sweep.LabeledPair{ID: int64(i + 1), A: l.a, B: l.b,
			Labels: []sweep.Label{{Annotator: "seed", Kind: "label", Category: l.category, Duplicate: l.duplicate}}})
	}
	return in
}

// report runs the small grid over the corpus.
func (c sweepCorpus) report(tb testing.TB) (*sweep.Report, sweep.Input) {
	tb.Helper()
	in := c.input(tb, smallGrid())
	rep, err := sweep.Run(context.Background(), in, smallGrid(), sweep.Options{Replicates: 50})
	if err != nil {
		tb.Fatal(err)
	}
	return rep, in
}
