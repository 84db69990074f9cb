package textdiff

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Op is what a piece of text is in a comparison.
type Op int8

// Ops.
const (
	Same    Op = iota // in both documents
	Removed           // only in the left document
	Added             // only in the right document
)

// Span is a run of text with one Op.
type Span struct {
	Text string
	Op   Op
}

// Comparison is a word diff of two documents laid out for reading.
//
// Same means the same words in the same order: white space compares equal whatever its
// form (a space, a line break, indentation, CRLF or LF), so each side keeps its own
// spacing. Text of at least moveWords words that was removed in one place and added in
// another (a moved paragraph, reordered lines) is in both documents: it is Same in Left
// and Right, and Unified shows it Removed where it was and Added where it went.
type Comparison struct {
	Left, Right []Span // each side with its own text
	// Unified interleaves both sides in one column. Without its Added spans it is the left
	// text; without its Removed spans it is the right text but for white space, as its Same
	// spans carry the left's.
	Unified []Span
	// Truncated reports that a work limit stopped the word alignment before it finished,
	// so some changed blocks are marked whole though words inside them may match. Reason
	// says how many, how large and which limit, in a sentence for the page.
	Truncated bool
	Reason    string
}

// Limits that bound Compare's work whatever its input, so a pair page stays fast and its
// result does not depend on the machine's speed.
const (
	// moveWords is the shortest run of words and punctuation, white space aside, that
	// counts as moved rather than removed and added.
	moveWords = 8
	// chaffWords: an unchanged run of at most this many words between two replacements is
	// shown as part of them (two unrelated sentences share "the", "of a"; marking those
	// alone as unchanged makes confetti, not information).
	chaffWords = 2
	// lineBudget and wordBudget bound the steps (about one symbol looked at each) of the
	// line alignment and of the token alignment inside changed blocks, the only parts of
	// Compare whose work can grow faster than the texts. 200 KB of prose is about 80,000
	// tokens; aligning it with an unrelated text takes 1.5 million steps, with the same
	// words shuffled 0.9 million (BenchmarkCompare). Regions left when the line budget
	// runs out go to the token alignment whole; blocks left when the word budget runs out
	// are reported in Reason.
	lineBudget = 4_000_000
	wordBudget = 5_000_000
	// myersSteps and myersPerSymbol bound the last fallback for a region of a changed
	// block without anchors, Myers' greedy O(ND) diff: it is fast where the sides are
	// alike (D small) and hopeless where they are not, so it may take 16 steps per
	// symbol of the region, 400,000 at most; beyond that the region is marked whole and
	// reported.
	myersSteps     = 400_000
	myersPerSymbol = 16
)

// Compare diffs two texts for reading, in three passes, each deterministic and bounded:
//
//  1. Lines, compared with white space collapsed, are aligned by patience diff: lines with
//     a letter or digit that occur exactly once in each text anchor the alignment (the
//     longest run of them in the same order on both sides), the gaps between anchors are
//     aligned the same way, and equal neighbours extend each match. A paragraph found once
//     in each document stays Same whatever changes around it, which a shortest-edit diff
//     with a cleanup pass (what this replaced) does not promise.
//  2. Inside each changed block, tokens are aligned the same way: words, runs of
//     punctuation, runs of white space, and each ideograph, kana or Thai-like letter (those
//     scripts put no spaces between words). Where no word is found once on each side,
//     words found as often on both sides anchor in order; a region still without anchors
//     is aligned exactly by the LCS table when small, else by Myers' diff within
//     myersSteps, else left whole and reported. Unchanged runs of at most chaffWords words
//     between two replacements are then merged into them.
//  3. Runs of moveWords tokens removed in one place and added in another are moved.
func Compare(a, b string) Comparison {
	if a == b {
		if a == "" {
			return Comparison{}
		}
		return Comparison{Left: []Span{{Text: a, Op: Same}}, Right: []Span{{Text: b, Op: Same}}, Unified: []Span{{Text: a, Op: Same}}}
	}
	d := differ{texts: [2]string{a, b}}
	return d.run()
}

// differ holds one comparison's working state.
type differ struct {
	texts [2]string
	// Lines: start offsets (with a sentinel at the end) and interned keys per side.
	lineStart [2][]int32
	lineSym   [2][]int32
	// Tokens of the changed blocks only, per side, in text order.
	toks   [2][]token
	hunks  []hunk
	moved  [2][]bool
	al     aligner
	cutN   int    // blocks the word alignment did not finish
	cutLen [2]int // their bytes, per side
}

// token is a piece of one text, and the interned symbol it compares by.
type token struct {
	start, end int32
	sym        int32
}

// hunk is a changed block: the lines between two runs of Same lines, by byte and token
// ranges on each side.
type hunk struct {
	byteLo, byteHi [2]int32
	tokLo, tokHi   [2]int32
}

