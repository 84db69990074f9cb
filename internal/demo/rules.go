package demo

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Thresholds of the labeling rules (see the package documentation for the rules, and the
// guidelines page for the same cuts in words).
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
	// larger one: it is there almost word for word.
	containedShare = 0.8
	// phraseWords: a shared run of at least this many words is a sentence of standard
	// text (the BSD redistribution opener, the MIT grant), more than a common phrase
	// ("without warranty of any kind, express or implied" has 7). clauseWords: a run this
	// long is a whole clause or paragraph: a shared passage.
	phraseWords = 12
	clauseWords = 20
	// sectionsWords: two texts whose shared passages hold at least this many words on each
	// side share whole sections, more than any short standard text could give them (the
	// MIT license has about 170 words, BSD-3-Clause about 220, the GPL notice about 100).
	sectionsWords = 300
	// templateWords: shared pieces, none a sentence long, that add up to at least this many
	// words on each side are a template with names filled in (a README's install section
	// around the package name, a grant sentence with another holder), not a common phrase.
	templateWords = 20
	// For two editions of one section, the untranslated share is the smaller of the two
	// texts' shares of prose shared verbatim: at least editionMinor is a minor edit (a
	// title, a box or a paragraph translated), at least editionPartial is partial overlap,
	// less is a translation.
	editionMinor   = 0.75
	editionPartial = 1.0 / 3
	// sameWords: two renderings of one section whose prose is at least this much in the
	// same languages carry the same words; only the markup differs.
	sameWords = 0.95
	// mostShared: at least this share of the two texts' words together shared, with a
	// whole clause (a passage of clauseWords) among them, is most of both: partial overlap
	// when not a few local edits (BSD-4-Clause and a BSD-3 license with an export
	// paragraph). Two READMEs of different packages are left out: the package is the
	// content, and their shared template stays boilerplate however much it shares.
	mostShared = 0.7
	// sameLanguages: the two texts' prose is at least this much in the same languages.
	sameLanguages = 0.8
	// looked: less than a tenth of the shorter text shared is different, as the
	// guidelines say: the smaller side shares less than this share of its shingles and
	// its longest shared sentence (a word or two changed in it) is less than this share
	// of the shorter text's words. Shingles alone count a standard sentence reworded
	// every few words (the HPND permission sentence, a reworded disclaimer) as almost
	// nothing.
	looked = 0.1
)

// readmeSource is the corpus source of npm READMEs, one document per package.
const readmeSource = "npm-readme"

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
	proseA       float64 // share of a's prose that b has verbatim
	proseB       float64
	proseBoth    float64 // share of both texts' prose together that the other has verbatim
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

// sentence is the longest shared stretch of either text with gaps of at most alignGap
// changed words: a standard sentence, reworded in a word or two or not.
func (f *features) sentence() int { return max(f.a.sentence, f.b.sentence) }

// sharedWords is how many words each text has inside shared shingles (the smaller count).
func (f *features) sharedWords() int {
	return min(f.a.words-f.a.changed, f.b.words-f.b.changed)
}

// mostlyShared: at least half of each text's words are shared, which makes two tiny texts
// (a README of two sentences) more than common phrases even under templateWords.
func (f *features) mostlyShared() bool {
	return f.a.words > 0 && f.b.words > 0 && 2*f.a.changed <= f.a.words && 2*f.b.changed <= f.b.words
}

// sentenceShare is the longest shared sentence (sentence) as a share of the shorter
// text's words: a standard sentence reworded in a word or two shares few shingles (a
// change every few words breaks them all) but is shared text all the same, and the
// guidelines measure "a tenth of the shorter text" in its words.
func (f *features) sentenceShare() float64 {
	small, _ := f.smallLarge()
	if small.words == 0 {
		return 0
	}
	return float64(min(f.sentence(), small.words)) / float64(small.words)
}

