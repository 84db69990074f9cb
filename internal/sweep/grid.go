package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Verification says which similarity of a candidate pair is compared with the threshold.
// It is the manifest's type (review.Verification): a sweep's configuration and the
// manifest made from it say it with one type and one vocabulary.
type Verification = review.Verification

// Verifications.
const (
	// MinHashEstimate accepts a candidate when the share of equal signature values is at
	// least the threshold: free, with standard error sqrt(J(1-J)/k).
	MinHashEstimate = review.Estimate
	// ExactJaccard accepts a candidate when the exact Jaccard similarity of the two
	// shingle sets is at least the threshold, as Milvus's mh_search_with_jaccard
	// refinement does: no estimation error, at the cost of reading both documents.
	ExactJaccard = review.Exact
)

// Grid lists the values of every axis of a sweep; a sweep scores every combination.
// Ranges are written as lists (Steps and Sizes build them).
type Grid struct {
	// Specs are the representations, each with its k (Spec.Hashes).
	Specs []lsh.Spec
	// Shapes are tried with every spec whose k they fit (b*r <= k). Empty means the
	// shapes worth trying for each k: ShapesFor(k, Thresholds).
	Shapes        []lsh.Shape
	Thresholds    []float64
	Verifications []Verification
	// Policies are cluster policies: registered ones (cluster.Policies) or one the run
	// is given (Input.Policies).
	Policies []cluster.Policy
}

// MaxThresholds bounds the thresholds of one grid (each costs a shape search when the
// shapes are chosen automatically; the threshold slider covers the values between).
const MaxThresholds = 100

// MaxConfigs bounds the configurations of one grid, so a typo in a range cannot start a
// week-long job.
const MaxConfigs = 200_000

// Steps returns from, from+step, ... up to to (inclusive, within rounding), rounded to
// 6 decimals so 0.3+0.05*3 is 0.45, not 0.45000000000000007.
func Steps(from, to, step float64) []float64 {
	if step <= 0 || to < from {
		return nil
	}
	var out []float64
	for i := 0; ; i++ {
		v := math.Round((from+float64(i)*step)*1e6) / 1e6
		if v > to+1e-9 {
			return out
		}
		out = append(out, v)
	}
}

// Sizes returns lo, lo+1, ..., hi.
func Sizes(lo, hi int) []int {
	var out []int
	for s := lo; s <= hi; s++ {
		out = append(out, s)
	}
	return out
}

// Representations returns base at every word size, then every char size, each at every
// k: the representation axis of a grid form.
func Representations(base lsh.Spec, wordSizes, charSizes, hashes []int) []lsh.Spec {
	var out []lsh.Spec
	for _, level := range []struct {
		level lsh.Level
		sizes []int
	}{{lsh.Word, wordSizes}, {lsh.Char, charSizes}} {
		for _, size := range level.sizes {
			for _, k := range hashes {
				s := base
				s.Level, s.Size, s.Hashes = level.level, size, k
				out = append(out, s)
			}
		}
	}
	return out
}

// DefaultGrid is the grid a sweep form starts from: word 1-5 and char 3-7 shingles of
// lsh.DefaultSpec at k = 128 and 256, the shapes worth trying for each k
// (ShapesFor), thresholds 0.30 to 0.95 in steps of 0.05, both verifications, every
// registered cluster policy (cluster.Policies).
func DefaultGrid() Grid {
	return Grid{
		Specs:         Representations(lsh.DefaultSpec(), Sizes(1, 5), Sizes(3, 7), []int{128, 256}),
		Thresholds:    Steps(0.30, 0.95, 0.05),
		Verifications: []Verification{MinHashEstimate, ExactJaccard},
		Policies:      cluster.Policies(),
	}
}

// storedPolicy reads a policy name as sweeps stored it: those stored before the policy
// registry say "connected-components" for cluster.Components. The name is the JSON
// edge's only: a Grid and a Config hold the registered policy.
func storedPolicy(name string) cluster.Policy {
	if name == "connected-components" {
		return cluster.Components
	}
	return cluster.Policy(name)
}

