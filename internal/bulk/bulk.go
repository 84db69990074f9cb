// Package bulk runs a calibrated configuration (review.Params, as settings.json carries
// it) over a whole corpus on one machine, the way the batch engines that deduplicate at
// scale do (datatrove's MinHash stages, text-dedup), and writes the removals it proposes
// as a manifest in the review format, to be imported, reviewed and signed off.
//
// The corpus is never held in memory, nor are the LSH buckets. The run is a sequence of
// stages, each writing its output to the output folder and then a completion marker that
// holds the run's key (a hash of the parameters and of the input's name, size and
// modification time); a run started again skips every stage whose marker holds the same
// key, and starts over when the key changed:
//
//  1. signatures: one streaming pass over the corpus, signatures on all cores, written in
//     input order in chunks, each written while the next is signed (a killed run resumes
//     from the last complete chunk); the exact pass's key is hashed from the normalized
//     text the signature was computed from, not normalized again; records
//     the corpus reader refuses (over the size cap, no id, bad UTF-8) are listed in
//     rejects.jsonl and skipped, as an import skips them;
//  2. exact: documents whose normalized texts are equal (SHA-256) form exact groups; only
//     the first member of a group takes part in LSH, the others follow it;
//  3. candidates: for each band of each document a record (band key, document) goes into
//     a memory buffer of bounded size, which is sorted and written to disk as a run when
//     full; a k-way merge of the runs meets every bucket in key order and emits its pairs
//     (the first MaxBucket documents of a bucket pair up, as the studio's own runs do),
//     themselves sorted in bounded runs and merged into the unique candidate pairs;
//  4. shingles: a second streaming pass stores the shingle sets of the documents that are
//     in a candidate pair, for exact Jaccard;
//  5. verify: each candidate's similarity, the MinHash estimate or exact Jaccard as the
//     configuration says;
//  6. cluster: internal/cluster under the configuration's policy and keeper rule;
//  7. manifest: removals.csv and removals.jsonl (review.WriteCSV and review.WriteJSONL,
//     the columns of a manifest export, decision "proposed"), clusters.jsonl and
//     summary.json.
//
// Memory is what clustering needs (a few hundred bytes per document, more per verified
// pair) plus Options.RunBytes for a sorted run; signatures and shingle sets stay on disk
// and are read back with ReadAt.
package bulk

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// MaxBucket bounds the documents of one band bucket that pair up: the first MaxBucket in
// input order do (lsh.MaxBucket: the same bound as the sweep and the studio's own runs).
const MaxBucket = lsh.MaxBucket

// Options is one run.
type Options struct {
	Params review.Params
	In     string        // the corpus: JSONL, CSV/TSV (gzip or zstd) or Parquet
	Format corpus.Format // "" to tell from the name
	Corpus corpus.Options
	Out    string // the output folder, created if needed
	// Dataset names the corpus in the manifest's rows; default the input's base name.
	Dataset string
	// Workers is the number of goroutines that sign, shingle and verify (default
	// GOMAXPROCS).
	Workers int
	// ChunkDocs is the records per signature chunk, the unit a killed run resumes from
	// (default 8192). It is part of the run's key.
	ChunkDocs int
	// RunBytes bounds the memory of one sorted run of band keys or pairs (default 64 MiB).
	RunBytes int
	// Progress, if set, is told where the run is, often: throttle in the caller.
	Progress func(Progress)
	// Keep keeps the intermediate files (signatures, shingle sets, candidates, edges)
	// after the run; by default they are removed once the manifest is written.
	Keep bool

	// crash, if set, is called after each unit of work (a chunk, a run file, a stage) with
	// the stage and the unit's number; an error stops the run there, as a kill would.
	crash func(stage string, unit int) error
}

// Stages, in order.
const (
	StageSignatures = "signatures"
	StageExact      = "exact"
	StageCandidates = "candidates"
	StageShingles   = "shingles"
	StageVerify     = "verify"
	StageCluster    = "cluster"
	StageManifest   = "manifest"
)

// Stages lists the stages in order.
var Stages = []string{StageSignatures, StageExact, StageCandidates, StageShingles, StageVerify, StageCluster, StageManifest}