// inPassages is how many words each text has in shared passages (the smaller count).
func (f *features) inPassages() int { return min(f.a.inPassages, f.b.inPassages) }

// untranslated is, for two editions of one section, the share of prose left untranslated:
// what each text carries verbatim of the other, over both texts' prose together (as
// every other share the cuts read, so one count answers "how much is the same").
func (f *features) untranslated() float64 { return f.proseBoth }

// smallLarge orders the two sides by length in words.
func (f *features) smallLarge() (small, large diffSide) {
	if f.a.words <= f.b.words {
		return f.a, f.b
	}
	return f.b, f.a
}

func measure(x, y *doc) features {
	f := features{inter: lsh.Intersection(x.set, y.set)}
	f.union = len(x.set) + len(y.set) - f.inter
	f.j, f.c = ratios(f.inter, len(x.set), len(y.set))
	cx, cy := covered(&x.text, &y.text), covered(&y.text, &x.text)
	if x.section() == "" || x.section() != y.section() {
		// Short texts are compared word by word too; editions of a section keep the
		// shingle measure their cuts were set on.
		ax, ay := align(&x.text, &y.text)
		for i := range ax {
			cx[i] = cx[i] || ax[i]
		}
		for i := range ay {
			cy[i] = cy[i] || ay[i]
		}
	}
	f.a, f.b = sideOf(cx), sideOf(cy)
	sa, wa := proseWidths(&x.text, cx)
	sb, wb := proseWidths(&y.text, cy)
	f.proseA, f.proseB = ratio(sa, wa), ratio(sb, wb)
	f.proseBoth = ratio(sa+sb, wa+wb)
	f.langs = x.langs.overlap(y.langs)
	return f
}

// ratio is part/whole, 0 for an empty whole.
func ratio(part, whole int) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) / float64(whole)
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
	diff := func() string {
		return fmt.Sprintf("%d+%d words differ in %d+%d places", f.a.changed, f.b.changed, f.a.places, f.b.places)
	}
	small, large := f.smallLarge()
	// Two READMEs of different packages: the package is the content, so a shared template
	// is boilerplate however much of the text it is; only nine tenths the same (one README
	// for two builds of a package) makes them a minor edit.
	readmes := x.Source == readmeSource && y.Source == readmeSource
	switch {
	case x.norm == y.norm:
		return verdict{"exact", true, "identical after lowercasing and collapsing white space"}
	case x.section() != "" && x.section() == y.section():
		return classifyEditions(x, y, f)
	case f.c < looked && f.sentenceShare() < looked:
		return verdict{"different", false, fmt.Sprintf("no shared structure beyond common phrases (%.0f%% of the smaller's shingles, a shared sentence of %d words)", 100*f.c, f.sentence())}
	case f.shared() >= minorShared:
		return verdict{"minor", true, fmt.Sprintf("near-identical text: %s (%.0f%% of words shared)", diff(), 100*f.shared())}
	case !readmes && f.shared() >= minorSharedShort && f.a.changed+f.b.changed <= minorWords && max(f.a.places, f.b.places) <= minorPlaces:
		return verdict{"minor", true, "the same text but for a few local edits (another copyright line, a sentence or clause): " + diff()}
	case f.c >= containedShare:
		if 2*small.words >= large.words && small.changed <= minorWords/2 && small.places <= minorPlaces {
			return verdict{"partial", true, "one contains the other almost word for word and is mostly that text: " + diff()}
		}
		return verdict{"partial", false, fmt.Sprintf("one contains most of the other (%.0f%% of the smaller's shingles; %d vs %d words): %s", 100*f.c, small.words, large.words, diff())}
	case f.j >= 0.5 || (!readmes && f.shared() >= mostShared && f.inPassages() > 0):
		return verdict{"partial", false, fmt.Sprintf("most of both texts shared (%.0f%% of their words), not as a few local edits: %s", 100*f.shared(), diff())}
	case f.inPassages() >= sectionsWords:
		return verdict{"partial", false, fmt.Sprintf("shared whole sections: %d+%d words in shared passages of %d words or more", f.a.inPassages, f.b.inPassages, clauseWords)}
	case f.sentence() >= phraseWords || f.sharedWords() >= templateWords || f.mostlyShared():
		return verdict{"boilerplate", false, fmt.Sprintf("shared standard text around different content (%.0f%% of the smaller's shingles, %d words shared; longest shared sentence %d words, %d+%d words in shared passages)", 100*f.c, f.sharedWords(), f.sentence(), f.a.inPassages, f.b.inPassages)}
	default:
		return verdict{"different", false, fmt.Sprintf("common phrases only: no shared sentence of %d words, %d words shared in pieces", phraseWords, f.sharedWords())}
	}
}

