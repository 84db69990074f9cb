package handoff

import (
	"fmt"
	"math"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// The statements each file makes about what its engine does differently from the
// calibration, one paragraph each. Every one is either true by construction (and tested)
// or a figure the studio measured (Figures); none is a guess.

// MilvusBanding is how Milvus's MINHASH_LSH index bands a signature of k values into
// mh_lsh_band = bands bands: rows = floor(k/bands) values each, the first bands*rows of
// the signature (knowhere's OptimizeMinHashLSHParams, since knowhere v2.6.2; earlier
// builds refuse a band count that does not divide k).
func MilvusBanding(k, bands int) lsh.Shape {
	if bands <= 0 {
		return lsh.Shape{Bands: 1, Rows: k}
	}
	if bands > k {
		return lsh.Shape{Bands: k, Rows: 1}
	}
	return lsh.Shape{Bands: bands, Rows: k / bands}
}

// candidateP is the probability that a pair of Jaccard s shares a band: 1-(1-s^r)^b.
func candidateP(sh lsh.Shape, s float64) float64 {
	return 1 - math.Pow(1-math.Pow(s, float64(sh.Rows)), float64(sh.Bands))
}

func pct(n, of int) string {
	if of == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

// plural writes n and the noun, "1 document", "2 documents".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// measuredOn introduces a figure.
func (v view) measuredOn() string {
	f := v.S.Figures
	return fmt.Sprintf("Measured by the studio on %s (%s)", f.Dataset, plural(f.Docs, "document", "documents"))
}

// measureHint says how to get the figures when the files were written without them.
func (v view) measureHint() string {
	if v.S.Source.Manifest == 0 {
		return "Not measured for a sweep result: export a manifest of these settings to have the differences measured on its dataset."
	}
	return fmt.Sprintf("Not measured when these files were written: `server handoff -manifest %d` measures on the manifest's dataset what this engine does differently (one pass over its texts).", v.S.Source.Manifest)
}

// verificationNote says how an engine that verifies with the MinHash estimate differs
// from the calibration's verification, with the figures when measured.
func (v view) verificationNote(engine string) string {
	s := fmt.Sprintf("Verification: %s accepts a candidate at MinHash estimate >= %s, the share of the %d values that agree", engine, v.Threshold, v.K)
	if !v.Exact {
		return s + ", as the calibration did."
	}
	return s + "; the calibration verified with the exact Jaccard of the shingle sets, so pairs near the threshold are decided differently, both ways." + v.verificationFigures()
}

// verificationFigures are the two verifications' counts on the manifest's candidates.
func (v view) verificationFigures() string {
	f := v.S.Figures
	if !f.Measured() {
		return ""
	}
	return fmt.Sprintf(" %s: of the %d candidate pairs of the calibrated banding, the estimate accepts %d and exact Jaccard %d; %s only by the estimate, %s only by exact Jaccard.",
		v.measuredOn(), f.Candidates, f.AcceptedEstimate, f.AcceptedExact, plural(f.EstimateOnly, "pair", "pairs"), plural(f.ExactOnly, "pair", "pairs"))
}

// searchNote says what a search before insert does against the calibrated policy and
// keeper rule, with the simulated run when measured.
func (v view) searchNote(engine string, run *SearchRun, how string) string {
	s := fmt.Sprintf("Clusters: %s searches before it inserts, in input order: it stores the first document of each group and reports each later one "+
		"that has a stored match at or above the threshold. A document whose only matches were reported before it has nothing stored to match and is kept "+
		"(a knock-on effect), and the first document seen is kept where the manifest's keeper rule (%s) may keep another. "+
		"That is not the calibrated %s policy.", engine, v.Rule, v.Policy)
	f := v.S.Figures
	if !f.Measured() || run == nil {
		return s + " " + v.measureHint()
	}
	s += fmt.Sprintf(" %s, simulating %s over the dataset in its import order with %s: it reports %s, the manifest removes %d, and %d are removed by both.",
		v.measuredOn(), engine, how, plural(run.Reported, "document", "documents"), f.ManifestRemovals, run.Both)
	s += fmt.Sprintf(" It reports %d that the manifest keeps: %d of them keepers the manifest chose by its keeper rule, %d for other reasons (pairs the calibrated policy or verification does not accept, or a reviewer's exclusion).",
		run.EngineOnly, run.EngineOnlyKeepers, run.EngineOnly-run.EngineOnlyKeepers)
	s += fmt.Sprintf(" It keeps %d that the manifest removes: %d because a later document matched them (the first seen is kept), %d by knock-on (every earlier match had been reported before them), %d with no match at or above the threshold under its signatures and banding.",
		run.ManifestOnly, run.Order, run.KnockOn, run.NoMatch)
	s += fmt.Sprintf(" Run on the same documents in the same order, its output imports (import-results) to those %d removals.", run.Reported)
	return s
}

// milvusNotes are the Milvus files' statements.
func (v view) milvusNotes() []string {
	var notes []string
	if v.FnParams != "" {
		notes = append(notes, "Signatures: Milvus's MinHash function with the params below computes this representation's signatures bit for bit "+
			"(the studio's milvus profile reproduces all 256 reference signatures made by Milvus's own MinHash code; that code was compiled and run, no Milvus server). "+
			"The Go program inserts the studio's signatures (the Go client has no MinHash function type yet): the same values.")
	} else {
		notes = append(notes, fmt.Sprintf("Signatures: Milvus's MinHash function cannot compute this representation (%s), so the files insert the studio's own signatures, "+
			"made by the signatures command: the values the manifest was computed from.", v.FnWhy))
	}
	ms := MilvusBanding(v.K, v.Bands)
	band := fmt.Sprintf("Banding: MINHASH_LSH cuts a signature into mh_lsh_band = %d bands of floor(k/bands) = %d values, the first %d of the %d (knowhere's OptimizeMinHashLSHParams, the index library of Milvus 2.6)",
		v.Bands, ms.Rows, ms.Bands*ms.Rows, v.K)
	if ms.Rows == v.Rows {
		band += fmt.Sprintf(": exactly the calibrated %d x %d.", v.Bands, v.Rows)
	} else {
		cal := lsh.Shape{Bands: v.Bands, Rows: v.Rows}
		band += fmt.Sprintf(", not the calibrated %d rows: Milvus runs %d x %d, whose S-curve midpoint (1/b)^(1/r) is %.4f instead of %s, and a pair at the threshold %s becomes a candidate with probability %.3f instead of %.3f. "+
			"To run the calibrated shape in Milvus, calibrate a shape whose rows are floor(k/bands).",
			v.Rows, ms.Bands, ms.Rows, midpoint(ms), v.Midpoint, v.Threshold, candidateP(ms, v.S.Params.Threshold), candidateP(cal, v.S.Params.Threshold))
	}
	if v.K%v.Bands != 0 {
		band += fmt.Sprintf(" Milvus builds on knowhere before v2.6.2 (September 2025) refuse a band count that does not divide k (%d/%d): use a newer one.", v.K, v.Bands)
	}
	notes = append(notes, band)
	notes = append(notes, v.verificationNote("Milvus"))
	f := v.S.Figures
	search := fmt.Sprintf("Search: the index collects band candidates band by band until it holds refine_k = %d, scores those by MHJACCARD and answers the best LIMIT = %d (knowhere's MinHashLSH::Search, per indexed segment): "+
		"a document with more than %d stored band candidates is compared with %d of them, and one with more than %d matches lists %d in the dump (it is reported all the same).",
		refineK, searchLimit, refineK, refineK, searchLimit, searchLimit)
	if f.Measured() && f.Milvus != nil {
		search += fmt.Sprintf(" %s: %s had more than %d stored band candidates in the simulation below.", v.measuredOn(), plural(f.Milvus.Crowded, "document", "documents"), refineK)
	}
	notes = append(notes, search)
	notes = append(notes, v.searchNote("the program", f.Milvus, fmt.Sprintf("the studio's signatures, Milvus's %d x %d banding and the MinHash estimate, every band candidate scored", ms.Bands, ms.Rows)))
	empty := "Empty texts: the studio's imports refuse an empty document, so the manifest has none."
	if v.FnParams != "" {
		empty += " Milvus's MinHash function signs an empty text"
		if v.Level == string(lsh.Word) {
			empty += " (and one with no letter or digit)"
		}
		empty += " with every value 0xFFFFFFFF, so each after the first would be reported as a duplicate of the first (MHJACCARD 1.0): the pymilvus script skips an empty text and names it on standard error. " +
			"A text with no shingle is a duplicate of every other such text in the studio too (exact Jaccard of two empty sets is 1)."
	} else {
		empty += " The signatures command refuses one under this representation (under scheme=milvus it signs it as Milvus does, every value 0xFFFFFFFF)."
	}
	if f.Measured() && f.NoShingle > 0 {
		empty += fmt.Sprintf(" %s: %s of it have no shingle under this representation (every value 0xFFFFFFFF) and are duplicates of each other, here as in Milvus.", v.measuredOn(), plural(f.NoShingle, "document", "documents"))
	}
	notes = append(notes, empty)
	return notes
}

// Milvus search parameters the programs use.
const (
	refineK     = 64
	searchLimit = 16
)

// datasketchNotes are the datasketch program's statements.
func (v view) datasketchNotes() []string {
	var notes []string
	switch {
	case v.Scheme == lsh.Milvus:
		notes = append(notes, "Signatures: Milvus's analyzer (the milvus profile's word tokens) is not written out in Python here, so the program reads the studio's signatures "+
			"(the signatures command, "+v.SignCmdJSONL+"): the manifest's own values. New documents need the command too.")
	case v.Datasketch:
		notes = append(notes, fmt.Sprintf("Signatures: the program computes them with datasketch's MinHash(num_perm=%d, seed=%d) over the studio's shingles (the tokenization is written out below "+
			"and the studio's tests check it against its own) and the base hash %s: bit-identical to the studio's, whose scheme=datasketch reproduces all 120 reference signatures made by datasketch 1.10.",
			v.K, v.DSSeed, v.hashName()))
	default:
		s := fmt.Sprintf("Signatures: the program computes them with datasketch's MinHash(num_perm=%d, seed=%d) over the studio's shingles (the tokenization is written out below "+
			"and the studio's tests check it against its own) and the same 32-bit base hash (%s), so a pair's exact Jaccard is the studio's. "+
			"But this representation uses scheme=%s, whose permutations are not datasketch's: the program's signatures are not the manifest's, so a pair's estimate, "+
			"and whether it becomes a candidate, differ from the studio's by chance (the same expected values; an estimate's standard error is sqrt(J(1-J)/%d)). "+
			"Calibrate scheme=datasketch to run bit for bit.", v.K, v.DSSeed, v.hashName(), v.Scheme, v.K)
		if v.DSSeed != v.Seed {
			s += fmt.Sprintf(" (numpy's RandomState takes a 32-bit seed: %d is the low 32 bits of the representation's seed %d.)", v.DSSeed, v.Seed)
		}
		notes = append(notes, s)
	}
	if v.OneBand {
		notes = append(notes, fmt.Sprintf("Banding: datasketch's MinHashLSH refuses fewer than 2 bands, so the program indexes its one band of the first %d values itself (a dict keyed by them): the calibrated shape.", v.Rows))
	} else {
		notes = append(notes, fmt.Sprintf("Banding: MinHashLSH(num_perm=%d, params=(%d, %d)) bands the first %d of the %d values (its hashranges): exactly the calibrated %d x %d.",
			v.K, v.Bands, v.Rows, v.Used, v.K, v.Bands, v.Rows))
	}
	if v.Exact && v.Scheme != lsh.Milvus {
		notes = append(notes, "Verification: exact Jaccard of the shingle sets (their 64-bit hashes, as the studio computes them), as the calibration. The program keeps the distinct "+
			"shingle hashes of every stored document in memory, 8 bytes each; VERIFY = \"estimate\" keeps only the signatures and accepts at MinHash estimate >= "+v.Threshold+
			" instead, which decides pairs near the threshold differently, both ways (with --signatures the program has no shingles and verifies so)."+v.verificationFigures())
	} else {
		notes = append(notes, v.verificationNote("the program"))
	}
	how := "its own signatures, " + v.dsSigsWhose() + ", its banding and its verification"
	notes = append(notes, v.searchNote("the program", v.S.Figures.Datasketch, how))
	notes = append(notes, "Empty texts: a document with an empty text, or with a lone UTF-16 surrogate escape, is skipped and named on standard error: the studio's imports refuse both, so the manifest has neither.")
	return notes
}

func (v view) dsSigsWhose() string {
	switch {
	case v.Scheme == lsh.Milvus:
		return "the studio's"
	case v.Datasketch:
		return "bit-identical to the studio's"
	}
	return fmt.Sprintf("datasketch's permutations of seed %d over the studio's shingles", v.DSSeed)
}

func (v view) hashName() string {
	switch v.S.Params.Spec.Hash {
	case lsh.SHA1:
		return "sha1, datasketch's own sha1_hash32"
	case lsh.XXH3:
		return "xxh3: the low 32 bits of XXH3-64, from the xxhash package"
	}
	return "xxhash: the low 32 bits of XXH64, from the xxhash package"
}

// datatroveNotes are the datatrove pipeline's statements.
func (v view) datatroveNotes() []string {
	var notes []string
	f := v.S.Figures
	if v.StudioTokenizer {
		s := fmt.Sprintf("Tokenizer: TOKENIZER = \"studio\" (the default here) writes out the studio's normalization and %s tokens (the same code as the datasketch program's, "+
			"checked against the studio's in its tests) and switches datatrove's own text normalization off, so datatrove's %d-grams are the studio's shingles", v.Level, v.Size)
		if v.Level == string(lsh.Char) {
			s += " (each character a token: datatrove joins a shingle's characters with spaces before hashing, a different string for the same set)"
		}
		s += fmt.Sprintf(" and a pair's exact Jaccard is the studio's, with two exceptions: datatrove makes no n-gram of a document of fewer than %d tokens (the studio makes one of the whole text), so it never compares such a document", v.Size)
		if f.Measured() && f.Datatrove != nil {
			s += fmt.Sprintf(" (%s: %s)", "m"+strings.TrimPrefix(v.measuredOn(), "M"), plural(f.Datatrove.Short, "such document", "such documents"))
		}
		s += "; and it strips the text (Python's str.strip, which also takes U+001C..U+001F and any white space the representation keeps) before the tokenizer sees it."
		notes = append(notes, s)
		notes = append(notes, "TOKENIZER = \"language\" uses datatrove's own: its text normalization (lowercase, numbers to 0, punctuation to spaces, diacritics removed) and the word tokenizer "+
			"datatrove assigns to LANGUAGE (spaCy's for English and most others: pip install spacy, or the datatrove[multilingual] extra, which brings many more). "+
			"Its n-grams are then not the studio's shingles: the shape carries over (and the threshold only through it), the similarities measured here do not. One pipeline tokenizes every document with one language's tokenizer.")
	} else {
		why := "this representation uses scheme=milvus, whose word tokens (Milvus's analyzer) are not written out in Python here"
		if v.Level == string(lsh.Char) {
			why = "this representation uses scheme=milvus, which shingles raw bytes"
		}
		notes = append(notes, "Tokenizer: datatrove's own ("+why+"): its text normalization (lowercase, numbers to 0, punctuation to spaces, diacritics removed) and the word tokenizer "+
			"datatrove assigns to LANGUAGE (spaCy's for English and most others: pip install spacy, or the datatrove[multilingual] extra, which brings many more). "+
			"Its n-grams are not the studio's shingles: the shape carries over (and the threshold only through it), the similarities measured here do not.")
	}
	notes = append(notes, fmt.Sprintf("Hashing: datatrove hashes each n-gram's text with its own 64-bit hash (%s), draws its own permutations (numpy RandomState(%d): every a, then every b) and keeps 64-bit values: "+
		"its signatures are never the studio's, so which pairs share a bucket differs pair by pair. The S-curve is the calibrated one: %d buckets of %d hashes, P(s) = 1-(1-s^%d)^%d, midpoint %s.",
		v.DTHashName, v.DSSeed, v.Bands, v.Rows, v.Rows, v.Bands, v.Midpoint))
	th := fmt.Sprintf("Threshold: datatrove does not verify: every pair that shares a bucket is a duplicate, whatever its similarity. The calibrated threshold %s lives on only through the S-curve "+
		"(a pair at %s shares a bucket with probability %.3f, a pair at 0.5 with %.3f).", v.Threshold, v.Threshold, candidateP(lsh.Shape{Bands: v.Bands, Rows: v.Rows}, v.S.Params.Threshold),
		candidateP(lsh.Shape{Bands: v.Bands, Rows: v.Rows}, 0.5))
	notes = append(notes, th)
	cl := "Clusters: MinhashDedupCluster joins the pairs into connected components and removes every member but one (the root of its union-find, not the keeper rule " + v.Rule + "): the studio's components policy"
	if v.S.Params.Policy != cluster.Components {
		cl += "; the calibrated policy is " + v.Policy + ", which datatrove does not offer"
	}
	cl += "."
	if f.Measured() && f.Datatrove != nil {
		d := f.Datatrove
		cl += fmt.Sprintf(" %s, simulating datatrove's arithmetic over the studio tokenizer's n-grams: %s of %s, %d removals (the manifest removes %d); %d pairs share a bucket, %d of them (%s) with an exact Jaccard under the threshold %s; "+
			"%s in a datatrove cluster are in no manifest cluster, and %s the manifest removes are in no datatrove cluster.",
			v.measuredOn(), plural(d.Clusters, "cluster", "clusters"), plural(d.Clusters+d.Removals, "document", "documents"), d.Removals, f.ManifestRemovals, d.Pairs, d.BelowThreshold, pct(d.BelowThreshold, d.Pairs), v.Threshold,
			plural(d.NotInManifest, "document", "documents"), plural(d.NotInDatatrove, "document", "documents"))
	} else if !v.StudioTokenizer {
		cl += " Not simulated: datatrove's language tokenizer is not the studio's."
	} else {
		cl += " " + v.measureHint()
	}
	notes = append(notes, cl)
	notes = append(notes, "Tasks: stage 4 must read the input exactly as stage 1 did (the same files, the same TASKS): remove_ids names documents by their index in each task's input. "+
		"Stage 1 also writes doc_ids/, the ids each task read, so that import-results can name them. datatrove's reader skips a document with an empty text, as the studio's imports refuse one.")
	return notes
}

// wrap writes paragraphs as comment lines of at most width runes, each paragraph a
// "- " item with its continuation lines indented.
func wrap(prefix string, paragraphs []string, width int) string {
	var b strings.Builder
	for _, p := range paragraphs {
		line := prefix + " -"
		for _, w := range strings.Fields(p) {
			if len(line)+1+len(w) > width && len(line) > len(prefix)+3 {
				b.WriteString(line + "\n")
				line = prefix + "  "
			}
			line += " " + w
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
