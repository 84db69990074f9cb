package main

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/percent"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
	"github.com/dedupstudio/dedupstudio/internal/words"
)

const exampleGrid = `{
    "specs": ["level=word size=3", "level=word size=5", "level=char size=5 k=256"],
    "shapes": ["16x8", "32x4", "20x5"],
    "thresholds": [0.5, 0.6, 0.7, 0.8, 0.9],
    "verifications": ["estimate", "exact"],
    "policies": ["components", "keeper-star"]
  }`

// sweepCmd runs "sweep": the sweep the Sweeps page runs, from the command line.
func sweepCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep",
		"server sweep: score a grid of MinHash LSH configurations against a campaign's labels, as the\n"+
			"Sweeps page does, and store it with the campaign (the page lists it). Prints progress (rate, ETA),\n"+
			"the configurations on the Pareto front (highest recall first) and the recommendation. Ctrl+C\n"+
			"cancels, keeping what was scored; -resume ID continues a cancelled or interrupted sweep.\n\n"+
			"A grid file is JSON; every axis is optional (a missing one takes the default grid's: word 1-5 and\n"+
			"char 3-7 shingles at k=128 and 256, thresholds 0.30-0.95, both verifications, connected\n"+
			"components; no shapes means the shapes worth trying for each k). Specs may be partial, as\n"+
			"lsh.ParseSpec reads them. For example:\n\n  "+exampleGrid,
		"go run ./cmd/server sweep -db dedupstudio.db -campaign default -grid grid.json -out results.csv", stderr)
	dbPath := fs.String("db", "dedupstudio.db", "database file (must exist)")
	campaignName := fs.String("campaign", "", "labeling campaign (the demo's is \"default\")")
	datasetName := fs.String("dataset", "", "dataset of the campaign, when several have one of that name")
	gridPath := fs.String("grid", "", "grid file (JSON); default: the default grid")
	out := fs.String("out", "", "write every configuration's figures to this CSV file")
	name := fs.String("name", "", "sweep name (default: the time)")
	notes := fs.String("notes", "", "notes kept with the sweep")
	resume := fs.Int64("resume", 0, "resume this sweep id instead of starting one")
	top := fs.Int("top", 10, "configurations to print")
	target := fs.Float64("target", sweep.DefaultTarget.MaxFalseRemovalRate, "most false removals per removal the recommendation accepts (upper end of the 95% interval)")
	keeper := fs.String("keeper", "", "the keeper rule false removals are counted under (earliest, longest, shortest; default: the first the sweep scored)")
	quiet := fs.Bool("q", false, "no progress line")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *campaignName == "" && *resume == 0 {
		fs.Usage()
		return errors.New("-campaign (or -resume) is required")
	}
	if *out != "" {
		// A directory or a disk is refused before the sweep, not after it.
		if _, _, err := outTarget(*out); err != nil {
			return err
		}
	}
	grid := sweep.DefaultGrid()
	if *gridPath != "" {
		var err error
		if grid, err = readGrid(*gridPath); err != nil {
			return err
		}
	}
	// Opening creates a missing database; a sweep has nothing to score in an empty one.
	if _, err := os.Stat(*dbPath); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("database %s does not exist: import documents and labels first (or start the server once for the demo)", *dbPath)
		}
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signalContext()
	defer stop()
	store, err := db.Open(context.WithoutCancel(ctx), *dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	reg := jobs.NewRegistry(context.Background())
	defer reg.Shutdown(context.Background())
	svc := sweeprun.New(store, sigcache.New(store), reg)

	var sw sweeprun.Sweep
	if *resume != 0 {
		sw, err = svc.Resume(ctx, *resume, 0)
	} else {
		var c db.Campaign
		if c, err = findCampaign(ctx, store, *campaignName, *datasetName); err != nil {
			return err
		}
		sw, err = svc.Start(ctx, sweeprun.StartRequest{CampaignID: c.ID, Name: *name, Notes: *notes, Grid: grid})
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "sweep %d: %s\n", sw.ID, words.Count(sw.Total, "configuration", "configurations"))
	sw, err = follow(ctx, svc, sw.ID, *quiet, stderr)
	if err != nil {
		return err
	}
	switch sw.State {
	case sweeprun.Done:
	case sweeprun.Cancelled, sweeprun.Interrupted:
		fmt.Fprintf(stderr, "sweep %d %s after %d of %d configurations; resume with -resume %d\n", sw.ID, sw.State, sw.Done, sw.Total, sw.ID)
	default:
		return fmt.Errorf("sweep %d %s: %s", sw.ID, sw.State, sw.Error)
	}
	a, err := svc.Analyze(context.WithoutCancel(ctx), sw.ID, sweep.Target{MaxFalseRemovalRate: *target, Rule: *keeper})
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeResultsCSV(*out, a); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s to %s\n", words.Count(len(a.Results), "configuration", "configurations"), *out)
	}
	printSweep(stdout, a, *top)
	if sw.State != sweeprun.Done {
		return fmt.Errorf("sweep %d %s", sw.ID, sw.State)
	}
	return nil
}

