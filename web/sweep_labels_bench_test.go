package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// BenchmarkSweepPagesManyLabels is issue 25 item 5: a campaign with many labeled pairs
// over few documents (internal/db/dbtest: 2,136 documents, 1M pairs, 3M label events;
// DEDUP_BENCH_LABELED for another number of pairs). "sweep" runs sweeps of 72
// configurations on it, one an iteration (-benchtime 3x: three sweeps, the figures the
// issue's budget is checked on), and reports their peak heap (sweep-peak-heap-MB: the
// largest heap in use while one ran, less the heap before) and CPU time (sweep-cpu-s).
// Then the sweeps list of the campaign (every sweep listed is compared with the current
// labels) and the last sweep's dashboard are viewed through the router as a reviewer,
// first and again, and after a label is added. "sweeps list after a restart" views the
// list once an iteration through a new server (a new sweeprun.Service, its campaign
// labels and its newest sweeps' snapshots read ahead by Warm, as the server does in the
// background at start; warm-s is how long that took). Each page reports how many sweeps
// were listed (sweeps-listed), its first view (first-ms), median (p50-ms), 99th
// percentile (p99-ms: the slowest below 100 views), slowest (max-ms) and the CPU time of
// the process per view (cpu-ms/op).
//
//	go test ./web -run '^$' -bench SweepPagesManyLabels -benchtime 3x -timeout 1h
func BenchmarkSweepPagesManyLabels(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a store of 1M labeled pairs")
	}
	pairs := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("DEDUP_BENCH_LABELED")); err == nil && n >= 1000 {
		pairs = n
	}
	ctx := context.Background()
	store, reg, built := benchCampaign(b, "labels", dbtest.Campaign{Docs: 2136, Pairs: pairs, Events: 3 * pairs})
	cookie := benchSession(b, store, "reviewer", auth.Reviewer)
	d := testDeps(store, reg)
	sweeps, h := d.Sweeps, New(d)

	// The sweep, with its peak heap.
	grid := sweep.Grid{Specs: sweep.Representations(lsh.DefaultSpec(), []int{3, 5}, nil, []int{64, 128}),
		Shapes: []lsh.Shape{{Bands: 16, Rows: 4}, {Bands: 8, Rows: 8}, {Bands: 20, Rows: 3}}, Thresholds: []float64{0.5, 0.7, 0.9},
		Verifications: []sweep.Verification{sweep.MinHashEstimate, sweep.ExactJaccard}, Policies: []cluster.Policy{cluster.Components}}
	// The sweep as a sub-benchmark of its own (a parent's metrics are not printed beside
	// sub-benchmarks): each iteration starts one and waits for it; the pages below show
	// the last.
	var sw sweeprun.Sweep
	b.Run("sweep", func(b *testing.B) {
		var peakMB float64
		var cpu time.Duration
		for b.Loop() {
			runtime.GC()
			base := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
			metrics.Read(base)
			stop := sampleHeap()
			c0 := cpuTime()
			s, err := sweeps.Start(ctx, sweeprun.StartRequest{CampaignID: built.CampaignID, Grid: grid})
			if err != nil {
				b.Fatal(err)
			}
			if s, err = sweeps.Wait(ctx, s.ID); err != nil || s.State != sweeprun.Done {
				b.Fatalf("sweep: %s %s %v", s.State, s.Error, err)
			}
			sw = s
			cpu += cpuTime() - c0
			peak := stop()
			peakMB = max(peakMB, float64(peak-min(peak, base[0].Value.Uint64()))/(1<<20))
			b.Logf("sweep of %d configurations over %d labeled pairs: peak heap %.0f MB above %.0f MB", s.Total, pairs,
				float64(peak-min(peak, base[0].Value.Uint64()))/(1<<20), float64(base[0].Value.Uint64())/(1<<20))
		}
		b.ReportMetric(cpu.Seconds()/float64(b.N), "sweep-cpu-s")
		b.ReportMetric(peakMB, "sweep-peak-heap-MB")
	})
	if sw.ID == 0 {
		b.Fatal("no sweep ran")
	}

	view := func(b *testing.B, url string) time.Duration {
		t0 := time.Now()
		req := httptest.NewRequest(http.MethodGet, url, nil)
		req.AddCookie(cookie)
		rec := serve(h, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d", url, rec.Code)
		}
		return time.Since(t0)
	}
	labeled := 0
	label := func(b *testing.B) {
		labeled++
		if _, err := store.RecordEvent(ctx, built.CampaignID, built.FirstPair+int64(labeled), db.NewLabel{Annotator: fmt.Sprintf("bench%d", labeled),
			Category: "minor", Duplicate: true}, 0); err != nil {
			b.Fatal(err)
		}
	}
	listed, err := store.Sweeps(ctx, built.CampaignID)
	if err != nil {
		b.Fatal(err)
	}
	list := fmt.Sprintf("/campaigns/%d/sweeps", built.CampaignID)
	for _, bc := range []struct {
		name, url string
		relabel   bool
		restart   bool
	}{
		{"sweeps list", list, false, false},
		{"dashboard", fmt.Sprintf("/sweeps/%d", sw.ID), false, false},
		{"sweeps list after a label", list, true, false},
		{"dashboard after a label", fmt.Sprintf("/sweeps/%d", sw.ID), true, false},
		{"sweeps list after a restart", list, false, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var took []time.Duration
			var cpu, warm time.Duration
			for b.Loop() {
				if bc.relabel {
					b.StopTimer()
					label(b)
					b.StartTimer()
				}
				if bc.restart {
					b.StopTimer()
					d := testDeps(store, reg)
					w0 := time.Now()
					if err := d.Sweeps.Warm(ctx); err != nil {
						b.Fatal(err)
					}
					warm += time.Since(w0)
					runtime.GC() // Warm's garbage is collected long before a first view comes
					h = New(d)
					b.StartTimer()
				}
				c0 := cpuTime()
				took = append(took, view(b, bc.url))
				cpu += cpuTime() - c0
			}
			if bc.url == list {
				b.ReportMetric(float64(min(len(listed), maxSweepsListed)), "sweeps-listed")
			}
			if bc.restart {
				b.ReportMetric(warm.Seconds()/float64(len(took)), "warm-s")
			}
			b.ReportMetric(float64(took[0])/1e6, "first-ms")
			b.ReportMetric(float64(median(took))/1e6, "p50-ms")
			b.ReportMetric(float64(percentile(took, 99))/1e6, "p99-ms")
			b.ReportMetric(float64(slicesMax(took))/1e6, "max-ms")
			b.ReportMetric(float64(cpu)/1e6/float64(len(took)), "cpu-ms/op")
		})
	}
}

// percentile returns the p-th percentile of ds (nearest rank): the slowest of the
// fastest p percent.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(0, (len(s)*p+99)/100-1)]
}

func slicesMax(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// sampleHeap samples the heap in use every 20 ms until stop is called and returns the
// largest.
func sampleHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak.Store(max(peak.Load(), sample[0].Value.Uint64()))
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}
