package demo

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// shingleSize is the word shingle length every measure here uses.
const shingleSize = 5

// text is what the rules need to know about one document: its words after lowercasing,
// the hash of the shingle that starts at each word, the distinct shingles (sorted), and
// which words are prose and in which language, guessed on the text itself.
type text struct {
	norm    string   // lowercased, white space collapsed
	words   []string // norm split at spaces
	bare    []string // words without trailing punctuation, for the word diff (align)
	width   []int    // letters in each word, a Chinese, Japanese or Korean character counting two
	shingle []uint64 // hash of words[i:i+5]; one shingle of all words when fewer than 5
	set     []uint64 // distinct shingles, sorted
	prose   []bool   // the word is in a paragraph guessed to be natural language
	langs   langShares
}

func analyze(s string) text {
	t := text{norm: strings.Join(strings.Fields(strings.ToLower(s)), " ")}
	if t.norm != "" {
		t.words = strings.Split(t.norm, " ")
	}
	t.width = make([]int, len(t.words))
	t.bare = make([]string, len(t.words))
	for i, w := range t.words {
		t.bare[i] = strings.TrimRight(w, ".,;:!?")
	}
	for i, w := range t.words {
		t.width[i] = letterWidth(w)
	}
	n := min(shingleSize, len(t.words))
	if n > 0 {
		for i := 0; i+n <= len(t.words); i++ {
			t.shingle = append(t.shingle, xxhash.Sum64String(strings.Join(t.words[i:i+n], " ")))
		}
	}
	t.set = slices.Clone(t.shingle)
	slices.Sort(t.set)
	t.set = slices.Compact(t.set)
	t.prose, t.langs = guessLanguages(s)
	if len(t.prose) != len(t.words) { // cannot happen: both split the same text at white space
		panic("demo: prose mask and words disagree")
	}
	return t
}

// covered marks the words of x that lie inside a shingle y has too.
func covered(x, y *text) []bool {
	cov := make([]bool, len(x.words))
	n := min(shingleSize, len(x.words))
	for i, h := range x.shingle {
		if _, ok := slices.BinarySearch(y.set, h); ok {
			for k := i; k < i+n; k++ {
				cov[k] = true
			}
		}
	}
	return cov
}

// alignWords and alignRun: two texts of at most alignWords words each are also compared
// word by word, as a diff would (a longest common subsequence of their words), and a run
// of at least alignRun words that the diff keeps in order on both sides counts as shared.
// Shingles alone overstate change in short texts: a changed word at a text's edge uncovers
// the words before it, and a name that recurs every few words (a README template around a
// package name) breaks every shingle around it. Runs shorter than alignRun are the
// scattered "the", "of", "and" any two texts have in the same order, unless they sit
// within alignGap words of a longer run on both sides (a sentence with a word changed).
const (
	alignWords = 400
	alignRun   = 3
	alignGap   = 2
)

