// Package demo ships Dedup Studio's demo sample, so the server opens on real data: about
// 2,300 real documents from the team's shared corpus (Debian Reference and Debian
// Administrator's Handbook sections in many languages, SPDX license texts, npm READMEs
// and LICENSE files) and about 700 labeled pairs covering every default category over
// the whole similarity range. The files are built by `go run ./cmd/demosample` (Build),
// deterministically; see README.md here for provenance and licenses.
//
// # How documents were selected
//
// Every SPDX license text and npm README of at most 20 kB; every @types LICENSE file and
// a seeded sample of 80 other npm LICENSE files (the ~250 MIT files would otherwise
// swamp the sample); and whole translation groups of the two books (every language and
// rendering of a section), for Debian Reference sections whose documents are all at most
// 9 kB and Handbook sections at most 4 kB.
//
// # How pairs were labeled
//
// The labels are made by rules from the corpus's own structure (translation groups,
// sources, languages) and exact Jaccard J of word 5-shingles after lowercasing and
// collapsing white space (containment C = shared / smaller set). Every pair of selected
// documents that shares a shingle or a section was classified, first rule that fits:
//
//  1. exact copy (duplicate): identical after lowercasing and collapsing white space.
//  2. formatting change (duplicate): same section and language, one the shipped plain
//     text and the other the Markdown rendering (debref vs debref-html).
//  3. partial overlap (not duplicate): same section, different language labels, J ≥ 0.3:
//     partly untranslated editions.
//  4. translation (not duplicate): same section, different languages.
//  5. minor edits (duplicate): same section and language, J ≥ 0.8 (untranslated editions
//     that differ in a few paragraphs); or any other pair with J ≥ 0.85: license files
//     with another copyright line, version bumps, forks of one README.
//  6. partial overlap (not duplicate): same section and language otherwise; any pair
//     with J ≥ 0.5 (AGPL vs GPL, BSD-2 vs BSD-3 clause, forks); or C ≥ 0.8 (one
//     document contains most of the other, e.g. a README that embeds a license).
//  7. boilerplate-heavy (not duplicate): licenses and npm READMEs with J ≥ 0.15 between
//     them: shared clauses or templates around different content.
//  8. different (not duplicate): everything else.
//
// From each category up to 100 pairs (130 partial overlaps) were drawn, round-robin over ten J bins so the
// sample spans the similarity range, no document in more than three pairs of a
// category; "different" has 60 hard negatives (J ≥ 0.05) plus 90 random pairs. The
// annotator is "demo-rules" and each note says which rule fired, with J and C.
// These are rule labels, not human judgement: good enough to calibrate against and to
// show the tool, and a place to start relabeling. Every fifth pair wants a second label,
// so the first people to label the demo measure their agreement with the rules.
package demo

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
)

// DatasetName is the demo dataset's name.
const DatasetName = "demo"

// Annotator is the name the demo labels carry.
const Annotator = "demo-rules"

//go:embed sample.jsonl.gz
var sample []byte

//go:embed labels.csv
var labelsCSV []byte

// Load imports the demo documents and labels as dataset "demo".
func Load(ctx context.Context, store *db.DB) (ingest.Report, ingest.LabelReport, error) {
	r, err := corpus.NewReader(bytes.NewReader(sample), "demo-sample.jsonl.gz", corpus.JSONL, corpus.Options{})
	if err != nil {
		return ingest.Report{}, ingest.LabelReport{}, err
	}
	rep, err := ingest.Documents(ctx, store, r, "demo-sample.jsonl.gz", ingest.Options{Dataset: DatasetName, Actor: "demo"})
	if err != nil {
		return rep, ingest.LabelReport{}, fmt.Errorf("demo documents: %w", err)
	}
	lrep, err := ingest.Labels(ctx, store, bytes.NewReader(labelsCSV), "demo-labels.csv",
		ingest.LabelOptions{DatasetID: rep.Dataset.ID, Actor: "demo"})
	if err != nil {
		return rep, lrep, fmt.Errorf("demo labels: %w", err)
	}
	// Every fifth pair wants a second, human label: the queue has work for the first
	// annotators, and agreement with the rules shows on the campaign page.
	if _, err := store.AskSecondLabels(ctx, lrep.CampaignID, 5); err != nil {
		return rep, lrep, fmt.Errorf("demo campaign: %w", err)
	}
	return rep, lrep, nil
}
