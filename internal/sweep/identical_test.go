package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// The engine's speed work must leave every figure a sweep reports unchanged, bit for bit:
// the tests here write the JSON of every result of a sweep (timings zeroed, the only
// figures that depend on the machine) with the report's model and baseline, and compare
// its SHA-256 with one recorded before the work. -update-results records them again
// (only when a change of figures is meant).

var updateResults = flag.Bool("update-results", false, "record the results digests of TestResultsUnchanged again")

// resultsVariants are the label sets a sweep estimates from in three different ways:
// the demo's own design (its strata are the model's cells), the same pairs as the
// studio's draws (one pooled cell per bin, bin sizes from the dataset's frame), and the
// pairs without any design (no model: labeled-pairs figures only).
func resultsVariants(d demoSample) map[string][]LabeledPair {
	studio := make([]LabeledPair, len(d.design))
	for i, p := range d.design {
		p.Design, p.Stratum, p.FrameSize = "jdraw-identical", "", 0
		studio[i] = p
	}
	return map[string][]LabeledPair{"design": d.design, "studio": studio, "none": d.pairs}
}

// writeResults writes rep as the lines the digests are taken of: the model, the
// baseline, then every result, each as JSON with its timings zeroed.
func writeResults(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	if err := enc.Encode(rep.Model); err != nil {
		return err
	}
	if err := enc.Encode(rep.Baseline); err != nil {
		return err
	}
	for _, r := range rep.Results {
		r.CandidateTime, r.ScoreTime = 0, 0
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// identicalGrid is small enough for every test run and reaches every path the default
// grid does: two representations (word and char, so the model's representation is one
// of them and not the other), k=64 and 128 sharing signatures, a generous and a steep
// shape, thresholds from 0.3 to 0.9, both verifications and every registered policy.
func identicalGrid(t testing.TB) Grid {
	t.Helper()
	var specs []lsh.Spec
	for _, s := range []string{"level=word size=5 k=128", "level=word size=5 k=64", "level=char size=5 k=128"} {
		sp, err := lsh.ParseSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, sp)
	}
	return Grid{Specs: specs, Shapes: []lsh.Shape{{Bands: 32, Rows: 2}, {Bands: 16, Rows: 4}, {Bands: 8, Rows: 8}},
		Thresholds: Steps(0.3, 0.9, 0.1), Verifications: []Verification{MinHashEstimate, ExactJaccard}, Policies: cluster.Policies()}
}

// TestResultsUnchanged runs identicalGrid on the demo under each way of estimating and
// compares the digest of every figure with the one recorded in testdata.
func TestResultsUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("a sweep of 2,016 configurations per variant")
	}
	d := loadDemo(t)
	g := identicalGrid(t)
	sigs := precompute(t, d.texts, g.Specs)
	golden := filepath.Join("testdata", "results-digests.txt")
	want := map[string]string{}
	if b, err := os.ReadFile(golden); err == nil {
		for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			if name, sum, ok := strings.Cut(line, " "); ok {
				want[name] = sum
			}
		}
	}
	got := map[string]string{}
	variants := resultsVariants(d)
	for _, name := range []string{"design", "studio", "none"} {
		in := textInput(d.texts, variants[name], sigs)
		rep, err := Run(context.Background(), in, g, Options{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if err := writeResults(h, rep); err != nil {
			t.Fatal(err)
		}
		got[name] = digest(h)
		if !*updateResults && got[name] != want[name] {
			t.Errorf("%s: results digest %s; want %s (the figures changed: write both versions with DEDUP_RESULTS_DUMP and compare)", name, got[name], want[name])
		}
	}
	if *updateResults {
		var b strings.Builder
		for _, name := range []string{"design", "studio", "none"} {
			fmt.Fprintf(&b, "%s %s\n", name, got[name])
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func prefixes(sigs []lsh.Signature, k int) []lsh.Signature {
	out := make([]lsh.Signature, len(sigs))
	for i, s := range sigs {
		out[i] = s[:k]
	}
	return out
}

func digest(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// TestDumpDefaultResults writes every result of DefaultGrid on the demo, under each way
// of estimating, to DEDUP_RESULTS_DUMP/<variant>.jsonl, and prints their digests: run it
// before and after a change to the engine and compare (the files, or the digests).
func TestDumpDefaultResults(t *testing.T) {
	dir := os.Getenv("DEDUP_RESULTS_DUMP")
	if dir == "" {
		t.Skip("set DEDUP_RESULTS_DUMP to a folder to write the default grid's results there")
	}
	only := os.Getenv("DEDUP_RESULTS_VARIANT")
	d := loadDemo(t)
	g := DefaultGrid()
	sigs := precompute(t, d.texts, g.Specs)
	// The studio's frame is banded under the model's representation (word 5, k=128): a
	// prefix of k=256's signatures, as the store's provider gives it.
	rep := lsh.DefaultSpec()
	for s, all := range sigs {
		if s.Hashes > rep.Hashes && CanPrefix(rep, s) {
			sigs[rep] = prefixes(all, rep.Hashes)
		}
	}

	variants := resultsVariants(d)
	for _, name := range []string{"design", "studio", "none"} {
		if only != "" && only != name {
			continue
		}
		in := textInput(d.texts, variants[name], sigs)
		rep, err := Run(context.Background(), in, g, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if err := writeResults(io.MultiWriter(f, h), rep); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d results, sha256 %s", name, len(rep.Results), digest(h))
	}
}

// TestSharedShapeClustersEachK checks that a configuration's figures do not depend on
// the other ks of its grid: a shape that k=64 and k=128 share is verified with each k's
// own estimates, and keeper-star and complete-link cluster those (they were clustered on
// the first k's estimates when the shape's graph was kept by verification alone).
func TestSharedShapeClustersEachK(t *testing.T) {
	d := loadDemo(t)
	var k64, k128 lsh.Spec
	for s, p := range map[string]*lsh.Spec{"level=word size=5 k=64": &k64, "level=word size=5 k=128": &k128} {
		var err error
		if *p, err = lsh.ParseSpec(s); err != nil {
			t.Fatal(err)
		}
	}
	results := func(specs ...lsh.Spec) map[string]string {
		g := Grid{Specs: specs, Shapes: []lsh.Shape{{Bands: 16, Rows: 4}}, Thresholds: Steps(0.3, 0.9, 0.1),
			Verifications: []Verification{MinHashEstimate}, Policies: cluster.Policies()}
		in := textInput(d.texts, resultsVariants(d)["studio"], precompute(t, d.texts, g.Specs))
		rep, err := Run(context.Background(), in, g, Options{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range rep.Results {
			if r.Config.Spec != k128 {
				continue
			}
			var b strings.Builder
			if err := writeResults(&b, &Report{Results: []Result{r}}); err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprint(r.Config)] = b.String()
		}
		return out
	}
	alone, shared := results(k128), results(k64, k128)
	if len(alone) != 3*7 {
		t.Fatalf("%d results for k=128; want 21", len(alone))
	}
	for name, r := range alone {
		if shared[name] != r {
			t.Errorf("%s: its figures change when k=64 shares its shape", name)
		}
	}
}

// TestWidestShapeServesNarrower: shapes that share their rows take their pairs from the
// widest of them (widest); every result and every declined shape is the same as when
// each shape is swept alone, with buckets cut at a small bound and the widest shapes
// of some rows over the candidate limit while narrower ones are not.
func TestWidestShapeServesNarrower(t *testing.T) {
	if testing.Short() {
		t.Skip("eight sweeps of the demo")
	}
	d := loadDemo(t)
	spec, err := lsh.ParseSpec("level=char size=3 k=128")
	if err != nil {
		t.Fatal(err)
	}
	shapes := []lsh.Shape{{Bands: 8, Rows: 4}, {Bands: 120, Rows: 1}, {Bands: 20, Rows: 4}, {Bands: 5, Rows: 1},
		{Bands: 6, Rows: 5}, {Bands: 32, Rows: 4}, {Bands: 40, Rows: 1}}
	g := Grid{Specs: []lsh.Spec{spec}, Shapes: shapes, Thresholds: Steps(0.3, 0.9, 0.2),
		Verifications: []Verification{MinHashEstimate, ExactJaccard}, Policies: cluster.Policies()}
	in := textInput(d.texts, d.design, precompute(t, d.texts, g.Specs))
	opt := Options{Seed: 3, MaxBucket: 50, CandidateShare: 0.01}
	together, err := Run(context.Background(), in, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	encode := func(rs []Result) []string {
		var out []string
		for _, r := range rs {
			r.CandidateTime, r.ScoreTime = 0, 0
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		return out
	}
	var alone []Result
	var declined []Declined
	for _, sh := range shapes {
		g1 := g
		g1.Shapes = []lsh.Shape{sh}
		rep, err := Run(context.Background(), in, g1, opt)
		if err != nil {
			t.Fatal(err)
		}
		alone = append(alone, rep.Results...)
		declined = append(declined, rep.Declined...)
	}
	if !slices.Equal(encode(together.Results), encode(alone)) {
		t.Errorf("%d results swept together differ from %d swept shape by shape", len(together.Results), len(alone))
	}
	if !slices.Equal(together.Declined, declined) {
		t.Errorf("declined together %v; shape by shape %v", together.Declined, declined)
	}
	// The cases this is about: cut buckets, and the widest of some rows declined while
	// a narrower one is swept.
	skipped, declinedWide, sweptNarrow := false, false, false
	for _, r := range together.Results {
		skipped = skipped || r.BucketSkipped > 0
		sweptNarrow = sweptNarrow || r.Config.Shape == lsh.Shape{Bands: 5, Rows: 1}
	}
	for _, dc := range together.Declined {
		declinedWide = declinedWide || dc.Shape == lsh.Shape{Bands: 120, Rows: 1}
	}
	if !skipped || !declinedWide || !sweptNarrow {
		t.Errorf("cases not reached: buckets cut %v, 120x1 declined %v, 5x1 swept %v", skipped, declinedWide, sweptNarrow)
	}
}

// TestWidestProposes: widest gives each shape the pairs, skipped count and refusal that
// proposing it alone gives, in an order where the widest of some rows comes before a
// narrower one (its keys then stay shared with the cache and are copied), with cut
// buckets among shared rows, and a widest shape over the limit; it bands each shared
// rows once and holds nothing after the last of them.
func TestWidestProposes(t *testing.T) {
	d := loadDemo(t)
	spec, err := lsh.ParseSpec("level=char size=3 k=128")
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := spec.Signatures(d.texts)
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{n: len(sigs), opt: Options{MaxBucket: 30, CandidateShare: 0.01}.withDefaults()}
	var shapes []planShape
	for _, sh := range []lsh.Shape{{Bands: 8, Rows: 4}, {Bands: 30, Rows: 4}, {Bands: 5, Rows: 1}, {Bands: 12, Rows: 4},
		{Bands: 120, Rows: 1}, {Bands: 9, Rows: 13}, {Bands: 30, Rows: 1}} {
		shapes = append(shapes, planShape{shape: sh})
	}
	w := newWidest(shapes)
	if len(w.wide) != 2 || w.wide[4] != (lsh.Shape{Bands: 30, Rows: 4}) || w.wide[1] != (lsh.Shape{Bands: 120, Rows: 1}) {
		t.Fatalf("widest shapes %v; want 30x4 and 120x1", w.wide)
	}
	cut, declined := false, false
	for _, ps := range shapes {
		got := w.propose(t.Context(), e, sigs, ps.shape)
		want := e.propose(t.Context(), sigs, ps.shape)
		if !slices.Equal(got.keys, want.keys) || got.skipped != want.skipped || !errors.Is(got.err, want.err) && got.err != want.err {
			t.Fatalf("%v: %d pairs, %d skipped, %v; alone %d, %d, %v", ps.shape, len(got.keys), got.skipped, got.err, len(want.keys), want.skipped, want.err)
		}
		if ps.shape.Rows == 4 {
			cut = cut || got.skipped > 0
			if _, ok := w.keys[4]; !ok && ps.shape != (lsh.Shape{Bands: 12, Rows: 4}) {
				t.Fatalf("%v: rows 4 not banded once for its three shapes", ps.shape)
			}
			if ps.shape.Bands == 30 && len(got.keys) > 0 && &got.keys[0] == &w.keys[4].bk.Keys[0] {
				t.Fatal("30x4 took the cache's own keys while 12x4 still reads them")
			}
		}
		declined = declined || ps.shape.Bands == 120 && errors.Is(got.err, lsh.ErrTooManyPairs)
	}
	if !cut || !declined {
		t.Errorf("cases not reached: a bucket cut among 4-row shapes %v, 120x1 declined %v", cut, declined)
	}
	if len(w.keys) != 0 {
		t.Errorf("keys still held after the last shape: rows %v", slices.Collect(maps.Keys(w.keys)))
	}
}
