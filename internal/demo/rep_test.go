package demo

import (
	"slices"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// TestDesignRepresentation: the demo design's exact Jaccard (its strata's bins) is
// that of sweep.DemoRep's shingle sets, document by document, and sweep's reading of the
// design's stratum names and bins is the design's own. A sweep caps the zero-event bound
// of the strata by the within-cluster pairs it finds in each bin (sweep's doc), which is
// a valid bound only if it computes the bins exactly as the draw did.
func TestDesignRepresentation(t *testing.T) {
	docs, err := readSample()
	if err != nil {
		t.Fatal(err)
	}
	h, err := lsh.NewHasher(sweep.DemoRep)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		want := analyze(d.Text).set
		if got := h.ShingleSet(d.Text); !slices.Equal(got, want) {
			t.Fatalf("document %d (%s): sweep.DemoRep gives %d shingles, the demo's rules %d", i, d.ID, len(got), len(want))
		}
	}
	for union := 0; union <= 400; union++ {
		for inter := 0; inter <= union; inter++ {
			if got, want := sweep.DemoJaccardBin(inter, union), binOf(inter, union); got != want {
				t.Fatalf("bin of %d/%d: sweep %d, demo %d", inter, union, got, want)
			}
		}
	}
	for b := range bins {
		k := sweep.ParseStratum(Design, "different|"+binLabel(b))
		if k.Measure != sweep.JaccardMeasure || k.Bin != b || k.Scheme != sweep.DemoBins || k.Rep != sweep.DemoRep || k.Category != "different" {
			t.Errorf("ParseStratum(%s, different|%s) = %+v; want bin %d of the demo bins over DemoRep", Design, binLabel(b), k, b)
		}
		if sweep.DemoBinLabel(b) != binLabel(b) {
			t.Errorf("bin %d: sweep calls it %s, the demo %s", b, sweep.DemoBinLabel(b), binLabel(b))
		}
	}
}
