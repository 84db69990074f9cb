package demo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Thresholds of the labeling rules (see the package documentation for the rules).
const (
	// minorShared: texts whose shared words make at least this share of both are minor
	// edits of each other whatever their length.
	minorShared = 0.90
	// A short text is a minor edit of another when the shared words make at least
	// minorSharedShort of both and the rest is at most minorWords words in at most
	// minorPlaces places on each side: another copyright line plus a sentence or clause.
	minorSharedShort = 0.75
	minorWords       = 100
	minorPlaces      = 6
	// containedShare: the smaller text has at least this share of its shingles in the
	// larger one.
	containedShare = 0.8
	// commonDocs: a shingle found in at least this many documents of the sample is
	// boilerplate (standard license clauses, README templates, badge lines).
	commonDocs = 30
	// clauseWords: a shared run of at least this many words is a whole clause or
	// paragraph, not a common phrase; sectionWords is a whole section or several
	// paragraphs.
	clauseWords  = 20
	sectionWords = 50
	// templateShare: a pair that shares at least this share of the smaller text's
	// shingles, even in pieces shorter than a clause, shares a template.
	templateShare = 0.2
	// untranslated: for two editions of one section, on average at least this share of
	// their prose is shared verbatim (left untranslated).
	untranslated = 0.5
	// sameLanguages: the two texts' prose is at least this much in the same languages.
	sameLanguages = 0.8
	// looked: below this containment a pair is not examined further (its smaller side
	// shares less than a tenth of its shingles).
	looked = 0.1
)

// doc is a selected document with its text analyzed.
type doc struct {
	*CorpusDoc
	text
}

func (d *doc) section() string { return d.group() }

// features are what the rules read about a pair.
type features struct {
	inter, union int     // shared and combined distinct shingles
	j, c         float64 // Jaccard and containment (shared / smaller set)
	a, b         diffSide
	boiler       float64 // share of the shared shingles that are boilerplate
	proseA       float64 // share of a's prose that b has verbatim
	proseB       float64
	langs        float64 // share of prose in the same languages
}

// shared is the share of both texts' words that the other text has too.
func (f *features) shared() float64 {
	all := f.a.words + f.b.words
	if all == 0 {
		return 1
	}
	return 1 - float64(f.a.changed+f.b.changed)/float64(all)
}

func (f *features) longestShared() int { return max(f.a.longestShared, f.b.longestShared) }

func measure(x, y *doc, df map[uint64]int32) features {
	f := features{inter: lsh.Intersection(x.set, y.set)}
	f.union = len(x.set) + len(y.set) - f.inter
	f.j, f.c = ratios(f.inter, len(x.set), len(y.set))
	if f.c < looked && x.section() != y.section() {
		return f
	}
	cx, cy := covered(&x.text, &y.text), covered(&y.text, &x.text)
	f.a, f.b = sideOf(cx), sideOf(cy)
	f.proseA, f.proseB = proseShared(&x.text, cx), proseShared(&y.text, cy)
	f.langs = x.langs.overlap(y.langs)
	if f.inter > 0 {
		common := 0
		i, k := 0, 0
		for i < len(x.set) && k < len(y.set) {
			switch {
			case x.set[i] < y.set[k]:
				i++
			case x.set[i] > y.set[k]:
				k++
			default:
				if df[x.set[i]] >= commonDocs {
					common++
				}
				i++
				k++
			}
		}
		f.boiler = float64(common) / float64(f.inter)
	}
	return f
}

func ratios(inter, na, nb int) (jaccard, containment float64) {
	union := na + nb - inter
	if union == 0 {
		return 1, 1
	}
	jaccard = float64(inter) / float64(union)
	if small := min(na, nb); small > 0 {
		containment = float64(inter) / float64(small)
	}
	return jaccard, containment
}

// verdict is what the rules say about a pair.
type verdict struct {
	category  string
	duplicate bool
	rule      string
}

