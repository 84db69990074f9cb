// Package gencorpus writes large synthetic corpora made of real text, for benchmarks and
// recall tests of the whole-corpus dedup command: the demo sample's real documents (Debian
// manuals, SPDX licenses, npm READMEs; internal/demo) cut into paragraphs and put back
// together in seeded random order, with small seeded random word edits. It is synthetic
// and says so: the texts are real, their combinations are not.
//
// Every document is one of three kinds, drawn per document:
//
//   - fresh: paragraphs drawn at random from the whole sample until the length of a
//     randomly drawn sample document (at most MaxBytes) is reached, then a light edit;
//     two fresh documents share little beyond common paragraphs;
//   - near: a copy of a recent fresh document with word edits (replace, delete or insert
//     a word) at a rate drawn from [MinEdit, MaxEdit]: a planted near-duplicate;
//   - exact: a byte-identical copy of a recent fresh document: a planted exact duplicate.
//
// The planted pairs are written to the truth file, so a test can measure recall against
// them. The same seed and options give the same bytes.
package gencorpus

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Doc is a source document: its text and what the keeper rules read of it.
type Doc struct {
	Text, Source, Lang string
}

// Options shape a corpus.
type Options struct {
	N    int    // documents to write
	Seed uint64 // the same seed, the same corpus
	// NearRate and ExactRate are the shares of planted near and exact duplicates
	// (defaults 0.12 and 0.03).
	NearRate, ExactRate float64
	// MinEdit and MaxEdit bound a near-duplicate's word edit rate (defaults 0.002 and 0.02:
	// word 5-shingle Jaccard about 0.98 down to 0.8).
	MinEdit, MaxEdit float64
	// MaxBytes caps a fresh document's target length (default 8192).
	MaxBytes int
	// Window is how many recent fresh documents a duplicate may copy (default 4096).
	Window int
}

func (o *Options) defaults() {
	if o.NearRate == 0 && o.ExactRate == 0 {
		o.NearRate, o.ExactRate = 0.12, 0.03
	}
	if o.MinEdit == 0 && o.MaxEdit == 0 {
		o.MinEdit, o.MaxEdit = 0.002, 0.02
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 8192
	}
	if o.Window <= 0 {
		o.Window = 4096
	}
}

// Planted is one planted duplicate: Dup was made from Original.
type Planted struct {
	Dup, Original string
	Kind          string  // "near" or "exact"
	EditRate      float64 // 0 for exact
}

// TruthColumns are the columns of the truth file.
var TruthColumns = []string{"dup_id", "original_id", "kind", "edit_rate"}

// Summary counts what Write wrote.
type Summary struct {
	Docs, Fresh, Near, Exact int
	Bytes                    int64 // JSONL bytes before compression
}

type record struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Source string `json:"source,omitempty"`
	Lang   string `json:"lang,omitempty"`
}

type para struct {
	text string
	doc  int
}

