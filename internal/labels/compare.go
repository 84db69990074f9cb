package labels

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/sergi/go-diff/diffmatchpatch"

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
type Comparison struct {
	Left, Right []Span // each side with its own text
	Unified     []Span // in one column
	TimedOut    bool   // the diff gave up refining (very different long texts)
}

// tokenize splits text into words and the white space between them, keeping every byte.
func tokenize(s string) []string {
	var toks []string
	start := 0
	inSpace := false
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if i > start && sp != inSpace {
			toks = append(toks, s[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(s) {
		toks = append(toks, s[start:])
	}
	return toks
}

// tokenRune maps a token index to a rune that is valid in a string (no surrogates).
func tokenRune(i int) rune {
	r := rune(i + 0x100)
	if r >= 0xD800 {
		r += 0x800
	}
	return r
}

// Compare diffs two texts word by word (github.com/sergi/go-diff on word tokens, each
// word or run of white space standing for one symbol).
func Compare(a, b string) Comparison {
	ta, tb := tokenize(a), tokenize(b)
	index := map[string]rune{}
	var back []string
	encode := func(toks []string) []rune {
		rs := make([]rune, len(toks))
		for i, t := range toks {
			r, ok := index[t]
			if !ok {
				r = tokenRune(len(back))
				index[t] = r
				back = append(back, t)
			}
			rs[i] = r
		}
		return rs
	}
	ra, rb := encode(ta), encode(tb)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 2 * time.Second
	start := time.Now()
	diffs := dmp.DiffMainRunes(ra, rb, false)
	diffs = dmp.DiffCleanupSemantic(diffs)
	var c Comparison
	c.TimedOut = time.Since(start) >= dmp.DiffTimeout
	decode := func(s string) string {
		var sb strings.Builder
		for len(s) > 0 {
			r, size := utf8.DecodeRuneInString(s)
			s = s[size:]
			i := int(r) - 0x100
			if r >= 0xD800+0x800 {
				i -= 0x800
			}
			if i >= 0 && i < len(back) {
				sb.WriteString(back[i])
			}
		}
		return sb.String()
	}
	appendSpan := func(list []Span, text string, op Op) []Span {
		// diffmatchpatch merges equal neighbours already; adjacent pieces of one op are rare
		if n := len(list); n > 0 && list[n-1].Op == op {
			list[n-1].Text += text
			return list
		}
		return append(list, Span{Text: text, Op: op})
	}
	for _, d := range diffs {
		text := decode(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			c.Left = appendSpan(c.Left, text, Same)
			c.Right = appendSpan(c.Right, text, Same)
			c.Unified = appendSpan(c.Unified, text, Same)
		case diffmatchpatch.DiffDelete:
			c.Left = appendSpan(c.Left, text, Removed)
			c.Unified = appendSpan(c.Unified, text, Removed)
		case diffmatchpatch.DiffInsert:
			c.Right = appendSpan(c.Right, text, Added)
			c.Unified = appendSpan(c.Unified, text, Added)
		}
	}
	return c
}

// Shared marks, on each side, the words inside a shingle of n words (normalized by norm)
// that the other side has too (Op Same); the other words are Removed (left) or Added
// (right).
func Shared(a, b string, norm lsh.Norm, n int) (left, right []Span) {
	ta, tb := tokenize(a), tokenize(b)
	if n < 1 {
		n = 5
	}
	z := lsh.NewNormalizer(norm)
	words := func(toks []string) (idx []int, keys []string) {
		for i, t := range toks {
			if strings.TrimSpace(t) == "" {
				continue
			}
			if w := z.Normalize(t); w != "" {
				idx = append(idx, i)
				keys = append(keys, w)
			}
		}
		return idx, keys
	}
	ia, ka := words(ta)
	ib, kb := words(tb)
	// Each window of n words is hashed once (XXH64 of the words joined by spaces).
	windows := func(keys []string) []uint64 {
		var hs []uint64
		var d xxhash.Digest
		for i := 0; i+n <= len(keys); i++ {
			d.Reset()
			for j := i; j < i+n; j++ {
				if j > i {
					d.WriteString(" ")
				}
				d.WriteString(keys[j])
			}
			hs = append(hs, d.Sum64())
		}
		return hs
	}
	wa, wb := windows(ka), windows(kb)
	set := func(hs []uint64) map[uint64]bool {
		m := make(map[uint64]bool, len(hs))
		for _, h := range hs {
			m[h] = true
		}
		return m
	}
	sa, sb := set(wa), set(wb)
	mark := func(text string, toks []string, idx []int, win []uint64, other map[uint64]bool, op Op) []Span {
		shared := make([]bool, len(toks))
		for i, h := range win {
			if other[h] {
				for j := i; j < i+n; j++ {
					shared[idx[j]] = true
				}
			}
		}
		// Tokens are consecutive pieces of text, so a span is a slice of it. White space
		// takes the state of the word before it, so runs stay whole.
		var spans []Span
		start, pos := 0, 0
		state := op
		for i, t := range toks {
			next := state
			if strings.TrimSpace(t) != "" {
				next = op
				if shared[i] {
					next = Same
				}
			}
			if next != state && pos > start {
				spans = append(spans, Span{Text: text[start:pos], Op: state})
				start = pos
			}
			state = next
			pos += len(t)
		}
		if pos > start {
			spans = append(spans, Span{Text: text[start:pos], Op: state})
		}
		return spans
	}
	return mark(a, ta, ia, wa, sb, Removed), mark(b, tb, ib, wb, sa, Added)
}