func (d *differ) run() Comparison {
	// Pass 1: lines.
	lines := map[string]int32{}
	var lineAnchor []bool
	var buf []byte
	for s := range 2 {
		d.lineStart[s], d.lineSym[s], lineAnchor, buf = splitLines(d.texts[s], lines, lineAnchor, buf)
	}
	nA, nB := len(d.lineSym[0]), len(d.lineSym[1])
	d.al.reset(len(lineAnchor), nA, nB, lineAnchor, lineBudget)
	d.al.align(d.lineSym[0], d.lineSym[1], region{0, int32(nA), 0, int32(nB)}, false)
	lineMatch := d.al.match // reset below gives the word aligner its own

	// The changed blocks, tokenized. Prose has a token every 3 bytes or so.
	words := map[string]int32{"": 0} // symbol 0 is any white space
	wordAnchor := []bool{false}
	changed := [2]int{}
	for s := range 2 {
		for k, m := range lineMatch[s] {
			if m < 0 {
				changed[s] += int(d.lineStart[s][k+1] - d.lineStart[s][k])
			}
		}
		d.toks[s] = make([]token, 0, changed[s]/3+1)
	}
	for i, j := 0, 0; i < nA || j < nB; {
		if i < nA && j < nB && lineMatch[0][i] == int32(j) {
			i, j = i+1, j+1
			continue
		}
		i1, j1 := i, j
		for i1 < nA && lineMatch[0][i1] < 0 {
			i1++
		}
		for j1 < nB && lineMatch[1][j1] < 0 {
			j1++
		}
		h := hunk{byteLo: [2]int32{d.lineStart[0][i], d.lineStart[1][j]}, byteHi: [2]int32{d.lineStart[0][i1], d.lineStart[1][j1]}}
		for s := range 2 {
			h.tokLo[s] = int32(len(d.toks[s]))
			d.toks[s], wordAnchor = appendTokens(d.toks[s], d.texts[s], int(h.byteLo[s]), int(h.byteHi[s]), words, wordAnchor)
			h.tokHi[s] = int32(len(d.toks[s]))
		}
		d.hunks = append(d.hunks, h)
		i, j = i1, j1
	}

	// Pass 2: words inside each changed block.
	syms := [2][]int32{make([]int32, len(d.toks[0])), make([]int32, len(d.toks[1]))}
	for s := range 2 {
		for k, t := range d.toks[s] {
			syms[s][k] = t.sym
		}
	}
	d.al.reset(len(wordAnchor), len(syms[0]), len(syms[1]), wordAnchor, wordBudget)
	for _, h := range d.hunks {
		r := region{h.tokLo[0], h.tokHi[0], h.tokLo[1], h.tokHi[1]}
		for _, cut := range d.al.align(syms[0], syms[1], r, true) {
			d.cutN++
			d.cutLen[0] += d.span(0, cut.a0, cut.a1)
			d.cutLen[1] += d.span(1, cut.b0, cut.b1)
		}
		d.dropChaff(h, wordAnchor)
	}

	// Pass 3: moved text.
	d.moved = [2][]bool{make([]bool, len(d.toks[0])), make([]bool, len(d.toks[1]))}
	d.markMoved(syms, wordAnchor)
	d.settleSpace(syms)

	return d.layout(lineMatch)
}

// span is the length in bytes of tokens [lo, hi) of side s.
func (d *differ) span(s int, lo, hi int32) int {
	if lo >= hi {
		return 0
	}
	return int(d.toks[s][hi-1].end - d.toks[s][lo].start)
}

// layout builds the spans: Same lines, then each changed block token by token.
func (d *differ) layout(lineMatch [2][]int32) Comparison {
	left := builder{texts: d.texts}
	right := builder{texts: d.texts}
	uni := builder{texts: d.texts}
	m := d.al.match
	nA, nB := len(d.lineSym[0]), len(d.lineSym[1])
	hk := 0
	for i, j := 0, 0; i < nA || j < nB; {
		if i < nA && j < nB && lineMatch[0][i] == int32(j) {
			la, lb := d.lineStart[0], d.lineStart[1]
			left.add(0, la[i], la[i+1], Same)
			right.add(1, lb[j], lb[j+1], Same)
			uni.add(0, la[i], la[i+1], Same)
			i, j = i+1, j+1
			continue
		}
		h := d.hunks[hk]
		hk++
		ta, tb := d.toks[0], d.toks[1]
		for x, y := h.tokLo[0], h.tokLo[1]; x < h.tokHi[0] || y < h.tokHi[1]; {
			if x < h.tokHi[0] && y < h.tokHi[1] && m[0][x] == y {
				left.add(0, ta[x].start, ta[x].end, Same)
				right.add(1, tb[y].start, tb[y].end, Same)
				uni.add(0, ta[x].start, ta[x].end, Same)
				x, y = x+1, y+1
				continue
			}
			for ; x < h.tokHi[0] && m[0][x] < 0; x++ {
				op := Removed
				if d.moved[0][x] {
					op = Same
				}
				left.add(0, ta[x].start, ta[x].end, op)
				uni.add(0, ta[x].start, ta[x].end, Removed)
			}
			for ; y < h.tokHi[1] && m[1][y] < 0; y++ {
				op := Added
				if d.moved[1][y] {
					op = Same
				}
				right.add(1, tb[y].start, tb[y].end, op)
				uni.add(1, tb[y].start, tb[y].end, Added)
			}
		}
		// Skip the block's lines.
		for i < nA && lineMatch[0][i] < 0 {
			i++
		}
		for j < nB && lineMatch[1][j] < 0 {
			j++
		}
	}
	c := Comparison{Left: left.done(), Right: right.done(), Unified: uni.done()}
	if d.cutN > 0 {
		c.Truncated = true
		blocks := "1 changed block is"
		if d.cutN > 1 {
			blocks = fmt.Sprintf("%d changed blocks are", d.cutN)
		}
		c.Reason = fmt.Sprintf("The word diff reached its work limit: %s marked whole (%s on the left, %s on the right) without matching the words inside; only runs of %d or more words found on both sides are unmarked there.",
			blocks, byteSize(d.cutLen[0]), byteSize(d.cutLen[1]), moveWords)
	}
	return c
}

