package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// The new-sweep form: every axis of a sweep.Grid as a line of text (a list, "1-5"
// ranges for the sizes, from/to/step for thresholds, "auto" for the shapes worth
// trying at each k), prefilled with sweep.DefaultGrid. Parsing names the field at fault.

// gridForm holds the form's fields as typed.
type gridForm struct {
	Name, Notes                       string
	Token                             string // the one-time token against double submits
	Schemes, Norms, Hashes, Seeds     string
	WordSizes, CharSizes, Ks          string
	Shapes                            string // "auto" or "20x5, 25x4"
	From, To, Step                    string
	Verifications, Policies           []string
	KnownVerifications, KnownPolicies []string
	VerificationLabels, PolicyLabels  map[string]string
}

// gridFormFields lists the form's single-valued fields by name, for reading and
// refilling.
func (f *gridForm) fields() map[string]*string {
	return map[string]*string{
		"name": &f.Name, "notes": &f.Notes, "token": &f.Token, "scheme": &f.Schemes, "norm": &f.Norms, "hash": &f.Hashes, "seed": &f.Seeds,
		"word": &f.WordSizes, "char": &f.CharSizes, "k": &f.Ks, "shapes": &f.Shapes, "from": &f.From, "to": &f.To, "step": &f.Step,
	}
}

// defaultGridForm is the form prefilled with sweep.DefaultGrid.
func defaultGridForm() gridForm {
	return gridFormOf(sweep.DefaultGrid())
}

// gridFormOf writes g as the form would have it (the re-run and "start from this
// sweep" prefill).
func gridFormOf(g sweep.Grid) gridForm {
	var (
		schemes, norms, hashes, seeds []string
		words, chars, ks              []int
	)
	for _, s := range g.Specs {
		schemes = appendNew(schemes, string(s.Scheme))
		norms = appendNew(norms, s.Norm.String())
		hashes = appendNew(hashes, string(s.Hash))
		seeds = appendNew(seeds, strconv.FormatUint(s.Seed, 10))
		if s.Level == lsh.Word {
			words = appendNew(words, s.Size)
		} else {
			chars = appendNew(chars, s.Size)
		}
		ks = appendNew(ks, s.Hashes)
	}
	f := gridForm{Schemes: strings.Join(schemes, ", "), Norms: strings.Join(norms, ", "), Hashes: strings.Join(hashes, ", "),
		Seeds: strings.Join(seeds, ", "), WordSizes: intRanges(words), CharSizes: intRanges(chars), Ks: intRanges(ks), Shapes: "auto"}
	if len(g.Shapes) > 0 {
		parts := make([]string, len(g.Shapes))
		for i, sh := range g.Shapes {
			parts[i] = sh.String()
		}
		f.Shapes = strings.Join(parts, ", ")
	}
	if n := len(g.Thresholds); n > 0 {
		f.From, f.To = fmtFloat(g.Thresholds[0]), fmtFloat(g.Thresholds[n-1])
		f.Step = "0.05"
		if n > 1 {
			f.Step = fmtFloat(roundTo(g.Thresholds[1]-g.Thresholds[0], 6))
		}
	}
	for _, v := range g.Verifications {
		f.Verifications = append(f.Verifications, string(v))
	}
	for _, p := range g.Policies {
		f.Policies = append(f.Policies, string(p))
	}
	f.known()
	return f
}

// known fills the choices the check boxes offer.
func (f *gridForm) known() {
	f.KnownVerifications = []string{string(sweep.MinHashEstimate), string(sweep.ExactJaccard)}
	f.VerificationLabels = map[string]string{string(sweep.MinHashEstimate): "MinHash estimate", string(sweep.ExactJaccard): "exact Jaccard (Milvus's mh_search_with_jaccard)"}
	f.KnownPolicies, f.PolicyLabels = nil, map[string]string{}
	for _, p := range cluster.Policies() {
		f.KnownPolicies = append(f.KnownPolicies, string(p))
		f.PolicyLabels[string(p)] = policyWords(p)
	}
}

