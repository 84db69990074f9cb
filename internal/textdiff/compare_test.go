package textdiff

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func join(spans []Span, keep func(Op) bool) string {
	var sb strings.Builder
	for _, s := range spans {
		if keep(s.Op) {
			sb.WriteString(s.Text)
		}
	}
	return sb.String()
}

func TestCompareKeepsTextAndMarksChanges(t *testing.T) {
	t.Parallel()
	a := "Copyright (c) 2019 Jane Doe\n\nPermission is hereby granted, free of charge, to any person"
	b := "Copyright (c) 2023 John Roe\n\nPermission is hereby granted, free of charge, to any person"
	c := Compare(a, b)
	sharedLeft, sharedRight := Shared(a, b, lsh.Norm{Lower: true}, 3)
	all := func(Op) bool { return true }
	if join(c.Left, all) != a || join(c.Right, all) != b {
		t.Fatal("the sides do not reproduce the documents")
	}
	if got := join(c.Left, func(o Op) bool { return o == Removed }); !strings.Contains(got, "2019") || !strings.Contains(got, "Jane") || strings.Contains(got, "Permission") {
		t.Errorf("removed text %q", got)
	}
	if got := join(c.Right, func(o Op) bool { return o == Added }); !strings.Contains(got, "2023") || !strings.Contains(got, "Roe") {
		t.Errorf("added text %q", got)
	}
	unified := join(c.Unified, func(o Op) bool { return o != Added })
	if unified != a {
		t.Errorf("unified minus additions is not the left document: %q", unified)
	}
	if got := join(sharedLeft, func(o Op) bool { return o == Same }); !strings.Contains(got, "Permission is hereby granted") || strings.Contains(got, "2019") {
		t.Errorf("shared shingles on the left: %q", got)
	}
	if join(sharedRight, all) != b {
		t.Error("shared view does not reproduce the right document")
	}
}

// Scattered one-word changes in 200 KB of a few repeated words (no word is rare enough to
// anchor the alignment) are still found one by one.
func TestCompareLongDocuments(t *testing.T) {
	t.Parallel()
	var a, b strings.Builder
	for i := range 30_000 {
		w := "word" + string(rune('a'+i%26)) + " "
		a.WriteString(w)
		if i%500 == 0 {
			b.WriteString("changed ")
		} else {
			b.WriteString(w)
		}
	}
	c := Compare(a.String(), b.String())
	if l, _ := Shared(a.String(), b.String(), lsh.Norm{Lower: true}, 5); join(l, func(Op) bool { return true }) != a.String() {
		t.Fatal("long shared view altered")
	}
	checkComparison(t, a.String(), b.String(), c)
	if c.Truncated {
		t.Errorf("Truncated: %s", c.Reason)
	}
	if got := join(c.Right, func(o Op) bool { return o == Added }); got != strings.Repeat("changed", 60) {
		t.Errorf("added text %.80q...; want the 60 words \"changed\"", got)
	}
}

// checkComparison checks what holds for every comparison: each side is its document, byte
// for byte; the unified column without additions is the left document and without
// removals the right one, white space aside; ops are in range and spans not empty.
func checkComparison(t *testing.T, a, b string, c Comparison) {
	t.Helper()
	all := func(Op) bool { return true }
	if got := join(c.Left, all); got != a {
		t.Errorf("left side = %.60q...; want the left document %.60q...", got, a)
	}
	if got := join(c.Right, all); got != b {
		t.Errorf("right side = %.60q...; want the right document %.60q...", got, b)
	}
	if got := join(c.Unified, func(o Op) bool { return o != Added }); got != a {
		t.Errorf("unified without additions = %.60q...; want the left document", got)
	}
	if got := join(c.Unified, func(o Op) bool { return o != Removed }); !sameWords(got, b) {
		t.Errorf("unified without removals = %.60q...; want the right document's words", got)
	}
	for _, side := range []struct {
		name  string
		spans []Span
		bad   Op
	}{{"left", c.Left, Added}, {"right", c.Right, Removed}, {"unified", c.Unified, -1}} {
		for k, sp := range side.spans {
			if sp.Text == "" || sp.Op < Same || sp.Op > Added || sp.Op == side.bad {
				t.Errorf("%s span %d = %+v", side.name, k, sp)
			}
		}
	}
	if c.Truncated != (c.Reason != "") {
		t.Errorf("Truncated = %v with Reason %q", c.Truncated, c.Reason)
	}
}