// WarmShapes computes, once per process and in the background, the shapes DefaultGrid
// tries (lsh.OptimalShape at each of its thresholds and k, which lsh remembers): about
// two CPU-seconds that the first sweep form posted would otherwise wait for. The server
// calls it at start; done reports when they are ready.
func WarmShapes() (done <-chan struct{}) {
	warmOnce.Do(func() {
		warmed = make(chan struct{})
		g := DefaultGrid()
		ks := map[int]bool{}
		for _, s := range g.Specs {
			ks[s.Hashes] = true
		}
		var wg sync.WaitGroup
		for k := range ks {
			for _, t := range g.Thresholds {
				wg.Go(func() { lsh.OptimalShape(t, k, lsh.EqualWeights) })
			}
		}
		go func() {
			wg.Wait()
			close(warmed)
		}()
	})
	return warmed
}

var (
	warmOnce sync.Once
	warmed   chan struct{}
)

// ShapesFor returns the shapes worth trying at k for a list of thresholds: the distinct
// datasketch optima (lsh.OptimalShape, equal weights) of the thresholds, by rows. The
// optima of neighbouring thresholds are neighbouring shapes (a row or two apart), so
// every threshold is also scored on the shapes just steeper and just flatter than its own
// optimum; a shape that is optimal for no threshold of the grid is not worth its
// candidates.
func ShapesFor(k int, thresholds []float64) ([]lsh.Shape, error) {
	var out []lsh.Shape
	for _, t := range thresholds {
		c, err := lsh.OptimalShape(t, k, lsh.EqualWeights)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, c.Shape) {
			out = append(out, c.Shape)
		}
	}
	slices.SortFunc(out, func(a, b lsh.Shape) int {
		if a.Rows != b.Rows {
			return a.Rows - b.Rows
		}
		return a.Bands - b.Bands
	})
	return out, nil
}

// Validate reports the first problem of g as a *GridError. policies are the policies
// beyond the registered ones (cluster.Policies) that the run will be given.
func (g Grid) Validate(policies ...cluster.Policy) error {
	if len(g.Specs) == 0 {
		return &GridError{Axis: "specs", Index: -1, Msg: "no representation"}
	}
	for i, s := range g.Specs {
		if err := s.Validate(); err != nil {
			return &GridError{Axis: "specs", Index: i, Msg: err.Error()}
		}
		if slices.Contains(g.Specs[:i], s) {
			return &GridError{Axis: "specs", Index: i, Msg: fmt.Sprintf("%q is listed twice", s.String())}
		}
	}
	maxK := 0
	for _, s := range g.Specs {
		maxK = max(maxK, s.Hashes)
	}
	for i, sh := range g.Shapes {
		if err := sh.Validate(maxK); err != nil {
			return &GridError{Axis: "shapes", Index: i, Msg: err.Error() + " (the largest k of the grid)"}
		}
		if slices.Contains(g.Shapes[:i], sh) {
			return &GridError{Axis: "shapes", Index: i, Msg: fmt.Sprintf("shape %v is listed twice", sh)}
		}
	}
	if len(g.Thresholds) == 0 {
		return &GridError{Axis: "thresholds", Index: -1, Msg: "no threshold"}
	}
	if len(g.Thresholds) > MaxThresholds {
		return &GridError{Axis: "thresholds", Index: -1, Msg: fmt.Sprintf("%d thresholds; at most %d", len(g.Thresholds), MaxThresholds)}
	}
	for i, t := range g.Thresholds {
		if !(t > 0 && t <= 1) {
			return &GridError{Axis: "thresholds", Index: i, Msg: fmt.Sprintf("threshold %v outside (0, 1]", t)}
		}
		if slices.Contains(g.Thresholds[:i], t) {
			return &GridError{Axis: "thresholds", Index: i, Msg: fmt.Sprintf("threshold %v is listed twice", t)}
		}
	}
	if len(g.Verifications) == 0 {
		return &GridError{Axis: "verifications", Index: -1, Msg: "no verification"}
	}
	for i, v := range g.Verifications {
		if v != MinHashEstimate && v != ExactJaccard {
			return &GridError{Axis: "verifications", Index: i, Msg: fmt.Sprintf("unknown verification %q (want %s or %s)", v, MinHashEstimate, ExactJaccard)}
		}
		if slices.Contains(g.Verifications[:i], v) {
			return &GridError{Axis: "verifications", Index: i, Msg: fmt.Sprintf("%q is listed twice", v)}
		}
	}
	if len(g.Policies) == 0 {
		return &GridError{Axis: "policies", Index: -1, Msg: "no cluster policy"}
	}
	for i, p := range g.Policies {
		if _, ok := cluster.PolicyOf(p); !ok && !slices.Contains(policies, p) {
			var known []string
			for _, k := range append(cluster.Policies(), policies...) {
				known = append(known, string(k))
			}
			return &GridError{Axis: "policies", Index: i, Msg: fmt.Sprintf("unknown policy %q (want one of %s)", p, strings.Join(known, ", "))}
		}
		if slices.Contains(g.Policies[:i], p) {
			return &GridError{Axis: "policies", Index: i, Msg: fmt.Sprintf("%q is listed twice", p)}
		}
	}
	n, err := g.count()
	if err != nil {
		return err
	}
	if n > MaxConfigs {
		return &GridError{Axis: "grid", Index: -1, Msg: fmt.Sprintf("%d configurations; at most %d", n, MaxConfigs)}
	}
	return nil
}

