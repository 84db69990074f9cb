package sweep

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/par"
)

// largeCorpus is a synthetic dataset of n documents made from the team corpus
// (/work/shared/data/corpus.jsonl.gz, 5,092 real documents): document i is source
// document i mod 5,092, cut to its first 2,000 bytes, and for i >= 5,092 changed by a few
// seeded word edits (replace, delete or duplicate a word), so every source document has
// about n/5,092 near-duplicate copies on top of the corpus's own duplicates and
// translations. Texts are rebuilt on demand from the seed instead of held, as a store
// would read them.
type largeCorpus struct {
	sources []string
	n       int
}

func (c *largeCorpus) text(i int) string {
	src := c.sources[i%len(c.sources)]
	copyNo := i / len(c.sources)
	if copyNo == 0 {
		return src
	}
	rng := rand.New(rand.NewPCG(uint64(i), 0xed17))
	return editWords(src, 1+rng.IntN(4), rng)
}

// editWords makes edits seeded word edits to text: each replaces, deletes or duplicates
// one word.
func editWords(text string, edits int, rng *rand.Rand) string {
	words := strings.Fields(text)
	for range edits {
		if len(words) < 2 {
			break
		}
		j := rng.IntN(len(words))
		switch rng.IntN(3) {
		case 0:
			words[j] = fmt.Sprintf("edit%d", rng.IntN(1000))
		case 1:
			words = append(words[:j], words[j+1:]...)
		default:
			words = append(words[:j+1], words[j:]...)
		}
	}
	return strings.Join(words, " ")
}

// mosaicCorpus is n documents whose near-duplicates do not grow with n as largeCorpus's
// do (there every source has n/5,092 copies, so at 1,000,000 documents each has 196 and
// the duplicate pairs grow as n^2). Every line is real text of the team corpus; the
// documents are not: a base document takes a source document's language and length (cut
// to 2,000 bytes) and is filled with lines drawn at random from all lines of that
// language, so unrelated documents share shingles as texts of one language do, and
// lines now and then (a line is drawn about n*lines/pool times). A share of the
// documents (mosaicCopyShare, past the first 1,000) are copies of a base document drawn
// uniformly from those before them, with 0 to 4 seeded word edits (0: an exact copy):
// clusters of a base document and its copies, about 1.4 documents on average, a handful
// at most. Texts are rebuilt on demand from the seed.
type mosaicCorpus struct {
	pools   [][]string // lines of the corpus, by language
	poolOf  []int      // each source document's pool
	lengths []int      // each source document's length, cut to 2,000 bytes
	n       int
}

// mosaicCopyShare is the share of mosaicCorpus's documents that are edited copies.
const mosaicCopyShare = 0.3

func newMosaic(sources []corpusSource, n int) *mosaicCorpus {
	c := &mosaicCorpus{n: n}
	pool := map[string]int{}
	for _, s := range sources {
		p, ok := pool[s.lang]
		if !ok {
			p = len(c.pools)
			pool[s.lang] = p
			c.pools = append(c.pools, nil)
		}
		for line := range strings.SplitSeq(s.text, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				c.pools[p] = append(c.pools[p], line)
			}
		}
		c.poolOf = append(c.poolOf, p)
		c.lengths = append(c.lengths, min(len(s.text), 2000))
	}
	return c
}

// parent returns the base document i copies and the edits it makes, or -1 when i is a
// base document.
func (c *mosaicCorpus) parent(i int) (int, int) {
	rng := rand.New(rand.NewPCG(uint64(i), 0x5e17))
	if i < 1000 || rng.Float64() >= mosaicCopyShare {
		return -1, 0
	}
	for {
		j := rng.IntN(i)
		if p, _ := c.parent(j); p < 0 {
			return j, rng.IntN(5)
		}
	}
}

