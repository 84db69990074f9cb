package demo

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
)

// blindPerCategory is how many drawn pairs of each category go to a blind round.
const blindPerCategory = 12

// BlindRound is the blind round the build draws: testdata/blind/round<BlindRound>/pairs.jsonl,
// from pairs that no earlier round showed. The earlier rounds' files stay as they were
// judged, so their judges can still be scored.
const BlindRound = 6

// BlindPairsPath is where round r's pairs are, relative to the package directory.
func BlindPairsPath(r int) string {
	return filepath.Join("testdata", "blind", fmt.Sprintf("round%d", r), "pairs.jsonl")
}

// JudgeSheetPath is round r's answer sheet, relative to the package directory: the
// header n,a,b,category,duplicate,note and one row per pair with n, a and b filled in,
// for a judge to copy, fill and hand in (ReadJudgements reads it; -check scores it).
func JudgeSheetPath(r int) string {
	return filepath.Join("testdata", "blind", fmt.Sprintf("round%d", r), "judge-sheet.csv")
}

// BlindPair is one pair of a blind round as the judges see it: a number, two ids, two
// texts, nothing the rules said.
type BlindPair struct {
	N     int    `json:"n"`
	A     string `json:"a"`
	B     string `json:"b"`
	TextA string `json:"text_a"`
	TextB string `json:"text_b"`
}

// ReadBlindPairs reads a round's pairs.jsonl. A line that is not such a pair, or that
// carries any other field (a hint the judges must not see), is an error naming the file
// and line; nothing is returned then.
func ReadBlindPairs(r io.Reader, name string) ([]BlindPair, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	var out []BlindPair
	for line := 1; sc.Scan(); line++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var p BlindPair
		if err := dec.Decode(&p); err != nil {
			return nil, &corpus.RecordError{Place: corpus.Place{File: name, Line: line}, Msg: fmt.Sprintf("not a blind pair (n, a, b, text_a, text_b only): %v", err)}
		}
		if p.A == "" || p.B == "" {
			return nil, &corpus.RecordError{Place: corpus.Place{File: name, Line: line}, Field: "a", Msg: "both a and b are needed"}
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// readEarlierRounds collects the pairs of rounds 1 .. BlindRound-1 under dir, which a new
// round must not show again.
func readEarlierRounds(dir string) (map[[2]string]bool, error) {
	seen := map[[2]string]bool{}
	for r := 1; r < BlindRound; r++ {
		path := filepath.Join(dir, BlindPairsPath(r))
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("blind round %d (its pairs are left out of round %d): %w", r, BlindRound, err)
		}
		ps, err := ReadBlindPairs(f, path)
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			seen[pairKey(p.A, p.B)] = true
		}
	}
	return seen, nil
}

// blindPair is one pair of the round being drawn.
type blindPair struct {
	drawnPair
	n int
}

// blindSample picks blindPerCategory drawn pairs of each category that no earlier round
// showed, round-robin over the category's strata from the lowest Jaccard bin up (a seeded
// random pair of the stratum each time), then shuffles them and numbers them, so the order
// tells nothing either. Each round has its own random stream.
func blindSample(docs []doc, drawn []drawnPair, earlier map[[2]string]bool) []blindPair {
	rng := rand.New(rand.NewPCG(seed, 2+BlindRound))
	var out []blindPair
	for _, cat := range categoryOrder {
		var keys []string
		byStratum := map[string][]drawnPair{}
		for _, p := range drawn {
			if p.category != cat || earlier[pairKey(docs[p.a].ID, docs[p.b].ID)] {
				continue
			}
			if byStratum[p.stratum] == nil {
				keys = append(keys, p.stratum)
			}
			byStratum[p.stratum] = append(byStratum[p.stratum], p)
		}
		picked := 0
		for progress := true; progress && picked < blindPerCategory; {
			progress = false
			for _, k := range keys {
				ps := byStratum[k]
				if picked == blindPerCategory || len(ps) == 0 {
					continue
				}
				i := rng.IntN(len(ps))
				out = append(out, blindPair{drawnPair: ps[i]})
				byStratum[k] = slices.Delete(ps, i, i+1)
				picked++
				progress = true
			}
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	for i := range out {
		out[i].n = i + 1
	}
	slices.SortFunc(out, func(x, y blindPair) int { return cmp.Compare(x.n, y.n) })
	return out
}

// writeJudgeSheet writes the round's empty answer sheet (JudgeSheetPath).
func writeJudgeSheet(path string, docs []doc, pairs []blindPair) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"n", "a", "b", "category", "duplicate", "note"})
	for _, p := range pairs {
		w.Write([]string{strconv.Itoa(p.n), docs[p.a].ID, docs[p.b].ID, "", "", ""})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeBlind writes the blind pairs as JSON lines with whole texts.
func writeBlind(path string, docs []doc, pairs []blindPair) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, p := range pairs {
		rec := BlindPair{N: p.n, A: docs[p.a].ID, B: docs[p.b].ID, TextA: docs[p.a].Text, TextB: docs[p.b].Text}
		if err := enc.Encode(rec); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