// Write writes opt.N documents as JSONL to w (ids g0000000, g0000001, ...) and the
// planted duplicates as CSV (TruthColumns) to truth, which may be nil.
func Write(w, truth io.Writer, sample []Doc, opt Options) (Summary, error) {
	opt.defaults()
	if len(sample) == 0 {
		return Summary{}, fmt.Errorf("gencorpus: no sample documents")
	}
	var paras []para
	var words []string
	for i, d := range sample {
		for _, p := range strings.Split(d.Text, "\n\n") {
			if strings.TrimSpace(p) != "" {
				paras = append(paras, para{p, i})
			}
		}
		if len(words) < 200000 {
			words = append(words, strings.Fields(d.Text)...)
		}
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	bw := bufio.NewWriterSize(w, 1<<20)
	var tw *csv.Writer
	if truth != nil {
		tw = csv.NewWriter(truth)
		if err := tw.Write(TruthColumns); err != nil {
			return Summary{}, err
		}
	}
	type kept struct {
		id  string
		rec record
	}
	ring := make([]kept, 0, opt.Window)
	next := 0
	var sum Summary
	var sb strings.Builder
	for i := range opt.N {
		rec := record{ID: fmt.Sprintf("g%07d", i)}
		r := rng.Float64()
		var planted *Planted
		switch {
		case len(ring) > 0 && r < opt.ExactRate:
			src := ring[rng.IntN(len(ring))]
			rec.Text, rec.Source, rec.Lang = src.rec.Text, src.rec.Source, src.rec.Lang
			planted = &Planted{Dup: rec.ID, Original: src.id, Kind: "exact"}
			sum.Exact++
		case len(ring) > 0 && r < opt.ExactRate+opt.NearRate:
			src := ring[rng.IntN(len(ring))]
			rate := opt.MinEdit + rng.Float64()*(opt.MaxEdit-opt.MinEdit)
			rec.Text, rec.Source, rec.Lang = edit(src.rec.Text, rate, rng, words), src.rec.Source, src.rec.Lang
			planted = &Planted{Dup: rec.ID, Original: src.id, Kind: "near", EditRate: rate}
			sum.Near++
		default:
			base := sample[rng.IntN(len(sample))]
			target := min(len(base.Text), opt.MaxBytes)
			sb.Reset()
			for sb.Len() < target {
				if sb.Len() > 0 {
					sb.WriteString("\n\n")
				}
				sb.WriteString(paras[rng.IntN(len(paras))].text)
			}
			rec.Text, rec.Source, rec.Lang = edit(sb.String(), 0.01, rng, words), base.Source, base.Lang
			k := kept{rec.ID, rec}
			if len(ring) < opt.Window {
				ring = append(ring, k)
			} else {
				ring[next] = k
				next = (next + 1) % opt.Window
			}
			sum.Fresh++
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return sum, err
		}
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return sum, err
		}
		sum.Docs++
		sum.Bytes += int64(len(b))
		if planted != nil && tw != nil {
			if err := tw.Write([]string{planted.Dup, planted.Original, planted.Kind, strconv.FormatFloat(planted.EditRate, 'f', 4, 64)}); err != nil {
				return sum, err
			}
		}
	}
	if tw != nil {
		tw.Flush()
		if err := tw.Error(); err != nil {
			return sum, err
		}
	}
	return sum, bw.Flush()
}

// edit replaces, deletes or inserts words (space-separated tokens) of text, each token
// edited with probability rate, at least one edit when rate > 0.
func edit(text string, rate float64, rng *rand.Rand, words []string) string {
	toks := strings.Split(text, " ")
	n := int(float64(len(toks))*rate + rng.Float64())
	if rate > 0 {
		n = max(n, 1)
	}
	for range n {
		if len(toks) == 0 {
			break
		}
		j := rng.IntN(len(toks))
		switch rng.IntN(3) {
		case 0:
			toks[j] = words[rng.IntN(len(words))]
		case 1:
			if len(toks) == 1 { // never an empty document
				toks[0] = words[rng.IntN(len(words))]
				continue
			}
			toks = append(toks[:j], toks[j+1:]...)
		default:
			toks = append(toks[:j], append([]string{words[rng.IntN(len(words))]}, toks[j:]...)...)
		}
	}
	return strings.Join(toks, " ")
}

// ReadTruth reads a truth file written by Write.
func ReadTruth(r io.Reader) ([]Planted, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("truth file: %w", err)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != strings.Join(TruthColumns, ",") {
		return nil, fmt.Errorf("truth file: want the header %v", TruthColumns)
	}
	out := make([]Planted, 0, len(rows)-1)
	for i, row := range rows[1:] {
		rate, err := strconv.ParseFloat(row[3], 64)
		if err != nil {
			return nil, fmt.Errorf("truth file line %d: field edit_rate: %w", i+2, err)
		}
		out = append(out, Planted{Dup: row[0], Original: row[1], Kind: row[2], EditRate: rate})
	}
	return out, nil
}