// byteSize formats n bytes for a sentence.
func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1_000_000)
}

// builder collects spans, merging pieces that continue the previous one in the same text
// with the same Op, so every span's text is a slice of a document.
type builder struct {
	texts      [2]string
	spans      []Span
	src        int
	start, end int32
	op         Op
}

func (b *builder) add(src int, start, end int32, op Op) {
	if start == end {
		return
	}
	if b.end > b.start {
		if src == b.src && op == b.op && start == b.end {
			b.end = end
			return
		}
		b.spans = append(b.spans, Span{Text: b.texts[b.src][b.start:b.end], Op: b.op})
	}
	b.src, b.start, b.end, b.op = src, start, end, op
}

func (b *builder) done() []Span {
	if b.end > b.start {
		b.spans = append(b.spans, Span{Text: b.texts[b.src][b.start:b.end], Op: b.op})
	}
	return b.spans
}

// splitLines cuts text into lines (each with its line break) and interns each line's key:
// its words with white space collapsed to one space and trimmed, then "\n" if the line has
// a line break (CRLF or LF). A line with a letter or a digit may anchor the alignment;
// blank lines and lines of punctuation only are too common to.
func splitLines(text string, keys map[string]int32, anchor []bool, buf []byte) (starts, syms []int32, _ []bool, _ []byte) {
	starts = make([]int32, 0, len(text)/40+2)
	syms = make([]int32, 0, len(text)/40+2)
	for i := 0; i < len(text); {
		starts = append(starts, int32(i))
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			j = len(text)
		} else {
			j += i + 1
		}
		line := text[i:j]
		i = j
		// Most lines are their own key: ASCII with single spaces between words.
		body := strings.TrimSuffix(line, "\n")
		var f uint8
		for k := 0; k < len(body); k++ {
			f |= lineFlags[body[k]]
		}
		plain := f&flagOdd == 0 && (len(body) == 0 || body[0] != ' ' && body[len(body)-1] != ' ') && !strings.Contains(body, "  ")
		wordy := f&flagWord != 0
		if f&flagOdd != 0 {
			wordy = false
			for _, r := range body {
				if c := classOf(r); c == wordClass || c == ideoClass {
					wordy = true
					break
				}
			}
		}
		// The line break is part of the key: a last line without one must not pair with
		// a line that has one, or Unified would run it into the next line's words.
		key := line
		if !plain {
			buf = appendCollapsed(buf[:0], body)
			if len(body) < len(line) {
				buf = append(buf, '\n')
			}
		}
		var sym int32
		var ok bool
		if plain {
			sym, ok = keys[key]
		} else {
			sym, ok = keys[string(buf)]
		}
		if !ok {
			sym = int32(len(anchor))
			if plain {
				keys[key] = sym
			} else {
				keys[string(buf)] = sym
			}
			anchor = append(anchor, wordy)
		}
		syms = append(syms, sym)
	}
	starts = append(starts, int32(len(text)))
	return starts, syms, anchor, buf
}

// appendCollapsed appends s to buf with its white space runs collapsed to one space and
// trimmed at both ends.
func appendCollapsed(buf []byte, s string) []byte {
	space := false
	for k := 0; k < len(s); {
		r, n := rune(s[k]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[k:])
		}
		if classOf(r) == spaceClass {
			space = len(buf) > 0
		} else {
			if space {
				buf = append(buf, ' ')
				space = false
			}
			buf = append(buf, s[k:k+n]...)
		}
		k += n
	}
	return buf
}

// Character classes of the word tokenizer.
const (
	spaceClass = iota
	wordClass  // letters, digits, marks, connectors: a run is one token
	ideoClass  // ideographs, kana and scripts written without spaces: one token each
	punctClass // anything else, invalid UTF-8 included: a run is one token
)

// lineFlags marks the bytes that make a line's key differ from its text (white space
// other than a space, any byte of a non-ASCII rune) and ASCII letters and digits.
var lineFlags = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= utf8.RuneSelf || c != ' ' && asciiClass[c] == spaceClass:
			t[c] = flagOdd
		case asciiClass[c] == wordClass:
			t[c] = flagWord
		}
	}
	return t
}()