// gridFormFrom reads the form from v; missing fields stay empty (and fail to parse).
func gridFormFrom(v url.Values) gridForm {
	var f gridForm
	for name, p := range f.fields() {
		*p = strings.TrimSpace(v.Get(name))
	}
	f.Verifications, f.Policies = v["verification"], v["policy"]
	f.known()
	return f
}

// values writes the form back as url.Values (a refused form is refilled from them).
func (f gridForm) values() url.Values {
	v := url.Values{}
	for name, p := range f.fields() {
		v.Set(name, *p)
	}
	v["verification"], v["policy"] = f.Verifications, f.Policies
	return v
}

// parse turns the form into a grid, every field checked by name.
func (f gridForm) parse() (sweep.Grid, error) {
	g, err := f.grid()
	if err != nil {
		return g, err
	}
	if err := g.Validate(); err != nil {
		return g, err
	}
	return g, nil
}

// autoShapes reports whether the form leaves the shapes to ShapesFor.
func (f gridForm) autoShapes() bool {
	s := strings.ToLower(strings.TrimSpace(f.Shapes))
	return s == "" || s == "auto"
}

// grid reads the form's axes without sweep.Grid.Validate, whose count of the
// configurations runs the shape optimizer when the shapes are automatic.
func (f gridForm) grid() (sweep.Grid, error) {
	var g sweep.Grid
	schemes := splitList(f.Schemes)
	norms := splitList(f.Norms)
	hashes := splitList(f.Hashes)
	seeds := splitList(f.Seeds)
	for name, l := range map[string][]string{"scheme": schemes, "norm": norms, "hash": hashes, "seed": seeds} {
		if len(l) == 0 {
			return g, &formError{field: name, msg: "give at least one value"}
		}
	}
	words, err := parseIntRanges("word", f.WordSizes, 1, 64)
	if err != nil {
		return g, err
	}
	chars, err := parseIntRanges("char", f.CharSizes, 1, 64)
	if err != nil {
		return g, err
	}
	if len(words)+len(chars) == 0 {
		return g, &formError{field: "word", msg: "give word or char shingle sizes (or both), e.g. 1-5"}
	}
	ks, err := parseIntRanges("k", f.Ks, 1, 4096)
	if err != nil {
		return g, err
	}
	if len(ks) == 0 {
		return g, &formError{field: "k", msg: "give at least one signature length, e.g. 128, 256"}
	}
	for _, scheme := range schemes {
		for _, norm := range norms {
			for _, hash := range hashes {
				for _, seed := range seeds {
					text := fmt.Sprintf("scheme=%s norm=%s hash=%s seed=%s", scheme, norm, hash, seed)
					base, err := lsh.ParseSpec(text)
					if err != nil {
						return g, specFieldError(err)
					}
					g.Specs = append(g.Specs, sweep.Representations(base, words, chars, ks)...)
				}
			}
		}
	}
	if !f.autoShapes() {
		for i, part := range splitList(f.Shapes) {
			sh, err := sweep.ParseShape(part)
			if err != nil {
				return g, &formError{field: "shapes", msg: fmt.Sprintf("value %d: %v", i+1, err)}
			}
			g.Shapes = append(g.Shapes, sh)
		}
	}
	from, err := parseUnit("from", f.From)
	if err != nil {
		return g, err
	}
	to, err := parseUnit("to", f.To)
	if err != nil {
		return g, err
	}
	step, err := parseUnit("step", f.Step)
	if err != nil {
		return g, err
	}
	if to < from {
		return g, &formError{field: "to", msg: fmt.Sprintf("%g is below from (%g)", to, from)}
	}
	if (to-from)/step > sweep.MaxThresholds {
		return g, &formError{field: "step", msg: fmt.Sprintf("from %g to %g in steps of %g makes more than %d thresholds; the slider covers the values between", from, to, step, sweep.MaxThresholds)}
	}
	g.Thresholds = sweep.Steps(from, to, step)
	for _, v := range f.Verifications {
		if !slices.Contains(f.KnownVerifications, v) {
			return g, &formError{field: "verification", msg: fmt.Sprintf("unknown verification %q", v)}
		}
		g.Verifications = append(g.Verifications, sweep.Verification(v))
	}
	if len(g.Verifications) == 0 {
		return g, &formError{field: "verification", msg: "tick at least one"}
	}
	for _, p := range f.Policies {
		g.Policies = append(g.Policies, cluster.Policy(p))
	}
	if len(g.Policies) == 0 {
		return g, &formError{field: "policy", msg: "tick at least one"}
	}
	return g, nil
}

