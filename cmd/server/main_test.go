package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func TestShapeCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"shape", "-threshold", "0.9", "-hashes", "128", "-curve"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"bands\t5\n", "rows\t25\n", "threshold_approx\t0.9377\n", "0.50\t0.000000\n", "1.00\t1.000000\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("shape output lacks %q:\n%s", want, s)
		}
	}
	if err := run([]string{"shape", "-threshold", "1.5"}, &out, &errb); err == nil {
		t.Error("threshold 1.5 accepted")
	}
	if err := run([]string{"shape", "-w-fp", "0", "-w-fn", "0"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "weights of false positives 0 and of false negatives 0") {
		t.Errorf("zero weights: %v; want them named", err)
	}
}

// TestCommandsRefuseStrayArguments: a word after the flags (a value without its flag,
// or a flag the flag package stopped before) is refused, not ignored.
func TestCommandsRefuseStrayArguments(t *testing.T) {
	for _, args := range [][]string{{"shape", "extra"}, {"shape", "0.9", "-hashes", "64"}, {"signatures", "-spec", "k=64", "x"},
		{"gencorpus", "stray"}, {"audit", "verify", "-db", "x.db", "more"}, {"sweep", "stray"}} {
		var out, errb bytes.Buffer
		err := run(args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "unexpected argument") {
			t.Errorf("%q: %v; want the stray argument refused", args, err)
		}
	}
}

func TestHelpShowsExample(t *testing.T) {
	for _, cmd := range []string{"serve", "signatures", "shape", "corpus-run", "handoff", "gencorpus"} {
		var out, errb bytes.Buffer
		run([]string{cmd, "-h"}, &out, &errb)
		if !strings.Contains(errb.String(), "Example:\n  go run ./cmd/server") {
			t.Errorf("%s -h lacks an example:\n%s", cmd, errb.String())
		}
	}
}

// TestOldCommandNames: "export" and "dedup", renamed "handoff" and "corpus-run" (issue
// 26.5), still run the same command and say the new name first.
func TestOldCommandNames(t *testing.T) {
	for old, now := range map[string]string{"export": "handoff", "dedup": "corpus-run"} {
		var out, errOld, errNew bytes.Buffer
		run([]string{old, "-h"}, &out, &errOld)
		run([]string{now, "-h"}, &out, &errNew)
		note := fmt.Sprintf("note: \"server %s\" is now \"server %s\"", old, now)
		if !strings.HasPrefix(errOld.String(), note) {
			t.Errorf("%s -h does not start with the new name's note:\n%s", old, errOld.String())
		}
		if _, rest, _ := strings.Cut(errOld.String(), "\n"); rest != errNew.String() {
			t.Errorf("%s -h differs from %s -h after the note:\n%s\n---\n%s", old, now, rest, errNew.String())
		}
		if !strings.Contains(errNew.String(), "server "+now+":") {
			t.Errorf("%s -h does not name itself:\n%s", now, errNew.String())
		}
	}
}

