// Command calibcheck runs the calibration check of internal/calib: the sweep's estimates
// of recall and false removals against exact truth on a real-text population, over
// independent draws through the studio's "draw pairs" path, and prints the table as
// Markdown (issue 23, point 6).
//
//	go run ./cmd/calibcheck                      # the full grid, 30 draws, label rules 0.5, 0.7 and 0.6~0.15
//	go run ./cmd/calibcheck -draws 200 -out calib.md -bars issue
//	go run ./cmd/calibcheck -grid fast -policies components -draws 20
//	go run ./cmd/calibcheck -truth               # the grid's truth table only
//	go run ./cmd/calibcheck -extras-from ../shared/data/corpus.jsonl.gz   # rebuild testdata
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/calib"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "calibcheck:", err)
		}
		os.Exit(1)
	}
}

// errBars is a check that missed its bars: the table is printed, the exit status is 1.
var errBars = errors.New("the estimates miss the bars")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("calibcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	draws := fs.Int("draws", calib.DefaultDraws, "independent draws (the issue's full check: 200)")
	labels := fs.Int("labels", calib.MaxLabels, "labels a draw may ask for (at most 800)")
	firstPerBin := fs.Int("first-per-bin", calib.DefaultFirstPerBin, "a draw's first phase: pairs from every bin of exact Jaccard")
	firstRandom := fs.Int("first-random", calib.DefaultFirstRandom, "a draw's first phase: uniformly random pairs")
	seed := fs.Uint64("seed", 1, "draw d draws with seed+d")
	guardPlans := fs.Bool("guard-plans", false, "the second phase also follows recall's guard plans (labels in the bins around recall's floor)")
	audits := fs.Int("audits", calib.DefaultAudits, "manifest audits simulated per manifest whose true rate is <= 0.3% (-1: none)")
	gridName := fs.String("grid", "default", "default (44 configurations) or fast (8)")
	policies := fs.String("policies", "components,keeper-star,complete-link", "cluster policies, comma-separated")
	taus := fs.String("taus", "0.5,0.7,0.6~0.15", "label rules, comma-separated: tau (duplicate = word 5-shingle Jaccard >= tau) or tau~ramp (a duplicate with probability rising linearly over tau±ramp)")
	dir := fs.String("dir", "", "directory for the check's SQLite store (default: a temporary one, removed)")
	out := fs.String("out", "", "write the Markdown table to this file instead of standard output")
	bars := fs.String("bars", "", "issue or fast: list the rows that miss those bars and exit 1 if any")
	truth := fs.Bool("truth", false, "print the grid's truth table and exit")
	extras := fs.String("extras-from", "", "rebuild internal/calib/testdata/extra.jsonl.gz from this team corpus and exit")
	extrasOut := fs.String("extras-out", filepath.Join("internal", "calib", "testdata", "extra.jsonl.gz"), "with -extras-from: where to write")
	quiet := fs.Bool("q", false, "no progress lines on standard error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *extras != "" {
		return rebuildExtras(*extras, *extrasOut, stderr)
	}
	opt := calib.Options{Dir: *dir, Draws: *draws, Labels: *labels, FirstPerBin: *firstPerBin, FirstRandom: *firstRandom, Audits: *audits, Seed: *seed, GuardPlans: *guardPlans}
	switch *gridName {
	case "default":
		opt.Grid = calib.DefaultGrid()
	case "fast":
		opt.Grid = calib.FastGrid()
	default:
		return fmt.Errorf("-grid %q: want default or fast", *gridName)
	}
	for name := range strings.SplitSeq(*policies, ",") {
		p, err := cluster.ParsePolicy(strings.TrimSpace(name))
		if err != nil {
			return fmt.Errorf("-policies: %w", err)
		}
		opt.Policies = append(opt.Policies, p)
	}
	for s := range strings.SplitSeq(*taus, ",") {
		tau, err := calib.ParseLabelRule(s)
		if err != nil {
			return fmt.Errorf("-taus: %w", err)
		}
		opt.Taus = append(opt.Taus, tau)
	}
	var want calib.Bars
	switch *bars {
	case "":
	case "issue":
		want = calib.IssueBars
	case "fast":
		want = calib.FastBars
	default:
		return fmt.Errorf("-bars %q: want issue or fast", *bars)
	}
	if !*quiet {
		opt.Log = func(format string, args ...any) {
			fmt.Fprintf(stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
		}
	}
	if *truth {
		w := stdout
		if *out != "" {
			f, err := os.Create(*out)
			if err != nil {
				return err
			}
			defer f.Close()
			w = f
		}
		return printTruth(ctx, w, opt)
	}
	if *out != "" {
		// The table so far after every draw, so a long check shows its figures as it goes
		// and a cut-short one leaves them.
		opt.OnDraw = func(t *calib.Table) {
			if err := writeTable(*out, t); err != nil {
				fmt.Fprintln(stderr, "calibcheck:", err)
			}
		}
	}
	tab, err := calib.Check(ctx, opt)
	if tab != nil {
		var werr error
		if *out != "" {
			werr = writeTable(*out, tab)
		} else {
			werr = tab.Markdown(stdout)
		}
		err = errors.Join(err, werr)
	}
	if err != nil {
		return err
	}
	if *bars == "" {
		return nil
	}
	failures := tab.Failures(want)
	for _, f := range failures {
		fmt.Fprintln(stderr, "miss:", f)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%w (%s): %d of %d rows", errBars, *bars, len(failures), len(tab.Recall)+len(tab.Removal))
	}
	return nil
}

// writeTable writes t's Markdown to path through a temporary file renamed over it, so
// the file always holds a whole table.
func writeTable(path string, t *calib.Table) error {
	var b bytes.Buffer
	if err := t.Markdown(&b); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// printTruth writes the truth table of opt's grid on the default population.
func printTruth(ctx context.Context, w io.Writer, opt calib.Options) error {
	docs, err := calib.Documents()
	if err != nil {
		return err
	}
	pop, err := calib.NewPopulation(ctx, docs, calib.Word5())
	if err != nil {
		return err
	}
	outs, err := calib.NewEngine(pop).EvaluateAll(ctx, opt.Grid.Configs(), opt.Policies, calib.Rules)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Population: %d documents, %d pairs with exact Jaccard >= %v.\n\n", len(pop.Docs), len(pop.Pairs), calib.MinJaccard)
	return calib.TruthTable(w, pop, outs, opt.Taus)
}

// rebuildExtras writes the population's extra documents, selected from the team corpus.
func rebuildExtras(corpus, out string, log io.Writer) error {
	f, err := os.Open(corpus)
	if err != nil {
		return err
	}
	defer f.Close()
	sample, err := demo.Sample()
	if err != nil {
		return err
	}
	ids := make(map[string]bool, len(sample))
	for _, d := range sample {
		ids[d.ID] = true
	}
	docs, err := calib.BuildExtras(f, ids)
	if err != nil {
		return err
	}
	if err := calib.WriteDocs(out, docs); err != nil {
		return err
	}
	fmt.Fprintf(log, "wrote %d documents to %s\n", len(docs), out)
	return nil
}
