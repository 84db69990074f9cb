// Package demo ships Dedup Studio's demo sample, so the server opens on real data: 2,136
// real documents from the team's shared corpus (Debian Reference and Debian
// Administrator's Handbook sections in many languages, SPDX license texts, npm READMEs
// and LICENSE files) and 832 labeled pairs drawn as a stratified probability sample of
// all 2,280,180 pairs of them, so sweeps can estimate recall and false removals over the
// whole dataset. The files are built by `go run ./cmd/demosample` (Build),
// deterministically; see README.md here for provenance, licenses and the design columns.
//
// # How documents were selected
//
// Every SPDX license text and npm README of at most 20 kB; every @types LICENSE file and
// a seeded sample of 80 other npm LICENSE files (the ~250 MIT files would otherwise
// swamp the sample); and whole translation groups of the two books (every language and
// rendering of a section), for Debian Reference sections whose documents are all at most
// 9 kB and Handbook sections at most 4 kB.
//
// # What the rules measure
//
// Word 5-shingles after lowercasing and collapsing white space. J is their exact Jaccard,
// C the containment (shared / smaller set). Each text's words are marked covered when a
// shingle the other text has too covers them; the uncovered words are what only one side
// has, a diff without the cost of one: "changed words" and "places" (runs of uncovered
// words) per side, and the longest shared run. A shingle found in at least 30 of the
// 2,136 documents is boilerplate (standard license clauses, README templates, badges).
// The language of a text is guessed on the text itself, paragraph by paragraph: by script
// (Cyrillic, Arabic vs Persian letters, Han with or without kana), else by the stopwords
// of the corpus's Latin-script languages; a paragraph with too few stopwords (code,
// tables, package lists) is not prose. The corpus's lang field is not used: it is
// inconsistent (untranslated sections labeled with their edition's language, and the
// reverse). For two editions of one section, "shared prose" is the share of each text's
// prose letters inside shared shingles: what the translator left untranslated.
//
// # The rules, first that fits
//
//  1. exact (duplicate): identical after lowercasing and collapsing white space.
//  2. format (duplicate): same section, plain text vs Markdown rendering, and the prose
//     of both is in the same languages (at least 80% overlap of the language shares).
//  3. different: pairs of different sections whose smaller text shares less than 10% of
//     its shingles.
//  4. minor (duplicate): at least 90% of both texts' words shared; or, with J >= 0.5, at
//     least 75% shared and at most 100 changed words in at most 6 places per side
//     (another copyright line plus a sentence or clause added, removed or reworded).
//     This holds for untranslated editions too: the zh-TW edition of a section left in
//     English is a minor edit of the English one.
//  5. partial (not duplicate): same section, on average at least half of the two texts'
//     prose shared verbatim (partly translated editions).
//  6. partial (not duplicate): same section, same main language, C >= 0.1, otherwise
//     different.
//  7. translation (not duplicate): any other pair of one section.
//  8. partial, contained: C >= 0.8. A duplicate when the contained text is there almost
//     word for word (at most 50 changed words in at most 6 places on its side) and makes
//     at least half of the container (a LICENSE file that adds notices to the MIT text);
//     not a duplicate when the container is mostly other text (a bundle of licenses).
//  9. partial (not duplicate): shared text specific to the pair: C >= 0.5 unless the
//     shared shingles are mostly (70%) boilerplate and J < 0.5; or C >= 0.2 with under
//     half boilerplate and a shared run of at least 50 words, for licenses (license
//     versions and derivations sharing whole sections; for READMEs such shared sections
//     are an author's template, rule 10).
//  10. boilerplate (not duplicate): a shared run of at least 20 words (a whole clause),
//     or C >= 0.2 in shorter pieces (a template with names filled in).
//  11. different (not duplicate): the rest, common phrases at most.
//
// # Policy calls
//
// The rules judge text, not legal effect: two licenses that differ by a copyright line
// and one clause are a minor edit even when the clause changes what the license allows.
// A text contained in another is a duplicate only when it is most of the container
// (removing it loses nothing, and the two are one text plus notices); a license inside a
// bundle of licenses, or a README that embeds a license, is partial overlap and kept.
// An untranslated edition of a section is decided by its text: all but a few words
// shared is minor (or exact), about half shared is partial, mostly translated is
// translation. The same calls are on the guidelines page (press ? while labeling).
//
// # The sample: design demo-strata-v1
//
// Population U: every unordered pair of the 2,136 documents (2,280,180 pairs), each
// classified by the rules; the 2,129,947 pairs that share neither a shingle nor a
// section are "different" with J = 0. Strata: rule category x J bin (J = 0, (0, 0.05),
// [0.05, 0.1), then tenths up to [0.9, 1]); 42 are not empty. Each category has a
// target n (exact 100, format 100, minor 130, boilerplate 120, partial 140, translation
// 120, different 140) spread round-robin over its strata from the lowest bin up, never
// above N_h (equal allocation: the whole J range is drawn, and format, with 82 pairs in
// U, is a census). In each stratum a simple random sample without replacement is drawn
// with its own seeded generator, with no per-document caps, so every pair of a stratum
// has the same inclusion probability n_h/N_h; the J = 0 "different" pairs are drawn as
// uniform random pairs of documents, rejecting pairs that share something. labels.csv
// records design, stratum and frame_size (N_h) on every pair. The annotator is
// "demo-rules" and each note says which rule fired, with J and C. Every fifth pair wants
// a second, human label.
//
// # The blind check
//
// testdata/blind/pairs.jsonl holds 84 of the drawn pairs, 12 per rule category spread
// over the category's strata, shuffled and numbered, with ids and whole texts only.
// Judges who have not seen the rules label them; `go run ./cmd/demosample -check
// judge.csv ...` reports their agreement with the rules and with each other (Check).
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
