package manifests

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// BenchmarkRunDemo runs one configuration over the demo sample (2,136 real documents,
// 12.4 MB of text, 832 labeled pairs) end to end, signatures cached: candidates, the
// exact pass, exact verification, three policies, the one-configuration sweep against the
// labels, and the manifest stored. SetBytes is the dataset's text, so MB/s is printed.
func BenchmarkRunDemo(b *testing.B) {
	ctx := context.Background()
	store, rep, u := demoStore(b)
	rule, _ := cluster.ParseRule("longest")
	sigs := sigcache.New(store)
	for _, v := range []review.Verification{review.Exact, review.Estimate} {
		b.Run(string(v), func(b *testing.B) {
			p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: 0.5, Verification: v,
				Policy: cluster.KeeperStar, Rule: rule, CodeVersion: "bench"}
			req := Request{DatasetID: rep.Dataset.ID, Params: p, By: u}
			if _, err := Run(ctx, store, sigs, req, nil); err != nil { // fills the signature cache
				b.Fatal(err)
			}
			b.SetBytes(rep.Bytes)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(ctx, store, sigs, req, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkImportResults brings back an engine's pairs over a dataset of
// DEDUP_IMPORT_DOCS documents (default 20,000; 120-word windows of real text): every
// document in a cluster of 2 to 5 with its neighbours, the pairs as CSV, read, built,
// measured here (texts read, signed and shingled again), the 200-cluster sample drawn,
// and the manifest stored in one transaction. SetBytes is the pairs file; removals/s is
// reported.
func BenchmarkImportResults(b *testing.B) {
	ctx := context.Background()
	n := 20000
	if s := os.Getenv("DEDUP_IMPORT_DOCS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	store := dbtest.Open(b)
	words := strings.Fields(strings.Join(realtext.Texts(b, 40, 0), " "))
	var docs strings.Builder
	for i := range n {
		at := (i * 7) % (len(words) - 120)
		fmt.Fprintf(&docs, "{\"id\": \"d%d\", \"text\": %q}\n", i, strings.Join(words[at:at+120], " "))
	}
	r, err := corpus.NewReader(strings.NewReader(docs.String()), "bench.jsonl", corpus.JSONL, corpus.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rep, err := ingest.Documents(ctx, store, r, "bench.jsonl", ingest.Options{Dataset: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	var pairs strings.Builder
	pairs.WriteString("id_a,id_b,score\n")
	removals := 0
	for i, c := 0, 0; i < n; c++ {
		size := min(2+c%4, n-i)
		for m := 1; m < size; m++ {
			fmt.Fprintf(&pairs, "d%d,d%d,%.3f\n", i, i+m, 0.5+float64((i+m)%50)/100)
		}
		removals += size - 1
		i += size
	}
	file := []byte(pairs.String())
	u, _ := store.CreateUser(ctx, "t", "prep", auth.Reviewer, "x")
	rule, _ := cluster.ParseRule("longest")
	p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: 0.8, Verification: review.Exact,
		Policy: cluster.Components, Rule: rule}
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		req := ImportRequest{DatasetID: rep.Dataset.ID, Format: results.Pairs, File: results.Source{Name: "pairs.csv", Reader: bytes.NewReader(file)},
			Params: &p, By: u}
		if _, err := ImportResults(ctx, store, req, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(removals)*float64(b.N)/b.Elapsed().Seconds(), "removals/s")
	b.ReportMetric((cpuTime()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user and system CPU time so far: on a shared machine the
// wall clock measures the neighbours too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
