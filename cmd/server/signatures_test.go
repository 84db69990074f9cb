package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
)

// A document over the size cap stops the run, naming its place; with -skip-bad it is
// listed and skipped, the others are signed, and the command fails saying how many.
func TestSignaturesSizeCapAndSkipBad(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "docs.jsonl")
	big := strings.Repeat("word ", 100)
	os.WriteFile(in, []byte(`{"id":"a","text":"a small document of words"}`+"\n"+
		`{"id":"big","text":"`+big+`"}`+"\n"+
		`{"id":"b","text":"another small document here"}`+"\n"+
		`{"id":"c"}`+"\n"), 0o644)
	out := filepath.Join(dir, "sigs.jsonl")

	var stdout, stderr bytes.Buffer
	err := run([]string{"signatures", "-q", "-max-doc-bytes", "100", "-in", in, "-out", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "docs.jsonl:2: field text: document of 500 bytes exceeds the 100-byte cap") {
		t.Errorf("over the cap: %v; want the place and the cap", err)
	}
	// The run a bad record stopped leaves no output, whole-looking or partial (walk 8:
	// sigs.jsonl held line 1's signature), and nothing under a temporary name.
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("after the refused run the folder holds %q; want docs.jsonl alone", names)
	}

	stderr.Reset()
	err = run([]string{"signatures", "-q", "-skip-bad", "-max-doc-bytes", "100", "-in", in, "-out", out}, &stdout, &stderr)
	if err == nil || err.Error() != "2 bad records skipped; the other 2 documents were signed" {
		t.Errorf("-skip-bad: %v; want the count of skipped records", err)
	}
	for _, want := range []string{"2 bad records:\n", "  docs.jsonl:2: field text: document of 500 bytes exceeds the 100-byte cap\n", "  docs.jsonl:4: field text: missing\n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("-skip-bad stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if lines := strings.Split(strings.TrimSpace(readFile(t, out)), "\n"); len(lines) != 2 || !strings.Contains(lines[1], `"id":"b"`) {
		t.Errorf("-skip-bad output = %q; want the signatures of a and b", lines)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("output file: %v, %v; want mode 0644", st, err)
	}

	// With the cap raised, every good record goes through and -q prints nothing at all.
	os.WriteFile(in, []byte(`{"id":"a","text":"a small document"}`+"\n"+`{"id":"big","text":"`+big+`"}`+"\n"), 0o644)
	stderr.Reset()
	if err := run([]string{"signatures", "-q", "-max-doc-bytes", "1000", "-in", in, "-out", out}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() != 0 || stdout.Len() != 0 {
		t.Errorf("-q printed %q / %q; want nothing", stdout.String(), stderr.String())
	}
}

func TestSignaturesCPUProfileAndKernel(t *testing.T) {
	t.Setenv(lsh.KernelEnv, "") // the calibration's choice, whatever the environment says
	dir := t.TempDir()
	in := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(in, []byte(`{"id":"a","text":"some words for a profile"}`+"\n"), 0o644)
	prof := filepath.Join(dir, "cpu.prof")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"signatures", "-cpuprofile", prof, "-in", in, "-out", filepath.Join(dir, "s.jsonl")}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
		t.Errorf("-cpuprofile wrote no profile: %v", err)
	}
	if want := "\nkernel " + lsh.Kernel() + " (fastest measured at start)\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not name the kernel and why, %q:\n%s", want, stderr.String())
	}
	// -v adds what the calibration measured; a kernel named by DEDUP_KERNEL says so.
	t.Setenv(lsh.KernelEnv, "generic")
	stderr.Reset()
	if err := run([]string{"signatures", "-v", "-in", in, "-out", filepath.Join(dir, "s.jsonl")}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`\nkernel generic \(named by DEDUP_KERNEL\): (\w+ \d+\.\d{3}, )*generic \d+\.\d{3} ns per shingle and permutation`)
	if !want.MatchString(stderr.String()) {
		t.Errorf("-v with %s=generic: stderr does not match %s:\n%s", lsh.KernelEnv, want, stderr.String())
	}
	defer lsh.UseKernel("")
	t.Setenv(lsh.KernelEnv, "neon9")
	err := run([]string{"signatures", "-q", "-in", in, "-out", filepath.Join(dir, "s.jsonl")}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `DEDUP_KERNEL: unknown kernel "neon9"`) {
		t.Errorf("bad %s: %v; want an unknown-kernel error", lsh.KernelEnv, err)
	}
}

// benchInput writes testdata/corpus-whole.jsonl.gz (1,273 whole real documents with all
// their fields) three times over with new ids, 30.7 MB of JSONL, into dir.
func benchInput(b *testing.B, dir string) (string, int64) {
	b.Helper()
	data := realtext.Bytes(b, realtext.Whole)
	var out bytes.Buffer
	for c := range 3 {
		prefix := []byte(fmt.Sprintf(`{"id": "c%d-`, c))
		for line := range bytes.Lines(data) {
			rest, ok := bytes.CutPrefix(line, []byte(`{"id": "`))
			if !ok {
				b.Fatalf("line does not start with the id: %.40q", line)
			}
			out.Write(prefix)
			out.Write(rest)
		}
	}
	path := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return path, int64(out.Len())
}

// BenchmarkSignaturesCommand measures `signatures` end to end, file in, file out: reading
// and parsing JSONL, signing on all cores, writing JSONL, over 30.7 MB of whole real
// documents; the classic scheme once per kernel this machine runs. Run with -cpu 1 and
// -cpu 2 for the figures per core count.
func BenchmarkSignaturesCommand(b *testing.B) {
	dir := b.TempDir()
	in, size := benchInput(b, dir)
	docs := 3 * 1273
	out := filepath.Join(dir, "sigs.jsonl")
	for _, k := range []int{128, 256} {
		for _, scheme := range []string{"classic", "fast"} {
			spec := fmt.Sprintf("k=%d scheme=%s", k, scheme)
			run := func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					var stdout, stderr bytes.Buffer
					if err := run([]string{"signatures", "-q", "-spec", spec, "-in", in, "-out", out}, &stdout, &stderr); err != nil {
						b.Fatalf("%v\n%s", err, stderr.String())
					}
				}
				b.ReportMetric(float64(docs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
			}
			b.Run(fmt.Sprintf("word5-k%d-%s", k, scheme), func(b *testing.B) {
				if scheme == "fast" {
					run(b)
					return
				}
				for _, kernel := range lsh.Kernels() {
					b.Run("kernel="+kernel, func(b *testing.B) {
						b.Setenv(lsh.KernelEnv, kernel)
						run(b)
					})
				}
			})
		}
	}
}
