package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/review"
)

// "dedup" takes the settings.json that "export -format json" writes for a signed-off
// manifest, runs it over a generated corpus, writes the removals in the review format
// with plain progress lines (stderr is not a terminal), and a second run resumes
// everything from the markers.
func TestDedupCommand(t *testing.T) {
	t.Parallel()
	path, first, _ := signedManifests(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run([]string{"handoff", "-db", path, "-manifest", fmt.Sprint(first), "-format", "json", "-out", dir}, &stdout, &stderr); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr.String())
	}
	corpus := filepath.Join(dir, "corpus.jsonl.gz")
	if err := run([]string{"gencorpus", "-n", "1500", "-seed", "3", "-out", corpus}, &stdout, &stderr); err != nil {
		t.Fatalf("gencorpus: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "corpus.truth.csv")); err != nil {
		t.Fatalf("gencorpus wrote no truth file: %v", err)
	}
	out := filepath.Join(dir, "out")
	args := []string{"corpus-run", "-config", filepath.Join(dir, "settings.json"), "-in", corpus, "-out", out}
	stdout.Reset()
	stderr.Reset()
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("dedup: %v\n%s", err, stderr.String())
	}
	// The first line names the permutation kernel, why, and what the kernels measured.
	kernelLine := regexp.MustCompile(`^kernel \w+ \((fastest measured at start|named by DEDUP_KERNEL)\): (\w+ \d+\.\d{3}, )*generic \d+\.\d{3} ns per shingle and permutation`)
	if !kernelLine.MatchString(stderr.String()) {
		t.Errorf("stderr does not start with the kernel line %s:\n%s", kernelLine, stderr.String())
	}
	// Each stage's line says its wall time, CPU time and rates; the passes over the corpus
	// in MB/s and documents/s.
	for _, want := range []string{`\[1/7\] signatures done in [0-9.]+m?s, [0-9.]+ cpu-s, [0-9.]+ MB/s, [0-9.k]+ docs/s`,
		`\[4/7\] shingles   done in [0-9.]+m?s, [0-9.]+ cpu-s, [0-9.]+ MB/s, [0-9.k]+ docs/s`, `\[7/7\] manifest   done in [0-9.]+m?s, [0-9.]+ cpu-s`} {
		if !regexp.MustCompile(want).MatchString(stderr.String()) {
			t.Errorf("stderr does not match %s:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "1500 documents") || !strings.Contains(stdout.String(), "proposed for removal") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	f, err := os.Open(filepath.Join(out, "removals.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) < 2 || strings.Join(rows[0], ",") != strings.Join(review.CSVColumns, ",") {
		t.Fatalf("removals.csv: %d rows, %v; want the manifest export's columns and some removals", len(rows), err)
	}

	stderr.Reset()
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("dedup again: %v", err)
	}
	if got := strings.Count(stderr.String(), "done in an earlier run"); got != 7 {
		t.Errorf("the second run skipped %d stages; want 7:\n%s", got, stderr.String())
	}
}

func TestDedupCommandRefusesBadSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "settings.json")
	body := `{"format": "dedupstudio-settings/1", "spec": "v1 scheme=classic norm=none level=word size=5 k=128 hash=xxhash seed=1",
		"bands": 16, "rows": 8, "verification": "exact", "cluster_policy": "components", "keeper_rule": "longest"}`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":"a","text":"x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := run([]string{"dedup", "-config", cfg, "-in", in, "-out", filepath.Join(dir, "out")}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), cfg+": field threshold: missing") {
		t.Fatalf("dedup with no threshold = %v; want the file and the field named", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("a refused configuration created the output folder")
	}
}
