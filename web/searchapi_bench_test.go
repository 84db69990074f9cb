package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// benchIndexDocs is the size of the index the search benchmark queries.
const benchIndexDocs = 100_000

// editText makes a near-copy of text with rng: each word is replaced, dropped or
// doubled with probability rate (so word 5-shingle Jaccard falls from about 0.95 at
// rate 0.01 to about 0.4 at 0.15).
func editText(rng *rand.Rand, text string, rate float64) string {
	words := strings.Fields(text)
	out := make([]string, 0, len(words)+8)
	for _, w := range words {
		if rng.Float64() >= rate {
			out = append(out, w)
			continue
		}
		switch rng.IntN(3) {
		case 0:
			out = append(out, fmt.Sprintf("w%x", rng.Uint32()))
		case 1: // dropped
		default:
			out = append(out, w, w)
		}
	}
	return strings.Join(out, " ")
}

// benchSearchServer builds, in dir, a store with the demo sample, a signed-off manifest
// (word 5-shingles, k=128, 16 bands x 8 rows, threshold 0.8, estimate verification), a
// search index of n documents (the demo's 2,136 documents repeated with seeded random
// edits) and an API token; it returns the handler, the token, the index's search path
// and the demo texts.
func benchSearchServer(b *testing.B, dir string, n int) (http.Handler, string, string, []string) {
	b.Helper()
	ctx := context.Background()
	store := dbtest.OpenFile(b, filepath.Join(dir, "bench.db"))
	rep, _, err := demo.Load(ctx, store)
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	if err := store.EachDocument(ctx, rep.Dataset.ID, func(d db.Document) error {
		texts = append(texts, d.Text)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	hash, _ := auth.HashPassword("bench-password", cheapKDF)
	admin, _ := store.CreateUser(ctx, "bench", "admin", auth.Admin, hash)
	prep, _ := store.CreateUser(ctx, "bench", "prep", auth.Reviewer, hash)
	appr, _ := store.CreateUser(ctx, "bench", "appr", auth.Approver, hash)
	rule, _ := cluster.ParseRule("earliest")
	p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 8}, Threshold: 0.8, Verification: review.Estimate,
		Policy: cluster.Components, Rule: rule, CodeVersion: "bench"}
	snap, err := store.DatasetSnapshot(ctx, rep.Dataset.ID, 0)
	if err != nil {
		b.Fatal(err)
	}
	m, err := store.CreateManifest(ctx, prep, db.NewManifest{DatasetID: rep.Dataset.ID, Params: p, DatasetHash: snap, ApprovalsRequired: 1})
	if err != nil {
		b.Fatal(err)
	}
	if err := manifests.RequestSignOff(ctx, store, prep, m); err != nil {
		b.Fatal(err)
	}
	m, _ = store.Manifest(ctx, m.ID)
	if _, err := manifests.Review(ctx, store, appr, m, review.Approve, "", m.ContentHash, "bench"); err != nil {
		b.Fatal(err)
	}
	x, err := store.CreateSearchIndex(ctx, admin, "bench", m.ID)
	if err != nil {
		b.Fatal(err)
	}
	token, th := auth.NewAPIToken()
	if _, err := store.CreateAPIToken(ctx, admin, "bench", th); err != nil {
		b.Fatal(err)
	}
	// The index: document i is demo text i mod 2,136 with edits seeded by i (the first
	// 2,136 unedited), signed on every core, stored in batches.
	docs := make([]db.SearchDoc, n)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			h, _ := lsh.NewHasher(p.Spec)
			for i := w; i < n; i += workers {
				text := texts[i%len(texts)]
				if i >= len(texts) {
					rng := rand.New(rand.NewPCG(uint64(i), 1))
					text = editText(rng, text, 0.01+0.14*rng.Float64())
				}
				docs[i] = db.SearchDoc{ID: fmt.Sprintf("doc-%d", i), Signature: h.Signature(text, nil)}
			}
		})
	}
	wg.Wait()
	for lo := 0; lo < n; lo += 10_000 {
		if err := store.InsertSearchDocs(ctx, x.ID, docs[lo:min(lo+10_000, n)]); err != nil {
			b.Fatal(err)
		}
	}
	reg := jobs.NewRegistry(ctx)
	b.Cleanup(func() { reg.Shutdown(context.Background()) })
	h := New(testDeps(store, reg))
	return h, token, searchPath(x.ID), texts
}