// align marks, for two texts of at most alignWords words, the words of each that lie in a
// run of at least alignRun words matched in order by a longest common subsequence of the
// two word lists. It returns nil, nil for longer texts.
func align(x, y *text) (ax, ay []bool) {
	n, m := len(x.words), len(y.words)
	if n == 0 || m == 0 || n > alignWords || m > alignWords {
		return nil, nil
	}
	// l[i*(m+1)+k] is the length of a longest common subsequence of x.words[i:] and
	// y.words[k:]; walking it forward from (0, 0) gives the alignment.
	w := m + 1
	l := make([]uint16, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for k := m - 1; k >= 0; k-- {
			switch {
			case x.bare[i] == y.bare[k]:
				l[i*w+k] = l[(i+1)*w+k+1] + 1
			case l[(i+1)*w+k] >= l[i*w+k+1]:
				l[i*w+k] = l[(i+1)*w+k]
			default:
				l[i*w+k] = l[i*w+k+1]
			}
		}
	}
	// The runs of words matched in order, as (start in x, start in y, length).
	type matched struct{ i, k, n int }
	var runs []matched
	run := matched{}
	flush := func() {
		if run.n > 0 {
			runs = append(runs, run)
		}
		run = matched{}
	}
	for i, k := 0, 0; i < n && k < m; {
		switch {
		case x.bare[i] == y.bare[k] && l[i*w+k] == l[(i+1)*w+k+1]+1:
			if run.n == 0 {
				run.i, run.k = i, k
			}
			run.n++
			i++
			k++
		case l[(i+1)*w+k] >= l[i*w+k+1]:
			flush()
			i++
		default:
			flush()
			k++
		}
	}
	flush()
	// A run of at least alignRun words is shared; so is a shorter one next to a shared run
	// with at most alignGap words between them on each side: a word or two inserted into,
	// or replaced in, a sentence ("this software package may be freely used" vs "this
	// software may be freely used") leave its pieces one sentence, as a reader sees it.
	counted := make([]bool, len(runs))
	for r := range runs {
		counted[r] = runs[r].n >= alignRun
	}
	near := func(p, q matched) bool { // p before q
		return q.i-(p.i+p.n) <= alignGap && q.k-(p.k+p.n) <= alignGap
	}
	for changed := true; changed; {
		changed = false
		for r := range runs {
			if counted[r] {
				continue
			}
			if (r > 0 && counted[r-1] && near(runs[r-1], runs[r])) || (r+1 < len(runs) && counted[r+1] && near(runs[r], runs[r+1])) {
				counted[r], changed = true, true
			}
		}
	}
	ax, ay = make([]bool, n), make([]bool, m)
	for r, mr := range runs {
		if counted[r] {
			for d := range mr.n {
				ax[mr.i+d], ay[mr.k+d] = true, true
			}
		}
	}
	return ax, ay
}

// letterWidth counts the letters of a word as wide as they are on screen: a Chinese,
// Japanese or Korean character takes the room of two Latin letters. A share of a text
// measured so is the share a reader sees: a paragraph of Chinese and its English original
// fill about as many lines, though the Chinese has a third of the characters.
func letterWidth(w string) int {
	n := 0
	for _, r := range w {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			n += 2
		case unicode.IsLetter(r):
			n++
		}
	}
	return n
}

// diffSide is one side of a pair seen through shared shingles (and, for two short texts,
// through a word diff too: align): how many of its words are not covered (the words only
// this side has), in how many separate places, the longest run of covered words, and how
// many covered words lie in runs of at least clauseWords (shared passages of a clause or
// more, not scattered phrases).
type diffSide struct {
	words, changed, places, longestShared, inPassages int
	// sentence is the most shared words in one stretch with at most alignGap changed
	// words inside it: a standard sentence reworded in a word or two (sentenceOf).
	sentence int
}

// sideOf counts a side from its covered words. A shared run of fewer than shingleSize words between two changes (three words the word
// diff matched inside a rewritten sentence) does not end the change: the two count as one
// place. Shingles alone never make such a run.
func sideOf(cov []bool) diffSide {
	d := diffSide{words: len(cov)}
	run := 0
	changedBefore := false // a change precedes the current shared run
	endRun := func() {
		if run >= clauseWords {
			d.inPassages += run
		}
		run = 0
	}
	for _, c := range cov {
		if c {
			run++
			d.longestShared = max(d.longestShared, run)
			continue
		}
		if !changedBefore || run >= shingleSize {
			d.places++
		}
		endRun()
		d.changed++
		changedBefore = true
	}
	endRun()
	d.sentence = sentenceOf(cov)
	return d
}

// sentenceOf is the most shared words in one stretch of cov that has at most alignGap
// changed words inside it: a standard sentence with a word or two changed, inserted or
// dropped, as the guidelines count it, not pieces of common phrases strung together
// with a word or two between each.
func sentenceOf(cov []bool) int {
	best, changed, l := 0, 0, 0
	for r, c := range cov {
		if !c {
			changed++
			for changed > alignGap {
				if !cov[l] {
					changed--
				}
				l++
			}
			continue
		}
		for l < r && !cov[l] { // a stretch starts on a shared word
			changed--
			l++
		}
		best = max(best, r-l+1-changed)
	}
	return best
}

