package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// BenchmarkDefaultSweepFromPage is the demo's default sweep as a person runs it (issue
// 29 item 2): the sweep form posted as the Sweeps page sends it (the default grid, 21,840
// configurations), the sweep run in its background job into the store, and the
// dashboard of the finished sweep, all through the router over a fresh demo store in a
// fresh server (each iteration). "fresh" computes the 20 representations' signatures on
// the way, as the first sweep of a dataset does; "again" is a second sweep of the same
// grid on the same store (signatures cached, the server warm). It reports the start
// POST (start-ms), the click to the dashboard shown (click-to-dashboard-s: the POST, the
// sweep and the dashboard's first view), that first view (first-view-ms) and a second
// (view-ms), and the CPU time of the whole (cpu-s/op) beside wall time: on a shared
// machine the wall-clock figures include waiting for a core.
//
//	go test ./web -run '^$' -bench DefaultSweepFromPage -benchtime 1x
func BenchmarkDefaultSweepFromPage(b *testing.B) {
	if testing.Short() {
		b.Skip("a default sweep takes about a minute")
	}
	for _, variant := range []string{"fresh", "again"} {
		b.Run(variant, func(b *testing.B) {
			var start, click, first, view []time.Duration
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				p := newPageSweep(b)
				if variant == "again" {
					p.sweep(b)
				}
				b.StartTimer()
				c0 := cpuTime()
				r := p.sweep(b)
				cpu += cpuTime() - c0
				start, click, first, view = append(start, r.start), append(click, r.click), append(first, r.first), append(view, r.view)
			}
			b.ReportMetric(median(start).Seconds()*1000, "start-ms")
			b.ReportMetric(median(click).Seconds(), "click-to-dashboard-s")
			b.ReportMetric(median(first).Seconds()*1000, "first-view-ms")
			b.ReportMetric(median(view).Seconds()*1000, "view-ms")
			b.ReportMetric(cpu.Seconds()/float64(len(click)), "cpu-s/op")
		})
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// pageSweep is a server over a fresh copy of the demo with an admin signed in.
type pageSweep struct {
	h        http.Handler
	sweeps   *sweeprun.Service
	cookie   *http.Cookie
	campaign int64
}

type pageTimes struct{ start, click, first, view time.Duration }

func newPageSweep(b *testing.B) *pageSweep {
	b.Helper()
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(b.TempDir(), "demo.db"))
	if err != nil {
		b.Fatal(err)
	}
	reg := jobs.NewRegistry(ctx)
	b.Cleanup(func() {
		reg.Shutdown(ctx)
		store.Close()
	})
	if _, _, err := demo.Load(ctx, store); err != nil {
		b.Fatal(err)
	}
	cs, err := store.Campaigns(ctx)
	if err != nil || len(cs) != 1 {
		b.Fatalf("Campaigns() = %d, %v; want the demo's one", len(cs), err)
	}
	cookie := benchSession(b, store, "admin", auth.Admin)
	<-sweep.WarmShapes() // as the server does at start
	d := testDeps(store, reg)
	return &pageSweep{h: New(d), sweeps: d.Sweeps, cookie: cookie, campaign: cs[0].ID}
}

var sweepLocation = regexp.MustCompile(`^/sweeps/(\d+)`)

// sweep posts the default grid's form, waits for the sweep and views its dashboard twice.
func (p *pageSweep) sweep(b *testing.B) pageTimes {
	b.Helper()
	var t pageTimes
	form := defaultGridForm().values()
	form.Set("name", "default")
	form.Set("token", newFormToken())
	t0 := time.Now()
	req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/campaigns/%d/sweeps", p.campaign), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.RemoteAddr = "192.0.2.10:5555"
	req.AddCookie(p.cookie)
	rec := serve(p.h, req)
	t.start = time.Since(t0)
	m := sweepLocation.FindStringSubmatch(rec.Header().Get("Location"))
	if rec.Code != http.StatusSeeOther || m == nil {
		b.Fatalf("start sweep: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	sw, err := p.sweeps.Wait(context.Background(), id)
	if err != nil || sw.State != sweeprun.Done {
		b.Fatalf("sweep %d: %s %s %v", id, sw.State, sw.Error, err)
	}
	viewOnce := func() time.Duration {
		v0 := time.Now()
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/sweeps/%d", id), nil)
		req.AddCookie(p.cookie)
		rec := serve(p.h, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET /sweeps/%d: %d", id, rec.Code)
		}
		return time.Since(v0)
	}
	t.first = viewOnce()
	t.click = time.Since(t0)
	t.view = viewOnce()
	return t
}