func sameWords(x, y string) bool {
	return strings.Join(strings.Fields(x), " ") == strings.Join(strings.Fields(y), " ")
}

// opAt returns the op of every byte of a side.
func opAt(spans []Span) []Op {
	var ops []Op
	for _, sp := range spans {
		for range len(sp.Text) {
			ops = append(ops, sp.Op)
		}
	}
	return ops
}

// marked returns the text of the spans with op o, each span trimmed, joined by "|".
func marked(spans []Span, o Op) string {
	var parts []string
	for _, sp := range spans {
		if t := strings.TrimSpace(sp.Text); sp.Op == o && t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "|")
}

// assertSame fails unless every byte of each (non-space) occurrence of want in text is
// Same in spans.
func assertSame(t *testing.T, side, text string, spans []Span, want string) {
	t.Helper()
	ops := opAt(spans)
	found := false
	for at := 0; ; {
		i := strings.Index(text[at:], want)
		if i < 0 {
			break
		}
		found = true
		for k := at + i; k < at+i+len(want); k++ {
			if ops[k] != Same && text[k] != ' ' && text[k] != '\n' && text[k] != '\r' {
				t.Errorf("%s: %q is marked %v at byte %d (%q); want it unmarked", side, want, ops[k], k-at-i, text[at+i:min(k+20, at+i+len(want))])
				return
			}
		}
		at += i + len(want)
	}
	if !found {
		t.Fatalf("%s: %q not in the text", side, want)
	}
}

const (
	para1 = "Permission is hereby granted, free of charge, to any person obtaining a copy of this software."
	para2 = "The above copyright notice and this permission notice shall be included in all copies."
	para3 = "THE SOFTWARE IS PROVIDED AS IS, WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED."
	para4 = "In no event shall the authors or copyright holders be liable for any claim or damages."
)

