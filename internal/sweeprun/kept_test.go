package sweeprun

import (
	"context"
	"math"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// TestResultsKeptAsStored: a sweep's job keeps the results it stores decoded, so the
// dashboard's first view reads none back; what it keeps must be what reading the store
// gives, figure for figure (NaN where the store has null, never an infinity the store
// would turn into NaN), with the rows' IDs. Policies of every kind, both verifications
// and the demo's design (dataset estimates) are in the grid. The analysis of the default
// target, and the live panel's candidates of the configuration it selects, are ready
// when the job ends.
func TestResultsKeptAsStored(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	g := smallGrid()
	g.Policies = cluster.Policies()
	sw := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: g})
	if sw.State != Done {
		t.Fatalf("sweep %s (%s); want done", sw.State, sw.Error)
	}
	if n := e.svc.decoded.Load(); n != 0 {
		t.Errorf("%d results read back from the store by the job; want none", n)
	}
	kept, err := e.svc.Results(ctx, sw.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := e.svc.decoded.Load(); n != 0 || len(kept) != sw.Total {
		t.Fatalf("Results() = %d results of %d, %d read back from the store; want all kept, none read", len(kept), sw.Total, n)
	}
	stored, err := e.svc.ResultsAfter(ctx, sw.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	byOrdinal := map[int]Result{}
	for _, r := range stored {
		byOrdinal[r.Ordinal] = r
	}
	for _, k := range kept {
		s, ok := byOrdinal[k.Ordinal]
		if !ok {
			t.Fatalf("kept result %d is not stored", k.Ordinal)
		}
		if k.ID != s.ID {
			t.Errorf("result %d: kept ID %d, stored %d", k.Ordinal, k.ID, s.ID)
		}
		if path, ok := sameFigures(reflect.ValueOf(k.Result), reflect.ValueOf(s.Result), "Result"); !ok {
			t.Fatalf("result %d: kept and stored differ at %s", k.Ordinal, path)
		}
	}
	if n := len(e.svc.analyses.byKey); n != 1 {
		t.Errorf("%d analyses ready when the job ended; want the default target's", n)
	}
	if n := e.svc.states.order.Len(); n != 1 {
		t.Errorf("%d configurations prepared for the live panel when the job ended; want the selected one", n)
	}
}

// sameFigures compares two values field by field: NaN equals NaN, an infinity equals
// nothing but itself. It returns where they first differ.
func sameFigures(a, b reflect.Value, path string) (string, bool) {
	if a.Kind() != b.Kind() {
		return path, false
	}
	switch a.Kind() {
	case reflect.Float64, reflect.Float32:
		x, y := a.Float(), b.Float()
		return path, x == y || math.IsNaN(x) && math.IsNaN(y)
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return path, a.IsNil() == b.IsNil()
		}
		return sameFigures(a.Elem(), b.Elem(), path)
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return path, false
		}
		for i := range a.Len() {
			if p, ok := sameFigures(a.Index(i), b.Index(i), path+"[]"); !ok {
				return p, false
			}
		}
		return path, true
	case reflect.Struct:
		for i := range a.NumField() {
			if p, ok := sameFigures(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); !ok {
				return p, false
			}
		}
		return path, true
	case reflect.Map:
		return path, a.Len() == 0 && b.Len() == 0 // none in a result
	}
	return path, a.Interface() == b.Interface()
}

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