const (
	flagOdd = 1 << iota
	flagWord
)

// asciiClass is classOf for ASCII.
var asciiClass = func() (t [128]uint8) {
	for c := range t {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			t[c] = spaceClass
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_':
			t[c] = wordClass
		default:
			t[c] = punctClass
		}
	}
	return t
}()

func classOf(r rune) int {
	if r < utf8.RuneSelf {
		return int(asciiClass[r])
	}
	switch {
	case r == utf8.RuneError:
		return punctClass
	case unicode.IsSpace(r):
		return spaceClass
	case r >= 0x0E00 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar):
		return ideoClass
	case unicode.In(r, unicode.Letter, unicode.Digit, unicode.Mark, unicode.Pc):
		return wordClass
	}
	return punctClass
}

// appendTokens appends the tokens of text[lo:hi] to toks, interning each: every white
// space run is symbol 0, and words (with ideographs) may anchor the alignment.
func appendTokens(toks []token, text string, lo, hi int, syms map[string]int32, anchor []bool) ([]token, []bool) {
	start, class := lo, -1
	flush := func(end int) {
		if end == start {
			return
		}
		sym := int32(0)
		if class != spaceClass {
			var ok bool
			if sym, ok = syms[text[start:end]]; !ok {
				sym = int32(len(anchor))
				syms[text[start:end]] = sym
				anchor = append(anchor, class == wordClass || class == ideoClass)
			}
		}
		toks = append(toks, token{start: int32(start), end: int32(end), sym: sym})
	}
	for i := lo; i < hi; {
		c, n := int(asciiClass[text[i]&0x7f]), 1
		if text[i] >= utf8.RuneSelf {
			var r rune
			r, n = utf8.DecodeRuneInString(text[i:hi])
			c = classOf(r)
		}
		if c != class || c == ideoClass {
			flush(i)
			start, class = i, c
		}
		i += n
	}
	flush(hi)
	return toks, anchor
}

// region is a pair of half-open ranges, of A's and B's symbols, to align.
type region struct{ a0, a1, b0, b1 int32 }

// aligner aligns two symbol sequences by recursive patience diff within a step budget.
type aligner struct {
	match  [2][]int32 // per position, the matched position on the other side or -1
	anchor []bool     // per symbol
	budget int
	// Per-symbol scratch, valid where stamp equals gen: counts in the region, the first
	// B position (then the next one to pair), and per B position the next of its symbol.
	stamp      []uint32
	gen        uint32
	cntA, cntB []int32
	headB      []int32
	nextB      []int32
	// Reused buffers.
	cand, chain []pair
	tails, prev []int32
	stack       []region
	myersV      []int32
	trace       []int32
	roundAt     []int
	cells       []uint16
}

type pair struct{ a, b int32 }

func (al *aligner) reset(nsym, nA, nB int, anchor []bool, budget int) {
	al.anchor, al.budget = anchor, budget
	al.match = [2][]int32{fill(nA), fill(nB)}
	al.stamp = make([]uint32, nsym)
	al.cntA = make([]int32, nsym)
	al.cntB = make([]int32, nsym)
	al.headB = make([]int32, nsym)
	al.nextB = make([]int32, nB)
	al.gen = 0
}

func fill(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = -1
	}
	return s
}

func (al *aligner) pair(i, j int32) {
	al.match[0][i], al.match[1][j] = j, i
}

// align matches what it can of region r of a and b: it pairs equal ends, then anchors
// (see anchors) and aligns the gaps between them the same way. Without fallback a region
// without anchors is left unmatched; with it, such a region is aligned by table if it is
// small, else split by anchors of any count, else aligned by myers. align returns the
// regions it left unaligned for want of budget or because myers gave up.
func (al *aligner) align(a, b []int32, r region, fallback bool) (cut []region) {
	al.stack = append(al.stack[:0], r)
	for len(al.stack) > 0 {
		r := al.stack[len(al.stack)-1]
		al.stack = al.stack[:len(al.stack)-1]
		for r.a0 < r.a1 && r.b0 < r.b1 && a[r.a0] == b[r.b0] {
			al.pair(r.a0, r.b0)
			r.a0, r.b0 = r.a0+1, r.b0+1
		}
		for r.a0 < r.a1 && r.b0 < r.b1 && a[r.a1-1] == b[r.b1-1] {
			r.a1, r.b1 = r.a1-1, r.b1-1
			al.pair(r.a1, r.b1)
		}
		if r.a0 == r.a1 || r.b0 == r.b1 {
			continue
		}
		cost := int(r.a1 - r.a0 + r.b1 - r.b0)
		if cost > al.budget {
			cut = append(cut, r)
			continue
		}
		al.budget -= cost
		chain := al.anchors(a, b, r, false)
		if len(chain) == 0 {
			if !fallback {
				continue
			}
			n, m := int(r.a1-r.a0), int(r.b1-r.b0)
			if n*m <= tableCells {
				al.table(a, b, r)
				continue
			}
			if chain = al.anchors(a, b, r, true); len(chain) == 0 {
				if !al.myers(a, b, r) {
					cut = append(cut, r)
				}
				continue
			}
		}
		// Push the gaps last first, so they are done in text order.
		last := chain[len(chain)-1]
		al.stack = append(al.stack, region{last.a + 1, r.a1, last.b + 1, r.b1})
		for k := len(chain) - 1; k >= 0; k-- {
			c := chain[k]
			al.pair(c.a, c.b)
			gap := region{r.a0, c.a, r.b0, c.b}
			if k > 0 {
				gap.a0, gap.b0 = chain[k-1].a+1, chain[k-1].b+1
			}
			al.stack = append(al.stack, gap)
		}
	}
	return cut
}