func readGrid(path string) (sweep.Grid, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return sweep.Grid{}, err
	}
	var g sweep.Grid
	if err := json.Unmarshal(b, &g); err != nil {
		return sweep.Grid{}, fmt.Errorf("grid %s: %w", path, err)
	}
	g = sweeprun.Complete(g)
	if err := g.Validate(); err != nil {
		return sweep.Grid{}, fmt.Errorf("grid %s: %w", path, err)
	}
	return g, nil
}

// findCampaign finds a campaign by name, of the newest version of dataset when named.
func findCampaign(ctx context.Context, store *db.DB, name, dataset string) (db.Campaign, error) {
	var dsID int64
	if dataset != "" {
		ds, err := store.LatestDataset(ctx, dataset)
		if err != nil {
			return db.Campaign{}, fmt.Errorf("dataset %q: %w", dataset, err)
		}
		dsID = ds.ID
	}
	list, err := store.Campaigns(ctx)
	if err != nil {
		return db.Campaign{}, err
	}
	var found []db.Campaign
	for _, c := range list {
		if c.Name == name && (dsID == 0 || c.DatasetID == dsID) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return db.Campaign{}, fmt.Errorf("no campaign %q%s", name, map[bool]string{true: " on dataset " + dataset}[dataset != ""])
	case 1:
		return found[0], nil
	}
	return db.Campaign{}, fmt.Errorf("%d campaigns are called %q (on different datasets): name the dataset with -dataset", len(found), name)
}

// follow prints a sweep's progress until its job ends; Ctrl+C cancels it.
func follow(ctx context.Context, svc *sweeprun.Service, id int64, quiet bool, stderr io.Writer) (sweeprun.Sweep, error) {
	done := make(chan struct{})
	var sw sweeprun.Sweep
	var err error
	go func() {
		defer close(done)
		sw, err = svc.Wait(context.Background(), id)
	}()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	cancelled := false
	line := ""
	for {
		select {
		case <-done:
			if line != "" {
				fmt.Fprintln(stderr)
			}
			return sw, err
		case <-ctx.Done():
			if !cancelled {
				cancelled = true
				if cerr := svc.Cancel(id); cerr != nil && !errors.Is(cerr, sweeprun.ErrNotRunning) {
					return sw, cerr
				}
			}
		case <-tick.C:
			p, ok := svc.Progress(id)
			if !ok || quiet {
				continue
			}
			line = sweepProgressLine(p)
			fmt.Fprintf(stderr, "\r%-78s", line)
		}
	}
}

func sweepProgressLine(p sweeprun.Progress) string {
	switch p.Phase {
	case "signing":
		return fmt.Sprintf("signing: %d of %d documents", p.Signed, p.ToSign)
	case "scoring":
		s := fmt.Sprintf("scored %d of %d configurations", p.Done-p.Declined, p.Total)
		if p.Declined > 0 {
			s += fmt.Sprintf(", %d declined", p.Declined)
		}
		if p.Rate > 0 {
			s += fmt.Sprintf(", %.1f/s, about %s left", p.Rate, p.ETA.Round(time.Second))
		}
		return s
	}
	return p.Phase + "…"
}