// specFieldError names the form field of a representation the spec parser refused
// (scheme, norm, hash, seed), with what the parser says is allowed.
func specFieldError(err error) error {
	var se *lsh.SpecError
	if !errors.As(err, &se) {
		return err
	}
	field := se.Field
	if field == "hash_function" {
		field = "hash"
	}
	switch field {
	case "scheme", "norm", "hash", "seed":
		return &formError{field: field, msg: se.Msg}
	}
	return &formError{msg: err.Error()}
}

// splitList splits "a, b c" at commas and white space.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == ';' })
}

// parseIntRanges reads "1-5, 7" as 1, 2, 3, 4, 5, 7 (each between lo and hi, in the
// order written, repeats dropped).
func parseIntRanges(field, s string, lo, hi int) ([]int, error) {
	var out []int
	for _, part := range splitList(s) {
		a, b, isRange := strings.Cut(part, "-")
		x, ok1 := parseWhole(a)
		y, ok2 := x, true
		if isRange {
			y, ok2 = parseWhole(b)
		}
		if !ok1 || !ok2 || x < lo || y > hi || y < x {
			return nil, &formError{field: field, msg: fmt.Sprintf("%q: want whole numbers from %d to %d, or a range such as 1-5", part, lo, hi)}
		}
		if y-x > 256 {
			return nil, &formError{field: field, msg: fmt.Sprintf("%q: a range of more than 256 values", part)}
		}
		for n := x; n <= y; n++ {
			out = appendNew(out, n)
		}
	}
	return out, nil
}

// intRanges writes sorted runs of consecutive numbers as ranges: 1-5, 7.
func intRanges(ns []int) string {
	ns = slices.Clone(ns)
	slices.Sort(ns)
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		case j > i:
			parts = append(parts, strconv.Itoa(ns[i]), strconv.Itoa(ns[j]))
		default:
			parts = append(parts, strconv.Itoa(ns[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// parseUnit reads a number in (0, 1].
func parseUnit(field, s string) (float64, error) {
	x, ok := parseDecimal(s)
	if !ok || !(x > 0 && x <= 1) {
		return 0, &formError{field: field, msg: fmt.Sprintf("%q: want a number in (0, 1], e.g. 0.05", s)}
	}
	return x, nil
}

func appendNew[T comparable](list []T, v T) []T {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func roundTo(x float64, digits int) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', digits, 64), 64)
	return v
}

// configCount is the number of configurations g makes.
func configCount(g sweep.Grid) (int, error) {
	cs, err := g.Configs()
	return len(cs), err
}

// formConfigs counts the configurations f makes, for the form to say before it is
// sent. Automatic shapes are counted only when an earlier sweep (known: grid JSON →
// configurations) ran the same grid: counting them runs the shape optimizer for every
// threshold and k, seconds the first time in a process, which the page should not wait
// for (starting the sweep does it).
func formConfigs(f gridForm, known map[string]int) (int, bool) {
	g, err := f.grid()
	if err != nil {
		return 0, false
	}
	if f.autoShapes() {
		key, err := json.Marshal(g)
		n, ok := known[string(key)]
		return n, err == nil && ok
	}
	n, err := configCount(g)
	return n, err == nil
}

// gridKey is the key of formConfigs' known grids.
func gridKey(g sweep.Grid) string {
	b, err := json.Marshal(g)
	if err != nil {
		return ""
	}
	return string(b)
}
