package demo

import (
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
)

// blindPerCategory is how many drawn pairs of each rule category go to the blind check.
const blindPerCategory = 12

// blindPair is one pair shown to the blind judges: ids and texts, nothing the rules said.
type blindPair struct {
	drawnPair
	n int
}

// blindSample picks blindPerCategory drawn pairs of each category, round-robin over the
// category's strata from the lowest Jaccard bin up (a seeded random pair of the stratum
// each time), then shuffles them and numbers them, so the order tells nothing either.
func blindSample(drawn []drawnPair) []blindPair {
	rng := rand.New(rand.NewPCG(seed, 3))
	var out []blindPair
	for _, cat := range categoryOrder {
		var keys []string
		byStratum := map[string][]drawnPair{}
		for _, p := range drawn {
			if p.category != cat {
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
		rec := struct {
			N     int    `json:"n"`
			A     string `json:"a"`
			B     string `json:"b"`
			TextA string `json:"text_a"`
			TextB string `json:"text_b"`
		}{p.n, docs[p.a].ID, docs[p.b].ID, docs[p.a].Text, docs[p.b].Text}
		if err := enc.Encode(rec); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
