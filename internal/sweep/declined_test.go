package sweep

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// TestDeclinesShapesOverTheLimit sweeps the demo's character 3-shingles with a flat
// shape (37 bands of 3 rows, the default grid's optimum at threshold 0.3 and k=128),
// which makes a fifth of the demo's 2.3M pairs candidates, and a steep one: the flat one
// is declined under the default limit (MinCandidateLimit here) and every other figure
// is as when nothing is declined; with no limit it is scored, over the limit.
func TestDeclinesShapesOverTheLimit(t *testing.T) {
	d := loadDemo(t)
	spec, err := lsh.ParseSpec("level=char size=3 k=128")
	if err != nil {
		t.Fatal(err)
	}
	flat, steep := lsh.Shape{Bands: 37, Rows: 3}, lsh.Shape{Bands: 8, Rows: 16}
	g := Grid{Specs: []lsh.Spec{spec}, Shapes: []lsh.Shape{flat, steep}, Thresholds: []float64{0.5, 0.8},
		Verifications: []Verification{MinHashEstimate}, Policies: cluster.Policies()}
	in := textInput(d.texts, d.design, precompute(t, d.texts, g.Specs))
	perShape := 2 * len(cluster.Policies())

	var lastDone, lastTotal int
	rep, err := Run(context.Background(), in, g, Options{Seed: 1, Progress: func(done, total int) { lastDone, lastTotal = done, total }})
	if err != nil {
		t.Fatal(err)
	}
	pairs := len(d.texts) * (len(d.texts) - 1) / 2
	want := Declined{Spec: spec, Shape: flat, Limit: MinCandidateLimit, Share: float64(MinCandidateLimit) / float64(pairs), Configs: perShape}
	if len(rep.Declined) != 1 || rep.Declined[0] != want {
		t.Fatalf("declined %+v; want [%+v]", rep.Declined, want)
	}
	if len(rep.Results) != perShape || rep.Configs != 2*perShape {
		t.Errorf("%d results of %d configurations; want %d of %d", len(rep.Results), rep.Configs, perShape, 2*perShape)
	}
	for _, r := range rep.Results {
		if r.Config.Shape != steep {
			t.Errorf("a result of declined shape %v", r.Config.Shape)
		}
	}
	if lastDone != lastTotal || lastTotal != 2*perShape {
		t.Errorf("progress ended at %d of %d; want %d of %d (declined configurations count as done)", lastDone, lastTotal, 2*perShape, 2*perShape)
	}

	all, err := Run(context.Background(), in, g, Options{Seed: 1, CandidateShare: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Declined) != 0 || len(all.Results) != 2*perShape {
		t.Fatalf("with no limit: %d declined, %d results; want 0, %d", len(all.Declined), len(all.Results), 2*perShape)
	}
	for i, r := range all.Results {
		if r.Config.Shape == flat && r.Candidates <= MinCandidateLimit {
			t.Errorf("the flat shape proposed %d pairs: not over the limit it was declined for", r.Candidates)
		}
		if r.Config.Shape == steep {
			// The steep shape's figures do not depend on the flat one being scored.
			got := rep.Results[i-perShape]
			got.CandidateTime, got.ScoreTime, r.CandidateTime, r.ScoreTime = 0, 0, 0, 0
			if got.Config != r.Config || got.Removals != r.Removals || got.Recall != r.Recall || got.Candidates != r.Candidates {
				t.Errorf("%v: %d removals, recall %v with the flat shape declined; %d, %v scored", r.Config, got.Removals, got.Recall, r.Removals, r.Recall)
			}
		}
	}
}

// TestPrepareRefusesDeclinedShape: one configuration of a shape a sweep would decline is
// refused with the reason, as an invalid request, and is still lsh.ErrTooManyPairs.
func TestPrepareRefusesDeclinedShape(t *testing.T) {
	d := loadDemo(t)
	spec, err := lsh.ParseSpec("level=char size=3 k=128")
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Spec: spec, Shape: lsh.Shape{Bands: 37, Rows: 3}, Threshold: 0.5, Verification: MinHashEstimate, Policy: cluster.Components}
	in := textInput(d.texts, d.design, precompute(t, d.texts, []lsh.Spec{spec}))
	_, err = Prepare(context.Background(), in, c, Options{Seed: 1})
	var de *DeclinedError
	if !errors.As(err, &de) || !errors.Is(err, lsh.ErrTooManyPairs) || errkind.Of(err) != errkind.Invalid ||
		!strings.Contains(err.Error(), "37 bands × 3 rows proposes more than 250,000 candidate pairs among 2,136 documents (11% of all pairs)") {
		t.Fatalf("Prepare = %v; want a DeclinedError naming the shape, the limit and the share", err)
	}
}
