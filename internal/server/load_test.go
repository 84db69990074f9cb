package server

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
)

// TestLoad drives the real server over loopback at 200 requests/s from 20 signed-in
// annotators: 80% page views (start page, campaign page, pair pages), 20% label
// submissions. It runs 10 s by default; DEDUP_LOAD_SECONDS=60 gives the full minute.
// No request may fail with a 5xx, and afterwards the store holds exactly as many labels
// as submissions were accepted. Latencies are logged (p50/p99), not asserted.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode")
	}
	seconds := 10
	if s, err := strconv.Atoi(os.Getenv("DEDUP_LOAD_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	const rate, users = 200, 20
	base, _, store := startServerStore(t)
	ctx := context.Background()
	camps, err := store.Campaigns(ctx)
	if err != nil || len(camps) == 0 {
		t.Fatalf("no demo campaign: %v", err)
	}
	campaign := camps[0].ID
	refs, _ := store.PairDocs(ctx, campaign)
	var pairIDs []int64
	for _, r := range refs {
		pairIDs = append(pairIDs, r.ID)
	}
	slices.Sort(pairIDs)

	// Twenty annotators sign in through the login form, as a browser would.
	type user struct {
		name   string
		client *http.Client
		next   atomic.Int64 // index of the next pair this user labels
	}
	transport := &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	us := make([]*user, users)
	for i := range us {
		name := fmt.Sprintf("loaduser%02d", i)
		hash, _ := auth.HashPassword("load test password", testKDF)
		if _, err := store.CreateUser(ctx, "test", name, "annotator", hash); err != nil {
			t.Fatal(err)
		}
		jar, _ := cookiejar.New(nil)
		u := &user{name: name, client: &http.Client{Jar: jar, Transport: transport, CheckRedirect: noRedirect, Timeout: 30 * time.Second}}
		res, err := u.client.PostForm(base+"/login", url.Values{"name": {name}, "password": {"load test password"}})
		if err != nil || res.StatusCode != http.StatusSeeOther {
			t.Fatalf("login %s: %v %v", name, err, res)
		}
		res.Body.Close()
		// Each user labels its own stretch of pairs, so submissions never collide.
		u.next.Store(int64(i * len(pairIDs) / users))
		us[i] = u
	}

	var (
		mu        sync.Mutex
		latencies []time.Duration
		statuses  = map[int]int{}
		failures  []string
		accepted  atomic.Int64
		submitted atomic.Int64
		wg        sync.WaitGroup
	)
	record := func(d time.Duration, status int, what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		latencies = append(latencies, d)
		statuses[status]++
		if err != nil || status >= 500 {
			failures = append(failures, fmt.Sprintf("%s: %d %v", what, status, err))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	begin := time.Now()
	sem := make(chan struct{}, 256) // bounded in-flight requests
	// Open loop: request n is due at begin + n/rate, whatever the responses do; a late
	// sender catches up rather than dropping requests.
	for n := 0; n < seconds*rate; n++ {
		if wait := time.Until(begin.Add(time.Duration(n) * time.Second / rate)); wait > 0 {
			time.Sleep(wait)
		}
		u := us[n%users]
		label := rng.IntN(100) < 20
		page := rng.IntN(10)
		pair := pairIDs[rng.IntN(len(pairIDs))]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var req *http.Request
			what := ""
			if label {
				i := u.next.Add(1) - 1
				p := pairIDs[int(i)%len(pairIDs)]
				form := url.Values{"category": {"different"}, "duplicate": {"no"}, "previous": {"0"}, "action": {"submit"}}
				req, _ = http.NewRequest("POST", fmt.Sprintf("%s/campaigns/%d/pairs/%d/label", base, campaign, p), strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", base)
				what = "label"
				submitted.Add(1)
			} else {
				path := fmt.Sprintf("/campaigns/%d/pairs/%d", campaign, pair)
				switch {
				case page == 0:
					path = "/"
				case page == 1:
					path = fmt.Sprintf("/campaigns/%d", campaign)
				}
				req, _ = http.NewRequest("GET", base+path, nil)
				what = "GET " + path
			}
			start := time.Now()
			res, err := u.client.Do(req)
			status := 0
			if err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				status = res.StatusCode
				if label && status == http.StatusSeeOther {
					accepted.Add(1)
				}
			}
			record(time.Since(start), status, what, err)
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d failed requests, first: %v", len(failures), failures[:min(5, len(failures))])
	}
	slices.Sort(latencies)
	q := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
	elapsed := time.Since(begin).Seconds()
	t.Logf("%d requests in %.1f s (%.0f/s): statuses %v; latency p50 %v, p99 %v, max %v; %d label submissions, %d accepted",
		len(latencies), elapsed, float64(len(latencies))/elapsed, statuses, q(0.5), q(0.99), latencies[len(latencies)-1],
		submitted.Load(), accepted.Load())
	// Every accepted submission is one stored label by a load user; none was lost.
	stored := 0
	cur, err := store.CurrentLabels(ctx, campaign)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range cur {
		if strings.HasPrefix(l.Annotator, "loaduser") {
			stored++
		}
	}
	if int64(stored) != accepted.Load() || accepted.Load() == 0 {
		t.Errorf("stored labels %d; accepted submissions %d", stored, accepted.Load())
	}
}