// maxRepeat is the most occurrences of a symbol that anchors pair in order.
const maxRepeat = 8

// anchors returns the longest sequence, in the same order on both sides, of the anchor
// symbols found exactly once in each side of r (patience diff's anchors). Where there
// is none, symbols found equally often on both sides (at most maxRepeat times) stand in,
// their k-th occurrences paired, so that a region of common words still splits; with
// any, symbols found at most maxRepeat times on each side, paired in order as far as
// the rarer side goes.
func (al *aligner) anchors(a, b []int32, r region, any bool) []pair {
	al.gen++
	if al.gen == 0 {
		clear(al.stamp)
		al.gen = 1
	}
	gen := al.gen
	for _, s := range a[r.a0:r.a1] {
		if !al.anchor[s] {
			continue
		}
		if al.stamp[s] != gen {
			al.stamp[s], al.cntA[s], al.cntB[s] = gen, 0, 0
		}
		al.cntA[s]++
	}
	for j := r.b1 - 1; j >= r.b0; j-- {
		if s := b[j]; al.stamp[s] == gen {
			if al.cntB[s] == 0 {
				al.nextB[j] = -1
			} else {
				al.nextB[j] = al.headB[s]
			}
			al.cntB[s]++
			al.headB[s] = j
		}
	}
	al.cand = al.cand[:0]
	for i := r.a0; i < r.a1; i++ {
		if s := a[i]; al.stamp[s] == gen && al.cntA[s] == 1 && al.cntB[s] == 1 {
			al.cand = append(al.cand, pair{i, al.headB[s]})
		}
	}
	if len(al.cand) == 0 {
		for i := r.a0; i < r.a1; i++ {
			s := a[i]
			if al.stamp[s] != gen || al.cntA[s] > maxRepeat || al.cntB[s] > maxRepeat || al.headB[s] < 0 {
				continue
			}
			if al.cntA[s] == al.cntB[s] || any && al.cntB[s] > 0 {
				al.cand = append(al.cand, pair{i, al.headB[s]})
				al.headB[s] = al.nextB[al.headB[s]]
			}
		}
	}
	if len(al.cand) == 0 {
		return nil
	}
	// Longest increasing subsequence by B position (patience sorting).
	c := al.cand
	al.tails, al.prev = al.tails[:0], append(al.prev[:0], make([]int32, len(c))...)
	for k, p := range c {
		lo, hi := 0, len(al.tails)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if c[al.tails[mid]].b < p.b {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		al.prev[k] = -1
		if lo > 0 {
			al.prev[k] = al.tails[lo-1]
		}
		if lo == len(al.tails) {
			al.tails = append(al.tails, int32(k))
		} else {
			al.tails[lo] = int32(k)
		}
	}
	al.budget -= len(c) * 4
	n := len(al.tails)
	al.chain = append(al.chain[:0], make([]pair, n)...)
	for k, i := al.tails[n-1], n-1; i >= 0; k, i = al.prev[k], i-1 {
		al.chain[i] = c[k]
	}
	return al.chain
}

// tableCells bounds the regions aligned by table (256 K cells of 2 bytes).
const tableCells = 1 << 18

// table aligns a small region on a longest common subsequence by the textbook table.
func (al *aligner) table(a, b []int32, r region) {
	n, m := int(r.a1-r.a0), int(r.b1-r.b0)
	al.budget -= n * m / 4
	// t[i*(m+1)+j] is the length of the LCS of a[i:] and b[j:] (within r).
	w := m + 1
	t := append(al.cells[:0], make([]uint16, (n+1)*w)...)
	al.cells = t
	a, b = a[r.a0:r.a1], b[r.b0:r.b1]
	for i := n - 1; i >= 0; i-- {
		row, below := t[i*w:(i+1)*w], t[(i+1)*w:(i+2)*w]
		ai := a[i]
		for j := m - 1; j >= 0; j-- {
			switch {
			case ai == b[j]:
				row[j] = below[j+1] + 1
			case below[j] >= row[j+1]:
				row[j] = below[j]
			default:
				row[j] = row[j+1]
			}
		}
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			al.pair(r.a0+int32(i), r.b0+int32(j))
			i, j = i+1, j+1
		case t[(i+1)*w+j] >= t[i*w+j+1]:
			i++
		default:
			j++
		}
	}
}