func (c *mosaicCorpus) text(i int) string {
	if p, edits := c.parent(i); p >= 0 {
		rng := rand.New(rand.NewPCG(uint64(i), 0xed17))
		if edits == 0 {
			return c.text(p)
		}
		return editWords(c.text(p), edits, rng)
	}
	rng := rand.New(rand.NewPCG(uint64(i), 0xba5e))
	src := rng.IntN(len(c.poolOf))
	lines := c.pools[c.poolOf[src]]
	var b strings.Builder
	for b.Len() < c.lengths[src] {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(lines[rng.IntN(len(lines))])
	}
	return cutValid(b.String(), 2000)
}

// cutValid cuts s to at most max bytes, at a UTF-8 boundary.
func cutValid(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[:max]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

type corpusSource struct{ text, lang string }

func readCorpusSources(path string, maxBytes int) ([]corpusSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var out []corpusSource
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var d struct{ Text, Lang string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, err
		}
		out = append(out, corpusSource{cutValid(d.Text, maxBytes), d.Lang})
	}
	return out, sc.Err()
}

// heapPeak samples the heap every 20 ms until stop is called and returns the largest
// heap in use (live objects and garbage not yet swept, roughly what the process holds)
// and the largest live heap the collector marked (what the sweep keeps). With
// DEDUP_SWEEP_HEAPPROF set to a file name it writes a heap profile there each time the
// live heap grows by a tenth past the last one written: the last is what was live at the
// peak (go tool pprof -sample_index=inuse_space).
func heapPeak() (stop func() (heap, live uint64)) {
	profPath := os.Getenv("DEDUP_SWEEP_HEAPPROF")
	var profAt uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	var heap, live atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			heap.Store(max(heap.Load(), sample[0].Value.Uint64()))
			live.Store(max(live.Load(), sample[1].Value.Uint64()))
			if l := sample[1].Value.Uint64(); profPath != "" && l > profAt+profAt/10 {
				profAt = l
				if f, err := os.Create(profPath); err == nil {
					pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() (uint64, uint64) {
		close(done)
		wg.Wait()
		return heap.Load(), live.Load()
	}
}

// peakRSS is the process's peak resident set (VmHWM), fixture included.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkSweep100k sweeps 100,000 documents built from the shared corpus (see
// largeCorpus; DEDUP_SWEEP_DOCS sets another count, at least 1,000; below two copies of
// every source document the corpus takes the first n/2 sources, two copies each) with 1,000
// labeled pairs (copies of one source document, labeled duplicates; random pairs,
// labeled different) under a draw design the model pools per bin of exact Jaccard.
// It needs DEDUP_SWEEP_100K=1. Signatures are computed when the sweep asks for them
// (signing-s), as a store without them cached would.
// The grid is word 5-shingles at k=128 and 256 with DefaultGrid's shapes, thresholds,
// verifications and policy; DEDUP_SWEEP_100K=default sweeps DefaultGrid itself.
// It reports the time per sweep, cpu-s/op, peak-heap-MB (the largest heap in use during
// the sweep, garbage included, minus the fixture's heap before it: sources and
// content hashes), peak-live-MB (the same for the live heap the collector marked) and
// peak-RSS-MB (the whole process's VmHWM, fixture and setup included).
// DEDUP_SWEEP_SPECS="level=char size=3 k=128;..." sweeps those representations instead.
// DEDUP_SWEEP_CORPUS=mosaic sweeps mosaicCorpus instead, whose near-duplicates do not
// grow with n; declined-configs counts the configurations of shapes the sweep declined
// (Options.CandidateShare).
// DEDUP_SWEEP_DUMP=file writes the results there as TestDumpDefaultResults does, to
// compare an engine change at this scale (the file, or the sha256 it logs).
func BenchmarkSweep100k(b *testing.B) {
	mode := os.Getenv("DEDUP_SWEEP_100K")
	if mode == "" {
		b.Skip("set DEDUP_SWEEP_100K=1 (word 5-shingles) or =default (DefaultGrid) to run")
	}
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("DEDUP_SWEEP_DOCS")); err == nil && v >= 1_000 {
		n = v
	}
	all, err := readCorpusSources("/work/shared/data/corpus.jsonl.gz", 1<<30)
	if err != nil {
		b.Skip("the shared corpus is not readable here:", err)
	}
	mosaic := os.Getenv("DEDUP_SWEEP_CORPUS") == "mosaic"
	var sources []string
	for _, s := range all {
		sources = append(sources, cutValid(s.text, 2000))
	}
	if n < 2*len(sources) {
		// Fewer documents than two of every source: half as many sources, two copies
		// each, so that the labeled duplicates have copies to come from.
		sources = sources[:n/2]
	}
	c := &largeCorpus{sources: sources, n: n}
	text := c.text
	var mc *mosaicCorpus
	if mosaic {
		mc = newMosaic(all, n)
		text = mc.text
	}
	// The texts are held, as sweeprun holds a store's (it reads them all before a sweep):
	// rebuilding one on every call cost the sweep's exact Jaccard 10% more CPU than
	// reading it.
	texts := make([]string, n)
	if err := par.Chunks(context.Background(), n, 1000, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			texts[i] = text(i)
		}
	}); err != nil {
		b.Fatal(err)
	}
	text = func(i int) string { return texts[i] }
	g := DefaultGrid()
	if mode != "default" {
		word5 := lsh.DefaultSpec()
		word256 := word5
		word256.Hashes = 256
		g.Specs = []lsh.Spec{word5, word256}
	}
	if list := os.Getenv("DEDUP_SWEEP_SPECS"); list != "" {
		// Representations of the default grid's form, ';' between them, in place of the
		// grid's: one representation's share of a sweep, alone.
		g.Specs = nil
		for text := range strings.SplitSeq(list, ";") {
			spec, err := lsh.ParseSpec(text)
			if err != nil {
				b.Fatal(err)
			}
			g.Specs = append(g.Specs, spec)
		}
	}
	if _, err := g.Configs(); err != nil {
		b.Fatal(err)
	}
	// Signatures are computed when the sweep asks for them, in chunks from the
	// on-demand texts, and not kept: the store's cache would read them from disk, one
	// request at a time (signing-s reports the time they took). The model's
	// representation, which bands the studio's frame, is a prefix of a longer one.
	var signing atomic.Int64
	var signingNow atomic.Int32
	sign := func(s lsh.Spec) ([]lsh.Signature, error) {
		t0 := time.Now()
		signingNow.Add(1)
		defer func() { signing.Add(int64(time.Since(t0))); signingNow.Add(-1) }()
		from := s
		for _, l := range Requests(append(slices.Clone(g.Specs), lsh.DefaultSpec())) {
			if l.Hashes > from.Hashes && CanPrefix(s, l) {
				from = l
			}
		}
		all := make([]lsh.Signature, 0, n)
		for lo := 0; lo < n; lo += 5000 {
			chunk := make([]string, 0, 5000)
			for i := lo; i < min(lo+5000, n); i++ {
				chunk = append(chunk, text(i))
			}
			part, err := from.Signatures(chunk)
			if err != nil {
				return nil, err
			}
			all = append(all, part...)
		}
		if from != s {
			all = prefixes(all, s.Hashes)
		}
		return all, nil
	}
	hashes := make([]uint64, n)
	norm := lsh.DefaultSpec().Norm
	for i := range n {
		hashes[i] = xxhash.Sum64String(norm.Normalize(text(i)))
	}
	// 500 pairs of copies of one source, 500 random pairs, as the studio's draws (the
	// model pools them per bin of exact Jaccard and sizes the bins from the dataset's
	// frame).
	rng := rand.New(rand.NewPCG(5, 5))
	copies := n / len(sources)
	var pairs []LabeledPair
	for id := range 1000 {
		var a, bb int
		cat, dup := "minor", true
		if id%2 == 0 && mosaic {
			// A copy and the base document it copies.
			for {
				bb = 1000 + rng.IntN(n-1000)
				if a, _ = mc.parent(bb); a >= 0 {
					break
				}
			}
		} else if id%2 == 0 {
			src := rng.IntN(len(sources))
			x, y := rng.IntN(copies), rng.IntN(copies-1)
			if y >= x {
				y++
			}
			a, bb = src+x*len(sources), src+y*len(sources)
		} else {
			a, bb = rng.IntN(n), rng.IntN(n-1)
			if bb >= a {
				bb++
			}
			cat, dup = "different", false
		}
		pairs = append(pairs, LabeledPair{ID: int64(id + 1), A: a, B: bb, Design: "jdraw-bench",
			Labels: []Label{{Annotator: "bench", Kind: "label", Category: cat, Duplicate: dup}}})
	}
	in := Input{
		Docs:       Documents{Count: n, ContentHash: hashes, Text: text},
		Signatures: func(_ context.Context, s lsh.Spec) ([]lsh.Signature, error) { return sign(s) },
		Pairs:      pairs,
		Categories: labels.DefaultCategories,
	}
	// DEDUP_SWEEP_SET_MB sets Options.SetBudget, in MB.
	var setBudget int64
	if v, err := strconv.Atoi(os.Getenv("DEDUP_SWEEP_SET_MB")); err == nil && v > 0 {
		setBudget = int64(v) << 20
	}
	runtime.GC()
	base := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(base)
	var heap, live uint64
	var rep *Report
	start := cpuTime(b)
	for b.Loop() {
		stop := heapPeak()
		t0 := time.Now()
		last := 0
		opt := Options{SetBudget: setBudget}
		opt.Progress = func(done, total int) {
			if done*10/total != last*10/total {
				b.Logf("%d of %d configurations after %v (%.0f cpu-s, heap %.0f MB)", done, total, time.Since(t0).Round(time.Second),
					(cpuTime(b) - start).Seconds(), heapNow()/(1<<20))
			}
			last = done
		}
		var doneNow atomic.Int64
		stopSample := make(chan struct{})
		if os.Getenv("DEDUP_SWEEP_SAMPLE") != "" {
			// One line a second on stderr: configurations done, CPU used in that second,
			// and whether signatures were being computed.
			prog := opt.Progress
			opt.Progress = func(done, total int) { doneNow.Store(int64(done)); prog(done, total) }
			go func() {
				prev := cpuTime(b)
				for i := 1; ; i++ {
					select {
					case <-stopSample:
						return
					case <-time.After(time.Second):
					}
					c := cpuTime(b)
					fmt.Fprintf(os.Stderr, "sample %3d s: %5d done, %.2f cores, signing %d\n", i, doneNow.Load(), (c - prev).Seconds(), signingNow.Load())
					prev = c
				}
			}()
		}
		rep, err = Run(context.Background(), in, g, opt)
		close(stopSample)
		if err != nil {
			b.Fatal(err)
		}
		h, l := stop()
		heap, live = max(heap, h), max(live, l)
	}
	reportCPU(b, start)
	if path := os.Getenv("DEDUP_SWEEP_DUMP"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		h := sha256.New()
		if err := writeResults(io.MultiWriter(f, h), rep); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		b.Logf("%d results written to %s, sha256 %s", len(rep.Results), path, digest(h))
	}
	fixture := base[0].Value.Uint64()
	b.ReportMetric(float64(heap-min(heap, fixture))/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(live-min(live, fixture))/(1<<20), "peak-live-MB")
	b.ReportMetric(peakRSS(), "peak-RSS-MB")
	b.ReportMetric(float64(len(rep.Results)), "configs")
	declined := 0
	for _, d := range rep.Declined {
		declined += d.Configs
		b.Logf("declined: %s %v (%d configurations), over %d pairs", d.Spec.String(), d.Shape, d.Configs, d.Limit)
	}
	b.ReportMetric(float64(declined), "declined-configs")
	maxCands := 0
	for _, r := range rep.Results {
		maxCands = max(maxCands, r.Candidates)
	}
	b.ReportMetric(float64(maxCands), "max-candidates")
	b.ReportMetric(time.Duration(signing.Load()).Seconds()/float64(b.N), "signing-s")
	if rep.Model != nil {
		b.Logf("model: %s; notes: %q", rep.Model.Describe(), rep.Model.Notes)
	} else {
		b.Log("no model (no dataset estimates)")
	}
}

// heapNow is the heap in use now.
func heapNow() float64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return float64(s[0].Value.Uint64())
}
