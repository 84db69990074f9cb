package demo

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
)

// blindPairs reads the shipped blind-check pairs.
func blindPairs(t *testing.T) []Judgement {
	t.Helper()
	f, err := os.Open("testdata/blind/pairs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Judgement
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		for k := range rec {
			if k != "n" && k != "a" && k != "b" && k != "text_a" && k != "text_b" {
				t.Fatalf("pairs.jsonl line %d has field %q: the judges must see texts only", len(out)+1, k)
			}
		}
		out = append(out, Judgement{N: int(rec["n"].(float64)), A: rec["a"].(string), B: rec["b"].(string)})
	}
	return out
}

// judgeCSV writes judgements as a judge's file.
func judgeCSV(js []Judgement) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"n", "a", "b", "category", "duplicate", "note"})
	for _, j := range js {
		dup := "no"
		if j.Duplicate {
			dup = "yes"
		}
		w.Write([]string{fmt.Sprint(j.N), j.A, j.B, j.Category, dup, j.Note})
	}
	w.Flush()
	return b.Bytes()
}

// The blind sample has 12 pairs of each rule category, numbered 1..84, and nothing else.
func TestBlindSample(t *testing.T) {
	rules, err := RuleJudgements()
	if err != nil {
		t.Fatal(err)
	}
	pairs := blindPairs(t)
	per := map[string]int{}
	for i, p := range pairs {
		if p.N != i+1 {
			t.Errorf("pair %d numbered %d", i+1, p.N)
		}
		r, ok := rules[pairKey(p.A, p.B)]
		if !ok {
			t.Fatalf("blind pair %d (%s, %s) is not a labeled pair", p.N, p.A, p.B)
		}
		per[r.Category]++
	}
	for _, c := range categoryOrder {
		if per[c] != blindPerCategory {
			t.Errorf("blind sample has %d %s pairs; want %d", per[c], c, blindPerCategory)
		}
	}
}

func TestCheck(t *testing.T) {
	rules, err := RuleJudgements()
	if err != nil {
		t.Fatal(err)
	}
	var same, off []Judgement
	for _, p := range blindPairs(t) {
		r := rules[pairKey(p.A, p.B)]
		j := Judgement{N: p.N, A: p.A, B: p.B, Category: r.Category, Duplicate: r.Duplicate}
		same = append(same, j)
		// Every seventh pair: a judge who says "different" and not a duplicate.
		if p.N%7 == 0 {
			j.Category, j.Duplicate = "different", false
		}
		off = append(off, j)
	}
	read := func(name string, js []Judgement) Judge {
		t.Helper()
		got, err := ReadJudgements(bytes.NewReader(judgeCSV(js)), name+".csv")
		if err != nil {
			t.Fatal(err)
		}
		return Judge{Name: name, Judgements: got}
	}
	rep := Check(rules, []Judge{read("same", same), read("off", off)})
	if g := rep.VsRules[0]; g.Units != 84 || g.Alpha != 1 || g.Kappa != 1 || g.Category != 1 || g.Duplicate != 1 {
		t.Errorf("a judge who agrees everywhere: %+v; want 84 pairs, alpha, kappa and agreement 1", g)
	}
	changed, flipped := 0, 0
	for i := range off {
		if off[i].Category != same[i].Category {
			changed++
		}
		if off[i].Duplicate != same[i].Duplicate {
			flipped++
		}
	}
	g := rep.VsRules[1]
	if want := float64(84-changed) / 84; math.Abs(g.Category-want) > 1e-12 {
		t.Errorf("category agreement = %v; want %v", g.Category, want)
	}
	if want := float64(84-flipped) / 84; math.Abs(g.Duplicate-want) > 1e-12 {
		t.Errorf("duplicate agreement = %v; want %v", g.Duplicate, want)
	}
	if g.Alpha <= 0.5 || g.Alpha >= 1 || g.Kappa <= 0.5 || g.Kappa >= 1 {
		t.Errorf("%d of 84 changed: alpha %v, kappa %v; want both in (0.5, 1)", changed, g.Alpha, g.Kappa)
	}
	diag := 0
	for i := range g.Confusion {
		diag += g.Confusion[i][i]
	}
	if diag != 84-changed {
		t.Errorf("confusion diagonal = %d; want %d", diag, 84-changed)
	}
	if len(rep.Pairwise) != 1 || rep.Pairwise[0].Category != g.Category {
		t.Errorf("judges against each other: %+v; want one pair agreeing as off does with the rules", rep.Pairwise)
	}
	var out strings.Builder
	rep.Write(&out)
	for _, want := range []string{"| rules vs same | 84 | 1.000 |", "| same vs off | 84 |", "All judges: alpha"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestReadJudgementsErrors(t *testing.T) {
	tests := []struct {
		name, in, field string
		line            int
	}{
		{"no category column", "n,a,b,duplicate\n1,x,y,yes\n", "category", 1},
		{"unknown category", "n,a,b,category,duplicate,note\n1,x,y,dupe,yes,\n", "category", 2},
		{"duplicate left open", "n,a,b,category,duplicate,note\n1,x,y,exact,,\n2,x,z,partial,,\n", "duplicate", 3},
		{"bad number", "n,a,b,category,duplicate,note\none,x,y,exact,yes,\n", "n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := ReadJudgements(strings.NewReader(tt.in), "ada.csv")
			var re *corpus.RecordError
			if !errors.As(err, &re) || re.Field != tt.field || re.Line != tt.line || re.File != "ada.csv" || js != nil {
				t.Errorf("ReadJudgements = %v, %v; want a RecordError at ada.csv:%d field %s and nothing read", js, err, tt.line, tt.field)
			}
		})
	}
}