// myers aligns r by Myers' greedy shortest-edit diff ("An O(ND) Difference Algorithm",
// 1986), keeping each round's furthest reaches to trace the path back. It gives up,
// leaving r unmatched, when its steps would exceed myersSteps or the budget.
func (al *aligner) myers(a, b []int32, r region) bool {
	a, b = a[r.a0:r.a1], b[r.b0:r.b1]
	n, m := len(a), len(b)
	limit := min(myersSteps, myersPerSymbol*(n+m), al.budget)
	if d := n - m; d*d/2 > limit {
		return false // D >= |n-m|, and round d costs d+1 steps at least
	}
	steps := 0
	// v[k+off] is the furthest x on diagonal k; trace keeps round d's v[-d..d] (d+1 values).
	off := n + m + 1
	v := append(al.myersV[:0], make([]int32, 2*off+1)...)
	al.myersV = v
	trace, roundAt := al.trace[:0], al.roundAt[:0]
	defer func() { al.trace, al.roundAt = trace[:0], roundAt[:0] }()
	for d := 0; d <= n+m; d++ {
		roundAt = append(roundAt, len(trace))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = int(v[off+k+1])
			} else {
				x = int(v[off+k-1]) + 1
			}
			x0, y := x, x-k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			steps += 1 + x - x0
			v[off+k] = int32(x)
			trace = append(trace, int32(x))
			if x >= n && y >= m {
				al.budget -= steps
				al.myersBack(r, trace, roundAt, d, k)
				return true
			}
		}
		if steps > limit {
			al.budget -= steps
			return false
		}
	}
	return true // not reached: d = n+m always ends
}

// myersBack walks the path found by myers back from round d, diagonal k, pairing the
// symbols on its diagonal stretches.
func (al *aligner) myersBack(r region, trace []int32, roundAt []int, d, k int) {
	at := func(d, k int) int { return int(trace[roundAt[d]+(k+d)/2]) }
	x := at(d, k)
	y := x - k
	for ; d > 0; d-- {
		var px int
		var pk int
		if k == -d || k != d && at(d-1, k-1) < at(d-1, k+1) {
			pk = k + 1
			px = at(d-1, pk)
		} else {
			pk = k - 1
			px = at(d-1, pk) + 1
		}
		py := px - k
		for x > px && y > py {
			x, y = x-1, y-1
			al.pair(r.a0+int32(x), r.b0+int32(y))
		}
		x = at(d-1, pk)
		y = x - pk
		k = pk
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		al.pair(r.a0+int32(x), r.b0+int32(y))
	}
}

// dropChaff unpairs, inside hunk h, each run of at most chaffWords paired words that sits
// between two replacements (removed and added text on both of its sides), and each run of
// white space and punctuation between two changes, when the run is shorter than the
// change on each side; it does so again where a merged change makes a new such run (as
// diff-match-patch's semantic cleanup does, but never for runs of more words).
func (d *differ) dropChaff(h hunk, anchor []bool) {
	m := d.al.match
	type seg struct {
		paired     bool
		a0, a1     int32 // tokens
		b0, b1     int32
		words      int
		aLen, bLen int
	}
	var segs []seg
	x, y := h.tokLo[0], h.tokLo[1]
	for x < h.tokHi[0] || y < h.tokHi[1] {
		s := seg{a0: x, b0: y}
		if x < h.tokHi[0] && y < h.tokHi[1] && m[0][x] == y {
			s.paired = true
			for x < h.tokHi[0] && y < h.tokHi[1] && m[0][x] == y {
				if anchor[d.toks[0][x].sym] {
					s.words++
				}
				x, y = x+1, y+1
			}
		} else {
			for x < h.tokHi[0] && m[0][x] < 0 {
				x++
			}
			for y < h.tokHi[1] && m[1][y] < 0 {
				y++
			}
		}
		s.a1, s.b1 = x, y
		s.aLen, s.bLen = d.span(0, s.a0, s.a1), d.span(1, s.b0, s.b1)
		segs = append(segs, s)
	}
	replace := func(s seg) bool { return s.aLen > 0 && s.bLen > 0 }
	// out alternates paired runs and changes like segs; after each change pushed, the run
	// before it is checked, and again after each merge.
	out := segs[:0]
	for _, s := range segs {
		out = append(out, s)
		for len(out) >= 3 {
			p, e, n := out[len(out)-3], out[len(out)-2], out[len(out)-1]
			if n.paired || !e.paired || e.words > chaffWords || e.words > 0 && (!replace(p) || !replace(n)) {
				break
			}
			if e.aLen >= max(p.aLen, p.bLen) || e.aLen >= max(n.aLen, n.bLen) {
				break
			}
			for i := e.a0; i < e.a1; i++ {
				m[1][m[0][i]] = -1
				m[0][i] = -1
			}
			merged := seg{a0: p.a0, a1: n.a1, b0: p.b0, b1: n.b1}
			merged.aLen, merged.bLen = d.span(0, merged.a0, merged.a1), d.span(1, merged.b0, merged.b1)
			out = append(out[:len(out)-3], merged)
		}
	}
}

