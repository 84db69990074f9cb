package review

import (
	"math"
	"slices"
	"testing"
)

func TestDrawSampleStrata(t *testing.T) {
	t.Parallel()
	// 1,000 clusters: most are pairs with strong links; a few are large or weak.
	var units []SampleUnit
	for i := range 1000 {
		u := SampleUnit{Size: 2, Weakest: 0.95}
		switch {
		case i%100 == 0:
			u = SampleUnit{Size: 60, Weakest: 0.55} // 10 large, weak clusters
		case i%50 == 0:
			u = SampleUnit{Size: 3, Weakest: math.NaN()} // 10 with no score: the weakest bin
		case i%10 == 0:
			u = SampleUnit{Size: 2, Weakest: 1} // 80 exact
		}
		units = append(units, u)
	}
	s, drawn := DrawSample(units, 100, 42)
	if s == nil {
		t.Fatal("DrawSample = nil; want a sample")
	}
	if s.Drawn != 100 || s.Clusters != 1000 || s.Seed != 42 || s.Target != 100 {
		t.Errorf("sample = %+v; want 100 of 1000 drawn with seed 42", s)
	}
	want := map[string][2]int{ // stratum: clusters, drawn
		"size=2 link=0.9-1":     {900, 0},
		"size=2 link=1":         {80, 0},
		"size=3-4 link=<0.5":    {10, 0},
		"size=50+ link=0.5-0.7": {10, 0},
	}
	total := 0
	for _, st := range s.Strata {
		w, ok := want[st.Key]
		if !ok || w[0] != st.Clusters {
			t.Errorf("stratum %+v; want one of %v", st, want)
		}
		total += st.Drawn
		// Every stratum gets its equal share (25) or all its clusters.
		if st.Drawn < min(st.Clusters, 25) {
			t.Errorf("stratum %s drew %d of %d; want at least %d", st.Key, st.Drawn, st.Clusters, min(st.Clusters, 25))
		}
	}
	if total != 100 {
		t.Errorf("strata drew %d; want 100", total)
	}
	// Drawn units carry their stratum, the rest none; counts agree with the strata.
	per := map[string]int{}
	for i, k := range drawn {
		if k == "" {
			continue
		}
		if k != StratumKey(units[i].Size, units[i].Weakest) {
			t.Errorf("unit %d drawn in %q; its stratum is %q", i, k, StratumKey(units[i].Size, units[i].Weakest))
		}
		per[k]++
	}
	for _, st := range s.Strata {
		if per[st.Key] != st.Drawn {
			t.Errorf("stratum %s: %d units marked; the design says %d", st.Key, per[st.Key], st.Drawn)
		}
	}
	// The same seed draws the same clusters; another seed others.
	_, again := DrawSample(units, 100, 42)
	if !slices.Equal(drawn, again) {
		t.Error("DrawSample with the same seed drew other clusters")
	}
	_, other := DrawSample(units, 100, 43)
	if slices.Equal(drawn, other) {
		t.Error("DrawSample with another seed drew the same clusters")
	}
}

// Within a stratum every cluster is equally likely to be drawn: over 2,000 seeds each of
// 20 clusters is drawn about 2000*5/20 = 500 times (binomial sd about 19; 5 sd allowed).
func TestDrawSampleUniformWithinStratum(t *testing.T) {
	t.Parallel()
	units := make([]SampleUnit, 20)
	for i := range units {
		units[i] = SampleUnit{Size: 2, Weakest: 0.85}
	}
	count := make([]int, len(units))
	for seed := range uint64(2000) {
		_, drawn := DrawSample(units, 5, seed)
		for i, k := range drawn {
			if k != "" {
				count[i]++
			}
		}
	}
	for i, c := range count {
		if math.Abs(float64(c)-500) > 5*19.4 {
			t.Errorf("cluster %d drawn %d times in 2000 draws; want about 500", i, c)
		}
	}
}

func TestDrawSampleAll(t *testing.T) {
	t.Parallel()
	units := []SampleUnit{{2, 0.9}, {3, 0.8}}
	for _, target := range []int{0, 2, 5} {
		if s, drawn := DrawSample(units, target, 1); s != nil || slices.ContainsFunc(drawn, func(k string) bool { return k != "" }) {
			t.Errorf("DrawSample(target %d) = %+v, %v; want no sample (everything reviewed)", target, s, drawn)
		}
	}
}
