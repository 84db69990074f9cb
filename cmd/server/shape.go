package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func shape(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("shape",
		"server shape: choose LSH bands x rows for a similarity threshold by the least weighted\n"+
			"false-positive and false-negative areas under the S-curve 1-(1-s^r)^b (datasketch's optimizer).",
		"go run ./cmd/server shape -threshold 0.8 -hashes 128 -w-fp 0.5 -w-fn 0.5 -curve", stderr)
	t := fs.Float64("threshold", 0.8, "Jaccard similarity threshold in [0, 1]")
	k := fs.Int("hashes", 128, "number of hashes per signature")
	specText := fs.String("spec", "", "take the number of hashes from this representation instead of -hashes, e.g.\n"+
		"'scheme=milvus k=64' or a Milvus MinHash function's params '{\"num_hashes\": 64}'")
	wfp := fs.Float64("w-fp", 0.5, "weight of false positives")
	wfn := fs.Float64("w-fn", 0.5, "weight of false negatives")
	curve := fs.Bool("curve", false, "also print P(s) for s = 0.00..1.00")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *specText != "" {
		hashesSet := false
		fs.Visit(func(f *flag.Flag) { hashesSet = hashesSet || f.Name == "hashes" })
		if hashesSet {
			return fmt.Errorf("give -hashes or -spec, not both")
		}
		spec, err := lsh.ParseSpec(*specText)
		if err != nil {
			return err
		}
		*k = spec.Hashes
		fmt.Fprintf(stderr, "spec %s (%s)\n", spec, spec.ID())
	}
	c, err := lsh.OptimalShape(*t, *k, lsh.Weights{FP: *wfp, FN: *wfn})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "bands\t%d\nrows\t%d\nthreshold_approx\t%.4f\nfalse_positive_area\t%.6f\nfalse_negative_area\t%.6f\n",
		c.Shape.Bands, c.Shape.Rows, c.Threshold, c.FP, c.FN)
	if *curve {
		fmt.Fprintln(stdout, "\ns\tP(s)")
		for i := 0; i <= 100; i++ {
			s := float64(i) / 100
			fmt.Fprintf(stdout, "%.2f\t%.6f\n", s, lsh.Probability(s, c.Shape))
		}
	}
	return nil
}