// markMoved marks the removed tokens inside a run of moveWords non-space tokens that
// the added text has too, and the added tokens inside a run that the removed text has.
// Punctuation paired inside a changed block (the full stop that ends two different
// sentences) does not break a run.
func (d *differ) markMoved(syms [2][]int32, anchor []bool) {
	// Per side, the changed non-space tokens, where a window of moveWords of them starts
	// (all of them in one run of changed text), and its hash (a polynomial of the symbols,
	// rolled along the run).
	var pos, starts [2][]int32
	var hashes [2][]uint64
	top := uint64(1) // hashMul^(moveWords-1)
	for range moveWords - 1 {
		top *= hashMul
	}
	for s := range 2 {
		m := d.al.match[s]
		n := len(d.toks[s])
		pos[s], starts[s], hashes[s] = make([]int32, 0, n), make([]int32, 0, n), make([]uint64, 0, n)
		for _, h := range d.hunks {
			run, hash := 0, uint64(0)
			for i := h.tokLo[s]; i < h.tokHi[s]; i++ {
				sym := syms[s][i]
				if m[i] >= 0 && anchor[sym] {
					run, hash = 0, 0
					continue
				}
				if sym == 0 {
					continue
				}
				pos[s] = append(pos[s], i)
				if run >= moveWords {
					hash -= symHash(syms[s][pos[s][len(pos[s])-1-moveWords]]) * top
				}
				hash = hash*hashMul + symHash(sym)
				if run++; run >= moveWords {
					starts[s] = append(starts[s], int32(len(pos[s])-moveWords))
					hashes[s] = append(hashes[s], hash)
				}
			}
		}
	}
	if len(starts[0]) == 0 || len(starts[1]) == 0 {
		return
	}
	mark := func(s, w int) {
		st := int(starts[s][w])
		for i := pos[s][st]; i <= pos[s][st+moveWords-1]; i++ {
			d.moved[s][i] = d.al.match[s][i] < 0
		}
	}
	// Index the right side's windows by hash (first occurrence); a left window equal to one
	// marks both, and every right window equal to a marked first occurrence is marked.
	first := newHashIndex(len(starts[1]))
	for w, h := range hashes[1] {
		first.add(h, int32(w))
	}
	hit := make([]bool, len(starts[1]))
	for w, h := range hashes[0] {
		if f, ok := first.get(h); ok && d.sameWindow(syms, pos, starts, w, int(f)) {
			mark(0, w)
			hit[f] = true
		}
	}
	for w, h := range hashes[1] {
		if f, _ := first.get(h); hit[f] && (int(f) == w || d.sameWindow(syms, pos, starts, -1-int(f), w)) {
			mark(1, w)
		}
	}
}

// hashMul is the odd multiplier of the rolling hashes; symHash spreads a symbol's bits.
const hashMul = 0x9E3779B97F4A7C15

func symHash(sym int32) uint64 { return (uint64(sym) + 1) * 0xFF51AFD7ED558CCD }

// settleSpace marks moved the removed or added white space between two pieces of text
// that are in both documents (paired or moved), so a moved paragraph reads as one piece.
func (d *differ) settleSpace(syms [2][]int32) {
	for s := range 2 {
		m, mv := d.al.match[s], d.moved[s]
		for _, h := range d.hunks {
			kept := func(i int32) bool { return i < h.tokLo[s] || i >= h.tokHi[s] || m[i] >= 0 || mv[i] }
			for i := h.tokLo[s]; i < h.tokHi[s]; i++ {
				if m[i] < 0 && syms[s][i] == 0 && kept(i-1) && kept(i+1) {
					mv[i] = true
				}
			}
		}
	}
}

// sameWindow reports whether window wa of the left side holds the same symbols as window
// wb of the right side; a negative wa stands for window -1-wa of the right side.
func (d *differ) sameWindow(syms [2][]int32, pos, starts [2][]int32, wa, wb int) bool {
	s := 0
	if wa < 0 {
		s, wa = 1, -1-wa
	}
	for k := range moveWords {
		if syms[s][pos[s][int(starts[s][wa])+k]] != syms[1][pos[1][int(starts[1][wb])+k]] {
			return false
		}
	}
	return true
}

// hashIndex maps 64-bit hashes to the first value added with each: open addressing,
// linear probing, never more than half full. It is faster than a map for the many small
// lookups Shared and Compare make.
type hashIndex struct {
	keys  []uint64 // 0 is empty; the hash 0 is kept in zero
	vals  []int32
	shift uint
	zero  int32 // the value of the hash 0, or -1
}

func newHashIndex(n int) hashIndex {
	size, shift := 8, uint(61)
	for size < 2*n {
		size, shift = size*2, shift-1
	}
	return hashIndex{keys: make([]uint64, size), vals: make([]int32, size), shift: shift, zero: -1}
}

