package bulk

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/gencorpus"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// params is the configuration the tests run: word 5-shingles, k=128, 16 bands x 8 rows,
// threshold 0.8.
func params(t testing.TB, v review.Verification, pol cluster.Policy) review.Params {
	t.Helper()
	rule, err := cluster.ParseRule("earliest")
	if err != nil {
		t.Fatal(err)
	}
	return review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 8}, Threshold: 0.8, Verification: v, Policy: pol, Rule: rule}
}

var (
	sampleOnce sync.Once
	sampleDocs []gencorpus.Doc
	sampleErr  error
)

// generate writes a corpus of n documents (gencorpus, seed 1) to dir and returns its
// path and its planted duplicates.
func generate(t testing.TB, dir string, n int) (string, []gencorpus.Planted) {
	t.Helper()
	sampleOnce.Do(func() {
		docs, err := demo.Sample()
		sampleErr = err
		for _, d := range docs {
			sampleDocs = append(sampleDocs, gencorpus.Doc{Text: d.Text, Source: d.Source, Lang: d.Lang})
		}
	})
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	var body, truth bytes.Buffer
	if _, err := gencorpus.Write(&body, &truth, sampleDocs, gencorpus.Options{N: n, Seed: 1, MaxBytes: 4096}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(path, body.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	planted, err := gencorpus.ReadTruth(&truth)
	if err != nil {
		t.Fatal(err)
	}
	return path, planted
}

// newCorpus writes a generated corpus of n documents to a temporary folder and returns
// it, the output folder of a run beside it, and the parameters of verification v and
// policy pol.
func newCorpus(t *testing.T, n int, v review.Verification, pol cluster.Policy) (in, out string, p review.Params) {
	t.Helper()
	dir := t.TempDir()
	in, _ = generate(t, dir, n)
	return in, filepath.Join(dir, "out"), params(t, v, pol)
}

func options(p review.Params, in, out string) Options {
	return Options{Params: p, In: in, Out: out, ChunkDocs: 256, RunBytes: 64 << 10, Workers: 2,
		Corpus: corpus.Options{MetaFields: []string{"source", "lang", "date"}}}
}

// clustersOf maps every document in out's clusters.jsonl to its cluster, reading it a
// line at a time.
func clustersOf(t testing.TB, out string) map[string]int64 {
	t.Helper()
	f, err := os.Open(filepath.Join(out, ClustersJSONL))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	clusterOf := map[string]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<28)
	for sc.Scan() {
		var c ClusterLine
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		for _, m := range c.Members {
			clusterOf[m] = c.Cluster
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return clusterOf
}

// TestRunFindsPlantedDuplicates checks recall on the generator's planted pairs, and that
// the candidates from sorted runs on disk are exactly lsh.CandidatesBounded's in memory.
func TestRunFindsPlantedDuplicates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, planted := generate(t, dir, 3000)
	out := filepath.Join(dir, "out")
	p := params(t, review.Exact, cluster.Components)
	sum, err := Run(context.Background(), options(p, in, out))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Docs != 3000 || sum.Rejected != 0 {
		t.Fatalf("Run read %d documents, refused %d; want 3000, 0", sum.Docs, sum.Rejected)
	}

	// Candidates: the same pairs as the in-memory banding over the first member of each
	// exact group (many runs: RunBytes is 64 KiB).
	recs := readCorpus(t, in)
	h, err := lsh.NewHasher(p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	wantPairs := memoryCandidates(t, recs, p)
	for _, name := range intermediates {
		if _, err := os.Stat(filepath.Join(out, name)); err == nil {
			t.Errorf("%s left after the run", name)
		}
	}
	if sum.Candidates != int64(len(wantPairs)) {
		t.Errorf("Run found %d candidate pairs; the in-memory banding finds %d", sum.Candidates, len(wantPairs))
	}

	// Recall: every exact copy, and the planted near-duplicates whose Jaccard is at
	// least 0.85 (LSH finds such a pair with probability >= 0.994 at 16x8), are in one
	// cluster with their original. Tolerance: at most 2% of those near pairs missed.
	clusterOf := clustersOf(t, out)
	text := map[string]string{}
	for _, r := range recs {
		text[r.ID] = r.Text
	}
	together := func(a, b string) bool { return clusterOf[a] != 0 && clusterOf[a] == clusterOf[b] }
	var near, nearFound, exact int
	for _, pl := range planted {
		if pl.Kind == "exact" {
			exact++
			if !together(pl.Dup, pl.Original) {
				t.Errorf("exact copy %s of %s is not in its original's cluster", pl.Dup, pl.Original)
			}
			continue
		}
		if lsh.ExactJaccard(h.ShingleSet(text[pl.Dup]), h.ShingleSet(text[pl.Original])) < 0.85 {
			continue
		}
		near++
		if together(pl.Dup, pl.Original) {
			nearFound++
		}
	}
	if near < 100 || exact < 20 {
		t.Fatalf("only %d near and %d exact planted pairs: the corpus is too small to measure recall", near, exact)
	}
	if recall := float64(nearFound) / float64(near); recall < 0.98 {
		t.Errorf("recall on %d planted near-duplicates (Jaccard >= 0.85) = %.3f; want >= 0.98", near, recall)
	}
	t.Logf("%d docs, %d candidates, %d accepted, %d clusters, %d removed; planted: %d/%d near found, %d exact",
		sum.Docs, sum.Candidates, sum.Accepted, sum.Clusters, sum.Removed, nearFound, near, exact)

	// The removals: one row per removed document in both files, in the review format.
	rows := readCSV(t, filepath.Join(out, RemovalsCSV))
	if len(rows) != sum.Removed+1 || strings.Join(rows[0], ",") != strings.Join(review.CSVColumns, ",") {
		t.Fatalf("%s: %d rows, header %v; want %d and %v", RemovalsCSV, len(rows), rows[0], sum.Removed+1, review.CSVColumns)
	}
	for _, row := range rows[1:] {
		if row[17] != "proposed" || row[11] != p.Spec.String() || row[15] != "exact" {
			t.Fatalf("row %v: want decision proposed, the spec and exact verification", row)
		}
	}
}

// TestCandidatesMatchInMemory checks the external sort alone: the pairs in
// candidates.bin (kept by stopping before the shingles stage) are those of the in-memory
// banding.
func TestCandidatesMatchInMemory(t *testing.T) {
	t.Parallel()
	in, out, p := newCorpus(t, 2000, review.Estimate, cluster.KeeperStar)
	opt := options(p, in, out)
	opt.RunBytes = 16 << 10
	stop := errors.New("stop")
	opt.crash = func(stage string, unit int) error {
		if stage == StageCandidates+"-done" {
			return stop
		}
		return nil
	}
	if _, err := Run(context.Background(), opt); !errors.Is(err, stop) {
		t.Fatalf("Run = %v; want the injected stop", err)
	}
	b, err := os.ReadFile(filepath.Join(out, candFile))
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for i := 0; i < len(b); i += 8 {
		got = append(got, binary.LittleEndian.Uint64(b[i:]))
	}
	want := memoryCandidates(t, readCorpus(t, in), p)
	if !slices.Equal(got, want) {
		t.Fatalf("candidates.bin has %d pairs; the in-memory banding %d (first differences matter)", len(got), len(want))
	}
	if len(want) == 0 {
		t.Fatal("no candidates: the test corpus plants none?")
	}
}

// memoryCandidates is what a run's candidates must be: lsh.CandidatesBounded in memory
// over the first of each group of records with one normalized text, as sorted a<<32|b
// pairs of positions in recs.
func memoryCandidates(t testing.TB, recs []corpus.Record, p review.Params) []uint64 {
	t.Helper()
	h, err := lsh.NewHasher(p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	norm := lsh.NewNormalizer(p.Spec.Norm)
	seen := map[string]bool{}
	var reps []int
	var sigs []lsh.Signature
	for i, r := range recs {
		if key := norm.Normalize(r.Text); !seen[key] {
			seen[key] = true
			reps = append(reps, i)
			sigs = append(sigs, h.Signature(r.Text, nil))
		}
	}
	cands, _, err := lsh.CandidatesBounded(sigs, p.Shape, MaxBucket)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, c := range cands {
		out = append(out, uint64(reps[c.A])<<32|uint64(reps[c.B]))
	}
	slices.Sort(out)
	return out
}

func readCorpus(t testing.TB, path string) []corpus.Record {
	t.Helper()
	r, err := corpus.OpenFile(path, "", corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []corpus.Record
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		out = append(out, rec)
	}
	return out
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		rows = append(rows, strings.Split(line, ","))
	}
	return rows
}

// outputs are the files compared between an interrupted and an uninterrupted run.
var outputs = []string{RemovalsCSV, RemovalsJSONL, ClustersJSONL, SummaryJSON, RejectsJSONL}

func sameOutputs(t *testing.T, a, b string) {
	t.Helper()
	for _, name := range outputs {
		x, err := os.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs after the resume (%d bytes vs %d)", name, len(x), len(y))
		}
	}
}

// TestMain runs the child of TestResumeAfterKill when asked to.
func TestMain(m *testing.M) {
	if os.Getenv("BULK_CHILD_IN") != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child runs the pipeline, printing each unit of work done; at the unit named by
// BULK_CHILD_HOLD it stops and waits for the kill.
func child() int {
	var p review.Params
	if err := json.Unmarshal([]byte(os.Getenv("BULK_CHILD_PARAMS")), &p); err != nil {
		fmt.Println("params:", err)
		return 2
	}
	opt := options(p, os.Getenv("BULK_CHILD_IN"), os.Getenv("BULK_CHILD_OUT"))
	hold := os.Getenv("BULK_CHILD_HOLD")
	opt.crash = func(stage string, unit int) error {
		u := fmt.Sprintf("%s %d", stage, unit)
		fmt.Println(u)
		if u == hold {
			time.Sleep(time.Minute) // the parent kills us here
		}
		return nil
	}
	if _, err := Run(context.Background(), opt); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("finished")
	return 0
}

// TestResumeAfterKill runs the pipeline in a child process, SIGKILLs it at a point of
// each stage, resumes it in this process, and checks the output is byte-identical to an
// uninterrupted run's, and that the resume skipped what was complete.
func TestResumeAfterKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := generate(t, dir, 2500)
	p := params(t, review.Exact, cluster.KeeperStar)
	clean := filepath.Join(dir, "clean")
	if _, err := Run(context.Background(), options(p, in, clean)); err != nil {
		t.Fatal(err)
	}
	pj, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		hold      string
		skipped   int // stages the resume skips
		firstUnit int // the first signature chunk the resume signs (-1: none)
	}{
		{"signatures 3", 0, 4},
		{"signatures-done 0", 1, -1},
		{"candidates 2", 2, -1},
		{"verify-done 0", 5, -1},
		{"cluster-done 0", 6, -1},
	}
	for i, tc := range tests {
		t.Run(strings.ReplaceAll(tc.hold, " ", "_"), func(t *testing.T) {
			if testing.Short() && i%2 == 1 {
				t.Skip("-short: every other kill point (CI's race run)")
			}
			out := filepath.Join(dir, strings.ReplaceAll(tc.hold, " ", "_"))
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "BULK_CHILD_IN="+in, "BULK_CHILD_OUT="+out, "BULK_CHILD_PARAMS="+string(pj), "BULK_CHILD_HOLD="+tc.hold)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			reached := false
			for sc.Scan() {
				if sc.Text() == tc.hold {
					reached = true
					break
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if !reached {
				t.Fatalf("the child never reached %q", tc.hold)
			}
			if _, err := os.Stat(filepath.Join(out, RemovalsCSV)); err == nil {
				t.Fatalf("%s exists after a kill at %q", RemovalsCSV, tc.hold)
			}

			opt := options(p, in, out)
			skipped := 0
			opt.Progress = func(pr Progress) {
				if pr.Skipped {
					skipped++
				}
			}
			first := recordFirstChunk(&opt)
			if _, err := Run(context.Background(), opt); err != nil {
				t.Fatal(err)
			}
			if skipped != tc.skipped || *first != tc.firstUnit {
				t.Errorf("resume after a kill at %q skipped %d stages and signed from chunk %d; want %d and %d",
					tc.hold, skipped, *first, tc.skipped, tc.firstUnit)
			}
			sameOutputs(t, clean, out)
			if tmps, _ := filepath.Glob(filepath.Join(out, ".*.tmp*")); len(tmps) > 0 {
				t.Errorf("temporary files left after the resume: %v", tmps)
			}
		})
	}
}

// TestChangedInputStartsOver: a new modification time changes the run's key, and the
// run redoes every stage.
func TestChangedInputStartsOver(t *testing.T) {
	t.Parallel()
	in, out, p := newCorpus(t, 600, review.Estimate, cluster.Components)
	if _, err := Run(context.Background(), options(p, in, out)); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		skipped := 0
		opt := options(p, in, out)
		opt.Progress = func(pr Progress) {
			if pr.Skipped {
				skipped++
			}
		}
		if _, err := Run(context.Background(), opt); err != nil {
			t.Fatal(err)
		}
		return skipped
	}
	if n := count(); n != len(Stages) {
		t.Errorf("a second run of the same input skipped %d stages; want all %d", n, len(Stages))
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(in, later, later); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("a run after the input changed skipped %d stages; want 0", n)
	}
	p.Threshold = 0.9
	if n := count(); n != 0 {
		t.Errorf("a run with another threshold skipped %d stages; want 0", n)
	}
}

// TestOutputFolderOfSomethingElse: a folder with files but no run is refused, and
// nothing in it is touched.
func TestOutputFolderOfSomethingElse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := generate(t, dir, 50)
	out := filepath.Join(dir, "mine")
	if err := os.MkdirAll(filepath.Join(out, doneDir), 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(out, SummaryJSON)
	if err := os.WriteFile(keep, []byte("my own file"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), options(params(t, review.Estimate, cluster.Components), in, out))
	var oe *OutError
	if !errors.As(err, &oe) {
		t.Fatalf("Run into a folder of other files = %v; want an OutError", err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "my own file" {
		t.Errorf("the folder's own %s was touched: %q, %v", SummaryJSON, b, err)
	}
}

// TestRejectsAndDuplicateIDs: records the reader refuses are listed with their place and
// skipped; an id used twice stops the run naming both places.
func TestRejectsAndDuplicateIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := strings.Repeat("word ", 300)
	lines := []string{
		`{"id":"a","text":"the quick brown fox jumps over the lazy dog again and again"}`,
		`{"id":"b","text":"` + long + `"}`,
		`{"id":"","text":"no id"}`,
		`{"id":"c","text":"the quick brown fox jumps over the lazy dog again and again"}`,
	}
	in := filepath.Join(dir, "small.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := options(params(t, review.Exact, cluster.Components), in, filepath.Join(dir, "out"))
	opt.Corpus.MaxBytes = 1000
	sum, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Docs != 2 || sum.Rejected != 2 || sum.Removed != 1 || sum.RemovedExact != 1 {
		t.Errorf("summary %+v; want 2 documents, 2 refused, 1 removed as an exact duplicate", sum)
	}
	rej, err := os.ReadFile(filepath.Join(dir, "out", RejectsJSONL))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"place":"small.jsonl:2","field":"text"`, `"place":"small.jsonl:3","field":"id"`} {
		if !strings.Contains(string(rej), want) {
			t.Errorf("%s = %s; want it to contain %s", RejectsJSONL, rej, want)
		}
	}

	dup := filepath.Join(dir, "dup.jsonl")
	if err := os.WriteFile(dup, []byte(lines[0]+"\n"+lines[3]+"\n"+lines[0]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), options(params(t, review.Exact, cluster.Components), dup, filepath.Join(dir, "dupout")))
	var de *DuplicateIDError
	if !errors.As(err, &de) || de.Place != "dup.jsonl:3" || de.First != "dup.jsonl:1" || de.Field != "id" {
		t.Fatalf("Run = %v; want a DuplicateIDError at dup.jsonl:3, first at dup.jsonl:1", err)
	}
}

// TestCancelLeavesNoStageDone: a run cancelled in the signatures stage (Ctrl+C) returns
// the context's error and marks nothing done, and the next run finishes it.
func TestCancelLeavesNoStageDone(t *testing.T) {
	t.Parallel()
	in, out, p := newCorpus(t, 1500, review.Estimate, cluster.Components)
	ctx, cancel := context.WithCancel(context.Background())
	opt := options(p, in, out)
	opt.crash = func(stage string, unit int) error {
		if stage == StageSignatures && unit == 1 {
			cancel()
		}
		return nil
	}
	if _, err := Run(ctx, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run cancelled = %v; want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(out, doneDir, StageSignatures+".json")); err == nil {
		t.Fatal("a cancelled signatures stage is marked done")
	}
	sum, err := Run(context.Background(), options(p, in, out))
	if err != nil || sum.Docs != 1500 {
		t.Fatalf("Run after the cancel: %d documents, %v; want 1500", sum.Docs, err)
	}
}

// A document's line of docs.jsonl, written field by field, is what encoding/json writes
// for its docLine: ids and metadata that need escaping (quotes, HTML characters, control
// bytes, non-ASCII, invalid UTF-8), metadata absent, empty or not a string.
func TestDocLineAsEncodingJSON(t *testing.T) {
	t.Parallel()
	sum, norm := sha256.Sum256([]byte("text")), sha256.Sum256([]byte("norm"))
	for _, rec := range []corpus.Record{
		{ID: "a", Text: "x", Place: corpus.Place{File: "c.jsonl", Line: 1}},
		{ID: `q"u\o<t>e&`, Text: "", Place: corpus.Place{File: "dir/c d.jsonl", Line: 12},
			Meta: map[string]any{"source": "npm", "lang": "en", "date": "2024-01-02"}},
		{ID: "ünï\u2028\x01\xff", Text: "日本語", Place: corpus.Place{File: "p.parquet", RowGroup: 2, Row: 7, Parquet: true},
			Meta: map[string]any{"source": 3.5, "lang": "", "date": nil}},
		{ID: "m", Text: "y", Meta: map[string]any{"lang": "<b>\t</b>"}},
	} {
		want, err := json.Marshal(docLine{ID: rec.ID, Place: rec.Place.String(), Len: len(rec.Text), Hash: hex.EncodeToString(sum[:]),
			Norm: hex.EncodeToString(norm[:]), Source: metaString(rec.Meta, "source"), Lang: metaString(rec.Meta, "lang"),
			Date: metaString(rec.Meta, "date")})
		if err != nil {
			t.Fatal(err)
		}
		if got := appendDocLine(nil, &rec, sum, norm); string(got) != string(want)+"\n" {
			t.Errorf("appendDocLine(%+v) =\n%s\nwant\n%s", rec, got, want)
		}
	}
}

// TestResumeCutsTheParts stops a run after its third signature chunk, then damages the
// parts the chunks are appended to as a kill in the middle of a write would (bytes
// after the last complete chunk) and as a lost file would (a part shorter than its
// chunks): the first resume cuts the extra bytes and signs from the fourth chunk, the
// second starts the stage over; both end with the outputs of a run never stopped.
func TestResumeCutsTheParts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := generate(t, dir, 1500)
	p := params(t, review.Exact, cluster.KeeperStar)
	clean := filepath.Join(dir, "clean")
	if _, err := Run(context.Background(), options(p, in, clean)); err != nil {
		t.Fatal(err)
	}
	stopped := errors.New("stopped after chunk 2")
	for _, tc := range []struct {
		name   string
		damage func(part string) error
		first  int // the first chunk the resume signs
	}{
		{"bytes after the last chunk", func(part string) error {
			// More than the chunks still to come write: what is not cut stays past them.
			f, err := os.OpenFile(part, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteString(strings.Repeat("half a chunk\n", 1<<18))
			return errors.Join(err, f.Close())
		}, 3},
		{"a part shorter than its chunks", func(part string) error {
			if filepath.Base(part) != "signatures.part" {
				return nil
			}
			return os.Truncate(part, 100)
		}, 0},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			opt := options(p, in, out)
			opt.crash = func(stage string, unit int) error {
				if stage == StageSignatures && unit == 2 {
					return stopped
				}
				return nil
			}
			if _, err := Run(context.Background(), opt); !errors.Is(err, stopped) {
				t.Fatalf("Run = %v; want it stopped after chunk 2", err)
			}
			for _, name := range partNames {
				if err := tc.damage(filepath.Join(out, chunkDir, name)); err != nil {
					t.Fatal(err)
				}
			}
			opt = options(p, in, out)
			first := recordFirstChunk(&opt)
			if _, err := Run(context.Background(), opt); err != nil {
				t.Fatal(err)
			}
			if *first != tc.first {
				t.Errorf("the resume signed from chunk %d; want %d", *first, tc.first)
			}
			sameOutputs(t, clean, out)
		})
	}
}

// recordFirstChunk makes opt's run record the first signature chunk it signs (-1 when it
// signs none, the stage being done already).
func recordFirstChunk(opt *Options) *int {
	first := -1
	opt.crash = func(stage string, unit int) error {
		if stage == StageSignatures && first < 0 {
			first = unit
		}
		return nil
	}
	return &first
}
