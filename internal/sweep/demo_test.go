package sweep

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// demoSample is the demo dataset read straight from internal/demo's files: its
// documents and its rule-made labels (annotator demo-rules, so Rule labels).
type demoSample struct {
	texts []string
	bytes int64
	pairs []LabeledPair
	// design is pairs with the demo's own design columns (demo-strata-v6: stratum,
	// frame size), as the demo campaign stores them.
	design []LabeledPair
}

var (
	demoOnce sync.Once
	demo     demoSample
	demoErr  error
)

func loadDemo(tb testing.TB) demoSample {
	tb.Helper()
	demoOnce.Do(func() { demo, demoErr = readDemo("../demo/sample.jsonl.gz", "../demo/labels.csv") })
	if demoErr != nil {
		tb.Fatal(demoErr)
	}
	return demo
}

func readDemo(samplePath, labelsPath string) (demoSample, error) {
	var d demoSample
	f, err := os.Open(samplePath)
	if err != nil {
		return d, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return d, err
	}
	index := map[string]int{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var doc struct{ ID, Text string }
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			return d, err
		}
		index[doc.ID] = len(d.texts)
		d.texts = append(d.texts, doc.Text)
		d.bytes += int64(len(doc.Text))
	}
	if err := sc.Err(); err != nil {
		return d, err
	}
	lf, err := os.Open(labelsPath)
	if err != nil {
		return d, err
	}
	defer lf.Close()
	r := csv.NewReader(lf)
	if _, err := r.Read(); err != nil { // header: a,b,category,duplicate,annotator,note
		return d, err
	}
	for id := int64(1); ; id++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return d, err
		}
		d.pairs = append(d.pairs, LabeledPair{ID: id, A: index[rec[0]], B: index[rec[1]], Labels: []Label{{
			Annotator: rec[4], Kind: "label", Category: rec[2], Duplicate: rec[3] == "yes", Rule: rec[4] == "demo-rules",
		}}})
		p := d.pairs[len(d.pairs)-1]
		if len(rec) >= 9 {
			p.Design, p.Stratum = rec[6], rec[7]
			if p.FrameSize, err = strconv.Atoi(rec[8]); err != nil {
				return d, fmt.Errorf("%s line %d: frame_size: %w", labelsPath, id+1, err)
			}
		}
		d.design = append(d.design, p)
	}
	return d, nil
}

// input returns a sweep Input over texts whose signature provider reads from sigs
// (computed beforehand) and fails for a spec it does not hold.
func textInput(texts []string, pairs []LabeledPair, sigs map[lsh.Spec][]lsh.Signature) Input {
	hashes := make([]uint64, len(texts))
	norm := lsh.DefaultSpec().Norm
	for i, t := range texts {
		hashes[i] = xxhash.Sum64String(norm.Normalize(t))
	}
	return Input{
		Docs: Documents{Count: len(texts), ContentHash: hashes, Text: func(i int) string { return texts[i] }},
		Signatures: func(ctx context.Context, spec lsh.Spec) ([]lsh.Signature, error) {
			s, ok := sigs[spec]
			if !ok {
				return nil, &InputError{Field: "test signatures", Index: -1, Msg: "not precomputed: " + spec.String()}
			}
			return s, nil
		},
		Pairs:      pairs,
		Categories: labels.DefaultCategories,
	}
}

// precompute computes the signatures a sweep over specs asks for.
func precompute(tb testing.TB, texts []string, specs []lsh.Spec) map[lsh.Spec][]lsh.Signature {
	tb.Helper()
	out := map[lsh.Spec][]lsh.Signature{}
	for _, s := range Requests(specs) {
		sigs, err := s.Signatures(texts)
		if err != nil {
			tb.Fatal(err)
		}
		out[s] = sigs
	}
	return out
}

// withDesign returns the pairs with a synthetic stratified design, as the sampler will
// record it: stratum = tenth of word-5 exact Jaccard, frame size = 40 times the pairs
// labeled in it (each labeled pair standing for 40).
func withDesign(tb testing.TB, texts []string, pairs []LabeledPair) []LabeledPair {
	tb.Helper()
	h, err := lsh.NewHasher(lsh.DefaultSpec())
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]LabeledPair, len(pairs))
	count := map[string]int{}
	for i, p := range pairs {
		j := lsh.ExactJaccard(h.ShingleSet(texts[p.A]), h.ShingleSet(texts[p.B]))
		p.Design, p.Stratum = "bench", fmt.Sprintf("bin%d", labels.Bin(j, 10))
		count[p.Stratum]++
		out[i] = p
	}
	for i := range out {
		out[i].FrameSize = 40 * count[out[i].Stratum]
	}
	return out
}
