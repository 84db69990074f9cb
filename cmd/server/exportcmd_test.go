package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// "export" writes a signed-off manifest's settings for every engine: the JSON names the
// manifest's representation and shape, the Milvus files say the classic representation
// ships signatures (and why), and a bad format or unknown manifest writes nothing.
func TestExportCommand(t *testing.T) {
	t.Parallel()
	path, first, _ := signedManifests(t)
	out := filepath.Join(t.TempDir(), "engines")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"handoff", "-db", path, "-manifest", fmt.Sprint(first), "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr.String())
	}
	for _, name := range []string{"settings.json", "milvus/README.md", "milvus/milvus_setup.py", "milvus/go/main.go",
		"datasketch/datasketch_lsh.py", "datatrove/datatrove_minhash.py"} {
		if !strings.Contains(stdout.String(), filepath.Join(out, name)) {
			t.Errorf("stdout does not list %s:\n%s", name, stdout.String())
		}
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d handoff.Description
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Spec != lsh.DefaultSpec().String() || d.Bands != 16 || d.Rows != 8 || d.Threshold != 0.9 || d.Policy != "components" ||
		d.Source.Manifest != first || !d.Source.SignedOff || d.Source.Dataset != "cli" {
		t.Errorf("settings.json: %+v", d)
	}
	if !strings.Contains(stderr.String(), "Milvus's MinHash function cannot compute this representation (the representation uses scheme=classic") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if strings.Contains(stderr.String(), "DRAFT") {
		t.Errorf("a signed-off manifest reported as a draft: %s", stderr.String())
	}
	// The differences are measured on the manifest's dataset, and the files give them.
	if !strings.Contains(stderr.String(), "measured on dataset cli version 1 (") {
		t.Errorf("stderr does not say what was measured: %s", stderr.String())
	}
	for _, name := range []string{"datasketch/datasketch_lsh.py", "milvus/milvus_setup.py", "datatrove/datatrove_minhash.py"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if body := strings.Join(strings.Fields(strings.ReplaceAll(string(b), "#", "")), " "); !strings.Contains(body, "Measured by the studio on dataset cli version 1") ||
			strings.Contains(body, "Not measured") {
			t.Errorf("%s gives no measured figures", name)
		}
	}
	bare := filepath.Join(t.TempDir(), "bare")
	if err := run([]string{"handoff", "-db", path, "-manifest", fmt.Sprint(first), "-out", bare, "-format", "datasketch", "-measure=false"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(bare, "datasketch/datasketch_lsh.py")); !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(string(b), "#", "")), " "),
		fmt.Sprintf("Not measured when these files were written: `server handoff -manifest %d` measures", first)) {
		t.Errorf("-measure=false: the file does not say how to measure")
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*", ".*.tmp")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-format", "faiss"}, `-format: unknown format "faiss" (want milvus, datasketch, datatrove, json or all)`},
		{[]string{"-manifest", "99"}, "no manifest 99 in "},
	} {
		dir := filepath.Join(t.TempDir(), "x")
		args := append([]string{"handoff", "-db", path, "-manifest", fmt.Sprint(first), "-out", dir}, tc.args...)
		err := run(args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("export %v: %v; want %q", tc.args, err, tc.want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("export %v created %s", tc.args, dir)
		}
	}
}
