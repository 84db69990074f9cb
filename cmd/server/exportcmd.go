package main

import (
	"fmt"
	"io"
	"path"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
)

// exportCmd runs "handoff" (once "export"): a manifest's configuration for the engines that run at scale.
func exportCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("handoff",
		"server handoff: write a manifest's configuration (representation, bands x rows, threshold, verification,\n"+
			"cluster policy) for the engines that deduplicate at scale, as programs that run as they are: milvus\n"+
			"(README, a pymilvus script and a Go program for the official client: a MINHASH_LSH collection with\n"+
			"search-before-insert, and Milvus's own MinHash function definition when it computes this representation\n"+
			"bit for bit), datasketch (a program that computes datasketch MinHash signatures over the studio's\n"+
			"tokenization and searches MinHashLSH before it inserts), datatrove (a pipeline of its four MinHash\n"+
			"stages), json (a plain description), or all. Every file says what carries over and what does not, with\n"+
			"the differences measured on the manifest's dataset (one pass over its texts; -measure=false skips it),\n"+
			"and DRAFT when the manifest is not signed off. Nothing in the store changes.",
		"go run ./cmd/server handoff -db dedupstudio.db -manifest 3 -format milvus -out engines/", stderr)
	mf := addManifestFlags(fs)
	format := fs.String("format", "all", "milvus, datasketch, datatrove, json or all")
	measure := fs.Bool("measure", true, "measure on the manifest's dataset what each engine does differently (the files give the numbers)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := mf.required(fs); err != nil {
		return err
	}
	var f handoff.Format
	if *format != "all" {
		var err error
		if f, err = handoff.ParseFormat(*format); err != nil {
			return fmt.Errorf("-format: unknown format %q (want milvus, datasketch, datatrove, json or all)", *format)
		}
	}
	ctx, store, m, done, err := mf.open()
	if err != nil {
		return err
	}
	defer done()
	s := handoff.Settings{Params: m.Params, Generated: time.Now(),
		Source: handoff.Source{Manifest: m.ID, Dataset: m.Dataset, State: m.State}}
	if *measure && (f == "" || f != handoff.JSON) {
		last := -1
		s.Figures, err = manifests.MeasureHandoff(ctx, store, m, 0, func(p manifests.Progress) {
			if pc := wholePercent(p.Done, p.Total); last < 0 || pc >= last+10 {
				last = pc
				fmt.Fprintf(stderr, "\r%s: %d%%", p.Phase, pc)
			}
		})
		fmt.Fprintln(stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "measured on %s (%d documents): the datasketch program reports %d, Milvus %d, the manifest removes %d\n",
			s.Figures.Dataset, s.Figures.Docs, s.Figures.Datasketch.Reported, s.Figures.Milvus.Reported, s.Figures.ManifestRemovals)
	}
	var files []handoff.File
	if f == "" {
		files, err = handoff.All(s)
	} else {
		files, err = handoff.Files(s, f)
	}
	if err != nil {
		return err
	}
	if err := writeFiles(*mf.out, files); err != nil {
		return err
	}
	for _, file := range files {
		fmt.Fprintln(stdout, path.Join(*mf.out, file.Name))
	}
	if !s.Source.SignedOff() {
		fmt.Fprintf(stderr, "note: manifest %d is %s, not signed off: the files say DRAFT\n", m.ID, m.State.Label())
	}
	if _, why := handoff.MilvusFunction(m.Params.Spec); why != "" && (f == "" || f == handoff.Milvus) {
		fmt.Fprintf(stderr, "note: Milvus's MinHash function cannot compute this representation (%s); the Milvus files insert signatures from the signatures command\n", why)
	}
	return nil
}

// writeFiles writes each file under dir (writeWhole: never half a file under its name).
func writeFiles(dir string, files []handoff.File) error {
	root, err := openOut(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range files {
		if d := path.Dir(f.Name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		err := writeWhole(root, f.Name, func(w io.Writer) error { _, err := w.Write(f.Body); return err })
		if err != nil {
			return err
		}
	}
	return nil
}

// wholePercent is done of total in whole percent (0 for no total).
func wholePercent(done, total int) int {
	if total <= 0 {
		return 0
	}
	return 100 * done / total
}
