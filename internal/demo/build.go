package demo

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// CorpusDoc is a document of the shared corpus (shared/data/corpus.jsonl.gz).
type CorpusDoc struct {
	ID      string  `json:"id"`
	Text    string  `json:"text"`
	Source  string  `json:"source"`
	Lang    string  `json:"lang"`
	Title   string  `json:"title"`
	Origin  string  `json:"origin"`
	License string  `json:"license"`
	Group   *string `json:"group"`
}

func (d *CorpusDoc) group() string {
	if d.Group == nil {
		return ""
	}
	return *d.Group
}

// Selection caps, in bytes of text, keep the sample to a few MB compressed.
const (
	maxLicenseBytes   = 20_000
	maxReadmeBytes    = 20_000
	maxDebrefGroup    = 9_000 // largest document of a Debian Reference group
	maxHandbookGroup  = 4_000 // largest document of a Handbook group
	npmLicenseSample  = 80
	seed              = 20261129
	pairsPerCategory  = 100
	randomDifferent   = 90
	hardDifferent     = 60
	similarityBins    = 10
	containmentCutoff = 0.8
	partialPairs      = 130
)

// Build reads the corpus, selects the demo documents, labels pairs by the rules in
// doc.go, and writes sample.jsonl.gz and labels.csv into outDir. It is deterministic.
func Build(corpusPath, outDir string, log io.Writer) error {
	docs, err := readCorpus(corpusPath)
	if err != nil {
		return err
	}
	sel := selectDocs(docs)
	fmt.Fprintf(log, "selected %d of %d documents\n", len(sel), len(docs))
	sets := shingleSets(sel)
	pairs := labelPairs(sel, sets)
	counts := map[string]int{}
	for _, p := range pairs {
		counts[p.category]++
	}
	fmt.Fprintf(log, "labeled %d pairs: %v\n", len(pairs), counts)
	if err := writeSample(filepath.Join(outDir, "sample.jsonl.gz"), sel); err != nil {
		return err
	}
	return writeLabels(filepath.Join(outDir, "labels.csv"), sel, pairs)
}

func readCorpus(path string) ([]CorpusDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var docs []CorpusDoc
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var d CorpusDoc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, len(docs)+1, err)
		}
		docs = append(docs, d)
	}
	return docs, sc.Err()
}

// selectDocs keeps every SPDX text and npm README under the caps, a seeded sample of npm
// LICENSE files (all @types ones), and whole translation groups of the two books whose
// documents are all small, so that every rendering and translation of a section is in.
func selectDocs(docs []CorpusDoc) []CorpusDoc {
	groupMax := map[string]int{}
	for _, d := range docs {
		if g := d.group(); g != "" {
			groupMax[g] = max(groupMax[g], len(d.Text))
		}
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	var licenses []CorpusDoc
	var out []CorpusDoc
	for _, d := range docs {
		switch d.Source {
		case "spdx-license-list":
			if len(d.Text) <= maxLicenseBytes {
				out = append(out, d)
			}
		case "npm-readme":
			if len(d.Text) <= maxReadmeBytes {
				out = append(out, d)
			}
		case "npm-license":
			if strings.HasPrefix(d.ID, "npm-types__") {
				out = append(out, d)
			} else {
				licenses = append(licenses, d)
			}
		case "debian-reference", "debian-reference-html":
			if groupMax[d.group()] <= maxDebrefGroup {
				out = append(out, d)
			}
		case "debian-handbook":
			if groupMax[d.group()] <= maxHandbookGroup {
				out = append(out, d)
			}
		}
	}
	rng.Shuffle(len(licenses), func(i, j int) { licenses[i], licenses[j] = licenses[j], licenses[i] })
	out = append(out, licenses[:min(npmLicenseSample, len(licenses))]...)
	slices.SortFunc(out, func(a, b CorpusDoc) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// shingleSets are word 5-shingles after lowercasing and collapsing white space: the
// measure the corpus README reports.
func shingleSets(docs []CorpusDoc) [][]uint64 {
	spec, err := lsh.ParseSpec("norm=lower+space level=word size=5")
	if err != nil {
		panic(err)
	}
	sets := make([][]uint64, len(docs))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			h, _ := lsh.NewHasher(spec)
			for i := w; i < len(docs); i += workers {
				sets[i] = h.ShingleSet(docs[i].Text)
			}
		})
	}
	wg.Wait()
	return sets
}

