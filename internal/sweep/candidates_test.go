package sweep

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// TestCandidatePairsMatchLSH checks that the candidate generator of sweeps and frames
// (lsh.CandidateKeys) returns exactly lsh.CandidatesBounded's pairs and skipped count,
// on real text, with and without the bucket bound cutting buckets.
func TestCandidatePairsMatchLSH(t *testing.T) {
	d := loadDemo(t)
	cut := false
	for _, text := range []string{"level=word size=1 k=128", "level=char size=3 k=64", "level=word size=5 k=64"} {
		spec, err := lsh.ParseSpec(text)
		if err != nil {
			t.Fatal(err)
		}
		sigs, err := spec.Signatures(d.texts)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range []lsh.Shape{{Bands: 32, Rows: 2}, {Bands: 16, Rows: 4}, {Bands: 5, Rows: 12}} {
			for _, maxBucket := range []int{0, 40, 1000} {
				t.Run(fmt.Sprintf("%s/%v/bucket%d", text, sh, maxBucket), func(t *testing.T) {
					want, wantSkipped, err := lsh.CandidatesBounded(sigs, sh, maxBucket)
					if err != nil {
						t.Fatal(err)
					}
					got, skipped, err := lsh.CandidateKeys(t.Context(), sigs, sh, maxBucket)
					if err != nil {
						t.Fatal(err)
					}
					wantKeys := make([]uint64, len(want))
					for i, c := range want {
						wantKeys[i] = pairKey(int32(c.A), int32(c.B))
					}
					cut = cut || wantSkipped > 0
					if !slices.Equal(got, wantKeys) || skipped != wantSkipped {
						t.Errorf("lsh.CandidateKeys = %d pairs, %d skipped; lsh.CandidatesBounded = %d, %d", len(got), skipped, len(wantKeys), wantSkipped)
					}
					// A limit of exactly the pairs gives them all; one fewer gives up.
					if len(wantKeys) == 0 {
						return
					}
					upTo, skippedUpTo, err := lsh.CandidateKeysUpTo(t.Context(), sigs, sh, maxBucket, len(wantKeys))
					if err != nil || !slices.Equal(upTo, wantKeys) || skippedUpTo != wantSkipped {
						t.Errorf("lsh.CandidateKeysUpTo(limit %d) = %d pairs, %d skipped, %v; want them all", len(wantKeys), len(upTo), skippedUpTo, err)
					}
					if upTo, _, err := lsh.CandidateKeysUpTo(t.Context(), sigs, sh, maxBucket, len(wantKeys)-1); !errors.Is(err, lsh.ErrTooManyPairs) || upTo != nil {
						t.Errorf("lsh.CandidateKeysUpTo(limit %d) = %d pairs, %v; want lsh.ErrTooManyPairs", len(wantKeys)-1, len(upTo), err)
					}
				})
			}
		}
	}
	if !cut {
		t.Error("no case cut a bucket; the bound went untested")
	}
}

// BenchmarkCandidates compares the sweep's generator with lsh.CandidatesBounded over
// the default grid's shapes for word 1-shingles (k=256) on the demo sample.
func BenchmarkCandidates(b *testing.B) {
	d := loadDemo(b)
	spec, _ := lsh.ParseSpec("level=word size=1 k=256")
	sigs, err := spec.Signatures(d.texts)
	if err != nil {
		b.Fatal(err)
	}
	var shapes []lsh.Shape
	for _, k := range []int{128, 256} {
		s, _ := ShapesFor(k, DefaultGrid().Thresholds)
		shapes = append(shapes, s...)
	}
	b.Run("lsh", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime(b)
		for b.Loop() {
			for _, sh := range shapes {
				lsh.CandidatesBounded(sigs, sh, DefaultMaxBucket)
			}
		}
		reportCPU(b, start)
	})
	b.Run("sweep", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime(b)
		for b.Loop() {
			for _, sh := range shapes {
				lsh.CandidateKeys(b.Context(), sigs, sh, DefaultMaxBucket)
			}
		}
		reportCPU(b, start)
	})
}