// printSweep prints what was measured on, the best configurations and the
// recommendation (sweeprun's analysis), with the labeling plan when none meets the target.
func printSweep(w io.Writer, a *sweeprun.Analysis, top int) {
	rs, target := a.Results, a.Target
	if s := a.Sweep.Summary; s != nil {
		l := s.Labels
		fmt.Fprintf(w, "labels %s: %d counted (%d adjudicated, %d by majority, %d by rule); left out: %d flagged, %d skipped, %d tied, %d unlabeled\n",
			l.Version, l.Counted, l.Adjudicated, l.Majority, l.RuleOnly, l.Flagged, l.Skipped, l.Tied, l.Unlabeled)
		if m := s.Model; m != nil {
			fmt.Fprintf(w, "estimates over the dataset: %s (%d labeled pairs; %d more count on the labeled pairs only); false removals under keeper rule %s\n",
				m.Describe(), m.Pairs, m.Unused, a.Rule)
		} else {
			fmt.Fprintln(w, "no labeled pair records how it was drawn: figures are on the labeled pairs only, not the dataset")
		}
		if b := s.Baseline; b != nil {
			h := b.HeadlineFor(a.Rule)
			fmt.Fprintf(w, "baseline, exact-hash dedup alone: recall %s, false removals %s, %d removals\n",
				rateCI(h.Recall), rateCI(h.FalseRemovalRate), b.Removals)
		}
		for _, d := range s.Declined {
			fmt.Fprintf(w, "declined, not scored: %s%d k%d %v (%s): it %s\n",
				d.Spec.Level, d.Spec.Size, d.Spec.Hashes, d.Shape, words.Count(d.Configs, "configuration", "configurations"), d.Reason())
		}
	}
	// The configurations that meet the target (upper end of the false-removal interval),
	// highest recall first; when none does, the Pareto front.
	var idx []int
	for i := range rs {
		if a.Meets[i] {
			idx = append(idx, i)
		}
	}
	what := fmt.Sprintf("%d of %d configurations keep false removals at or below %.1f%% of removals (upper end of the 95%% interval)",
		len(idx), len(rs), 100*target.MaxFalseRemovalRate)
	if len(idx) == 0 {
		for i := range rs {
			if a.Front[i] {
				idx = append(idx, i)
			}
		}
		what = fmt.Sprintf("no configuration meets the target; %d of %d are on the Pareto front", len(idx), len(rs))
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		hx, hy := a.Headlines[x], a.Headlines[y]
		return cmp.Or(cmp.Compare(hy.Recall.Value, hx.Recall.Value), cmp.Compare(hx.FalseRemovalRate.Value, hy.FalseRemovalRate.Value))
	})
	if len(idx) > top {
		idx = idx[:top]
	}
	fmt.Fprintf(w, "\n%s; the first %d by recall:\n", what, len(idx))
	fmt.Fprintf(w, "  %-40s  %-22s  %-22s  %9s  %9s\n", "configuration", "recall", "false removals/removal", "removals", "cand/doc")
	for _, i := range idx {
		h := a.Headlines[i]
		fmt.Fprintf(w, "  %-40s  %-22s  %-22s  %9d  %9.1f\n", rs[i].Config.Label(), rateCI(h.Recall), rateCI(h.FalseRemovalRate), rs[i].Removals, rs[i].CandidatesPerDoc)
	}
	if a.RecErr != nil {
		fmt.Fprintf(w, "\nno recommendation: %v\n", a.RecErr)
		return
	}
	rec := a.Rec
	if rec.Met {
		fmt.Fprintf(w, "\nrecommended: %s\n  %s\n  %s\n", rec.Config.Label(), rec.Config, rec.Reason)
		return
	}
	fmt.Fprintf(w, "\nnothing meets the target. closest: %s\n  %s\n  %s\n", rec.Config.Label(), rec.Config, rec.Reason)
	p := a.Plan
	if p == nil {
		return
	}
	if !p.Feasible {
		fmt.Fprintf(w, "no feasible amount of labels would bring it under %.3g%%: with every pair of its bins labeled it stays near %.3g%%\n",
			100*p.Target, 100*p.Limit)
		return
	}
	fmt.Fprintf(w, "to bound it at %.3g%%, label %d more pairs (keeper rule %s); if they show each bin's share as now, its upper end falls from about %.3g%% to %.3g%%:\n",
		100*p.Target, p.More, p.Rule, 100*p.Now, 100*p.Reaches)
	for _, b := range p.Bins {
		fmt.Fprintf(w, "  bin %-10s  %6d more (%d labeled; %d of its removals there)\n", b.Label, b.More, b.Labeled, b.Removal)
	}
}