// slot is where the probe for h starts: the top bits of h times an odd constant, so
// every bit of h counts.
func (x *hashIndex) slot(h uint64) int { return int((h * hashMul) >> x.shift) }

// add sets h to v unless h is there already.
func (x *hashIndex) add(h uint64, v int32) {
	if h == 0 {
		if x.zero < 0 {
			x.zero = v
		}
		return
	}
	mask := len(x.keys) - 1
	for i := x.slot(h); ; i = (i + 1) & mask {
		switch x.keys[i] {
		case 0:
			x.keys[i], x.vals[i] = h, v
			return
		case h:
			return
		}
	}
}

func (x *hashIndex) get(h uint64) (int32, bool) {
	if h == 0 {
		return x.zero, x.zero >= 0
	}
	mask := len(x.keys) - 1
	for i := x.slot(h); ; i = (i + 1) & mask {
		switch x.keys[i] {
		case 0:
			return -1, false
		case h:
			return x.vals[i], true
		}
	}
}

// Shared marks, on each side, the words inside a shingle of n words (normalized by norm)
// that the other side has too (Op Same); the other words are Removed (left) or Added
// (right). Words are the runs of text between white space; a word that normalizes to
// nothing (punctuation under a norm that drops it) is in no shingle. White space takes the
// state of the word before it, so runs stay whole.
func Shared(a, b string, norm lsh.Norm, n int) (left, right []Span) {
	if n < 1 {
		n = 5
	}
	z := lsh.NewNormalizer(norm)
	// Each distinct word is normalized and hashed once.
	keys := map[string]wordKey{}
	sa, sb := shingleSide(a, z, keys, n), shingleSide(b, z, keys, n)
	return sa.spans(a, sb.set, n, Removed), sb.spans(b, sa.set, n, Added)
}

// wordKey is a word's normalized form, hashed (XXH64); ok is false when it is empty.
type wordKey struct {
	hash uint64
	ok   bool
}

// shingles is one side of Shared: its words and the hashes of its shingles.
type shingles struct {
	toks   []token  // every word; sym is its index in keyed, or -1
	keyed  []int32  // the words with a normalized form, by token index
	window []uint64 // per shingle (n consecutive keyed words), its hash
	set    hashIndex
}

func shingleSide(text string, z *lsh.Normalizer, keys map[string]wordKey, n int) shingles {
	// Prose has a word every 6 bytes or so.
	sh := shingles{toks: make([]token, 0, len(text)/6+1), keyed: make([]int32, 0, len(text)/6+1)}
	hashes := make([]uint64, 0, len(text)/6+1)
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		if classOf(r) == spaceClass {
			i += size
			continue
		}
		j := i + size
		for j < len(text) {
			r, size := rune(text[j]), 1
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeRuneInString(text[j:])
			}
			if classOf(r) == spaceClass {
				break
			}
			j += size
		}
		word := text[i:j]
		k, seen := keys[word]
		if !seen {
			if w := z.Normalize(word); w != "" {
				k = wordKey{hash: xxhash.Sum64String(w), ok: true}
			}
			keys[word] = k
		}
		t := token{start: int32(i), end: int32(j), sym: -1}
		if k.ok {
			t.sym = int32(len(sh.keyed))
			sh.keyed = append(sh.keyed, int32(len(sh.toks)))
			hashes = append(hashes, k.hash)
		}
		sh.toks = append(sh.toks, t)
		i = j
	}
	// A shingle's hash folds its words' hashes in order (a polynomial in an odd
	// multiplier, rolled along the words).
	if len(hashes) >= n {
		sh.window = make([]uint64, 0, len(hashes)-n+1)
		var top uint64 = 1 // mul^(n-1)
		for range n - 1 {
			top *= hashMul
		}
		var h uint64
		for k, wh := range hashes {
			if k >= n {
				h -= hashes[k-n] * top
			}
			h = h*hashMul + wh
			if k >= n-1 {
				sh.window = append(sh.window, h)
			}
		}
	}
	sh.set = newHashIndex(len(sh.window))
	for k, h := range sh.window {
		sh.set.add(h, int32(k))
	}
	return sh
}

// spans marks the words of this side inside a shingle that other has as Same, the rest
// as op.
func (sh shingles) spans(text string, other hashIndex, n int, op Op) []Span {
	shared := make([]bool, len(sh.keyed))
	for k, h := range sh.window {
		if _, ok := other.get(h); ok {
			for j := k; j < k+n; j++ {
				shared[j] = true
			}
		}
	}
	var out []Span
	start, state := 0, op
	for _, t := range sh.toks {
		next := op
		if t.sym >= 0 && shared[t.sym] {
			next = Same
		}
		if next != state && int(t.start) > start {
			out = append(out, Span{Text: text[start:t.start], Op: state})
			start = int(t.start)
		}
		state = next
	}
	if len(text) > start {
		out = append(out, Span{Text: text[start:], Op: state})
	}
	return out
}