// Progress is where a run is: the stage (1-based Index of len(Stages)) and how far
// through it, Done of Total in Unit ("bytes", "docs", "records", "pairs", "clusters";
// Total 0 when unknown).
type Progress struct {
	Stage       string
	Index       int
	Done, Total int64
	Unit        string
	Docs        int64 // documents read so far, in the stages that stream the corpus
	Skipped     bool  // the stage was complete from an earlier run
	Finished    bool  // the stage is done
}

// Speed is a stage's speed so far, in Unit per second, elapsed into the stage (0 in its
// first half second, too soon to say), and the time left at that speed (0 when the
// total is unknown or reached): what the command's progress line and the web page's
// show.
func (p Progress) Speed(elapsed time.Duration) (perSecond float64, left time.Duration) {
	if el := elapsed.Seconds(); el > 0.5 && p.Done > 0 {
		perSecond = float64(p.Done) / el
		if p.Total > p.Done {
			left = time.Duration(float64(p.Total-p.Done) / perSecond * float64(time.Second))
		}
	}
	return perSecond, left
}

// Quantity is x of a progress unit for people: "12.3 MiB", "512 B", "45.6k docs".
func Quantity(x float64, unit string) string {
	if unit == "bytes" {
		switch {
		case x >= 1<<30:
			return fmt.Sprintf("%.2f GiB", x/(1<<30))
		case x >= 1<<20:
			return fmt.Sprintf("%.1f MiB", x/(1<<20))
		case x >= 1<<10:
			return fmt.Sprintf("%.0f KiB", x/(1<<10))
		}
		return fmt.Sprintf("%.0f B", x)
	}
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2fM %s", x/1e6, unit)
	case x >= 1e4:
		return fmt.Sprintf("%.1fk %s", x/1e3, unit)
	}
	return fmt.Sprintf("%.0f %s", x, unit)
}

// Summary is what a run found; summary.json holds it.
type Summary struct {
	Format        string         `json:"format"` // "dedupstudio-bulk/1"
	Key           string         `json:"key"`
	Input         InputInfo      `json:"input"`
	Params        *review.Params `json:"params,omitempty"`
	Docs          int            `json:"documents"`
	Rejected      int            `json:"rejected"`
	ExactGroups   int            `json:"exact_groups"`
	Candidates    int64          `json:"candidate_pairs"`
	BucketSkipped int64          `json:"bucket_pairs_skipped"`
	Accepted      int64          `json:"accepted_pairs"`
	Clusters      int            `json:"clusters"`
	Removed       int            `json:"removed"`
	RemovedExact  int            `json:"removed_exact"`
	Chained       int            `json:"chained_clusters"`
	Limited       int            `json:"limited"`
	SimCalls      int            `json:"sim_calls"`
	Files         []string       `json:"files"`
}

