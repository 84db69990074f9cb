// Command demosample rebuilds the demo sample (internal/demo/sample.jsonl.gz, labels.csv
// and the current blind round's testdata/blind/round<N>/pairs.jsonl and judge-sheet.csv) from the team's
// shared corpus, and scores blind judges against the rules. The build is deterministic;
// the selection, labeling rules and sampling design are in internal/demo's package
// documentation.
//
//	go run ./cmd/demosample -corpus ../shared/data/corpus.jsonl.gz -out internal/demo
//	go run ./cmd/demosample -check ada.csv [more judges.csv ...]
//	go run ./cmd/demosample -pairs internal/demo/testdata/blind/round1/pairs.jsonl -check judge1.csv judge2.csv
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/demo"
)

func main() {
	corpus := flag.String("corpus", "../shared/data/corpus.jsonl.gz", "the shared corpus")
	out := flag.String("out", "internal/demo", "directory for sample.jsonl.gz, labels.csv and the blind round's pairs (earlier rounds are read from it)")
	check := flag.String("check", "", "a judge's CSV (n,a,b,category,duplicate,note) to score against the rules; more judges as arguments")
	pairs := flag.String("pairs", filepath.Join("internal", "demo", demo.BlindPairsPath(demo.BlindRound)), "with -check: the blind round's pairs.jsonl the judges labeled")
	flag.Parse()
	if *check != "" {
		if err := runCheck(os.Stdout, *pairs, append([]string{*check}, flag.Args()...)); err != nil {
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

// runCheck reads the round's pairs and every judge's file and prints the judges'
// agreement with the current rules and with each other. A judge's name is the file name
// without its extension.
func runCheck(w io.Writer, pairsPath string, files []string) error {
	f, err := os.Open(pairsPath)
	if err != nil {
		return err
	}
	pairs, err := demo.ReadBlindPairs(f, pairsPath)
	f.Close()
	if err != nil {
		return err
	}
	rules, err := demo.RuleJudgements(pairs)
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
	rep := demo.Check(rules, judges)
	rep.Pairs = pairsPath
	rep.Write(w)
	return nil
}