// shapesOf returns the shapes g tries with spec s.
func (g Grid) shapesOf(s lsh.Spec) ([]lsh.Shape, error) {
	if len(g.Shapes) == 0 {
		shapes, err := ShapesFor(s.Hashes, g.Thresholds)
		if err != nil {
			return nil, &GridError{Axis: "thresholds", Index: -1, Msg: err.Error()}
		}
		return shapes, nil
	}
	var out []lsh.Shape
	for _, sh := range g.Shapes {
		if sh.Bands*sh.Rows <= s.Hashes {
			out = append(out, sh)
		}
	}
	return out, nil
}

func (g Grid) count() (int, error) {
	n := 0
	for _, s := range g.Specs {
		shapes, err := g.shapesOf(s)
		if err != nil {
			return 0, err
		}
		n += len(shapes)
	}
	return n * len(g.Thresholds) * len(g.Verifications) * len(g.Policies), nil
}

// Configs lists every configuration of g in the order a sweep scores them: by spec
// group (specs sharing signatures, see CanPrefix), shape, spec, verification, policy,
// threshold.
func (g Grid) Configs() ([]Config, error) {
	if err := g.Validate(g.Policies...); err != nil {
		return nil, err
	}
	p, err := g.plan()
	if err != nil {
		return nil, err
	}
	var out []Config
	for _, grp := range p {
		for _, st := range grp.shapes {
			for _, s := range st.specs {
				for _, v := range g.Verifications {
					for _, pol := range g.Policies {
						for _, t := range sortedThresholds(g.Thresholds) {
							out = append(out, Config{Spec: s, Shape: st.shape, Threshold: t, Verification: v, Policy: pol})
						}
					}
				}
			}
		}
	}
	return out, nil
}

func sortedThresholds(ts []float64) []float64 {
	out := slices.Clone(ts)
	slices.Sort(out)
	return out
}

// A plan is the grid in processing order: one group per signature request, the shapes of
// the group (each generated once) and, per shape, the specs of the group scored on it.
type planGroup struct {
	long   lsh.Spec
	specs  []lsh.Spec
	shapes []planShape
}

type planShape struct {
	shape lsh.Shape
	specs []lsh.Spec
}

func (g Grid) plan() ([]planGroup, error) {
	var groups []planGroup
	for _, long := range Requests(g.Specs) {
		grp := planGroup{long: long}
		for _, s := range g.Specs {
			if CanPrefix(s, long) {
				grp.specs = append(grp.specs, s)
			}
		}
		for _, s := range grp.specs {
			shapes, err := g.shapesOf(s)
			if err != nil {
				return nil, err
			}
			for _, sh := range shapes {
				i := slices.IndexFunc(grp.shapes, func(p planShape) bool { return p.shape == sh })
				if i < 0 {
					grp.shapes = append(grp.shapes, planShape{shape: sh})
					i = len(grp.shapes) - 1
				}
				grp.shapes[i].specs = append(grp.shapes[i].specs, s)
			}
		}
		groups = append(groups, grp)
	}
	return groups, nil
}

// CanPrefix reports whether the signatures of long serve spec by keeping their first
// spec.Hashes values: the two differ in k alone, long has at least as many values, and
// the scheme draws the i-th permutation independently of k (classic, datasketch and
// milvus draw (a_i, b_i) in order from a seeded generator; fast does not: its k bins
// partition the hash range by k).
func CanPrefix(spec, long lsh.Spec) bool {
	if spec.Scheme == lsh.Fast && spec.Hashes != long.Hashes {
		return false
	}
	s, l := spec, long
	s.Hashes, l.Hashes = 0, 0
	return s == l && long.Hashes >= spec.Hashes
}

