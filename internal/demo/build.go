package demo

import (
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	maxLicenseBytes  = 20_000
	maxReadmeBytes   = 20_000
	maxDebrefGroup   = 9_000 // largest document of a Debian Reference group
	maxHandbookGroup = 4_000 // largest document of a Handbook group
	npmLicenseSample = 80
	seed             = 20261129
)

// Build reads the corpus, selects the demo documents, classifies every pair of them by
// the rules in the package documentation, draws the stratified sample (Design), and writes
// sample.jsonl.gz, labels.csv and the pairs and answer sheet of blind round BlindRound into outDir. The
// earlier rounds' pairs files must be in outDir already: the new round leaves their pairs
// out. It is deterministic.
func Build(corpusPath, outDir string, log io.Writer) error {
	earlier, err := readEarlierRounds(outDir)
	if err != nil {
		return err
	}
	all, err := readCorpus(corpusPath)
	if err != nil {
		return err
	}
	sel := selectDocs(all)
	fmt.Fprintf(log, "selected %d of %d documents\n", len(sel), len(all))
	docs := analyzeAll(sel)
	pop := classifyAll(docs)
	fmt.Fprintf(log, "classified all %d pairs: %v\n", pop.size(), pop.categoryTotals())
	drawn := pop.draw()
	counts := map[string]int{}
	for _, p := range drawn {
		counts[p.category]++
	}
	fmt.Fprintf(log, "drew %d pairs: %v\n", len(drawn), counts)
	if err := writeSample(filepath.Join(outDir, "sample.jsonl.gz"), sel); err != nil {
		return err
	}
	if err := writeLabels(filepath.Join(outDir, "labels.csv"), docs, drawn); err != nil {
		return err
	}
	blind := blindSample(docs, drawn, earlier)
	if err := writeBlind(filepath.Join(outDir, BlindPairsPath(BlindRound)), docs, blind); err != nil {
		return err
	}
	return writeJudgeSheet(filepath.Join(outDir, JudgeSheetPath(BlindRound)), docs, blind)
}

func readCorpus(path string) ([]CorpusDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadDocs(f, path)
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

func writeLabels(path string, docs []doc, pairs []drawnPair) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"a", "b", "category", "duplicate", "annotator", "note", "design", "stratum", "frame_size"})
	for _, p := range pairs {
		dup := "no"
		if p.duplicate {
			dup = "yes"
		}
		note := fmt.Sprintf("%s; word 5-shingle J=%.3f, containment %.3f", p.rule, p.j, p.c)
		w.Write([]string{docs[p.a].ID, docs[p.b].ID, p.category, dup, Annotator, note, Design, p.stratum, strconv.FormatInt(p.frameSize, 10)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