type pair struct {
	a, b        int
	j           float64 // Jaccard of word 5-shingles
	containment float64 // |A∩B| / min(|A|, |B|)
	category    string
	duplicate   bool
	rule        string
}

func overlap(a, b []uint64) (jaccard, containment float64) {
	inter := lsh.Intersection(a, b)
	union := len(a) + len(b) - inter
	if union == 0 {
		return 1, 1
	}
	small := min(len(a), len(b))
	if small == 0 {
		return float64(inter) / float64(union), 0
	}
	return float64(inter) / float64(union), float64(inter) / float64(small)
}

func isLicense(d *CorpusDoc) bool {
	return d.Source == "spdx-license-list" || d.Source == "npm-license"
}

// classify applies the labeling rules to a pair, most specific first.
func classify(x, y *CorpusDoc, j, c float64) (category string, duplicate bool, rule string) {
	nx := strings.Join(strings.Fields(strings.ToLower(x.Text)), " ")
	ny := strings.Join(strings.Fields(strings.ToLower(y.Text)), " ")
	gx, gy := x.group(), y.group()
	switch {
	case nx == ny:
		return "exact", true, "identical after lowercasing and collapsing white space"
	case gx != "" && gx == gy && x.Lang == y.Lang && x.Source != y.Source:
		return "format", true, "same section and language, plain text vs Markdown rendering"
	case gx != "" && gx == gy && x.Lang != y.Lang && j >= 0.3:
		return "partial", false, "same section, different language labels, but much of it left untranslated"
	case gx != "" && gx == gy && x.Lang != y.Lang:
		return "translation", false, "same section in two languages"
	case gx != "" && gx == gy && j >= 0.8:
		return "minor", true, "same section and language, a few paragraphs differ"
	case gx != "" && gx == gy:
		return "partial", false, "same section and language, partly different"
	case j >= 0.85:
		return "minor", true, "near-identical text (another copyright line, version or a few sentences)"
	case j >= 0.5:
		return "partial", false, "large shared part, different whole (license family members, forks)"
	case c >= containmentCutoff && j >= 0.02:
		return "partial", false, "one contains most of the other"
	case j >= 0.15 && (isLicense(x) || x.Source == "npm-readme") && (isLicense(y) || y.Source == "npm-readme"):
		return "boilerplate", false, "shared boilerplate (license clauses, README template) around different content"
	default:
		return "different", false, "no shared structure beyond common phrases"
	}
}