// proseShared is the share of x's prose (by width, letterWidth) that lies in shingles y
// has too: the part of its running text that y carries verbatim (for two editions of a
// section, what the translator left untranslated). It is 0 when x has no prose.
func proseShared(x *text, cov []bool) float64 {
	shared, all := proseWidths(x, cov)
	if all == 0 {
		return 0
	}
	return float64(shared) / float64(all)
}

// proseWidths is the width of x's prose that lies in shingles y has too, and of all of it.
func proseWidths(x *text, cov []bool) (shared, all int) {
	for i, p := range x.prose {
		if !p {
			continue
		}
		all += x.width[i]
		if cov[i] {
			shared += x.width[i]
		}
	}
	return shared, all
}

// Languages are guessed per paragraph: by script where the script settles it (Cyrillic,
// Arabic or Persian letters, Han with or without kana), else by the stopwords of the
// Latin-script languages of the corpus. A paragraph with too few stopwords for its length
// (code, tables, lists of package names, headings) is not prose and gets no language.
var stopwords = map[string][]string{
	"en": strings.Fields("the of and to in is that for it with as be on by this are or not from at you your can an which if will may all any such"),
	"de": strings.Fields("der die und das ist nicht zu den mit ein eine sich des auf für sie im dem von auch werden wird oder wenn es kann sind"),
	"fr": strings.Fields("le la les de des et est un une du en pour que qui dans sur par pas ne vous avec au sont être ou il cette"),
	"es": strings.Fields("el la los las de del en que es un una para por con se no su al como más puede lo este si"),
	"it": strings.Fields("il la le di del della è un una per che non con si dei delle da in sono come anche può gli lo"),
	"pt": strings.Fields("os as de do da dos das é um uma para que não com se em no na por ao pode são mais"),
	"ca": strings.Fields("el la els les de del és un una per que no amb es en al dels pot són com més"),
	"id": strings.Fields("yang dan di ini untuk dengan dari tidak dalam ke akan pada atau adalah dapat juga itu sebuah bisa"),
	"nb": strings.Fields("og er det som til en på av for med ikke at den de et kan har vil om eller"),
	"da": strings.Fields("og er det som til en på af for med ikke at den de et kan har vil om eller"),
	"pl": strings.Fields("nie na jest się do że to jak co dla są może lub przez od"),
	"nl": strings.Fields("de het een en van in is dat op te voor met niet zijn die of"),
}

