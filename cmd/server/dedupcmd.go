package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/bulk"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func dedupCmd(args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("corpus-run",
		"server corpus-run: run a calibrated configuration over a whole corpus on this machine and write the removals it\n"+
			"proposes as a manifest in the review format (removals.csv, removals.jsonl, clusters.jsonl, summary.json).\n"+
			"The configuration is a settings.json: `handoff -format json` of a manifest, or a sweep result's download.\n"+
			"Memory stays bounded: signatures and shingle sets live in OUT, LSH buckets are sorted runs on disk.\n"+
			"Run it again after a kill (same -config, -in, -out): it resumes from the last completed stage (the\n"+
			"signatures stage from its last completed chunk); a changed config or input starts over.",
		`go run ./cmd/server corpus-run -config settings.json -in corpus.jsonl.gz -out dedup-out/`, stderr)
	config := fs.String("config", "", "settings.json of a signed-off manifest or a sweep result")
	in := fs.String("in", "", "the corpus: .jsonl, .csv, .tsv or .parquet, optionally .gz or .zst")
	out := fs.String("out", "", "output folder (created; a run's own files in it are replaced)")
	idField := fs.String("id-field", "id", "field holding the document id")
	textField := fs.String("text-field", "text", "field holding the document text")
	maxBytes := fs.Int("max-doc-bytes", corpus.DefaultMaxDocBytes, "largest document text accepted, in bytes (larger ones are listed in rejects.jsonl and skipped)")
	dataset := fs.String("dataset", "", "the dataset name written in the manifest's rows (default: the input's file name)")
	runMB := fs.Int("run-mb", 64, "memory for one sorted run of band keys or pairs, in MiB")
	workers := fs.Int("workers", 0, "goroutines that sign, shingle and verify (default: one per core)")
	quiet := fs.Bool("q", false, "print nothing but errors")
	keep := fs.Bool("keep", false, "keep the intermediate files (signatures, shingle sets, candidate pairs, edges) in OUT")
	memMB := fs.Int("mem-mb", 1536, "soft memory limit for the Go runtime, in MiB (0: none); the run's own buffers are bounded by -run-mb")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file (go tool pprof FILE)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *memMB > 0 {
		debug.SetMemoryLimit(int64(*memMB) << 20)
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, stop()) }()
	}
	for _, f := range []struct{ name, val string }{{"-config", *config}, {"-in", *in}, {"-out", *out}} {
		if f.val == "" {
			fs.Usage()
			return fmt.Errorf("%s is required", f.name)
		}
	}
	cf, err := os.Open(*config)
	if err != nil {
		return err
	}
	params, desc, err := handoff.ParseSettings(cf, *config)
	cf.Close()
	if err != nil {
		return err
	}
	if err := lsh.UseKernel(os.Getenv(lsh.KernelEnv)); err != nil {
		return fmt.Errorf("%s: %w", lsh.KernelEnv, err)
	}
	ctx, stop := signalContext()
	defer stop()
	bar := newProgressBar(stderr, *quiet)
	if !*quiet {
		fmt.Fprintln(stderr, kernelLine(params.Spec, true))
	}
	if !*quiet && !desc.Source.SignedOff {
		fmt.Fprintf(stderr, "note: %s does not come from a signed-off manifest: what this run proposes is a draft for review\n", *config)
	}
	start := time.Now()
	sum, err := bulk.Run(ctx, bulk.Options{Params: params, In: *in, Out: *out, Dataset: *dataset, Workers: *workers, RunBytes: *runMB << 20, Keep: *keep,
		Corpus:   corpus.Options{IDField: *idField, TextField: *textField, MaxBytes: *maxBytes, MetaFields: []string{"source", "lang", "date"}},
		Progress: bar.update})
	bar.finish()
	if err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(stdout, "%d documents (%d refused, see %s), %d exact groups, %d candidate pairs, %d accepted\n",
			sum.Docs, sum.Rejected, bulk.RejectsJSONL, sum.ExactGroups, sum.Candidates, sum.Accepted)
		fmt.Fprintf(stdout, "%d clusters (%d chained): %d documents proposed for removal (%d exact duplicates) under %s, keeper rule %s\n",
			sum.Clusters, sum.Chained, sum.Removed, sum.RemovedExact, params.Policy, params.Rule)
		fmt.Fprintf(stdout, "wrote %s in %s\n", strings.Join(sum.Files, ", "), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// progressBar draws a run's progress on a terminal (one line redrawn: stage, bar, rate,
// ETA) or, when the output is not a terminal, writes a plain line every few seconds and
// one at the end of each stage.
type progressBar struct {
	w          io.Writer
	tty, quiet bool
	stage      string
	stageStart time.Time
	stageCPU   time.Duration // the process's CPU time when the stage started
	latest     bulk.Progress // the stage's latest progress with a unit
	last       time.Time
	lastLen    int
}

func newProgressBar(w io.Writer, quiet bool) *progressBar {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progressBar{w: w, tty: tty, quiet: quiet}
}

func (b *progressBar) update(p bulk.Progress) {
	if b.quiet {
		return
	}
	now := time.Now()
	if p.Stage != b.stage {
		b.stage, b.stageStart, b.last, b.latest = p.Stage, now, now, bulk.Progress{}
		b.stageCPU, _ = cpuTime()
		if b.tty {
			b.last = time.Time{}
		}
	}
	if p.Unit != "" {
		b.latest = p
	}
	switch {
	case p.Skipped:
		b.line(fmt.Sprintf("[%d/%d] %-10s done in an earlier run", p.Index, len(bulk.Stages), p.Stage), true)
	case p.Finished:
		b.line(fmt.Sprintf("[%d/%d] %-10s done in %s%s%s", p.Index, len(bulk.Stages), p.Stage, now.Sub(b.stageStart).Round(time.Millisecond),
			b.stageRates(now), peakRSS()), true)
	case p.Unit == "": // a stage starts
	default:
		every := 100 * time.Millisecond
		if !b.tty {
			every = 5 * time.Second
		}
		if now.Sub(b.last) < every {
			return
		}
		b.last = now
		b.line(b.describe(p, now), false)
	}
}

// stageRates says, for the stage that just finished, the CPU time it took (all cores)
// and its rates over its wall time: MB/s (10^6 bytes of the input file, compressed or
// not) and documents/s for a pass over the corpus, else its own unit per second; only
// the CPU time when the stage reported no progress.
func (b *progressBar) stageRates(now time.Time) string {
	var s string
	if cpu, ok := cpuTime(); ok {
		s = fmt.Sprintf(", %.2f cpu-s", (cpu - b.stageCPU).Seconds())
	}
	p, sec := b.latest, now.Sub(b.stageStart).Seconds()
	if p.Done <= 0 || sec <= 0 {
		return s
	}
	if p.Unit == "bytes" {
		s += fmt.Sprintf(", %.1f MB/s", float64(p.Done)/1e6/sec)
		if p.Docs > 0 {
			s += ", " + bulk.Quantity(float64(p.Docs)/sec, "docs") + "/s"
		}
		return s
	}
	return s + ", " + bulk.Quantity(float64(p.Done)/sec, p.Unit) + "/s"
}

func (b *progressBar) describe(p bulk.Progress, now time.Time) string {
	el := now.Sub(b.stageStart)
	s := fmt.Sprintf("[%d/%d] %-10s ", p.Index, len(bulk.Stages), p.Stage)
	rate, left := p.Speed(el)
	if p.Total > 0 {
		frac := min(1, float64(p.Done)/float64(p.Total))
		const width = 24
		full := int(frac * width)
		s += "[" + strings.Repeat("#", full) + strings.Repeat(".", width-full) + fmt.Sprintf("] %3.0f%% ", 100*frac)
	}
	s += bulk.Quantity(float64(p.Done), p.Unit)
	if rate > 0 {
		s += ", " + bulk.Quantity(rate, p.Unit) + "/s"
	}
	if p.Docs > 0 {
		s += ", " + bulk.Quantity(float64(p.Docs), "docs")
		if sec := el.Seconds(); sec > 0.5 {
			s += " (" + bulk.Quantity(float64(p.Docs)/sec, "docs") + "/s)"
		}
	}
	if left > 0 {
		s += ", ETA " + left.Round(time.Second).String()
	}
	return s
}

func (b *progressBar) line(s string, final bool) {
	if !b.tty {
		fmt.Fprintln(b.w, s)
		return
	}
	pad := ""
	if n := b.lastLen - len(s); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprint(b.w, "\r"+s+pad)
	b.lastLen = len(s)
	if final {
		fmt.Fprintln(b.w)
		b.lastLen = 0
	}
}

// finish ends a half-drawn line.
func (b *progressBar) finish() {
	if b.tty && b.lastLen > 0 {
		fmt.Fprintln(b.w)
	}
}

// peakRSS is the process's peak resident set so far (VmHWM, Linux), as ", peak RSS N
// MiB", or "" where /proc does not say.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return fmt.Sprintf(" (peak RSS so far %d MiB)", kb>>10)
			}
		}
	}
	return ""
}