// Requests returns the signatures a sweep over specs asks for, each once: for every set
// of specs that CanPrefix one of them, the one with the largest k. The order is that of
// the specs' first appearance.
func Requests(specs []lsh.Spec) []lsh.Spec {
	var out []lsh.Spec
	for _, s := range specs {
		i := slices.IndexFunc(out, func(l lsh.Spec) bool { return CanPrefix(s, l) || CanPrefix(l, s) })
		switch {
		case i < 0:
			out = append(out, s)
		case s.Hashes > out[i].Hashes:
			out[i] = s
		}
	}
	return out
}

// Config is one point of a grid.
type Config struct {
	Spec         lsh.Spec
	Shape        lsh.Shape
	Threshold    float64
	Verification Verification
	Policy       cluster.Policy
}

// Label is a short name for charts and tables, e.g. "word5 k128 25x5 ≥0.50 exact cc".
func (c Config) Label() string {
	pol := string(c.Policy)
	switch c.Policy {
	case cluster.Components:
		pol = "cc"
	case cluster.KeeperStar:
		pol = "star"
	case cluster.CompleteLink:
		pol = "clink"
	}
	return fmt.Sprintf("%s%d k%d %v ≥%.2f %s %s", c.Spec.Level, c.Spec.Size, c.Spec.Hashes, c.Shape, c.Threshold, c.Verification, pol)
}

// String names the configuration in full: the canonical spec, then the rest.
func (c Config) String() string {
	return fmt.Sprintf("%s shape=%v threshold=%s verification=%s policy=%s",
		c.Spec, c.Shape, strconv.FormatFloat(c.Threshold, 'f', -1, 64), c.Verification, c.Policy)
}

// ParseShape reads "BxR", e.g. "25x5".
func ParseShape(s string) (lsh.Shape, error) {
	b, r, ok := strings.Cut(strings.TrimSpace(s), "x")
	if ok {
		bands, err1 := strconv.Atoi(b)
		rows, err2 := strconv.Atoi(r)
		if err1 == nil && err2 == nil && bands >= 1 && rows >= 1 {
			return lsh.Shape{Bands: bands, Rows: rows}, nil
		}
	}
	return lsh.Shape{}, fmt.Errorf("shape %q: want bands x rows, e.g. 25x5", s)
}

type gridJSON struct {
	Specs         []string       `json:"specs"`
	Shapes        []string       `json:"shapes,omitempty"`
	Thresholds    []float64      `json:"thresholds"`
	Verifications []Verification `json:"verifications"`
	Policies      []string       `json:"policies"`
}

// MarshalJSON writes specs in their canonical text form and shapes as "BxR".
func (g Grid) MarshalJSON() ([]byte, error) {
	j := gridJSON{Thresholds: g.Thresholds, Verifications: g.Verifications}
	for _, p := range g.Policies {
		j.Policies = append(j.Policies, string(p))
	}
	for _, s := range g.Specs {
		j.Specs = append(j.Specs, s.String())
	}
	for _, sh := range g.Shapes {
		j.Shapes = append(j.Shapes, sh.String())
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes. Specs may be partial
// ("level=char size=5"; see lsh.ParseSpec). A bad spec or shape is a *GridError.
func (g *Grid) UnmarshalJSON(b []byte) error {
	var j gridJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	out := Grid{Thresholds: j.Thresholds, Verifications: j.Verifications}
	for _, p := range j.Policies {
		out.Policies = append(out.Policies, storedPolicy(p))
	}
	for i, text := range j.Specs {
		s, err := lsh.ParseSpec(text)
		if err != nil {
			return &GridError{Axis: "specs", Index: i, Msg: err.Error()}
		}
		out.Specs = append(out.Specs, s)
	}
	for i, text := range j.Shapes {
		sh, err := ParseShape(text)
		if err != nil {
			return &GridError{Axis: "shapes", Index: i, Msg: err.Error()}
		}
		out.Shapes = append(out.Shapes, sh)
	}
	*g = out
	return nil
}

// UnmarshalJSON reads a Config as stored, with the policy names of sweeps stored
// before the policy registry (storedPolicy). Its encoding is the default one: a
// cluster.Policy is written as its name.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	p.Policy = storedPolicy(string(p.Policy))
	*c = Config(p)
	return nil
}