func TestCompare(t *testing.T) {
	t.Parallel()
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	paras := func(ps ...string) string { return strings.Join(ps, "\n\n") + "\n" }
	cases := []struct {
		name                string
		a, b                string
		removed, added      string   // marked text, trimmed spans joined by "|"
		sameLeft, sameRight []string // texts unmarked on that side
		unRemoved, unAdded  string   // if set, the unified column's marked text
	}{
		{name: "identical", a: paras(para1, para2), b: paras(para1, para2), sameLeft: []string{para1, para2}, sameRight: []string{para1, para2}},
		{name: "both empty"},
		{name: "left empty", b: "Only on the right.\n", added: "Only on the right."},
		{name: "right empty", a: "Only on the left.", removed: "Only on the left."},
		{name: "one changed word",
			a: "The quick brown fox jumps over the lazy dog.", b: "The quick red fox jumps over the lazy dog.",
			removed: "brown", added: "red", sameLeft: []string{"The quick", "fox jumps over the lazy dog."}},
		{name: "one changed word in a long paragraph",
			a: paras(para1, para2, para3), b: paras(para1, strings.Replace(para2, "included", "kept", 1), para3),
			removed: "included", added: "kept", sameLeft: []string{para1, para3, "shall be"}, sameRight: []string{para1, para3}},
		{name: "moved paragraph",
			a: paras(para1, para2, para3, para4), b: paras(para2, para3, para4, para1),
			sameLeft: []string{para1, para2, para3, para4}, sameRight: []string{para1, para2, para3, para4},
			unRemoved: para1, unAdded: para1},
		{name: "moved paragraph and a changed one",
			a: paras(para1, para2, para3, para4), b: paras(para2, strings.Replace(para3, "IMPLIED", "OTHERWISE", 1), para4, para1),
			removed: "IMPLIED", added: "OTHERWISE",
			sameLeft: []string{para1, para2, para4}, sameRight: []string{para1, para2, para4}},
		{name: "reordered lines",
			a: lines(para1, para2, para3, para4), b: lines(para4, para2, para1, para3),
			sameLeft: []string{para1, para2, para3, para4}, sameRight: []string{para1, para2, para3, para4}},
		{name: "inserted paragraph",
			a: paras(para1, para2, para4), b: paras(para1, para2, para3, para4),
			added: para3, sameLeft: []string{para1, para2, para4}, sameRight: []string{para1, para2, para4}},
		{name: "paragraph twice on the right",
			a: paras(para1, para2), b: paras(para1, para2, para1),
			added: para1, sameLeft: []string{para1, para2}},
		{name: "CRLF against LF",
			a: strings.ReplaceAll(paras(para1, para2), "\n", "\r\n"), b: paras(para1, para2),
			sameLeft: []string{para1, para2}, sameRight: []string{para1, para2}},
		{name: "CRLF with a changed word",
			a: strings.ReplaceAll(lines(para1, para2, para3), "\n", "\r\n"), b: lines(para1, strings.Replace(para2, "copies", "copies or portions", 1), para3),
			added: "or portions", sameLeft: []string{para1, para2, para3}, sameRight: []string{para1, para3}},
		{name: "reflowed paragraph",
			a:        "Permission is hereby granted, free of charge,\n    to any person obtaining a copy\n    of this software.\n",
			b:        "Permission is hereby granted, free of charge, to any person obtaining a copy of this software.\n",
			sameLeft: []string{"Permission is hereby granted", "of this software."}, sameRight: []string{para1}},
		{name: "valid UTF-8 that looks broken",
			a:       "BOM \ufeffstart, replacement \ufffd char, private \ue000 use, last \U0010ffff rune, zero\u200bwidth, e\u0301 combining, \U0001F469\u200d\U0001F4BB joined, \u202eright-to-left\u202c, NUL \x00 byte.",
			b:       "BOM \ufeffstart, replacement \ufffd char, private \ue000 use, last \U0010ffff rune, zero\u200bwidth, e\u0301 combining, \U0001F469\u200d\U0001F4BB joined, \u202eleft-to-left\u202c, NUL \x00 byte.",
			removed: "right", added: "left", sameLeft: []string{"replacement \ufffd char", "\U0001F469\u200d\U0001F4BB joined", "NUL \x00 byte."}},
		{name: "invalid UTF-8 bytes",
			a: "caf\xe9 au lait \xff\xfe and more", b: "caf\xe9 au lait \xff\xfe and less",
			removed: "more", added: "less", sameLeft: []string{"caf\xe9 au lait \xff\xfe and"}},
		{name: "Japanese without spaces",
			a: "今日は良い天気です。明日も晴れるでしょう。", b: "今日は悪い天気です。明日も晴れるでしょう。",
			removed: "良", added: "悪", sameLeft: []string{"今日は", "い天気です。明日も晴れるでしょう。"}},
		{name: "Chinese sentence inserted",
			a: "自由软件基金会发布了许可证。", b: "自由软件基金会发布了新的许可证。",
			added: "新的", sameLeft: []string{"自由软件基金会发布了", "许可证。"}},
		{name: "unrelated sentences do not share a lone word",
			a: "Alpha beta gamma delta the epsilon zeta eta theta.", b: "One two three four the five six seven eight.",
			removed: "Alpha beta gamma delta the epsilon zeta eta theta", added: "One two three four the five six seven eight"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := Compare(tc.a, tc.b)
			checkComparison(t, tc.a, tc.b, c)
			if c.Truncated {
				t.Errorf("Truncated: %s", c.Reason)
			}
			if got := marked(c.Left, Removed); got != tc.removed {
				t.Errorf("removed on the left = %q; want %q", got, tc.removed)
			}
			if got := marked(c.Right, Added); got != tc.added {
				t.Errorf("added on the right = %q; want %q", got, tc.added)
			}
			for _, s := range tc.sameLeft {
				assertSame(t, "left", tc.a, c.Left, s)
			}
			for _, s := range tc.sameRight {
				assertSame(t, "right", tc.b, c.Right, s)
			}
			if tc.unRemoved != "" {
				if got := marked(c.Unified, Removed); got != tc.unRemoved {
					t.Errorf("unified removed = %q; want %q", got, tc.unRemoved)
				}
				if got := marked(c.Unified, Added); got != tc.unAdded {
					t.Errorf("unified added = %q; want %q", got, tc.unAdded)
				}
			}
		})
	}
}