// labelPairs computes exact similarities for every pair, classifies them, and picks a
// sample of each category spread over ten similarity bins.
func labelPairs(docs []CorpusDoc, sets [][]uint64) []pair {
	n := len(docs)
	type cand struct {
		a, b int
		j, c float64
	}
	results := make([][]cand, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range results {
		wg.Go(func() {
			for a := w; a < n; a += len(results) {
				for b := a + 1; b < n; b++ {
					j, c := overlap(sets[a], sets[b])
					same := docs[a].group() != "" && docs[a].group() == docs[b].group()
					if j > 0 || same {
						results[w] = append(results[w], cand{a, b, j, c})
					}
				}
			}
		})
	}
	wg.Wait()
	byCat := map[string][]pair{}
	for _, rs := range results {
		for _, r := range rs {
			cat, dup, rule := classify(&docs[r.a], &docs[r.b], r.j, r.c)
			byCat[cat] = append(byCat[cat], pair{a: r.a, b: r.b, j: r.j, containment: r.c, category: cat, duplicate: dup, rule: rule})
		}
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	var out []pair
	for _, cat := range []string{"exact", "format", "minor", "boilerplate", "partial", "translation"} {
		want := pairsPerCategory
		if cat == "partial" {
			want = partialPairs // the category that fills the middle of the range
		}
		out = append(out, stratified(rng, byCat[cat], want)...)
	}
	// Different: random pairs (the negatives LSH never shows, mostly J = 0) and the
	// hardest negatives, spread over their similarity range.
	diff := byCat["different"]
	sortPairs(diff)
	var hard []pair
	for _, p := range diff {
		if p.j >= 0.05 {
			hard = append(hard, p)
		}
	}
	out = append(out, stratified(rng, hard, hardDifferent)...)
	seen := map[[2]int]bool{}
	for _, p := range out {
		seen[[2]int{p.a, p.b}] = true
	}
	for added := 0; added < randomDifferent; {
		a, b := rng.IntN(n), rng.IntN(n)
		if a == b {
			continue
		}
		a, b = min(a, b), max(a, b)
		if seen[[2]int{a, b}] {
			continue
		}
		j, c := overlap(sets[a], sets[b])
		cat, dup, rule := classify(&docs[a], &docs[b], j, c)
		if cat != "different" {
			continue
		}
		seen[[2]int{a, b}] = true
		out = append(out, pair{a: a, b: b, j: j, containment: c, category: cat, duplicate: dup, rule: "random pair: " + rule})
		added++
	}
	return out
}

func sortPairs(ps []pair) {
	slices.SortFunc(ps, func(x, y pair) int {
		if x.a != y.a {
			return x.a - y.a
		}
		return x.b - y.b
	})
}

// stratified picks up to want pairs, as evenly as the pairs allow over ten similarity
// bins, round-robin, with a seeded shuffle inside each bin. Each document appears in at
// most three picked pairs of the category, so one big cluster cannot fill it.
func stratified(rng *rand.Rand, ps []pair, want int) []pair {
	sortPairs(ps)
	bins := make([][]pair, similarityBins)
	for _, p := range ps {
		bin := min(int(p.j*similarityBins), similarityBins-1)
		bins[bin] = append(bins[bin], p)
	}
	for _, b := range bins {
		rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	}
	uses := map[int]int{}
	var out []pair
	for progress := true; progress && len(out) < want; {
		progress = false
		for i := range bins {
			for len(bins[i]) > 0 && len(out) < want {
				p := bins[i][0]
				bins[i] = bins[i][1:]
				if uses[p.a] >= 3 || uses[p.b] >= 3 {
					continue
				}
				uses[p.a]++
				uses[p.b]++
				out = append(out, p)
				progress = true
				break
			}
		}
	}
	return out
}

func writeSample(path string, docs []CorpusDoc) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false)
	for _, d := range docs {
		rec := struct {
			ID      string `json:"id"`
			Text    string `json:"text"`
			Source  string `json:"source"`
			Lang    string `json:"lang"`
			Title   string `json:"title"`
			Group   string `json:"group,omitempty"`
			Origin  string `json:"origin"`
			License string `json:"license"`
		}{d.ID, d.Text, d.Source, d.Lang, d.Title, d.group(), d.Origin, d.License}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func writeLabels(path string, docs []CorpusDoc, pairs []pair) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"a", "b", "category", "duplicate", "annotator", "note"})
	for _, p := range pairs {
		dup := "no"
		if p.duplicate {
			dup = "yes"
		}
		note := fmt.Sprintf("%s; word 5-shingle J=%.3f, containment %.3f", p.rule, p.j, p.containment)
		w.Write([]string{docs[p.a].ID, docs[p.b].ID, p.category, dup, Annotator, note})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return f.Close()
}