// writeDocs writes texts to path as JSON lines, each text under textField with its
// index under idField.
func writeDocs(t *testing.T, path, idField, textField string, texts []string) {
	t.Helper()
	var b bytes.Buffer
	for i, text := range texts {
		if err := json.NewEncoder(&b).Encode(map[string]any{idField: i, textField: text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSignaturesCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "docs.jsonl")
	docs := []string{"the quick brown fox jumps over the lazy dog", "the quick brown fox jumps over the lazy cat", "nothing alike at all here"}
	writeDocs(t, in, "doc_id", "body", docs)
	spec := "level=word size=2 k=64"
	out := filepath.Join(dir, "sigs.jsonl")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"signatures", "-spec", spec, "-in", in, "-out", out, "-id-field", "doc_id", "-text-field", "body"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "signatures: 3 docs") {
		t.Errorf("no final progress line on stderr: %q", stderr.String())
	}
	h, _ := lsh.NewHasher(mustParse(t, spec))
	lines := strings.Split(strings.TrimSpace(readFile(t, out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d output lines; want 3", len(lines))
	}
	for i, l := range lines {
		var rec struct {
			ID        string   `json:"id"`
			Signature []uint32 `json:"signature"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		want := h.Signature(docs[i], nil)
		if rec.ID != []string{"0", "1", "2"}[i] || len(rec.Signature) != 64 || lsh.Estimate(rec.Signature, want) != 1 {
			t.Errorf("line %d: id %q, signature differs from the engine's", i, rec.ID)
		}
	}
	// Binary: k*4 little-endian bytes per document, ids beside.
	bin := filepath.Join(dir, "sigs.bin")
	if err := run([]string{"signatures", "-q", "-spec", spec, "-in", in, "-out", bin, "-format", "binary", "-id-field", "doc_id", "-text-field", "body"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	raw := []byte(readFile(t, bin))
	if len(raw) != 3*64*4 {
		t.Fatalf("binary output %d bytes; want %d", len(raw), 3*64*4)
	}
	got, _ := lsh.SignatureFromBytes(raw[64*4 : 2*64*4])
	if lsh.Estimate(got, h.Signature(docs[1], nil)) != 1 {
		t.Error("second binary vector differs from the engine's signature")
	}
	if ids := readFile(t, bin+".ids"); ids != "0\n1\n2\n" {
		t.Errorf("ids file = %q", ids)
	}
	// A bad record fails the command, naming file and line.
	os.WriteFile(in, []byte(`{"id":"a","text":"ok"}`+"\n"+`{"id":"b"}`+"\n"), 0o644)
	err := run([]string{"signatures", "-q", "-in", in, "-out", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "docs.jsonl:2: field text: missing") {
		t.Errorf("bad record error = %v; want it to name docs.jsonl:2 and the text field", err)
	}
}

func mustParse(t *testing.T, s string) lsh.Spec {
	t.Helper()
	spec, err := lsh.ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The server binary is what `go run ./cmd/server` compiles first on a fresh clone
// (issue 29), so test-only code stays out of its import graph: the browser tests'
// chromedp, the test helpers, the testing package. Skipped without a go command.
func TestServerImportGraphHasNoTestCode(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, bad := range []string{"testing", "net/http/httptest", "github.com/chromedp/", "github.com/dedupstudio/dedupstudio/internal/browsertest",
			"github.com/dedupstudio/dedupstudio/internal/db/dbtest"} {
			if pkg == bad || strings.HasSuffix(bad, "/") && strings.HasPrefix(pkg, bad) {
				t.Errorf("cmd/server imports %s (test-only code in the binary)", pkg)
			}
		}
	}
}

// mainArgs, set in a test's child process, makes the test binary run main with these
// arguments (space-separated) instead of the tests.
const mainArgs = "DEDUP_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgs); ok {
		os.Args = append([]string{"server"}, strings.Fields(args)...)
		main()
		os.Exit(0) // main exits itself
	}
	os.Exit(m.Run())
}

// Help asked for is what was asked: "server -h" exited 2, as an error would. It exits
// 0 with the usage on stderr; a bad flag or command still exits 2.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args string
		code int
		want string
	}{
		{"-h", 0, "Flags:"},
		{"-h", 0, `run "server help"`}, // serve's flags, and where the other commands are
		{"serve -help", 0, "Flags:"},
		{"shape -h", 0, "Example:"},
		{"help", 0, ""},
		{"help sweep", 0, "Example:"}, // the command's own help, not the general one
		{"help no-such-command", 2, `error: unknown command "no-such-command"`},
		{"-no-such-flag", 2, "flag provided but not defined"},
		{"no-such-command", 2, `error: unknown command "no-such-command"`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), mainArgs+"="+tc.args)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("server %s: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.want)
			}
		})
	}
}