// Demo pair 450, the FTP server section of the Debian Administrator's Handbook in English
// and in Japanese: the paragraphs left in English in the translation are unmarked on both
// sides, and the translated ones are marked.
func TestCompareDemoPair450(t *testing.T) {
	t.Parallel()
	a := demoText(t, "handbook-en-US-sect.ftp-file-server")
	b := demoText(t, "handbook-ja-JP-sect.ftp-file-server")
	c := Compare(a, b)
	checkComparison(t, a, b, c)
	if c.Truncated {
		t.Errorf("Truncated: %s", c.Reason)
	}
	shared := []string{
		"Many FTP servers are available in Debian (ftpd(-ssl), proftpd-basic, pure-ftpd\nand so on), which all provide the virtual ftp-server package.",
		"don't need advanced features, they chose to focus on the security aspects.",
		"This protocol allows both file uploads and file downloads;",
		"FTP is not a secure protocol.",
		"FTP and FTPS resources can be accessed with a variety of clients",
	}
	for _, s := range shared {
		assertSame(t, "left", a, c.Left, s)
		assertSame(t, "right", b, c.Right, s)
		assertSame(t, "unified", join(c.Unified, func(Op) bool { return true }), c.Unified, s)
	}
	for _, s := range []string{"Other FTP servers are mainly used", "Installing the package creates an ftp system user."} {
		if !strings.Contains(marked(c.Left, Removed), s) {
			t.Errorf("left: %q is not marked removed", s)
		}
	}
	if got := marked(c.Right, Added); !strings.Contains(got, "匿名 FTP") {
		t.Errorf("right: the translated paragraph is not marked added: %.100q", got)
	}
}

// The benchmark pairs, all real text up to 200 KB, are compared to the end, and the edits
// made to the similar pair are found: changed words marked, moved paragraphs unmarked.
func TestCompareRealPairs(t *testing.T) {
	t.Parallel()
	for _, p := range benchPairs(t) {
		t.Run(p.name, func(t *testing.T) {
			c := Compare(p.a, p.b)
			checkComparison(t, p.a, p.b, c)
			if c.Truncated {
				t.Errorf("Truncated: %s", c.Reason)
			}
			if p.name != "similar-200KB" {
				return
			}
			added := marked(c.Right, Added)
			left, right := opAt(c.Left), opAt(c.Right)
			checked := 0
			at := 0 // where paragraph i starts in the left text
			for i, para := range strings.Split(p.a, "\n\n") {
				switch {
				case i%10 == 9 && i%40 != 39 && i%25 != 24:
					if w := fmt.Sprintf("edited%d", i); !strings.Contains(added, w) && len(strings.Fields(para)) > 0 {
						t.Errorf("%q not marked added", w)
					}
				case i%25 == 24 && i%40 != 39 && len(strings.Fields(para)) >= 2*moveWords:
					// Moved to the end: its last occurrence on the right.
					checked++
					to := strings.LastIndex(p.b, para)
					for k := range para {
						if left[at+k] != Same || right[to+k] != Same {
							t.Errorf("moved paragraph %d (%.40q...) at byte %d: left %v, right %v; want both Same", i, para, k, left[at+k], right[to+k])
							break
						}
					}
				}
				at += len(para) + 2
			}
			if checked < 10 {
				t.Errorf("only %d moved paragraphs checked", checked)
			}
		})
	}
}

// When a block of changes is too large to align within the work limits, the comparison
// says so, and how much it left unaligned.
func TestCompareTruncated(t *testing.T) {
	t.Parallel()
	// Two words repeated in different patterns on one line: no word is rare enough to
	// anchor, and the sides differ too much for the fallback.
	a := strings.Repeat("x y ", 3000)
	b := strings.Repeat("y y x ", 3000)
	c := Compare(a, b)
	checkComparison(t, a, b, c)
	if !c.Truncated {
		t.Fatal("Truncated = false; want true")
	}
	want := fmt.Sprintf("1 changed block is marked whole (%s on the left, %s on the right)", byteSize(len(a)), byteSize(len(b)))
	if !strings.Contains(c.Reason, want) {
		t.Errorf("Reason = %q; want it to contain %q", c.Reason, want)
	}
	if got := marked(c.Left, Removed); got != strings.TrimSpace(a) {
		t.Errorf("left removed = %.40q...; want all of it", got)
	}
}

type demoDoc struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Source string `json:"source"`
	Lang   string `json:"lang"`
}

var demoOnce = sync.OnceValues(func() ([]demoDoc, error) {
	f, err := os.Open("../demo/sample.jsonl.gz")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var docs []demoDoc
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var d demoDoc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, sc.Err()
})