// rateCI writes a rate with its 95% interval: "93.1% [90.2, 95.4]".
func rateCI(iv sweep.Interval) string {
	if math.IsNaN(iv.Value) {
		return percent.Format(iv.Value, 'f', 1)
	}
	return fmt.Sprintf("%s [%.1f, %.1f]", percent.Format(iv.Value, 'f', 1), 100*iv.Lo, 100*iv.Hi)
}

// writeResultsCSV writes every result, whole under a temporary name and then renamed,
// so a failure never leaves half a file under the real name.
func writeResultsCSV(path string, a *sweeprun.Analysis) (err error) {
	rs, front := a.Results, a.Front
	files, err := createWhole(path)
	if err != nil {
		return err
	}
	defer files.abort()
	cw := csv.NewWriter(files.files[0])
	num := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	iv := func(v sweep.Interval) []string { return []string{num(v.Value), num(v.Lo), num(v.Hi)} }
	header := []string{"result_id", "ordinal", "spec", "bands", "rows", "threshold", "verification", "policy", "basis",
		"recall", "recall_lo", "recall_hi", "false_removal_rate", "false_removal_rate_lo", "false_removal_rate_hi",
		"labeled_recall", "labeled_recall_n", "candidate_recall", "expected_candidate_recall", "cluster_recall",
		"false_merges", "false_merges_n", "precision", "keeper_rule", "false_removals", "false_removals_lo", "false_removals_hi",
		"removals", "clusters", "largest_cluster", "candidates", "candidates_per_doc", "on_front"}
	if err := cw.Write(header); err != nil {
		return err
	}
	for i, r := range rs {
		h := a.Headlines[i]
		fr := []string{"", "", "", ""}
		if e := r.Dataset; e != nil && len(e.Rules) > 0 {
			re, ok := e.Rule(a.Rule)
			if !ok {
				re = e.Rules[0]
			}
			fr = append([]string{re.Rule}, iv(re.FalseRemovals)...)
		}
		row := []string{strconv.FormatInt(r.ID, 10), strconv.Itoa(r.Ordinal), r.Config.Spec.String(), strconv.Itoa(r.Config.Shape.Bands),
			strconv.Itoa(r.Config.Shape.Rows), num(r.Config.Threshold), string(r.Config.Verification), string(r.Config.Policy), string(h.Basis)}
		row = append(row, iv(h.Recall)...)
		row = append(row, iv(h.FalseRemovalRate)...)
		row = append(row, num(r.Recall.Value), strconv.Itoa(r.Recall.Of), num(r.CandidateRecall.Value), num(r.ExpectedCandidateRecall),
			num(r.ClusterRecall.Value), num(r.FalseMerges.Value), strconv.Itoa(r.FalseMerges.Of), num(r.Precision.Value))
		row = append(row, fr...)
		row = append(row, strconv.Itoa(r.Removals), strconv.Itoa(r.Clusters), strconv.Itoa(r.LargestCluster), strconv.Itoa(r.Candidates),
			num(r.CandidatesPerDoc), strconv.FormatBool(front[i]))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return files.commit()
}