var stopwordLangs = func() map[string][]string {
	m := map[string][]string{}
	langs := make([]string, 0, len(stopwords))
	for l := range stopwords {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	for _, l := range langs {
		for _, w := range stopwords[l] {
			m[w] = append(m[w], l)
		}
	}
	return m
}()

// links are URLs and Markdown link targets: their words ("de" in de.wikipedia.org) say
// nothing about the language of the text around them.
var links = regexp.MustCompile(`\]\([^)]*\)|https?://\S+|\S+@\S+\.\S+`)

// langShares maps a language to its share of a document's prose (by width, letterWidth).
type langShares map[string]float64

// main is the language with the largest share ("" for a document without prose).
func (s langShares) main() string {
	best := ""
	for l, v := range s {
		if best == "" || v > s[best] || v == s[best] && l < best {
			best = l
		}
	}
	return best
}

// overlap is the share of prose the two documents have in the same languages
// (sum over languages of the smaller share): 1 for two English texts, 0 for an English
// and a German one.
func (s langShares) overlap(o langShares) float64 {
	var sum float64
	for l, v := range s {
		sum += min(v, o[l])
	}
	return sum
}

// guessLanguages returns, per white-space separated word of s, whether it is in a prose
// paragraph, and the share of prose per language (by width, letterWidth).
func guessLanguages(s string) ([]bool, langShares) {
	var prose []bool
	width := map[string]int{}
	total := 0
	for _, para := range paragraphs(s) {
		lang, n := paragraphLanguage(para)
		isProse := lang != ""
		if isProse {
			width[lang] += n
			total += n
		}
		for range strings.Fields(para) {
			prose = append(prose, isProse)
		}
	}
	shares := langShares{}
	for l, n := range width {
		shares[l] = float64(n) / float64(total)
	}
	return prose, shares
}

// paragraphs splits s at blank lines, keeping every word in exactly one paragraph.
func paragraphs(s string) []string {
	var out []string
	start := 0
	lines := strings.SplitAfter(s, "\n")
	pos := 0
	for _, ln := range lines {
		pos += len(ln)
		if strings.TrimSpace(ln) == "" {
			out = append(out, s[start:pos])
			start = pos
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// isTable: most of the paragraph's lines are rows of a text table ("| cell | cell |",
// "+-----+"). A table is not prose even when its cells hold sentences (a French table
// of shells with their descriptions has stopwords enough): the guidelines leave tables
// out of the untranslated share.
func isTable(p string) bool {
	rows, lines := 0, 0
	for _, ln := range strings.Split(p, "\n") {
		ln = strings.TrimSpace(ln)
		if ln == "" {
			continue
		}
		lines++
		if strings.HasPrefix(ln, "|") || strings.HasPrefix(ln, "+-") || strings.HasPrefix(ln, "+=") {
			rows++
		}
	}
	return 2*rows > lines
}

// fieldLine is a "Field: value" line of a control file or a command's output
// ("Package: equivs", "Priority: optional").
var fieldLine = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*: \S`)

// isFieldList: two or more of the paragraph's lines are "Field: value" lines: a
// command's output (apt-cache show's package description), code rather than prose,
// whatever its description says in English.
func isFieldList(p string) bool {
	n := 0
	for _, ln := range strings.Split(p, "\n") {
		if fieldLine.MatchString(strings.TrimSpace(ln)) {
			n++
		}
	}
	return n >= 2
}

// paragraphLanguage guesses the language of one paragraph and measures its width
// (letterWidth); "" when the paragraph is not prose.
func paragraphLanguage(p string) (string, int) {
	var latin, cyrillic, arabic, persian, kana, han, other int
	for _, r := range p {
		if !unicode.IsLetter(r) {
			continue
		}
		switch {
		case r < 0x250:
			latin++
		case unicode.Is(unicode.Cyrillic, r):
			cyrillic++
		case unicode.Is(unicode.Arabic, r):
			arabic++
			if strings.ContainsRune("پچژگکی", r) {
				persian++
			}
		case unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
			kana++
		case unicode.Is(unicode.Han, r):
			han++
		default:
			other++
		}
	}
	total := latin + cyrillic + arabic + kana + han + other
	if total == 0 || isTable(p) || isFieldList(p) {
		return "", 0
	}
	width := total + kana + han // as on screen: these characters are twice as wide
	switch top := max(latin, cyrillic, arabic, kana+han, other); {
	case top == cyrillic:
		return "ru", width
	case top == arabic && persian*20 > arabic:
		return "fa", width
	case top == arabic:
		return "ar", width
	case top == kana+han && !strings.ContainsAny(p, "。！？"):
		// A heading or a caption ("4.2.9. 管理者パスワード", "図 4.5", "ヒント"): no
		// sentence in it. Chinese and Japanese have no stopwords to tell them from
		// prose, as Latin-script headings have too few.
		return "", 0
	case top == kana+han && kana*10 > kana+han:
		return "ja", width
	case top == kana+han:
		return "zh", width
	case top == other:
		return "", 0
	}
	votes := map[string]int{}
	words, hits := 0, 0
	for _, w := range strings.Fields(strings.ToLower(links.ReplaceAllString(p, " "))) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) })
		if w == "" {
			continue
		}
		words++
		if ls, ok := stopwordLangs[w]; ok && utf8.RuneCountInString(w) > 1 {
			hits++
			for _, l := range ls {
				votes[l]++
			}
		}
	}
	// Prose has about one stopword in three words; code, tables and headings far fewer.
	if hits < 2 || float64(hits) < 0.12*float64(words) {
		return "", 0
	}
	best := ""
	for l, v := range votes {
		if best == "" || v > votes[best] || v == votes[best] && l < best {
			best = l
		}
	}
	return best, width
}