// classify applies the labeling rules to a pair, first that fits.
func classify(x, y *doc, f *features) verdict {
	sameSection := x.section() != "" && x.section() == y.section()
	diff := func() string {
		return fmt.Sprintf("%d+%d words differ in %d+%d places", f.a.changed, f.b.changed, f.a.places, f.b.places)
	}
	switch {
	case x.norm == y.norm:
		return verdict{"exact", true, "identical after lowercasing and collapsing white space"}
	case sameSection && x.Source != y.Source && f.langs >= sameLanguages:
		return verdict{"format", true, fmt.Sprintf("same section, plain text vs Markdown rendering, text in the same language (%.0f%% of prose)", 100*f.langs)}
	case f.c < looked && !sameSection:
		return verdict{"different", false, "no shared structure beyond common phrases"}
	case f.shared() >= minorShared:
		return verdict{"minor", true, fmt.Sprintf("near-identical text: %s (%.0f%% of words shared)", diff(), 100*f.shared())}
	case f.shared() >= minorSharedShort && f.j >= 0.5 && f.a.changed+f.b.changed <= minorWords && max(f.a.places, f.b.places) <= minorPlaces:
		return verdict{"minor", true, "the same text but for a few local edits (another copyright line, a sentence or clause): " + diff()}
	case sameSection && (f.proseA+f.proseB)/2 >= untranslated:
		return verdict{"partial", false, fmt.Sprintf("same section, partly translated: %.0f%% and %.0f%% of the prose shared verbatim", 100*f.proseA, 100*f.proseB)}
	case sameSection && x.langs.main() == y.langs.main() && f.langs >= sameLanguages && f.c >= looked:
		return verdict{"partial", false, "same section and language, partly different: " + diff()}
	case sameSection:
		return verdict{"translation", false, fmt.Sprintf("same section, its prose translated (%s vs %s; %.0f%% and %.0f%% of it shared verbatim)", langSummary(x.langs), langSummary(y.langs), 100*f.proseA, 100*f.proseB)}
	case f.c >= containedShare:
		small, large := f.a, f.b
		if small.words > large.words {
			small, large = large, small
		}
		if 2*small.words >= large.words && small.changed <= minorWords/2 && small.places <= minorPlaces {
			return verdict{"partial", true, "one contains the other almost word for word and is mostly that text: " + diff()}
		}
		return verdict{"partial", false, fmt.Sprintf("one contains most of the other (%.0f%% of the smaller's shingles; %d vs %d words): %s", 100*f.c, small.words, large.words, diff())}
	case f.c >= 0.5 && (f.boiler < 0.7 || f.j >= 0.5),
		f.c >= 0.2 && f.boiler < 0.5 && f.longestShared() >= sectionWords && x.Source != "npm-readme" && y.Source != "npm-readme":
		return verdict{"partial", false, fmt.Sprintf("shared whole sections specific to the pair (%.0f%% of shared shingles are boilerplate; longest shared run %d words)", 100*f.boiler, f.longestShared())}
	case f.longestShared() >= clauseWords || f.c >= templateShare:
		return verdict{"boilerplate", false, fmt.Sprintf("shared clauses or template around different content (%.0f%% of the smaller's shingles, %.0f%% of them boilerplate; longest shared run %d words)", 100*f.c, 100*f.boiler, f.longestShared())}
	default:
		return verdict{"different", false, fmt.Sprintf("no shared passage of %d words, %.0f%% of the smaller's shingles shared", clauseWords, 100*f.c)}
	}
}

// docFrequency counts, per shingle, the documents that have it.
func docFrequency(docs []doc) map[uint64]int32 {
	df := map[uint64]int32{}
	for i := range docs {
		for _, h := range docs[i].set {
			df[h]++
		}
	}
	return df
}

// analyzeAll analyzes every document (in parallel; the result does not depend on it).
func analyzeAll(sel []CorpusDoc) []doc {
	docs := make([]doc, len(sel))
	parallel(len(sel), func(i int) { docs[i] = doc{CorpusDoc: &sel[i], text: analyze(sel[i].Text)} })
	return docs
}

// byID finds documents by external id.
func byID(docs []doc) func(id string) (int, bool) {
	return func(id string) (int, bool) {
		return slices.BinarySearchFunc(docs, id, func(d doc, id string) int {
			switch {
			case d.ID < id:
				return -1
			case d.ID > id:
				return 1
			}
			return 0
		})
	}
}

// langSummary writes a document's languages as "fr 64% en 36%" (largest first, at least 5%).
func langSummary(s langShares) string {
	type share struct {
		lang string
		v    float64
	}
	var list []share
	for l, v := range s {
		if v >= 0.05 {
			list = append(list, share{l, v})
		}
	}
	slices.SortFunc(list, func(x, y share) int {
		if x.v != y.v {
			if x.v > y.v {
				return -1
			}
			return 1
		}
		return strings.Compare(x.lang, y.lang)
	})
	if len(list) == 0 {
		return "no prose"
	}
	parts := make([]string, len(list))
	for i, sh := range list {
		parts[i] = fmt.Sprintf("%s %.0f%%", sh.lang, 100*sh.v)
	}
	return strings.Join(parts, " ")
}
