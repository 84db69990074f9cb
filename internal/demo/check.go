package demo

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/percent"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Judgement is one answer about a pair: a blind judge's or the rules'.
type Judgement struct {
	N         int // the pair's number in its round's pairs.jsonl
	A, B      string
	Category  string // a default category key
	Duplicate bool
	Note      string
}

func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// ReadJudgements reads a judge's CSV with the columns n, a, b, category, duplicate and
// note (duplicate may be empty where the category settles it). A bad row is an error
// naming the file, line and field; nothing is returned then.
func ReadJudgements(r io.Reader, name string) ([]Judgement, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: header: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, need := range []string{"n", "a", "b", "category", "duplicate"} {
		if _, ok := col[need]; !ok {
			return nil, &corpus.RecordError{Place: corpus.Place{File: name, Line: 1}, Field: need, Msg: "no such column (want n, a, b, category, duplicate, note)"}
		}
	}
	var out []Judgement
	var errs []error
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		get := func(f string) string {
			if i, ok := col[f]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		place := corpus.Place{File: name, Line: line}
		bad := func(field, format string, args ...any) {
			errs = append(errs, &corpus.RecordError{Place: place, Field: field, Msg: fmt.Sprintf(format, args...)})
		}
		j := Judgement{A: get("a"), B: get("b"), Note: get("note")}
		if j.N, err = strconv.Atoi(get("n")); err != nil {
			bad("n", "%q is not a number", get("n"))
		}
		if j.A == "" || j.B == "" {
			bad("a", "both a and b are needed")
		}
		cat, ok := labels.Find(labels.DefaultCategories, get("category"))
		if !ok {
			bad("category", "%q is not one of %s", get("category"), labels.Keys(labels.DefaultCategories))
		} else {
			j.Category = cat.Key
			if j.Duplicate, err = labels.ResolveDuplicate(cat, get("duplicate")); err != nil {
				bad("duplicate", "%v", err)
			}
		}
		out = append(out, j)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// RuleJudgements are what the current rules say about the given pairs, decided on the
// texts of the shipped sample (the rules need each document's section and rendering, which
// the judges' files do not carry). Rounds drawn under earlier rules are scored against the
// rules as they are now.
func RuleJudgements(pairs []BlindPair) (map[[2]string]Judgement, error) {
	sel, err := readSample()
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, d := range sel {
		index[d.ID] = i
	}
	analyzed := map[int]*doc{}
	docOf := func(id string) (*doc, error) {
		i, ok := index[id]
		if !ok {
			return nil, fmt.Errorf("pair document %q is not in the demo sample", id)
		}
		if analyzed[i] == nil {
			analyzed[i] = &doc{CorpusDoc: &sel[i], text: analyze(sel[i].Text)}
		}
		return analyzed[i], nil
	}
	out := map[[2]string]Judgement{}
	for _, p := range pairs {
		x, err := docOf(p.A)
		if err != nil {
			return nil, fmt.Errorf("blind pair %d: %w", p.N, err)
		}
		y, err := docOf(p.B)
		if err != nil {
			return nil, fmt.Errorf("blind pair %d: %w", p.N, err)
		}
		f := measure(x, y)
		v := classify(x, y, &f)
		out[pairKey(p.A, p.B)] = Judgement{N: p.N, A: p.A, B: p.B, Category: v.category, Duplicate: v.duplicate,
			Note: fmt.Sprintf("%s; word 5-shingle J=%.3f, containment %.3f", v.rule, f.j, f.c)}
	}
	return out, nil
}

// Judge is one named set of judgements (a judge's file).
type Judge struct {
	Name       string
	Judgements []Judgement
}

// Agreement compares two raters on the pairs both judged.
type Agreement struct {
	A, B      string
	Units     int     // pairs both judged
	Alpha     float64 // Krippendorff's alpha, nominal, on category
	Kappa     float64 // Cohen's kappa on category
	Category  float64 // share of pairs with the same category
	Duplicate float64 // share of pairs with the same duplicate decision
	DupKappa  float64 // Cohen's kappa on the duplicate decision
	// Confusion[i][k] counts pairs A put in Categories[i] and B in Categories[k].
	Categories []string
	Confusion  [][]int
}

// CheckReport is the blind check's result: every judge against the rules, every two
// judges against each other, and all judges together.
type CheckReport struct {
	Pairs      string   // the round's pairs file, for the heading
	Unknown    []string // judged pairs that are not in the round's pairs file
	VsRules    []Agreement
	Pairwise   []Agreement
	AllJudges  labels.Agreement // all judges, rules left out
	WithRules  labels.Agreement // all judges and the rules as one more rater
	JudgeNames []string
}

// Check measures how far the judges agree with the rules and with each other.
func Check(rules map[[2]string]Judgement, judges []Judge) CheckReport {
	var rep CheckReport
	byJudge := make([]map[[2]string]Judgement, len(judges))
	for i, j := range judges {
		rep.JudgeNames = append(rep.JudgeNames, j.Name)
		byJudge[i] = map[[2]string]Judgement{}
		for _, x := range j.Judgements {
			k := pairKey(x.A, x.B)
			if _, ok := rules[k]; !ok {
				rep.Unknown = append(rep.Unknown, fmt.Sprintf("%s: pair %d (%s, %s)", j.Name, x.N, x.A, x.B))
				continue
			}
			byJudge[i][k] = x
		}
		rep.VsRules = append(rep.VsRules, agree("rules", j.Name, rules, byJudge[i]))
	}
	for i := range judges {
		for k := i + 1; k < len(judges); k++ {
			rep.Pairwise = append(rep.Pairwise, agree(judges[i].Name, judges[k].Name, byJudge[i], byJudge[k]))
		}
	}
	units := func(withRules bool) []labels.Unit {
		keys := map[[2]string]bool{}
		for _, m := range byJudge {
			for k := range m {
				keys[k] = true
			}
		}
		sorted := make([][2]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		slices.SortFunc(sorted, func(x, y [2]string) int { return strings.Compare(x[0]+"\x00"+x[1], y[0]+"\x00"+y[1]) })
		var us []labels.Unit
		for _, k := range sorted {
			u := labels.Unit{}
			for i, m := range byJudge {
				if x, ok := m[k]; ok {
					u[judges[i].Name] = x.Category
				}
			}
			if withRules {
				u["rules"] = rules[k].Category
			}
			us = append(us, u)
		}
		return us
	}
	rep.AllJudges = labels.Measure(units(false))
	rep.WithRules = labels.Measure(units(true))
	return rep
}

func agree(nameA, nameB string, a, b map[[2]string]Judgement) Agreement {
	g := Agreement{A: nameA, B: nameB, Categories: categoryOrder}
	index := map[string]int{}
	for i, c := range categoryOrder {
		index[c] = i
	}
	g.Confusion = make([][]int, len(categoryOrder))
	for i := range g.Confusion {
		g.Confusion[i] = make([]int, len(categoryOrder))
	}
	var cats, dups [][2]string
	var units []labels.Unit
	keys := make([][2]string, 0, len(b))
	for k := range b {
		if _, ok := a[k]; ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y [2]string) int { return strings.Compare(x[0]+"\x00"+x[1], y[0]+"\x00"+y[1]) })
	for _, k := range keys {
		x, y := a[k], b[k]
		cats = append(cats, [2]string{x.Category, y.Category})
		dups = append(dups, [2]string{strconv.FormatBool(x.Duplicate), strconv.FormatBool(y.Duplicate)})
		units = append(units, labels.Unit{nameA: x.Category, nameB: y.Category})
		g.Confusion[index[x.Category]][index[y.Category]]++
	}
	g.Units = len(keys)
	g.Alpha = labels.Measure(units).Alpha
	g.Category, g.Kappa = labels.CohenKappa(cats)
	g.Duplicate, g.DupKappa = labels.CohenKappa(dups)
	return g
}

// Write prints the report as Markdown, ready for internal/demo/README.md.
func (r CheckReport) Write(w io.Writer) {
	pct := func(x float64) string { return percent.Format(x, 'f', 1) }
	num := func(x float64) string {
		if math.IsNaN(x) {
			return "n/a"
		}
		return fmt.Sprintf("%.3f", x)
	}
	fmt.Fprintf(w, "Blind check of %s against the current rules: %s: %s. Targets: alpha >= 0.9 on category, >= 95%% agreement on duplicate.\n\n",
		r.Pairs, review.Quantity(len(r.JudgeNames), "judge", "judges"), strings.Join(r.JudgeNames, ", "))
	for _, u := range r.Unknown {
		fmt.Fprintf(w, "- not in the pairs file, left out: %s\n", u)
	}
	table := func(title string, gs []Agreement) {
		if len(gs) == 0 {
			return
		}
		fmt.Fprintf(w, "## %s\n\n| raters | pairs | alpha (category) | kappa (category) | category agreement | duplicate agreement | kappa (duplicate) |\n| --- | --- | --- | --- | --- | --- | --- |\n", title)
		for _, g := range gs {
			fmt.Fprintf(w, "| %s vs %s | %d | %s | %s | %s | %s | %s |\n", g.A, g.B, g.Units, num(g.Alpha), num(g.Kappa), pct(g.Category), pct(g.Duplicate), num(g.DupKappa))
		}
		fmt.Fprintln(w)
		for _, g := range gs {
			fmt.Fprintf(w, "Confusion, rows %s, columns %s:\n\n| | %s |\n|---|%s\n", g.A, g.B, strings.Join(g.Categories, " | "), strings.Repeat("---|", len(g.Categories)))
			for i, row := range g.Confusion {
				cells := make([]string, len(row))
				for k, n := range row {
					cells[k] = strconv.Itoa(n)
				}
				fmt.Fprintf(w, "| %s | %s |\n", g.Categories[i], strings.Join(cells, " | "))
			}
			fmt.Fprintln(w)
		}
	}
	table("Each judge against the rules", r.VsRules)
	table("Judges against each other", r.Pairwise)
	if len(r.JudgeNames) > 1 {
		fmt.Fprintf(w, "All judges: alpha %s on %d pairs (%d values), %s pairwise agreement; with the rules as one more rater: alpha %s.\n",
			num(r.AllJudges.Alpha), r.AllJudges.Units, r.AllJudges.Values, pct(r.AllJudges.PercentAgreement), num(r.WithRules.Alpha))
	}
}
