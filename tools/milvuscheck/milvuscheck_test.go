// Package milvuscheck compiles the Go program that internal/handoff writes for Milvus
// against the real Milvus Go client. It is a module of its own so that the main module
// does not carry the Milvus SDK; .ci/run runs it (cd tools/milvuscheck && go test ./...).
package milvuscheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// TestGeneratedProgramCompiles writes the Milvus hand-off of three representations (one
// Milvus's MinHash function computes, two it cannot) and builds and vets each program
// with the Milvus Go client named in go.mod. When the Go command cannot fetch the client
// (no module proxy), it skips and says so.
func TestGeneratedProgramCompiles(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH: cannot build the generated program")
	}
	if out, err := exec.Command("go", "mod", "download", "github.com/milvus-io/milvus/client/v2").CombinedOutput(); err != nil {
		t.Skipf("cannot fetch the Milvus Go client, so the generated program is not compiled: %v\n%s", err, out)
	}
	for _, text := range []string{
		"scheme=milvus level=word size=3 k=128 hash=xxh3 seed=1234",
		"scheme=classic level=char size=5 k=256",
		"scheme=fast level=word size=5 k=64",
	} {
		spec, err := lsh.ParseSpec(text)
		if err != nil {
			t.Fatal(err)
		}
		rule, err := cluster.ParseRule("longest")
		if err != nil {
			t.Fatal(err)
		}
		s := handoff.Settings{
			Params: review.Params{Spec: spec, Shape: lsh.Shape{Bands: 16, Rows: spec.Hashes / 16}, Threshold: 0.8,
				Verification: review.Exact, Policy: cluster.Components, Rule: rule},
			Source: handoff.Source{Manifest: 1, Dataset: review.Dataset{Name: "demo", Version: 1}, State: review.SignedOff},
		}
		files, err := handoff.Files(s, handoff.Milvus)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := os.MkdirTemp(".", "gen-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		for _, f := range files {
			if f.Name == "milvus/go/main.go" {
				if err := os.WriteFile(filepath.Join(dir, "main.go"), f.Body, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		pkg := "./" + filepath.Base(dir)
		for _, args := range [][]string{{"build", "-o", os.DevNull, pkg}, {"vet", pkg}} {
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				t.Errorf("%s: go %v: %v\n%s", text, args, err, out)
			}
		}
	}
}