// InputInfo identifies the input a run read.
type InputInfo struct {
	Name    string    `json:"name"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
}

// The files of the output folder.
const (
	RemovalsCSV   = "removals.csv"
	RemovalsJSONL = "removals.jsonl"
	ClustersJSONL = "clusters.jsonl"
	SummaryJSON   = "summary.json"
	RejectsJSONL  = "rejects.jsonl"

	runJSON     = "run.json"
	sigFile     = "signatures.bin"
	docsFile    = "docs.jsonl"
	exactFile   = "exact.jsonl"
	candFile    = "candidates.bin"
	setsFile    = "shingles.bin"
	setsIdxFile = "shingles.idx"
	edgesFile   = "edges.bin"
	doneDir     = "done"
	chunkDir    = "chunks"
	runsDir     = "runs"
)

// runFiles is every name a run writes in the output folder: all of them are removed when
// the run's key changes, and nothing else is.
var runFiles = []string{RemovalsCSV, RemovalsJSONL, ClustersJSONL, SummaryJSON, RejectsJSONL, sigFile, docsFile, exactFile,
	candFile, setsFile, setsIdxFile, edgesFile, doneDir, chunkDir, runsDir}

// run is one run in progress.
type run struct {
	opt   Options
	key   string
	input InputInfo
	sum   Summary
	stage int // index into Stages of the stage running
}

// Run runs opt and returns its summary. A run over an output folder that holds a run
// with the same key resumes it; a different key starts over (the run's own files are
// removed first, nothing else).
func Run(ctx context.Context, opt Options) (Summary, error) {
	if err := opt.Params.Validate(); err != nil {
		return Summary{}, err
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.ChunkDocs <= 0 {
		opt.ChunkDocs = 8192
	}
	if opt.RunBytes <= 0 {
		opt.RunBytes = 64 << 20
	}
	if opt.Format == "" {
		f, err := corpus.DetectFormat(opt.In)
		if err != nil {
			return Summary{}, err
		}
		opt.Format = f
	}
	st, err := os.Stat(opt.In)
	if err != nil {
		return Summary{}, err
	}
	if opt.Dataset == "" {
		opt.Dataset = filepath.Base(opt.In)
	}
	r := &run{opt: opt, input: InputInfo{Name: filepath.Base(opt.In), Size: st.Size(), ModTime: st.ModTime().UTC()}}
	r.key, err = r.runKey()
	if err != nil {
		return Summary{}, err
	}
	if err := r.prepare(); err != nil {
		return Summary{}, err
	}
	r.sum = Summary{Format: "dedupstudio-bulk/1", Key: r.key, Input: r.input, Params: &opt.Params}
	steps := []func(context.Context) error{r.signatures, r.exact, r.candidates, r.shingles, r.verify, r.cluster, r.manifest}
	for i, step := range steps {
		r.stage = i
		var counts Summary
		if ok := r.marker(Stages[i], &counts); ok {
			r.merge(counts)
			r.report(0, 0, "", true, true)
			continue
		}
		if err := ctx.Err(); err != nil {
			return r.sum, err
		}
		before := r.sum
		r.report(0, 0, "", false, false)
		if err := step(ctx); err != nil {
			return r.sum, fmt.Errorf("stage %s: %w", Stages[i], err)
		}
		if err := r.mark(Stages[i], delta(before, r.sum)); err != nil {
			return r.sum, err
		}
		r.report(0, 0, "", false, true)
		if err := r.crashAt(Stages[i]+"-done", 0); err != nil {
			return r.sum, err
		}
	}
	if !opt.Keep {
		for _, name := range intermediates {
			if err := os.RemoveAll(r.path(name)); err != nil {
				return r.sum, err
			}
		}
	}
	return r.sum, nil
}

// intermediates are the files later stages read, removed at the end unless Keep.
var intermediates = []string{sigFile, docsFile, exactFile, candFile, setsFile, setsIdxFile, edgesFile, chunkDir, runsDir}

func (r *run) crashAt(stage string, unit int) error {
	if r.opt.crash == nil {
		return nil
	}
	return r.opt.crash(stage, unit)
}

func (r *run) report(done, total int64, unit string, skipped, finished bool) {
	if r.opt.Progress != nil {
		r.opt.Progress(Progress{Stage: Stages[r.stage], Index: r.stage + 1, Done: done, Total: total, Unit: unit, Skipped: skipped, Finished: finished})
	}
}

// reportDocs reports a streaming pass: bytes of the input file and documents read.
func (r *run) reportDocs(pos, size, docs int64) {
	if r.opt.Progress != nil {
		r.opt.Progress(Progress{Stage: Stages[r.stage], Index: r.stage + 1, Done: pos, Total: size, Unit: "bytes", Docs: docs})
	}
}

// runKey hashes what decides a run's output: the parameters, the input's identity, the
// reader's options and the chunk size.
func (r *run) runKey() (string, error) {
	p, err := json.Marshal(r.opt.Params)
	if err != nil {
		return "", err
	}
	o := r.opt.Corpus
	h := sha256.New()
	fmt.Fprintf(h, "dedupstudio bulk v1\nparams\t%s\ninput\t%s\t%d\t%d\nformat\t%s\nfields\t%s\t%s\t%d\nchunk\t%d\nbucket\t%d\ndataset\t%s\n",
		p, r.input.Name, r.input.Size, r.input.ModTime.UnixNano(), r.opt.Format, o.IDFieldName(), o.TextFieldName(), o.MaxBytes,
		r.opt.ChunkDocs, MaxBucket, r.opt.Dataset)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// prepare makes the output folder, and empties it of a run with another key.
func (r *run) prepare() error {
	if err := os.MkdirAll(r.opt.Out, 0o755); err != nil {
		return err
	}
	var prev struct {
		Key string `json:"key"`
	}
	b, err := os.ReadFile(r.path(runJSON))
	if err == nil && json.Unmarshal(b, &prev) == nil && prev.Key == r.key {
		return r.removeTemporaries()
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err != nil { // no run here: the folder must be empty, so nothing of anyone's is replaced
		entries, err := os.ReadDir(r.opt.Out)
		if err != nil {
			return err
		}
		if len(entries) > 0 {
			return &OutError{Dir: r.opt.Out}
		}
	}
	for _, name := range runFiles {
		if err := os.RemoveAll(r.path(name)); err != nil {
			return err
		}
	}
	for _, d := range []string{doneDir, chunkDir} {
		if err := os.MkdirAll(r.path(d), 0o755); err != nil {
			return err
		}
	}
	rec, err := json.MarshalIndent(struct {
		Key    string        `json:"key"`
		Input  InputInfo     `json:"input"`
		Params review.Params `json:"params"`
	}{r.key, r.input, r.opt.Params}, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(r.path(runJSON), func(w *bufio.Writer) error { _, err := w.Write(append(rec, '\n')); return err })
}

// OutError is an output folder that holds files but no dedup run: a run replaces its own
// files only, and will not guess which those are.
type OutError struct{ Dir string }

func (e *OutError) Error() string {
	return e.Dir + ": not empty and holds no dedup run (no " + runJSON + "): choose a new or empty folder"
}

// removeTemporaries removes what a killed run left half-written: writeFile's temporary
// files (".NAME.tmp…") in the output folder and its chunks and done folders.
func (r *run) removeTemporaries() error {
	for _, dir := range []string{"", chunkDir, doneDir, runsDir} {
		tmps, err := filepath.Glob(filepath.Join(r.opt.Out, dir, ".*.tmp*"))
		if err != nil {
			return err
		}
		for _, t := range tmps {
			if err := os.Remove(t); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *run) path(name string) string { return filepath.Join(r.opt.Out, name) }

// marker is a stage's completion marker: the run's key and what the stage counted.
type marker struct {
	Stage  string  `json:"stage"`
	Key    string  `json:"key"`
	Counts Summary `json:"counts"`
}

// marker reads stage's marker into counts; false when there is none for this key.
func (r *run) marker(stage string, counts *Summary) bool {
	var m marker
	b, err := os.ReadFile(r.path(filepath.Join(doneDir, stage+".json")))
	if err != nil || json.Unmarshal(b, &m) != nil || m.Key != r.key || m.Stage != stage {
		return false
	}
	*counts = m.Counts
	return true
}

func (r *run) mark(stage string, counts Summary) error {
	b, err := json.MarshalIndent(marker{Stage: stage, Key: r.key, Counts: counts}, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(r.path(filepath.Join(doneDir, stage+".json")), func(w *bufio.Writer) error { _, err := w.Write(b); return err })
}

// delta is what a stage added to the summary's counts.
func delta(before, after Summary) Summary {
	return Summary{Docs: after.Docs - before.Docs, Rejected: after.Rejected - before.Rejected, ExactGroups: after.ExactGroups - before.ExactGroups,
		Candidates: after.Candidates - before.Candidates, BucketSkipped: after.BucketSkipped - before.BucketSkipped,
		Accepted: after.Accepted - before.Accepted, Clusters: after.Clusters - before.Clusters, Removed: after.Removed - before.Removed,
		RemovedExact: after.RemovedExact - before.RemovedExact, Chained: after.Chained - before.Chained, Limited: after.Limited - before.Limited,
		SimCalls: after.SimCalls - before.SimCalls, Files: after.Files[len(before.Files):]}
}

// merge adds a completed stage's counts to the summary.
func (r *run) merge(c Summary) {
	s := &r.sum
	s.Docs += c.Docs
	s.Rejected += c.Rejected
	s.ExactGroups += c.ExactGroups
	s.Candidates += c.Candidates
	s.BucketSkipped += c.BucketSkipped
	s.Accepted += c.Accepted
	s.Clusters += c.Clusters
	s.Removed += c.Removed
	s.RemovedExact += c.RemovedExact
	s.Chained += c.Chained
	s.Limited += c.Limited
	s.SimCalls += c.SimCalls
	s.Files = append(s.Files, c.Files...)
}

// writeFile writes name whole or not at all: a temporary file, filled through a
// 1 MiB buffer, synced, then renamed.
func writeFile(name string, fill func(*bufio.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := fill(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return err
	}
	ok = true
	return nil
}
