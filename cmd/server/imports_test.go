package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/dedupstudio/dedupstudio"

// modulePackage is a package of this module as go list sees it (test files left out).
type modulePackage struct {
	path    string
	imports []string // direct
	deps    []string // every package it needs, transitively
}

func listModule(t *testing.T) map[string]modulePackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]modulePackage{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "|")
		if len(parts) != 3 {
			t.Fatalf("go list line %q", sc.Text())
		}
		p := modulePackage{path: strings.TrimPrefix(parts[0], module+"/"), imports: strings.Fields(parts[1]), deps: strings.Fields(parts[2])}
		pkgs[p.path] = p
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

// The imports point one way (STYLE.md): cmd -> internal/server and web -> domain
// packages -> lsh. Nothing imports cmd; only cmd imports web (internal/server takes the
// handler cmd/server builds, so it does not need web); domain packages import neither
// and do not speak HTTP themselves; the engine pulls in no SQL or HTTP and none of our
// packages but internal/errkind and internal/par, which import the standard library only.
func TestImportsPointOneWay(t *testing.T) {
	t.Parallel()
	pkgs := listModule(t)
	ours := func(deps []string) []string {
		var out []string
		for _, d := range deps {
			if rest, ok := strings.CutPrefix(d, module+"/"); ok {
				out = append(out, rest)
			}
		}
		return out
	}
	for path, p := range pkgs {
		deps := ours(p.deps)
		for _, d := range deps {
			if strings.HasPrefix(d, "cmd/") && !strings.HasPrefix(path, "cmd/") {
				t.Errorf("%s depends on %s: nothing imports a command", path, d)
			}
			if (d == "web" || strings.HasPrefix(d, "web/")) && !strings.HasPrefix(path, "cmd/") && !strings.HasPrefix(path, "web") {
				t.Errorf("%s depends on %s: only cmd/server builds the web handler", path, d)
			}
		}
		if strings.HasPrefix(path, "internal/") && path != "internal/server" && slices.Contains(p.imports, "net/http") {
			t.Errorf("%s imports net/http: domain packages take and return plain values; web speaks HTTP", path)
		}
	}
	if _, ok := pkgs["internal/server"]; !ok {
		t.Fatal("go list did not list internal/server")
	}
	lsh := pkgs["internal/lsh"]
	for _, d := range lsh.deps {
		if d == "database/sql" || d == "net/http" || strings.HasPrefix(d, module+"/") && d != module+"/internal/errkind" && d != module+"/internal/par" {
			t.Errorf("internal/lsh depends on %s: the engine takes the standard library, hash libraries, internal/errkind and internal/par only", d)
		}
	}
	for _, leaf := range []string{"internal/errkind", "internal/par"} {
		for _, d := range pkgs[leaf].deps {
			if strings.Contains(d, ".") {
				t.Errorf("%s depends on %s: the engine's helpers take the standard library only", leaf, d)
			}
		}
	}
}