// BenchmarkSearchAPI sends single-document requests over real HTTP, through the
// router, to a 100k-document index, from 8 clients at once; each iteration is a round
// of requests. It reports requests per second (wall), p50/p99 latency as the clients see
// it, and the process's CPU time per request (clients included: they share the
// machine). The index is built (and loaded into memory by the first request, reported
// as load-s, its heap as index-MB) before the timers start; this takes a minute or so, which is why it lives
// in a benchmark and not in go test.
//
//   - search: searches only (no insert), 1,000 a round, of the demo's texts with fresh
//     seeded edits, half lightly (they have near-duplicates above the threshold), half
//     more (they meet candidates that fail it); dup-share is the share of 20 checked
//     answers that name a near-duplicate.
//   - insert: searches that insert, 200 a round, of texts edited so much (a word in
//     three) that nearly all are inserted: each is a transaction committed to disk
//     (synchronous=FULL) before its answer; inserted-share says how many were.
func BenchmarkSearchAPI(b *testing.B) {
	h, token, path, texts := benchSearchServer(b, b.TempDir(), benchIndexDocs)
	srv := httptest.NewServer(h)
	defer srv.Close()
	const clients = 8
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	send := func(body []byte) (time.Duration, []byte, error) {
		req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		out, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err == nil && res.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d: %s", res.StatusCode, out)
		}
		return time.Since(start), out, err
	}
	rng := rand.New(rand.NewPCG(7, 7))
	bodyOf := func(id string, rate float64, insert bool) []byte {
		text := editText(rng, texts[rng.IntN(len(texts))], rate)
		body, _ := json.Marshal(searchBody{Insert: insert, Documents: []doc{{id, text}}})
		return body
	}
	// The first request loads the index from the store; the heap it adds is the
	// index's memory (index-MB).
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	if _, _, err := send(bodyOf("first", 0.01, false)); err != nil {
		b.Fatal(err)
	}
	load := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	indexMB := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / 1e6

	// rounds sends bodies[next...] round at a time, each b.Loop iteration, and reports.
	rounds := func(b *testing.B, bodies [][]byte, round int, answered func([]byte)) {
		var lat []time.Duration
		var mu sync.Mutex
		total := 0
		for _, body := range bodies {
			total += len(body)
		}
		b.SetBytes(int64(total / len(bodies) * round))
		b.ReportAllocs()
		next, requests := 0, 0
		cpu0, wall0 := cpuTime(), time.Now()
		for b.Loop() {
			var wg sync.WaitGroup
			work := make(chan []byte)
			for range clients {
				wg.Go(func() {
					var mine []time.Duration
					for body := range work {
						d, out, err := send(body)
						if err != nil {
							b.Error(err)
							continue
						}
						mine = append(mine, d)
						if answered != nil {
							mu.Lock()
							answered(out)
							mu.Unlock()
						}
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				})
			}
			for range round {
				work <- bodies[next%len(bodies)]
				next++
			}
			close(work)
			wg.Wait()
			requests += round
		}
		wall, cpu := time.Since(wall0), cpuTime()-cpu0
		slices.Sort(lat)
		pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
		b.ReportMetric(float64(requests)/wall.Seconds(), "q/s")
		b.ReportMetric(pct(0.5), "p50-ms")
		b.ReportMetric(pct(0.99), "p99-ms")
		b.ReportMetric(float64(cpu)/1e6/float64(requests), "cpu-ms/q")
		b.ReportMetric(load.Seconds(), "load-s")
		b.ReportMetric(indexMB, "index-MB")
	}

	b.Run("search", func(b *testing.B) {
		bodies := make([][]byte, 4000)
		for i := range bodies {
			rate := 0.002 + 0.02*rng.Float64() // half near-copies (Jaccard 0.9-0.99),
			if i%2 == 1 {
				rate = 0.05 + 0.1*rng.Float64() // half further edited (0.4-0.75)
			}
			bodies[i] = bodyOf(fmt.Sprintf("q-%d", i), rate, false)
		}
		dups := 0
		for _, body := range bodies[:20] {
			_, out, err := send(body)
			if err != nil {
				b.Fatal(err)
			}
			var res searchResponse
			json.Unmarshal(out, &res)
			if len(res.Results) == 1 && len(res.Results[0].Duplicates) > 0 {
				dups++
			}
		}
		if dups == 0 {
			b.Fatal("no search found a near-duplicate")
		}
		rounds(b, bodies, 1000, nil)
		b.ReportMetric(float64(dups)/20, "dup-share")
	})
	b.Run("insert", func(b *testing.B) {
		bodies := make([][]byte, 3000)
		for i := range bodies {
			bodies[i] = bodyOf(fmt.Sprintf("new-%d", i), 0.33, true)
		}
		answers, inserted := 0, 0
		rounds(b, bodies, 200, func(out []byte) {
			answers++
			if bytes.Contains(out, []byte(`"inserted":1`)) {
				inserted++
			}
		})
		b.ReportMetric(float64(inserted)/float64(answers), "inserted-share")
	})
}

// BenchmarkReadSearch reads a search request of 1,000 documents of about 1.7 KB each:
// "decode" is the strict decoding alone (decodeSearch: UTF-8, surrogates, keys, shape),
// "read" the whole of readSearch with it.
func BenchmarkReadSearch(b *testing.B) {
	docs := make([]map[string]string, 1000)
	for i := range docs {
		docs[i] = map[string]string{"id": fmt.Sprintf("page-%d", i), "text": strings.Repeat(fmt.Sprintf("word%d café naïve ", i%97), 80)}
	}
	body, err := json.Marshal(map[string]any{"insert": true, "documents": docs})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := decodeSearch(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest("POST", "/api/v1/indexes/1/search", bytes.NewReader(body))
			if _, _, err := readSearch(httptest.NewRecorder(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
