package manifests

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// The crafted chain A~B~C (J(A,B) = J(B,C) ~ 0.81 at threshold 0.75, J(A,C) ~ 0.66) and
// the exact duplicates D, D2, in import order A, B, C, D, D2: the search before insert
// stores A, reports B, then keeps C (its only match, B, was reported: a knock-on), stores
// D and reports D2. Against a manifest that keeps A (components, earliest) it differs by
// C alone, by knock-on; against one that keeps C and D2 it reports B and D2 and keeps A
// and D, which later documents matched (first seen is kept), and D2 is a keeper there.
func TestMeasureHandoffOnACraftedChain(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	m := f.run(f.params(cluster.Components, "earliest"))
	figs, err := MeasureHandoff(ctx, f.store, m, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tooLarge *TooLargeError
	if _, err := MeasureHandoff(ctx, f.store, m, 1000, nil); !errors.As(err, &tooLarge) {
		t.Errorf("a limit of 1000 bytes: %v; want a *TooLargeError", err)
	}
	if figs.Docs != 11 || figs.ManifestRemovals != 3 || figs.Dataset != "dataset chain version 1" {
		t.Fatalf("figures %+v; want 11 documents, 3 removals (B, C, D2) of dataset chain version 1", figs)
	}
	want := handoff.SearchRun{Reported: 2, Both: 2, ManifestOnly: 1, KnockOn: 1}
	for name, run := range map[string]*handoff.SearchRun{"datasketch": figs.Datasketch, "milvus": figs.Milvus} {
		if run == nil || *run != want {
			t.Errorf("%s run %+v; want %+v", name, run, want)
		}
	}
	if figs.Candidates == 0 || figs.AcceptedExact-figs.ExactOnly != figs.AcceptedEstimate-figs.EstimateOnly {
		t.Errorf("verification figures %+v do not add up", figs)
	}

	// The same documents, the manifest's flags set by hand: keepers C and D2.
	in := chainInput(t, f, m.Params)
	for _, id := range []string{"A", "B", "D"} {
		in.removed[f.index(id)] = true
	}
	for _, id := range []string{"A", "B", "C", "D", "D2"} {
		in.member[f.index(id)] = true
	}
	in.keeper[f.index("C")], in.keeper[f.index("D2")] = true, true
	got, reported := in.datasketchRun()
	want = handoff.SearchRun{Reported: 2, Both: 1, EngineOnly: 1, EngineOnlyKeepers: 1, ManifestOnly: 2, Order: 2}
	if got != want || !reported[f.index("B")] || !reported[f.index("D2")] {
		t.Errorf("keepers C and D2: %+v; want %+v", got, want)
	}
}

// index is the import-order index of the fixture's document ext.
func (f *fixture) index(ext string) int {
	f.t.Helper()
	infos, err := f.store.DatasetDocs(context.Background(), f.ds.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	for i, di := range infos {
		if di.ExtID == ext {
			return i
		}
	}
	f.t.Fatalf("no document %s", ext)
	return -1
}

// chainInput is the measurement's input over the fixture's documents, no manifest.
func chainInput(t *testing.T, f *fixture, p review.Params) *handoffInput {
	t.Helper()
	infos, err := f.store.DatasetDocs(context.Background(), f.ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	in, err := newHandoffInput(p, len(infos))
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	err = f.store.EachDocument(context.Background(), f.ds.ID, func(d db.Document) error {
		in.add(i, d.Text)
		i++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// corpus600 is the first 600 documents of the real corpus, in order: what the real
// datasketch and datatrove runs in testdata read.
func corpus600(t *testing.T) (ids, texts []string) {
	return realtext.Columns(realtext.Docs(t, 600))
}

func paramsOf(t *testing.T, spec string, sh lsh.Shape, threshold float64, v review.Verification) review.Params {
	t.Helper()
	s, err := lsh.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cluster.ParseRule("longest")
	if err != nil {
		t.Fatal(err)
	}
	return review.Params{Spec: s, Shape: sh, Threshold: threshold, Verification: v, Policy: cluster.Components, Rule: r}
}

// The simulation of the datasketch program is the program: on the 600 documents the real
// program read with datasketch 1.10 (testdata/handoff, see its README), it reports
// exactly the documents the program reported, under a bit-identical representation with
// exact verification and under a classic one (the program's own datasketch permutations)
// with the estimate.
func TestDatasketchSimulationIsTheProgram(t *testing.T) {
	t.Parallel()
	ids, texts := corpus600(t)
	for _, tc := range []struct {
		file string
		p    review.Params
	}{
		{"datasketch-ds-exact.jsonl", paramsOf(t, "scheme=datasketch level=word size=5 k=128", lsh.Shape{Bands: 32, Rows: 4}, 0.5, review.Exact)},
		{"datasketch-classic-estimate.jsonl", paramsOf(t, "level=word size=5 k=128", lsh.Shape{Bands: 32, Rows: 4}, 0.4, review.Estimate)},
	} {
		t.Run(tc.file, func(t *testing.T) {
			in, err := newHandoffInput(tc.p, len(texts))
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range texts {
				in.add(i, text)
			}
			_, reported := in.datasketchRun()
			var got []string
			for i, r := range reported {
				if r {
					got = append(got, ids[i])
				}
			}
			b, err := os.ReadFile(filepath.Join("testdata", "handoff", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
				var rec struct{ ID string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				want = append(want, rec.ID)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || len(want) == 0 {
				t.Errorf("simulated reports %v; the program reported %v", got, want)
			}
		})
	}
}

// The simulation of datatrove is datatrove: on the 600 documents of the real datatrove
// 0.10.0 run of the exported pipeline (internal/results/testdata/datatrove-0.10.0), with
// its settings, the documents in a simulated cluster are those in its .clusters files,
// the clusters are as many and the removals are its 87.
func TestDatatroveSimulationIsDatatrove(t *testing.T) {
	t.Parallel()
	ids, texts := corpus600(t)
	p := paramsOf(t, "norm=nfkc+lower+space level=word size=5 k=128 hash=xxhash seed=1", lsh.Shape{Bands: 37, Rows: 3}, 0.8, review.Exact)
	in, err := newHandoffInput(p, len(texts))
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		in.add(i, text)
	}
	c, sim := in.datatrove()
	// What datatrove wrote: per task, (index in the task's input, cluster id) pairs; the
	// tasks read part0 (documents 0-299) and part1 (300-599).
	dir := "../results/testdata/datatrove-0.10.0/remove_ids"
	clustered := map[string]bool{}
	clusters := map[uint32]bool{}
	for task, name := range []string{"000000.clusters", "000001.clusters"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+8 <= len(b); off += 8 {
			clustered[ids[300*task+int(binary.LittleEndian.Uint32(b[off:]))]] = true
			clusters[binary.LittleEndian.Uint32(b[off+4:])] = true
		}
	}
	if c.Clusters != len(clusters) || c.Removals != 87 || c.Clusters+c.Removals != len(clustered) {
		t.Errorf("simulated %d clusters, %d removals; datatrove made %d clusters of %d documents, 87 removals", c.Clusters, c.Removals, len(clusters), len(clustered))
	}
	for i, id := range ids {
		if sim[i] != clustered[id] {
			t.Errorf("%s: in a simulated cluster %v, in a datatrove cluster %v", id, sim[i], clustered[id])
		}
	}
	if c.Pairs == 0 || c.BelowThreshold == 0 || c.BelowThreshold > c.Pairs {
		t.Errorf("pairs %d, below the threshold %d: a 37 x 3 banding with no threshold merges pairs far below 0.8", c.Pairs, c.BelowThreshold)
	}
}

// What the real datasketch program wrote reads back with import-results to the same
// removals: every reported document removed in favour of its best match, no other.
func TestDatasketchProgramOutputImportsToItsRemovals(t *testing.T) {
	t.Parallel()
	ids, _ := corpus600(t)
	ds := results.Dataset{Name: "corpus600", IDs: ids, Docs: make([]cluster.Doc, len(ids))}
	for _, name := range []string{"datasketch-ds-exact.jsonl", "datasketch-classic-estimate.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", "handoff", name))
		if err != nil {
			t.Fatal(err)
		}
		r, err := results.ReadFile(results.Source{Name: name, Reader: bytes.NewReader(b)}, results.Datasketch, results.Source{}, results.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		built, err := results.Build(r, ds, results.BuildOptions{Rule: mustRule(t, "longest")})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var removed, reported []string
		for _, c := range built.Clusters {
			for _, m := range c.Members {
				if m != c.Keeper {
					removed = append(removed, ids[m])
				}
			}
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			var rec struct{ ID string }
			json.Unmarshal([]byte(line), &rec)
			reported = append(reported, rec.ID)
		}
		slices.Sort(removed)
		slices.Sort(reported)
		if !slices.Equal(removed, reported) || built.Removals != len(reported) {
			t.Errorf("%s: the import removes %d %v; the program reported %d %v", name, built.Removals, removed, len(reported), reported)
		}
	}
}

func mustRule(t *testing.T, s string) cluster.Rule {
	t.Helper()
	r, err := cluster.ParseRule(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