// classifyEditions decides two documents of one section (two languages or two renderings
// of it) by what the texts share, not by their lang fields.
func classifyEditions(x, y *doc, f *features) verdict {
	if x.Source != y.Source {
		// Plain text vs Markdown: the markup breaks shingles, so the words are compared
		// through the languages of the prose; what is in the same languages is untranslated.
		if f.langs >= sameWords && sameWordSet(x.Text, y.Text) {
			return verdict{"format", true, fmt.Sprintf("same section, plain text vs Markdown rendering, the same words (%.0f%% of prose in the same languages)", 100*f.langs)}
		}
		return byUntranslated(f.langs, false, fmt.Sprintf("plain text vs Markdown rendering, not the same words (a title or label translated), %.0f%% of prose in the same languages (%s vs %s)", 100*f.langs, langSummary(x.langs), langSummary(y.langs)))
	}
	if f.shared() >= minorShared {
		return verdict{"minor", true, fmt.Sprintf("same section, near-identical text: %d+%d words differ (%.0f%% of words shared)", f.a.changed, f.b.changed, 100*f.shared())}
	}
	sameLang := x.langs.main() == y.langs.main() && f.langs >= sameLanguages && f.c >= looked
	return byUntranslated(f.untranslated(), sameLang, fmt.Sprintf("%.0f%% and %.0f%% of the prose shared verbatim (%s vs %s)", 100*f.proseA, 100*f.proseB, langSummary(x.langs), langSummary(y.langs)))
}

// byUntranslated places two editions of a section by the share of prose both carry
// verbatim (left untranslated). sameLang: in the same language, partly different (two
// revisions of one translation) rather than translated.
func byUntranslated(u float64, sameLang bool, what string) verdict {
	switch {
	case u >= editionMinor:
		return verdict{"minor", true, "same section, mostly untranslated: " + what}
	case u >= editionPartial:
		return verdict{"partial", false, "same section, partly translated: " + what}
	case sameLang:
		return verdict{"partial", false, "same section and language, partly different: " + what}
	}
	return verdict{"translation", false, "same section, its prose translated: " + what}
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

// sameWordSet reports whether two renderings of a section use the same words: every word
// (a run of letters) of each, outside link targets and code-fence lines, is somewhere in
// the other text, as a word or inside a path, a URL or markup (a plain-text rendering
// breaks URLs over lines; Markdown fences say "``` screen"). A translated title or label
// ("Personnaliser vim", "Attention" for "Caution") is a word the other text lacks: the
// words differ, not only the markup.
func sameWordSet(x, y string) bool {
	lx, ly := strings.ToLower(x), strings.ToLower(y)
	return wordsWithin(lx, ly) && wordsWithin(ly, lx)
}

// wordsWithin: every word of x (lowercased) occurs in y (lowercased).
func wordsWithin(x, y string) bool {
	for _, line := range strings.Split(links.ReplaceAllString(x, " "), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			continue
		}
		for _, w := range strings.FieldsFunc(line, func(r rune) bool { return !unicode.IsLetter(r) }) {
			if !strings.Contains(y, w) {
				return false
			}
		}
	}
	return true
}
