// Command demosample rebuilds the demo sample (internal/demo/sample.jsonl.gz, labels.csv
// and testdata/blind/pairs.jsonl) from the team's shared corpus, and scores blind judges
// against the rule labels. The build is deterministic; the selection, labeling rules and
// sampling design are in internal/demo's package documentation.
//
//	go run ./cmd/demosample -corpus ../shared/data/corpus.jsonl.gz -out internal/demo
//	go run ./cmd/demosample -check internal/demo/testdata/blind/ada.csv [more judges.csv ...]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/demo"
)

func main() {
	corpus := flag.String("corpus", "../shared/data/corpus.jsonl.gz", "the shared corpus")
	out := flag.String("out", "internal/demo", "directory for sample.jsonl.gz, labels.csv and testdata/blind/pairs.jsonl")
	check := flag.String("check", "", "a judge's CSV (n,a,b,category,duplicate,note) to score against the rule labels; more judges as arguments")
	flag.Parse()
	if *check != "" {
		if err := runCheck(append([]string{*check}, flag.Args()...)); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		return
	}
	if err := demo.Build(*corpus, *out, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// runCheck reads every judge's file and prints their agreement with the rules and with
// each other. The judge's name is the file name without its extension.
func runCheck(files []string) error {
	rules, err := demo.RuleJudgements()
	if err != nil {
		return err
	}
	var judges []demo.Judge
	seen := map[string]bool{}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		if seen[name] {
			return fmt.Errorf("%s: a second judge named %q (judges are named by file name)", path, name)
		}
		seen[name] = true
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		js, err := demo.ReadJudgements(f, path)
		f.Close()
		if err != nil {
			return err
		}
		judges = append(judges, demo.Judge{Name: name, Judgements: js})
	}
	demo.Check(rules, judges).Write(os.Stdout)
	return nil
}
