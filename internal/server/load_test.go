package server

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
)

// TestLoad has 200 signed-in annotators use the real server over loopback at once, the
// way a team labels: each asks for its next pair, opens it and labels it, and now and
// then opens the campaign page, the start page or another pair, thinking 0.5-1.5 s
// between requests (about 200 requests a second in all). The campaign is generated
// (internal/db/dbtest: a history of labels, edits, retractions, skips, flags and
// adjudications).
//
// Small by default so CI stays in its budget: 20,000 label events over 2,000 pairs, for
// 10 s. The target runs with DEDUP_LOAD_EVENTS=1000000 (100,000 pairs: a tenth
// of the events) and DEDUP_LOAD_SECONDS=60. DEDUP_LOAD_NEXT=0 leaves the queue out:
// each annotator labels pairs of its own share of the unlabeled ones, without asking
// for the next.
//
// Asserted: no request fails (no 5xx, no transport error) and every accepted label is
// stored exactly once. Latencies by kind of request are logged (p50, p99, max), not
// asserted: the machine's noise would make that a flaky test; the figures of a run
// are in the README.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode")
	}
	seconds, events := 10, 20_000
	if n, err := strconv.Atoi(os.Getenv("DEDUP_LOAD_SECONDS")); err == nil && n > 0 {
		seconds = n
	}
	if n, err := strconv.Atoi(os.Getenv("DEDUP_LOAD_EVENTS")); err == nil && n >= 1000 {
		events = n
	}
	useQueue := os.Getenv("DEDUP_LOAD_NEXT") != "0"
	const users = 200
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "load.db")
	store := dbtest.OpenFile(t, path)
	start := time.Now()
	built, err := dbtest.Build(ctx, path, "load", dbtest.Campaign{Docs: max(100, events/20), Pairs: events / 10, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("generated %d label events over %d pairs in %v", events, events/10, time.Since(start).Round(time.Millisecond))
	handled := &handlerTimes{by: map[string][]time.Duration{}}
	base, _ := serveStore(t, store, Config{Log: slog.New(handled)})
	campaignPath := fmt.Sprintf("/campaigns/%d", built.CampaignID)

	transport := &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 512}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	type user struct {
		name   string
		client *http.Client
		share  []int64 // without the queue: the pairs this user labels, unlabeled ones first
		last   int64   // the pair labeled last
	}
	us := make([]*user, users)
	hash, _ := auth.HashPassword("load test password", testKDF)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range us {
		name := fmt.Sprintf("load%03d", i)
		if _, err := store.CreateUser(ctx, "test", name, auth.Annotator, hash); err != nil {
			t.Fatal(err)
		}
		jar, _ := cookiejar.New(nil)
		u := &user{name: name, client: &http.Client{Jar: jar, Transport: transport, CheckRedirect: noRedirect, Timeout: 2 * time.Minute}}
		for j := i; j < len(built.Unlabeled); j += users {
			u.share = append(u.share, built.Unlabeled[j])
		}
		for k := i; k < events/10; k += users {
			if id := built.FirstPair + int64(k); !slices.Contains(u.share, id) {
				u.share = append(u.share, id)
			}
		}
		us[i] = u
		sem <- struct{}{}
		wg.Go(func() { // signing in through the form, as a browser does
			defer func() { <-sem }()
			res, err := u.client.PostForm(base+"/login", url.Values{"name": {name}, "password": {"load test password"}})
			if err != nil || res.StatusCode != http.StatusSeeOther {
				t.Errorf("login %s: %v %v", name, err, res)
				return
			}
			res.Body.Close()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// The first look at the campaign reads its whole history; the server does that in the
	// background at start. Wait for it, as people arriving later would not see it.
	for _, p := range []string{campaignPath, "/"} {
		res, err := us[0].client.Get(base + p)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v %v", p, err, res)
		}
		res.Body.Close()
	}

	var (
		mu        sync.Mutex
		latencies = map[string][]time.Duration{}
		statuses  = map[int]int{}
		failures  []string
		accepted  atomic.Int64
		perUser   = make([]int, users)
	)
	do := func(u *user, kind, method, path string, form url.Values) (*http.Response, error) {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, base+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", base)
		}
		t0 := time.Now()
		res, err := u.client.Do(req)
		d := time.Since(t0)
		status := 0
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			status = res.StatusCode
		}
		mu.Lock()
		defer mu.Unlock()
		latencies[kind] = append(latencies[kind], d)
		statuses[status]++
		if err != nil || status >= 500 {
			failures = append(failures, fmt.Sprintf("%s %s: %d %v", method, path, status, err))
		}
		return res, err
	}
	label := func(i int, u *user, pair int64, rng *rand.Rand) {
		form := url.Values{"category": {"different"}, "duplicate": {"no"}, "previous": {"0"}, "action": {"submit"}}
		if rng.IntN(3) == 0 {
			form.Set("category", "exact")
			form.Set("duplicate", "yes")
		}
		res, err := do(u, "label", "POST", fmt.Sprintf("%s/pairs/%d/label", campaignPath, pair), form)
		if err == nil && res.StatusCode == http.StatusSeeOther {
			accepted.Add(1)
			mu.Lock()
			perUser[i]++
			mu.Unlock()
			u.last = pair
		}
	}
	stop := time.Now().Add(time.Duration(seconds) * time.Second)
	begin := time.Now()
	for i, u := range us {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			think := func() { time.Sleep(500*time.Millisecond + time.Duration(rng.IntN(1000))*time.Millisecond) }
			time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond) // arrivals spread over a second
			for time.Now().Before(stop) {
				switch r := rng.IntN(10); {
				case r < 5: // the labeling flow: next pair, the pair, the label
					var pair int64
					if useQueue {
						res, err := do(u, "next", "GET", fmt.Sprintf("%s/next?after=%d", campaignPath, u.last), nil)
						if err != nil || res.StatusCode != http.StatusSeeOther {
							break // the queue is empty, or the request failed (counted)
						}
						pair, _ = strconv.ParseInt(res.Header.Get("Location")[strings.LastIndexByte(res.Header.Get("Location"), '/')+1:], 10, 64)
					} else {
						if len(u.share) == 0 {
							break
						}
						pair, u.share = u.share[0], u.share[1:]
					}
					think()
					do(u, "pair", "GET", fmt.Sprintf("%s/pairs/%d", campaignPath, pair), nil)
					think()
					label(i, u, pair, rng)
				case r < 7:
					do(u, "campaign", "GET", campaignPath, nil)
				case r < 9:
					do(u, "start", "GET", "/", nil)
				default:
					do(u, "pair", "GET", fmt.Sprintf("%s/pairs/%d", campaignPath, built.FirstPair+int64(rng.IntN(events/10))), nil)
				}
				think()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	if len(failures) > 0 {
		t.Errorf("%d failed requests, first: %v", len(failures), failures[:min(5, len(failures))])
	}
	total := 0
	var report []string
	for _, kind := range []string{"next", "pair", "label", "campaign", "start"} {
		ls := latencies[kind]
		if len(ls) == 0 {
			continue
		}
		total += len(ls)
		report = append(report, fmt.Sprintf("%-8s %5d  client %s  server %s", kind, len(ls), quantiles(ls), quantiles(handled.times(kind))))
	}
	t.Logf("%d users, %d requests in %.1f s (%.0f/s), statuses %v, queue %v; %d labels accepted\n\t%s", users, total, elapsed.Seconds(),
		float64(total)/elapsed.Seconds(), statuses, useQueue, accepted.Load(), strings.Join(report, "\n\t"))

	// Every accepted label is in the store once: as many label events by each user as
	// its accepted submissions, and no pair labeled twice by one user.
	conn, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stored := make([]int, users)
	rows, err := conn.Query(`SELECT annotator, count(*), count(DISTINCT pair_id) FROM label_events WHERE annotator LIKE 'load%' AND kind = 'label' GROUP BY annotator`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var n, pairs int
		rows.Scan(&name, &n, &pairs)
		i, _ := strconv.Atoi(strings.TrimPrefix(name, "load"))
		stored[i] = n
		if pairs != n {
			t.Errorf("%s: %d label events on %d pairs; want one per pair", name, n, pairs)
		}
	}
	rows.Close()
	// How many people a pair ended up labeled by: the queue serves a pair to everyone who
	// asks until the first label completes it, so under this load some pairs collect
	// dozens of labels (and the tallies m(m-1)/2 annotator pairs for each).
	var most int
	if err := conn.QueryRow(`SELECT coalesce(max(labels_n), 0) FROM label_pairs WHERE campaign_id = ?`, built.CampaignID).Scan(&most); err != nil {
		t.Fatal(err)
	}
	t.Logf("most standing labels on one pair: %d", most)
	for i := range users {
		if stored[i] != perUser[i] {
			t.Errorf("load%03d: %d labels stored; %d accepted", i, stored[i], perUser[i])
		}
	}
	if accepted.Load() == 0 {
		t.Error("no label was accepted")
	}
}

// quantiles formats p50, p99 and the maximum of ds.
func quantiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	ds = slices.Sorted(slices.Values(ds))
	q := func(p float64) time.Duration { return ds[int(p*float64(len(ds)-1))].Round(100 * time.Microsecond) }
	return fmt.Sprintf("p50 %v p99 %v max %v", q(0.5), q(0.99), q(1))
}

