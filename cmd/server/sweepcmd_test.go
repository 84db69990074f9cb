package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/server"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// sweepStore makes a store of 30 real documents and, for the first six, a copy with one
// word changed, with labels: each (document, copy) a duplicate, and six unrelated
// pairs not; every label records a studio draw (design jdraw-t1), so the sweep
// estimates over the dataset.
func sweepStore(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "studio.db")
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var lines, ids []string
	for i, d := range realtext.Docs(t, 30) {
		line, _ := json.Marshal(d)
		lines = append(lines, string(line))
		ids = append(ids, d.ID)
		if i < 6 {
			b, _ := json.Marshal(map[string]string{"id": "@copy-" + d.ID, "text": strings.Replace(d.Text, " ", " changed ", 1)})
			lines = append(lines, string(b))
		}
	}
	r, err := corpus.NewReader(strings.NewReader(strings.Join(lines, "\n")), "c.jsonl", corpus.JSONL, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ingest.Documents(ctx, store, r, "c.jsonl", ingest.Options{Dataset: "c"})
	if err != nil {
		t.Fatal(err)
	}
	var labels strings.Builder
	labels.WriteString("a,b,category,annotator,design,stratum,frame_size\n")
	for i := range 6 {
		fmt.Fprintf(&labels, "%s,@copy-%s,minor,ann,jdraw-t1,near,12\n", ids[i], ids[i])
		fmt.Fprintf(&labels, "%s,%s,different,ann,jdraw-t1,far,600\n", ids[10+i], ids[20+i])
	}
	if _, err := ingest.Labels(ctx, store, strings.NewReader(labels.String()), "l.csv", ingest.LabelOptions{DatasetID: rep.Dataset.ID, Create: true}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSweepCommand(t *testing.T) {
	path := sweepStore(t)
	dir := t.TempDir()
	gridPath := filepath.Join(dir, "grid.json")
	grid := `{"specs": ["level=word size=3 k=64", "level=char size=5 k=64"], "shapes": ["16x4", "8x8"], "thresholds": [0.5, 0.8], "policies": ["components"]}`
	if err := os.WriteFile(gridPath, []byte(grid), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results.csv")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"sweep", "-db", path, "-campaign", "default", "-grid", gridPath, "-out", out, "-q"}, &stdout, &stderr); err != nil {
		t.Fatalf("sweep: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{
		"labels l", "12 counted",
		"estimates over the dataset: Bins of exact Jaccard", "12 labeled pairs", "false removals under keeper rule earliest",
		"baseline, exact-hash dedup alone",
		// Six labeled copies among six near-duplicate pairs, but the labels were drawn
		// from a frame that holds them all: the top bin's labels bound its share exactly.
		"recommended: ",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// 2 specs x 2 shapes x 2 thresholds x 2 verifications (the default) x 1 policy.
	if len(rows) != 1+16 || rows[0][0] != "result_id" || rows[1][8] != string(sweep.DatasetBasis) {
		t.Errorf("results.csv: %d rows, first %v / %v; want a header and 16 dataset-basis rows", len(rows), rows[0], rows[min(1, len(rows)-1)])
	}
	// Every labeled duplicate differs from its document by one word: the configurations
	// at 0.5 on exact Jaccard find all of them.
	found := false
	for _, r := range rows[1:] {
		if r[5] == "0.5" && r[6] == "exact" && r[15] == "1" {
			found = true
		}
	}
	if !found {
		t.Errorf("no exact configuration at 0.5 with labeled recall 1:\n%v", rows)
	}
	// The sweep is stored with the campaign, as the page would list it.
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	list, err := store.Sweeps(context.Background(), 0)
	if err != nil || len(list) != 1 || list[0].State != "done" || list[0].Done != 16 {
		t.Errorf("stored sweeps = %+v, %v; want one done with 16 results", list, err)
	}
	// At a target the labels can meet, a recommendation.
	var loose bytes.Buffer
	if err := run([]string{"sweep", "-db", path, "-campaign", "default", "-grid", gridPath, "-target", "1", "-q"}, &loose, &stderr); err != nil {
		t.Fatalf("sweep -target 1: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(loose.String(), "recommended: ") || !strings.Contains(loose.String(), "Highest estimated recall") {
		t.Errorf("sweep -target 1 recommends nothing:\n%s", loose.String())
	}
}

func TestSweepCommandRefuses(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	var stdout, stderr bytes.Buffer
	err := run([]string{"sweep", "-db", missing, "-campaign", "default"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("sweep on a missing database = %v; want a refusal", err)
	}
	if _, serr := os.Stat(missing); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("the refused sweep created %s", missing)
	}
	bad := filepath.Join(dir, "grid.json")
	os.WriteFile(bad, []byte(`{"thresholds": [0.5, 1.5]}`), 0o644)
	err = run([]string{"sweep", "-db", missing, "-campaign", "default", "-grid", bad}, &stdout, &stderr)
	var ge *sweep.GridError
	if !errors.As(err, &ge) || ge.Axis != "thresholds" || ge.Index != 1 {
		t.Errorf("sweep with threshold 1.5 = %v; want a GridError naming thresholds[1]", err)
	}
	// -out naming a directory: refused before the database is even opened.
	err = run([]string{"sweep", "-db", missing, "-campaign", "default", "-out", dir}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("sweep -out DIR = %v; want a refusal before the sweep", err)
	}
	path := sweepStore(t)
	err = run([]string{"sweep", "-db", path, "-campaign", "nope"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `no campaign "nope"`) {
		t.Errorf("sweep on an unknown campaign = %v", err)
	}
	// A campaign whose dataset has one document: refused before anything is stored.
	one := filepath.Join(dir, "one.db")
	store, err := db.Open(context.Background(), one)
	if err != nil {
		t.Fatal(err)
	}
	r, err := corpus.NewReader(strings.NewReader(`{"id":"only","text":"the one and only document"}`+"\n"), "one.jsonl", corpus.JSONL, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ingest.Documents(context.Background(), store, r, "one.jsonl", ingest.Options{Dataset: "one"})
	if err == nil {
		_, err = store.EnsureCampaign(context.Background(), rep.Dataset.ID, "default", nil)
	}
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	const why = "one has 1 document, so no pairs: a pair takes two documents; import a sample of at least two"
	if err := run([]string{"sweep", "-db", one, "-campaign", "default", "-q"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), why) {
		t.Errorf("sweep on one document = %v; want %q", err, why)
	}
	if store, err = db.Open(context.Background(), one); err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if list, err := store.Sweeps(context.Background(), 0); err != nil || len(list) != 0 {
		t.Errorf("the refused sweep stored %d sweeps (%v); want none", len(list), err)
	}
	stderr.Reset()
	if err := run([]string{"sweep", "-h"}, &stdout, &stderr); !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr.String(), `"thresholds": [0.5, 0.6`) {
		t.Errorf("sweep -h = %v; want help with an example grid:\n%s", err, stderr.String())
	}
}

// TestServeMarksSweepsInterrupted: a sweep and a whole-corpus run a killed process left
// running are interrupted once the server has started (serveUntil builds the services
// and recovers them), so their pages offer to resume them.
func TestServeMarksSweepsInterrupted(t *testing.T) {
	path := sweepStore(t)
	ctx := context.Background()
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := store.Campaigns(ctx)
	if err != nil || len(cs) != 1 {
		t.Fatalf("campaigns: %v, %v", cs, err)
	}
	id, err := store.CreateSweep(ctx, db.NewSweep{CampaignID: cs[0].ID, Name: "left running", Grid: `{}`, Total: 4, Labels: `[]`}, "test")
	if err != nil {
		t.Fatal(err)
	}
	runID, err := store.CreateDedupJob(ctx, db.DedupJob{Source: "test", Settings: "{}", Corpus: "c.jsonl"}, db.User{Name: "cli"})
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, cancel := context.WithCancel(ctx)
	var logs bytes.Buffer
	ready := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveUntil(serveCtx, path, false, serveConfig{Config: server.Config{Addr: "127.0.0.1:0", Log: newLogger(&logs),
			Ready: func(string, string) { ready <- struct{}{} }}, Version: "test", KDF: auth.Params{Memory: 1024, Time: 1, Threads: 1}})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	store, err = db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sw, err := store.Sweep(ctx, id)
	if err != nil || sw.State != "interrupted" {
		t.Errorf("sweep after a server start: %q, %v; want interrupted", sw.State, err)
	}
	if j, err := store.DedupJob(ctx, runID); err != nil || j.State != "interrupted" {
		t.Errorf("whole-corpus run after a server start: %q, %v; want interrupted", j.State, err)
	}
	for _, want := range []string{"sweeps left running by an earlier process marked interrupted", "whole-corpus runs left running by an earlier process marked interrupted"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no log %q:\n%s", want, logs.String())
		}
	}
}

// TestPrintSweepNamesDeclinedShapes: the command line says which shapes a sweep
// declined and why, as the dashboard does (a store big enough to decline one takes
// minutes to sweep; web and sweeprun test the declining itself on the demo).
func TestPrintSweepNamesDeclinedShapes(t *testing.T) {
	spec, err := lsh.ParseSpec("level=char size=3 k=128")
	if err != nil {
		t.Fatal(err)
	}
	a := &sweeprun.Analysis{RecErr: errors.New("no results")}
	a.Sweep.Summary = &sweeprun.Summary{Declined: []sweep.Declined{{Spec: spec, Shape: lsh.Shape{Bands: 37, Rows: 3}, Limit: 250_000, Share: 0.1096, Configs: 84}}}
	var b bytes.Buffer
	printSweep(&b, a, 10)
	if want := "declined, not scored: char3 k128 37x3 (84 configurations): it proposes more than 250,000 candidate pairs, 11% of all pairs"; !strings.Contains(b.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, b.String())
	}
	if got := sweepProgressLine(sweeprun.Progress{Phase: "scoring", Done: 100, Total: 200, Declined: 84}); got != "scored 16 of 200 configurations, 84 declined" {
		t.Errorf("progress line %q", got)
	}
}
