// Package demo ships Dedup Studio's demo sample, so the server opens on real data: 2,136
// real documents from the team's shared corpus (Debian Reference and Debian
// Administrator's Handbook sections in many languages, SPDX license texts, npm READMEs
// and LICENSE files) and 826 labeled pairs drawn as a stratified probability sample of
// all 2,280,180 pairs of them, so sweeps can estimate recall and false removals over the
// whole dataset. The files are built by `go run ./cmd/demosample` (Build),
// deterministically; see README.md here for provenance, licenses, the design columns and
// the blind checks of the rules.
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
// words) per side, "shared words" (the covered ones), the longest shared run, and the
// words in shared passages (runs of at least 20 words: whole clauses, not phrases).
// Two texts of at most 400 words each (licenses, short READMEs) that are not editions of
// one section are also compared word by word, as a diff would: a longest common
// subsequence of their words, punctuation at a word's end ignored, whose runs of at least
// three words in order count as shared too. Shingles alone overstate change in short
// texts: a changed word near the start uncovers the words before it, and a name that
// recurs every few words (a README template around a package name, a license's holder)
// breaks every shingle around it. A shared run of fewer than five words between two
// changes does not end the change (one place, not two). A shorter matched run (one or two
// words) within two words of a longer one on both sides is shared too, and a "shared
// sentence" is the most shared words in one stretch with at most two changed words in it
// (in all, not between every few words): a standard sentence reworded in a word or two,
// not common phrases strung together.
// The language of a text is guessed on the text itself, paragraph by paragraph: by script
// (Cyrillic, Arabic vs Persian letters, Han with or without kana), else by the stopwords
// of the corpus's Latin-script languages; a paragraph with too few stopwords (code,
// package lists) is not prose, nor is a text table (even with sentences in its cells), a
// command's "Field: value" output (apt-cache show), or a Chinese or Japanese paragraph
// without a sentence in it (a heading or caption: these scripts have no stopwords). The corpus's lang field is not used: it is
// inconsistent (untranslated sections labeled with their edition's language, and the
// reverse). Shares of prose are by width, as on screen: a Chinese or Japanese character
// counts as two letters. For two editions of one section, "untranslated" is the share of
// the two texts' prose together that lies inside shared shingles: what each carries of the
// other verbatim. Every share the rules compare with a cut ("shared words", "untranslated")
// is taken over both texts together, as the guidelines tell the judges to measure it.
//
// # The rules, first that fits
//
//  1. exact (duplicate): identical after lowercasing and collapsing white space.
//
// Two documents of one section (editions in two languages, or plain text vs Markdown):
//
//  2. format (duplicate): plain text vs Markdown, at least 95% of the prose in the same
//     languages, and the same words: every word (run of letters) of each text, outside link
//     targets and code-fence lines, is somewhere in the other (inside a path, URL or markup
//     counts). A translated title or admonition label makes the words differ. Otherwise
//     the markup breaks the shingles, and the share of prose in the same languages stands
//     for the untranslated share in rules 4-6.
//  3. minor (duplicate): at least 90% of both texts' words shared.
//  4. minor (duplicate): at least three quarters untranslated (a title, a box, a paragraph
//     translated), so the zh-TW edition of a section left in English is a minor edit of
//     the English one.
//  5. partial (not duplicate): from a third to three quarters untranslated; or the same
//     main language, C >= 0.1 and otherwise different (two revisions of a translation).
//  6. translation (not duplicate): the rest.
//
// Other pairs:
//
//  7. different: the smaller text shares less than a tenth of its shingles, and its
//     longest shared sentence (below) is less than a tenth of the shorter text's words
//     (a standard sentence reworded in a word or two shares few shingles).
//  8. minor (duplicate): at least 90% of both texts' words shared (two one-line READMEs of a
//     package's builds that differ by the platform's name); or, unless both are READMEs
//     (of different packages: the package is the content), at least 75% shared and at
//     most 100 changed words in at most 6 places per side (another
//     copyright line plus a sentence or clause added, removed or reworded: BSD-2-Clause
//     and BSD-4-Clause, MIT and X11).
//  9. partial, contained: C >= 0.8 (there almost word for word). A duplicate when the
//     contained text is almost unchanged (at most 50 changed words in at most 6 places on
//     its side) and makes at least half of the container (a LICENSE file that adds
//     notices to the MIT text); not a duplicate when the container is mostly other text (a
//     bundle of licenses, a README).
//  10. partial (not duplicate): most of both shared, not as a few local edits: J >= 0.5,
//     or, unless both are READMEs, at least 70% of both texts' words together shared with
//     at least one shared passage of 20 words (a BSD-4 license vs a BSD-3 license with an
//     export paragraph). Two READMEs of different packages from one template stay
//     boilerplate however much of them the template is.
//  11. partial (not duplicate): whole sections shared: at least 300 words of each text in
//     shared passages, more than any short standard text gives (MIT is about 170 words,
//     BSD-3-Clause about 220, the GPL notice about 100): versions of the GPL, Creative
//     Commons licenses and the licenses built from them.
//  12. boilerplate (not duplicate): standard text around text of their own: a shared
//     sentence of at least 12 words (a whole standard sentence, such as the BSD
//     redistribution opener, even with a word or two changed in it),
//     or at least 20 shared words in shorter pieces (a template with names filled in), or
//     at least half of each text's words shared (two READMEs of two sentences).
//     Short licenses that share a standard license's clauses, a license header such as the
//     GPL notice, variants and versions of a short license, README templates.
//  13. different (not duplicate): the rest, common phrases at most.
//
// No rule asks how many documents carry a shingle: in this corpus the GPL notice (a
// license header) is in about as many documents as the GPL's own paragraphs, so document
// frequency cannot tell a header from a section; the amount shared can.
//
// # Policy calls
//
// The rules judge text, not legal effect: two licenses that differ by a copyright line
// and one clause are a minor edit even when the clause changes what the license allows.
// Shares are measured on the two texts together, so "three quarters the same" reads the
// same whichever text is longer, and a short license with a clause of up to 100 words
// added (MIT in MITNFA or SGI-B-2.0) is a minor edit before it is a contained text.
// A text contained in another is a duplicate only when it is most of the container
// (removing it loses nothing, and the two are one text plus notices); a license inside a
// bundle of licenses, or a README that embeds a license, is partial overlap and kept.
// An untranslated edition of a section is decided by its text, by the cuts of rules 4-6;
// a partly translated one is not a duplicate (the translation is text the other lacks).
// Boilerplate-heavy pairs are not duplicates. Short texts are judged by their words, as a
// reader diffs them, not by their shingles: a README of a package's build for another
// platform that differs by the platform's name is a minor edit and a duplicate (all but
// one word the same; keeping one loses nothing a reader needs), while two READMEs of different packages from one template (the babel or
// DefinitelyTyped READMEs, an install section around each package's name) are
// boilerplate-heavy and kept, however short: the package is the content. The same calls, with the same numbers in
// words, are on the guidelines page (press ? while labeling).
//
// # The sample: design demo-strata-v6
//
// Population U: every unordered pair of the 2,136 documents (2,280,180 pairs), each
// classified by the rules; the 2,129,947 pairs that share neither a shingle nor a
// section are "different" with J = 0. Strata: rule category x J bin (J = 0, (0, 0.05),
// [0.05, 0.1), then tenths up to [0.9, 1]); 45 are not empty. Each category has a
// target n (exact 100, format 100, minor 130, boilerplate 120, partial 140, translation
// 120, different 140) spread round-robin over its strata from the lowest bin up, never
// above N_h (equal allocation: the whole J range is drawn, and format, with 76 pairs in
// U, is a census). In each stratum a simple random sample without replacement is drawn
// with its own seeded generator, with no per-document caps, so every pair of a stratum
// has the same inclusion probability n_h/N_h; the J = 0 "different" pairs are drawn as
// uniform random pairs of documents, rejecting pairs that share something. labels.csv
// records design, stratum and frame_size (N_h) on every pair. The annotator is
// "demo-rules" and each note says which rule fired, with J and C. Every fifth pair wants
// a second, human label. Versions 2 and 3 have the design of version 1 under the rules of
// their time (the strata are rule categories, so new rules make new strata); version 3
// adds the word diff for short texts; version 4 measures every share on both texts
// together, asks format pairs for the same words, bridges a word or two inside a shared
// sentence, drops the J >= 0.5 condition of the short minor-edit rule (it is not in the
// guidelines) except for READMEs, and lets 70% shared words with a passage make partial
// overlap; version 5 lets a shared sentence that is a tenth of the shorter text make a
// pair more than different (rule 7) and allows a word or two changed in a shared
// sentence in all, not between every few words; version 6 leaves tables, command output
// and Chinese or Japanese headings and captions out of an edition's prose, as the
// guidelines leave them out of the untranslated share.
//
// # The blind check
//
// testdata/blind/round<N>/pairs.jsonl holds 84 of the drawn pairs, 12 per rule category
// spread over the category's strata, none shown in an earlier round, shuffled and
// numbered, with ids and whole texts only, beside the round's GUIDELINES.md and an empty
// answer sheet judge-sheet.csv (JudgeSheetPath). Judges who have not seen the rules label them;
// `go run ./cmd/demosample -pairs <round's pairs.jsonl> -check judge.csv ...` reports their
// agreement with the current rules and with each other (Check).
package demo

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"

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
		ingest.LabelOptions{DatasetID: rep.Dataset.ID, Create: true, Actor: "demo"})
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

// Sample returns the embedded documents (real texts; see README.md for their licenses), for
// programs that build larger corpora from them (internal/gencorpus).
func Sample() ([]CorpusDoc, error) { return readSample() }

// readSample decodes the embedded documents.
func readSample() ([]CorpusDoc, error) {
	return ReadDocs(bytes.NewReader(sample), "demo sample")
}

// ReadDocs decodes gzipped JSONL documents with the sample's fields (the calibration's
// extra documents are written so too); name is what errors call the input.
func ReadDocs(r io.Reader, name string) ([]CorpusDoc, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var docs []CorpusDoc
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var d CorpusDoc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, len(docs)+1, err)
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return docs, nil
}