// handlerTimes is a log handler that keeps the duration of each request the server
// logs, by kind of request: the time in the handler, without the time a request waits
// to be accepted or scheduled.
type handlerTimes struct {
	mu sync.Mutex
	by map[string][]time.Duration
}

func (h *handlerTimes) Enabled(context.Context, slog.Level) bool { return true }
func (h *handlerTimes) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *handlerTimes) WithGroup(string) slog.Handler            { return h }

func (h *handlerTimes) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "request" {
		return nil
	}
	var method, path string
	var d time.Duration
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "method":
			method = a.Value.String()
		case "path":
			path = a.Value.String()
		case "duration":
			d = a.Value.Duration()
		}
		return true
	})
	var kind string
	switch parts := strings.Split(path, "/"); {
	case path == "/":
		kind = "start"
	case len(parts) == 3 && parts[1] == "campaigns":
		kind = "campaign"
	case len(parts) == 4 && parts[3] == "next":
		kind = "next"
	case len(parts) == 5 && parts[3] == "pairs":
		kind = "pair"
	case len(parts) == 6 && method == "POST" && parts[5] == "label":
		kind = "label"
	default:
		return nil // signing in
	}
	h.mu.Lock()
	h.by[kind] = append(h.by[kind], d)
	h.mu.Unlock()
	return nil
}

func (h *handlerTimes) times(kind string) []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.by[kind])
}
