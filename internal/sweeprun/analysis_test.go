package sweeprun

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// TestAnalyzeOnce: pages, charts and the command line load a sweep's analysis at the
// same time (a dashboard asks for its charts as it opens); the front, the recommendation
// and the labeling plan are computed once for all of them, and again only for another
// target or once the sweep's results change. What it holds is what sweep's functions
// say of the stored results.
func TestAnalyzeOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sw := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: smallGrid()})
	if sw.State != Done {
		t.Fatalf("sweep %s (%s); want done", sw.State, sw.Error)
	}
	c := &e.svc.analyses
	target := sweep.Target{MaxFalseRemovalRate: 0.05, Rule: "longest"}
	key := analysisKey{id: sw.ID, done: sw.Done, state: sw.State, target: target}
	// The first caller computes; it is held until every caller has asked, so that they
	// all ask while it computes.
	const callers = 8
	release := make(chan struct{})
	c.computing = func() { <-release }
	before := c.computed.Load()
	got := make([]*Analysis, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { got[i], errs[i] = e.svc.Analyze(ctx, sw.ID, target) })
	}
	for asked := 0; asked < callers; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		if en := c.byKey[key]; en != nil {
			asked = en.callers
		}
		c.mu.Unlock()
	}
	close(release)
	wg.Wait()
	c.computing = nil
	if n := c.computed.Load() - before; n != 1 {
		t.Errorf("%d concurrent Analyze calls computed the analysis %d times; want once", callers, n)
	}
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("Analyze: %v", errs[i])
		}
		if got[i] != got[0] {
			t.Errorf("caller %d got another analysis than caller 0", i)
		}
	}
	a := got[0]

	rs := e.results(sw.ID)
	scored := make([]sweep.Result, len(rs))
	for i, r := range rs {
		scored[i] = r.Result
		if figures(t, a.Scored[i]) != figures(t, r.Result) {
			t.Fatalf("Scored[%d] is not result %d's figures", i, r.Ordinal)
		}
	}
	if a.Rule != "longest" {
		t.Errorf("Rule = %q; want the target's, longest", a.Rule)
	}
	hs := sweep.HeadlinesFor(scored, a.Rule)
	if !slices.Equal(a.Front, sweep.Front(hs)) {
		t.Error("Front is not sweep.Front of the results' headlines")
	}
	rec, err := sweep.Recommend(scored, sw.Summary.Baseline, target)
	if err != nil || a.RecErr != nil || rec.Index != a.Rec.Index || rec.Met != a.Rec.Met {
		t.Errorf("Rec = %d (met %v, %v); sweep.Recommend = %d (met %v, %v)", a.Rec.Index, a.Rec.Met, a.RecErr, rec.Index, rec.Met, err)
	}
	met := 0
	for i, h := range hs {
		if want := target.Meets(h) && scored[i].Removals > 0; a.Meets[i] != want {
			t.Errorf("Meets[%d] = %v; want %v", i, a.Meets[i], want)
		}
		if a.Meets[i] {
			met++
		}
	}
	want := -1
	if a.Rec.Met {
		want = a.Rec.Index
	}
	if a.Recommended() != want {
		t.Errorf("Recommended() = %d; want %d (met %v)", a.Recommended(), want, a.Rec.Met)
	}
	if a.Rec.Met != (met > 0) {
		t.Errorf("recommendation met %v with %d configurations meeting the target", a.Rec.Met, met)
	}

	// Asked again: the same analysis; another target: computed anew.
	if again, err := e.svc.Analyze(ctx, sw.ID, target); err != nil || again != a {
		t.Errorf("Analyze again = %p, %v; want the same %p", again, err, a)
	}
	other := sweep.Target{MaxFalseRemovalRate: 0.2}
	if _, err := e.svc.Analyze(ctx, sw.ID, other); err != nil {
		t.Fatal(err)
	}
	if n := c.computed.Load() - before; n != 2 {
		t.Errorf("after another target, %d analyses computed; want 2", n)
	}
}
