// Command demosample rebuilds the demo sample (internal/demo/sample.jsonl.gz and
// labels.csv) from the team's shared corpus. The build is deterministic; the selection
// and labeling rules are in internal/demo's package documentation.
//
//	go run ./cmd/demosample -corpus ../shared/data/corpus.jsonl.gz -out internal/demo
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dedupstudio/dedupstudio/internal/demo"
)

func main() {
	corpus := flag.String("corpus", "../shared/data/corpus.jsonl.gz", "the shared corpus")
	out := flag.String("out", "internal/demo", "directory for sample.jsonl.gz and labels.csv")
	flag.Parse()
	if err := demo.Build(*corpus, *out, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
