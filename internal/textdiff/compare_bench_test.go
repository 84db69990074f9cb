package textdiff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// The pair page runs Compare (differences and unified views) or Shared (shared-shingles
// view) on the two documents of a pair. These benchmarks feed them real documents of the
// sizes users bring: texts of the demo sample (internal/demo/sample.jsonl.gz) concatenated
// in file order, source by source, with a blank line between texts, and cut at a line end
// to the stated size.
//
//	go test ./internal/labels -run '^$' -bench 'Compare|Shared' -benchtime 20x
func BenchmarkCompare(b *testing.B) {
	for _, p := range benchPairs(b) {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(p.a) + len(p.b)))
			for b.Loop() {
				Compare(p.a, p.b)
			}
		})
	}
}

// BenchmarkShared measures the shared-shingles view under a common campaign norm.
func BenchmarkShared(b *testing.B) {
	for _, p := range benchPairs(b) {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(p.a) + len(p.b)))
			for b.Loop() {
				Shared(p.a, p.b, lsh.Norm{Lower: true, CollapseSpace: true}, 5)
			}
		})
	}
}

type benchPair struct{ name, a, b string }

// benchPairs builds the benchmark pairs:
//   - identical-200KB: 200 KB of Debian Administrator's Handbook (en) sections and a copy;
//   - one-word-200KB: the same 200 KB against a copy with one word changed;
//   - similar-200KB: the same 200 KB against an edited copy: one word changed in every
//     10th paragraph, every 25th paragraph moved to the end, every 40th deleted;
//   - reflowed-180KB: Debian Reference (en) as shipped plain text, wrapped and indented,
//     against its HTML version converted to Markdown (one line per paragraph);
//   - translated-200KB: Debian Reference in English against its Japanese translation;
//   - unrelated-24KB-51KB: handbook sections (en) against npm package READMEs;
//   - unrelated-200KB: handbook sections (en) against SPDX license texts (en);
//   - shuffled-200KB: the handbook's 200 KB against the same words in a random order (a
//     seeded shuffle, lines of 12 words): every word in common, hardly a phrase.
func benchPairs(tb testing.TB) []benchPair {
	tb.Helper()
	docs := demoDocs(tb)
	text := func(source, lang string, size int) string {
		var sb strings.Builder
		for _, d := range docs {
			if d.Source != source || d.Lang != lang {
				continue
			}
			if sb.Len() > 0 {
				sb.WriteString("\n\n")
			}
			sb.WriteString(d.Text)
			if sb.Len() >= size {
				break
			}
		}
		s := sb.String()
		if len(s) > size {
			s = s[:size]
			if i := strings.LastIndexByte(s, '\n'); i > 0 {
				s = s[:i+1]
			}
		}
		return s
	}
	handbook := text("debian-handbook", "en", 200_000)
	return []benchPair{
		{"identical-200KB", handbook, strings.Clone(handbook)},
		{"one-word-200KB", handbook, strings.Replace(handbook, " package ", " packet ", 1)},
		{"similar-200KB", handbook, editParagraphs(handbook)},
		{"reflowed-180KB", text("debian-reference", "en", 200_000), text("debian-reference-html", "en", 200_000)},
		{"translated-200KB", text("debian-reference", "en", 200_000), text("debian-reference", "ja", 200_000)},
		{"unrelated-24KB-51KB", text("debian-handbook", "en", 24_000), text("npm-readme", "en", 51_000)},
		{"unrelated-200KB", handbook, text("spdx-license-list", "en", 200_000)},
		{"shuffled-200KB", handbook, shuffleWords(handbook)},
	}
}

// BenchmarkCompareWorstCase measures Compare where its work limits decide the time: two
// synthetic 200 KB texts of random words from a vocabulary of ten, cut every 600 words by
// a line found once in each (so patience diff finds nothing to anchor between those, the
// table is too small for the blocks, and Myers' diff gives up on each). The comparison is
// Truncated; the point is that it stays fast.
func BenchmarkCompareWorstCase(b *testing.B) {
	x, y := randomWords(1), randomWords(2)
	b.ReportAllocs()
	b.SetBytes(int64(len(x) + len(y)))
	for b.Loop() {
		Compare(x, y)
	}
}

// randomWords returns 200 KB of lines "anchorK" each followed by 600 words w0..w9 drawn
// with the seed, 12 to a line.
func randomWords(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 7))
	var sb strings.Builder
	for k := 0; sb.Len() < 200_000; k++ {
		fmt.Fprintf(&sb, "anchor%d\n", k)
		for i := range 600 {
			fmt.Fprintf(&sb, "w%d", r.IntN(10))
			if i%12 == 11 {
				sb.WriteByte('\n')
			} else {
				sb.WriteByte(' ')
			}
		}
	}
	return sb.String()
}

// editParagraphs changes one word in every 10th paragraph of s, moves every 25th to the
// end and deletes every 40th.
func editParagraphs(s string) string {
	paras := strings.Split(s, "\n\n")
	var kept, moved []string
	for i, p := range paras {
		switch {
		case i%40 == 39:
			continue
		case i%25 == 24:
			moved = append(moved, p)
			continue
		case i%10 == 9:
			w := strings.Fields(p)
			if len(w) > 0 {
				old := w[len(w)/2]
				p = strings.Replace(p, old, fmt.Sprintf("edited%d", i), 1)
			}
		}
		kept = append(kept, p)
	}
	return strings.Join(append(kept, moved...), "\n\n")
}

// shuffleWords returns the words of s in a random order (seeded), 12 to a line.
func shuffleWords(s string) string {
	w := strings.Fields(s)
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
	var sb strings.Builder
	for i, x := range w {
		sb.WriteString(x)
		if i%12 == 11 {
			sb.WriteByte('\n')
		} else {
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}
