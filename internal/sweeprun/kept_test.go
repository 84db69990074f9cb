package sweeprun

import (
	"context"
	"math"
	"reflect"
	"testing"

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
	g.Policies = sweep.RegisteredPolicies()
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
