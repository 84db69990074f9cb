package campaign_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// TestDrawMemory measures a draw's time and peak memory on a large real dataset (issue
// 15 item 9). It runs only when asked, in two steps, each its own process so the peak
// is the draw's own:
//
//	# 1. build the store: the shared corpus (5,092 real documents) repeated, each copy
//	#    with every (7+k)th word changed, cut at DEDUP_DRAW_DOCS documents
//	DEDUP_DRAW_DB=/tmp/draw.db DEDUP_DRAW_DOCS=32000 go test ./internal/campaign -run TestDrawMemory -v
//	# 2. measure a first draw (signatures not cached) on a copy, then a second one
//	cp /tmp/draw.db /tmp/d.db; DEDUP_DRAW_DB=/tmp/d.db go test ./internal/campaign -run TestDrawMemory -v
func TestDrawMemory(t *testing.T) {
	path := os.Getenv("DEDUP_DRAW_DB")
	if path == "" {
		t.Skip("set DEDUP_DRAW_DB (and DEDUP_DRAW_DOCS to build it) to measure a draw's memory")
	}
	ctx := context.Background()
	if _, err := os.Stat(path); os.IsNotExist(err) {
		buildDrawStore(t, path)
		return
	}
	store := dbtest.OpenFile(t, path)
	ds, err := store.LatestDataset(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	c, err := store.EnsureCampaign(ctx, ds.ID, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	cache := sigcache.New(store)
	for run := 1; run <= 2; run++ {
		rss0, _ := procStatus("VmRSS")
		start := time.Now()
		n, err := campaign.Draw(ctx, store, cache, "bench", c, campaign.DrawPlan{PerBin: 20, Bin: -1, Boundary: 20, Random: 20, Seed: uint64(run)})
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		rss, _ := procStatus("VmRSS")
		hwm, _ := procStatus("VmHWM")
		t.Logf("draw %d over %d documents: %d pairs in %.1f s; RSS %d MB before, %d MB after, peak %d MB",
			run, ds.Docs, n, took.Seconds(), rss0>>10, rss>>10, hwm>>10)
	}
}

// procStatus reads a kB field of /proc/self/status.
func procStatus(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

func buildDrawStore(t *testing.T, path string) {
	want, err := strconv.Atoi(os.Getenv("DEDUP_DRAW_DOCS"))
	if err != nil || want < 2 {
		t.Fatal("DEDUP_DRAW_DOCS: want the number of documents to build")
	}
	f, err := os.Open("/work/shared/data/corpus.jsonl.gz")
	if err != nil {
		t.Skip("the shared corpus is not on this machine: ", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var base []map[string]any
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var d map[string]any
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		base = append(base, d)
	}
	file, err := os.CreateTemp(t.TempDir(), "big-*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(file)
	n := 0
	for k := 0; n < want; k++ {
		for _, d := range base {
			if n == want {
				break
			}
			text := d["text"].(string)
			if k > 0 {
				words := strings.Split(text, " ")
				for i := 7 + k; i < len(words); i += 7 + k {
					words[i] = fmt.Sprintf("w%d", k)
				}
				text = strings.Join(words, " ")
			}
			out := map[string]any{}
			for key, v := range d {
				out[key] = v
			}
			out["id"], out["text"] = fmt.Sprintf("r%d-%s", k, d["id"]), text
			b, _ := json.Marshal(out)
			w.Write(append(b, '\n'))
			n++
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	file.Close()
	ctx := context.Background()
	store := dbtest.OpenFile(t, path)
	rep, err := ingest.File(ctx, store, file.Name(), ingest.Options{Dataset: "big", Corpus: corpus.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s: %d documents, %.0f MB of JSONL", path, rep.Accepted, float64(rep.Bytes)/1e6)
}