// demoDocs returns the documents of the demo sample (internal/demo/sample.jsonl.gz), in
// file order.
func demoDocs(tb testing.TB) []demoDoc {
	tb.Helper()
	docs, err := demoOnce()
	if err != nil {
		tb.Fatalf("read the demo sample: %v", err)
	}
	return docs
}

// demoText returns the text of the demo document with the given id.
func demoText(tb testing.TB, id string) string {
	tb.Helper()
	for _, d := range demoDocs(tb) {
		if d.ID == id {
			return d.Text
		}
	}
	tb.Fatalf("no document %q in the demo sample", id)
	return ""
}

// sharedSlow is Shared as first written: one string per token, words normalized one by
// one, each shingle hashed from its words joined by spaces. Shared must mark the same.
func sharedSlow(a, b string, norm lsh.Norm, n int) (left, right []Span) {
	tokenize := func(s string) []string {
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
	ta, tb := tokenize(a), tokenize(b)
	if n < 1 {
		n = 5
	}
	words := func(toks []string) (idx []int, keys []string) {
		for i, t := range toks {
			if strings.TrimSpace(t) == "" {
				continue
			}
			if w := norm.Normalize(t); w != "" {
				idx = append(idx, i)
				keys = append(keys, w)
			}
		}
		return idx, keys
	}
	ia, ka := words(ta)
	ib, kb := words(tb)
	set := func(keys []string) map[string]bool {
		m := map[string]bool{}
		for i := 0; i+n <= len(keys); i++ {
			m[strings.Join(keys[i:i+n], "\x00")] = true
		}
		return m
	}
	sa, sb := set(ka), set(kb)
	mark := func(text string, toks []string, idx []int, keys []string, other map[string]bool, op Op) []Span {
		shared := make([]bool, len(toks))
		for i := 0; i+n <= len(keys); i++ {
			if other[strings.Join(keys[i:i+n], "\x00")] {
				for j := i; j < i+n; j++ {
					shared[idx[j]] = true
				}
			}
		}
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
	return mark(a, ta, ia, ka, sb, Removed), mark(b, tb, ib, kb, sa, Added)
}

// Shared marks what the straightforward version marks, on real pairs under several norms
// and shingle sizes.
func TestSharedMatchesStraightforward(t *testing.T) {
	t.Parallel()
	pairs := benchPairs(t)
	pairs = append(pairs, benchPair{"demo pair 450", demoText(t, "handbook-en-US-sect.ftp-file-server"), demoText(t, "handbook-ja-JP-sect.ftp-file-server")})
	settings := []struct {
		norm lsh.Norm
		n    int
	}{
		{lsh.Norm{}, 1},
		{lsh.Norm{Lower: true}, 5},
		{lsh.Norm{NFKC: true, Lower: true, CollapseSpace: true, StripPunct: true}, 3},
	}
	for _, p := range pairs {
		for _, set := range settings {
			t.Run(fmt.Sprintf("%s/%v/%d", p.name, set.norm, set.n), func(t *testing.T) {
				l, r := Shared(p.a, p.b, set.norm, set.n)
				wl, wr := sharedSlow(p.a, p.b, set.norm, set.n)
				if !slices.Equal(l, wl) || !slices.Equal(r, wr) {
					t.Errorf("Shared gives %d+%d spans; the straightforward version %d+%d", len(l), len(r), len(wl), len(wr))
				}
				if join(l, func(Op) bool { return true }) != p.a || join(r, func(Op) bool { return true }) != p.b {
					t.Error("Shared does not reproduce the documents")
				}
			})
		}
	}
}

// FuzzCompare checks the invariants of checkComparison on any pair of texts.
//
//	go test ./internal/labels -run '^$' -fuzz FuzzCompare -fuzztime 1m
func FuzzCompare(f *testing.F) {
	f.Add("", "")
	f.Add("a", "a\nb")
	f.Add(para1+"\n\n"+para2, para2+"\r\n\r\n"+para1)
	f.Add("今日は良い天気です。", "今日は悪い天気です。")
	f.Add("caf\xe9 au lait", "cafe\u0301 au lait\n")
	f.Add("x y x y x y x y x y", "y y x y y x y y x")
	f.Fuzz(func(t *testing.T, a, b string) {
		checkComparison(t, a, b, Compare(a, b))
	})
}
