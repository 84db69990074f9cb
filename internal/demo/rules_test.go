package demo

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var shipped = sync.OnceValues(func() ([]doc, error) {
	sel, err := readSample()
	if err != nil {
		return nil, err
	}
	return analyzeAll(sel), nil
})

// The pairs issue 17 named stay labeled as decided there; a few controls keep the other
// rules honest (a rendering, a full translation, a bundle that contains a license).
func TestRulesOnNamedPairs(t *testing.T) {
	docs, err := shipped()
	if err != nil {
		t.Fatal(err)
	}
	find := byID(docs)
	tests := []struct {
		a, b     string
		category string
		dup      bool
	}{
		// An untranslated edition: decided on the text, not on the lang field (zh).
		{"handbook-en-US-sect.apt-file", "handbook-zh-TW-sect.apt-file", "minor", true},
		// Short licenses: another copyright line plus one sentence is a minor edit.
		{"npm-pify-license", "spdx-MIT-advertising", "minor", true},
		{"npm-ajv-license", "spdx-MIT-advertising", "minor", true},
		// Contained almost word for word, and most of the container: a duplicate.
		{"npm-lodash.merge-license", "npm-socket.io-license", "partial", true},
		// Shared BSD clause blocks around different licenses.
		{"spdx-BSD-3-Clause-No-Nuclear-License-2014", "spdx-UCAR", "boilerplate", false},
		// License versions sharing whole paragraphs of their own.
		{"spdx-GPL-1.0-only", "spdx-GPL-2.0-or-later", "partial", false},
		// Round 1 of the blind check (both judges, and the rules since): a GPL notice is a
		// license header, the zlib text a short standard license; one standard sentence
		// makes a short license pair boilerplate; a third of each text left untranslated
		// is partial; an untranslated edition in the other rendering is a minor edit.
		{"spdx-GPL-1.0-only", "spdx-eCos-2.0", "boilerplate", false},
		{"spdx-Eurosym", "spdx-Nunit", "boilerplate", false},
		{"spdx-BSD-2-Clause-first-lines", "spdx-Furuseth", "boilerplate", false},
		{"handbook-de-DE-sect.linux-mint", "handbook-fr-FR-sect.linux-mint", "partial", false},
		{"debref-html-en-static_code_analysis_tools", "debref-pt-static_code_analysis_tools", "minor", true},
		// Long licenses that share whole sections of a standard text (Creative Commons).
		{"spdx-CC-BY-3.0-US", "spdx-CPOL-1.02", "partial", false},
		// One common phrase is not boilerplate, even in two tiny licenses.
		{"spdx-Kastrup", "spdx-TermReadKey", "different", false},
		// Blind round 2's pairs read against the guidelines (round 3 is the check): short
		// texts compared word by word. One word differs (a build's platform name), the
		// README template around a package name, the HPND permission sentence reworded,
		// license variants with a clause added or removed (about 100 words in a few
		// places), all of which 5-shingles overstated.
		{"npm-lightningcss-linux-x64-gnu-readme", "npm-lightningcss-linux-x64-musl-readme", "minor", true},
		{"npm-babel__helper-plugin-utils-readme", "npm-babel__runtime-readme", "boilerplate", false},
		{"npm-babel__core-readme", "npm-babel__helper-module-imports-readme", "boilerplate", false},
		{"spdx-HPND-INRIA-IMAG", "spdx-UnixCrypt", "boilerplate", false},
		{"spdx-HPND-doc", "spdx-Sun-PPP-2000", "boilerplate", false},
		{"spdx-BSD-2-Clause-NetBSD", "spdx-BSD-4-Clause", "minor", true},
		{"spdx-MIT-advertising", "spdx-X11", "minor", true},
		// Word-diff matches inside a rewritten clause do not split it into more places:
		// BSD-3-Clause-Clear is BSD-3-Clause with a patent sentence, still minor.
		{"spdx-BSD-3-Clause", "spdx-BSD-3-Clause-Clear", "minor", true},
		// Two licenses sharing only part of BSD stay short of a minor edit.
		{"spdx-BSD-2-Clause-Views", "spdx-BSD-3-Clause-No-Nuclear-License-2014", "partial", false},
		// Blind round 3, where both judges agreed and the rules of round 3 did not (round 4
		// is the check): a rendering whose title and labels are translated is not the same
		// words, so a minor edit, not a format change; the HPND permission sentence or a
		// one-sentence grant reworded in a word or two is a shared sentence (boilerplate);
		// 72% of both texts' words shared with whole clauses is partial overlap; a third of
		// the two texts' prose together left untranslated is partial.
		{"debref-fr-customizing_vim", "debref-html-en-customizing_vim", "minor", true},
		{"debref-html-en-customizing_vim", "debref-ja-customizing_vim", "minor", true},
		{"spdx-HPND-Markus-Kuhn", "spdx-HPND-doc", "boilerplate", false},
		{"spdx-Baekmuk", "spdx-UnixCrypt", "boilerplate", false},
		{"spdx-fwlw", "spdx-magaz", "boilerplate", false},
		{"spdx-BSD-4-Clause-UC", "spdx-Intel", "partial", false},
		{"handbook-zh-CN-id-1.7.12.10", "handbook-zh-TW-id-1.7.12.10", "partial", false},
		// Settled for round 4: shares are measured on both texts together, so MIT with a
		// clause or notices of under 100 words added is a minor edit before it is contained.
		{"npm-types__glob-license", "spdx-MITNFA", "minor", true},
		{"npm-mime-license", "spdx-SGI-B-2.0", "minor", true},
		// Not moved by "seven tenths shared": a README template filled with other names (no
		// shared passage) and a license that adds two clauses and a preamble to BSD-2
		// (67%) stay boilerplate, as both judges of round 1 had them.
		{"npm-types__mime-readme", "npm-types__uuid-readme", "boilerplate", false},
		{"spdx-BSD-2-Clause-NetBSD", "spdx-VSL-1.0", "boilerplate", false},
		// Minor edits as the guidelines count them, whatever J: MIT vs TTYP0 (MIT plus a
		// sentence, 90 words in 3+6 places, J = 0.47). Two READMEs of different packages are
		// not: the lodash per-method READMEs, 83% one template around the method's name,
		// are boilerplate.
		{"npm-pify-license", "spdx-TTYP0", "minor", true},
		{"npm-lodash.clonedeep-readme", "npm-lodash.get-readme", "boilerplate", false},
		// Blind round 4, where both judges agreed and the rules of round 4 did not (round 5
		// is the check): a standard sentence reworded in a word or two that is a tenth of
		// the shorter text makes the pair boilerplate, though it shares under a tenth of
		// its shingles (the HPND permission sentence, the MIT or HPND disclaimer reworded).
		{"spdx-X11", "spdx-libpng-2.0", "boilerplate", false},
		{"spdx-CFITSIO", "spdx-metamail", "boilerplate", false},
		{"spdx-NetCDF", "spdx-Unicode-3.0", "boilerplate", false},
		{"spdx-AML", "spdx-IEC-Code-Components-EULA", "boilerplate", false},
		{"spdx-HPND-SMC", "spdx-dtoa", "boilerplate", false},
		// Not a sentence: common phrases strung together a word or two apart (round 3's 73
		// and 77, both judges different) stay different.
		{"npm-express-license", "spdx-W3C-20150513", "different", false},
		{"npm-react-is-license", "spdx-InnoSetup", "different", false},
		// Round 4's other three pairs where both judges differ from the rules, left as the
		// rules have them (see the README, "Round 5"): BSD-3-Clause-HP in Apache-1.0 (77%
		// of its shingles, judges partial/yes), an edition 74-77% untranslated (judges
		// partial/no), a disclaimer moved and lowercased (judges boilerplate/no).
		{"spdx-Apache-1.0", "spdx-BSD-3-Clause-HP", "boilerplate", false},
		{"handbook-it-IT-sect.future-of-this-book", "handbook-ru-RU-sect.future-of-this-book", "minor", true},
		{"spdx-HPND-MIT-disclaimer", "spdx-HPND-sell-variant-MIT-disclaimer-rev", "minor", true},
		// Blind round 5, where both judges agreed and the rules of round 5 did not (round 6
		// is the check): editions whose shared untranslated English is a third of their
		// prose once tables and Chinese or Japanese headings and captions are left out, as
		// the guidelines leave them out (36% and 34%), are partial overlap, not translation.
		{"debref-fr-the_basic_unix_like_work_environment", "debref-ja-the_basic_unix_like_work_environment", "partial", false},
		{"handbook-ja-JP-id-1.7.12.10", "handbook-zh-CN-id-1.7.12.10", "partial", false},
		// ...and round 4's 25 stays translation (both judges): its only shared text is
		// apt-cache's package description, command output, not prose.
		{"debref-it-who_uploaded_the_package", "debref-ja-who_uploaded_the_package", "translation", false},
		// Round 5's other two pairs where both judges differ from the rules (boilerplate/no),
		// left as the rules have them (see the README, "Round 6"): one reworded grant or
		// permission passage of about 20 words in a longer license. Measuring the tenth on
		// the shorter text's words in shared shingles would move 68 and also round 4's 81
		// (MITNFA vs StandardML-NJ, both judges different).
		{"npm-types__semver-license", "spdx-AFL-1.2", "different", false},
		{"spdx-HPND-Intel", "spdx-LOOP", "different", false},
		{"spdx-MITNFA", "spdx-StandardML-NJ", "different", false},
		// Controls.
		{"debref-en-customizing_vim", "debref-html-en-customizing_vim", "format", true},
		{"handbook-de-DE-sect.install-lang", "handbook-en-US-sect.install-lang", "translation", false},
		{"handbook-de-DE-sect.apt-file", "handbook-en-US-sect.apt-file", "partial", false},
		{"handbook-zh-CN-sect.master-plan", "handbook-zh-TW-sect.master-plan", "translation", false},
		{"npm-mimic-fn-license", "npm-rollup-license", "partial", false},
	}
	for _, tt := range tests {
		t.Run(tt.a+"~"+tt.b, func(t *testing.T) {
			i, ok := find(tt.a)
			k, ok2 := find(tt.b)
			if !ok || !ok2 {
				t.Fatalf("%s or %s is not in the sample", tt.a, tt.b)
			}
			f := measure(&docs[i], &docs[k])
			v := classify(&docs[i], &docs[k], &f)
			if v.category != tt.category || v.duplicate != tt.dup {
				t.Errorf("classify = %s/%v (%s); want %s/%v", v.category, v.duplicate, v.rule, tt.category, tt.dup)
			}
		})
	}
}

func TestSideOf(t *testing.T) {
	run := func(covered, gap int) []bool {
		var out []bool
		for range covered {
			out = append(out, true)
		}
		for range gap {
			out = append(out, false)
		}
		return out
	}
	tests := []struct {
		name string
		cov  []bool
		want diffSide
	}{
		{"nothing shared", run(0, 7), diffSide{words: 7, changed: 7, places: 1}},
		{"all shared, one passage", run(25, 0), diffSide{words: 25, longestShared: 25, inPassages: 25, sentence: 25}},
		{"a passage and a phrase", append(run(20, 3), run(12, 2)...), diffSide{words: 37, changed: 5, places: 2, longestShared: 20, inPassages: 20, sentence: 20}},
		{"phrases only", append(append(run(0, 1), run(19, 1)...), run(19, 0)...), diffSide{words: 40, changed: 2, places: 2, longestShared: 19, sentence: 38}},
		// Three words a word diff matched inside a rewritten sentence do not end the change.
		{"a short match inside a change", append(append(run(10, 2), run(3, 2)...), run(10, 0)...), diffSide{words: 27, changed: 4, places: 1, longestShared: 10, sentence: 13}},
		{"two changes a shingle apart", append(append(run(10, 2), run(5, 2)...), run(10, 0)...), diffSide{words: 29, changed: 4, places: 2, longestShared: 10, sentence: 15}},
		// A standard sentence with one word changed is still one shared sentence (17 words);
		// three changed words in a row end it.
		{"a sentence with a word changed", append(run(8, 1), run(9, 0)...), diffSide{words: 18, changed: 1, places: 1, longestShared: 9, sentence: 17}},
		{"three words apart", append(run(8, 3), run(9, 0)...), diffSide{words: 20, changed: 3, places: 1, longestShared: 9, sentence: 9}},
		// A sentence has a word or two changed in all, not between every few words: common
		// phrases strung together with words between them are no sentence (round 3's MIT
		// vs W3C: "express or implied, including but not limited to ... warranties of
		// merchantability").
		{"phrases a word or two apart", append(append(append(run(4, 2), run(4, 1)...), run(4, 2)...), run(4, 0)...), diffSide{words: 21, changed: 5, places: 1, longestShared: 4, sentence: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sideOf(tt.cov); got != tt.want {
				t.Errorf("sideOf = %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestLetterWidth(t *testing.T) {
	tests := []struct {
		word string
		want int
	}{
		{"apt-get", 6},
		{"(LMDE),", 4},
		{"Пакет", 5},
		{"软件包", 6},
		{"カタカナ", 8},
		{"2.1", 0},
	}
	for _, tt := range tests {
		if got := letterWidth(tt.word); got != tt.want {
			t.Errorf("letterWidth(%q) = %d; want %d", tt.word, got, tt.want)
		}
	}
}

func TestLanguageGuess(t *testing.T) {
	tests := []struct {
		text string
		want string
	}{
		{"The package is installed by the system and it can be removed with apt.", "en"},
		{"Das Paket wird von dem System installiert und es kann mit apt entfernt werden, wenn es nicht gebraucht wird.", "de"},
		{"Le paquet est installé par le système et il peut être supprimé avec apt pour que la place soit libre.", "fr"},
		{"Пакет устанавливается системой и может быть удалён с помощью apt.", "ru"},
		{"این بسته توسط سیستم نصب می\u200cشود و می\u200cتوان آن را با apt حذف کرد.", "fa"},
		{"يتم تثبيت الحزمة بواسطة النظام ويمكن إزالتها باستخدام apt.", "ar"},
		{"このパッケージはシステムによってインストールされ、apt で削除できます。", "ja"},
		{"该软件包由系统安装，可以用 apt 删除。", "zh"},
		{"$ apt-get install foo bar baz\n$ dpkg -l | grep foo", ""}, // code, not prose
		// Round 6: a table is not prose, even with sentences in its cells; nor is a
		// command's "Field: value" output, nor a Chinese or Japanese heading or caption
		// (no sentence in it).
		{"+----------+--------------------------------------------+\n| paquet   | description de la commande et de son usage |\n+----------+--------------------------------------------+\n| bash     | le shell par défaut pour les utilisateurs  |\n+----------+--------------------------------------------+", ""},
		{"Package: equivs\nPriority: optional\nDescription: This package provides a tool to create trivial Debian packages and it is the one you want.", ""},
		{"4.2.9. 管理者パスワード", ""},
		{"図 4.5 管理者パスワード", ""},
		{"安全管理员密码", ""},
	}
	for _, tt := range tests {
		_, shares := guessLanguages(tt.text)
		if got := shares.main(); got != tt.want {
			t.Errorf("guessLanguages(%.30q) main = %q (%v); want %q", tt.text, got, shares, tt.want)
		}
	}
}

// Every stratum of U is in the sample with its N_h, the N_h add up to all pairs of the
// documents, n_h <= N_h, and every category has enough pairs for its own recall.
func TestLabelsCarryTheDesign(t *testing.T) {
	docs, err := shipped()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(labelsCSV)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"design", "stratum", "frame_size"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("labels.csv has no %s column: %v", h, rows[0])
		}
	}
	frame := map[string]int64{}
	drawn := map[string]int{}
	perCategory := map[string]int{}
	seen := map[[2]string]bool{}
	for i, r := range rows[1:] {
		line := i + 2
		if r[col["design"]] != Design {
			t.Fatalf("labels.csv:%d: design %q; want %q", line, r[col["design"]], Design)
		}
		key := [2]string{r[0], r[1]}
		if seen[key] || r[0] >= r[1] {
			t.Errorf("labels.csv:%d: pair %v repeated or not ordered", line, key)
		}
		seen[key] = true
		s := r[col["stratum"]]
		n, err := strconv.ParseInt(r[col["frame_size"]], 10, 64)
		if err != nil {
			t.Fatalf("labels.csv:%d: frame_size: %v", line, err)
		}
		if old, ok := frame[s]; ok && old != n {
			t.Errorf("labels.csv:%d: stratum %s has frame sizes %d and %d", line, s, old, n)
		}
		frame[s] = n
		drawn[s]++
		if cat := r[col["category"]]; s[:len(cat)+1] != cat+"|" {
			t.Errorf("labels.csv:%d: category %s in stratum %s", line, cat, s)
		}
		perCategory[r[col["category"]]]++
	}
	var total int64
	for s, n := range frame {
		total += n
		if int64(drawn[s]) > n {
			t.Errorf("stratum %s: n_h = %d > N_h = %d", s, drawn[s], n)
		}
	}
	if want := int64(len(docs)) * int64(len(docs)-1) / 2; total != want {
		t.Errorf("sum of N_h = %d; want every pair of the %d documents, %d", total, len(docs), want)
	}
	if n := len(rows) - 1; n < 800 || n > 900 {
		t.Errorf("%d labeled pairs; want 800-900", n)
	}
	for _, c := range categoryOrder {
		if perCategory[c] < 60 || perCategory[c] > 150 {
			t.Errorf("category %s has %d pairs; want 60-150", c, perCategory[c])
		}
	}
}

// Short texts are compared word by word: runs of at least alignRun words in the same order
// count as shared, shorter coincidences do not, and long texts are left to shingles.
func TestAlign(t *testing.T) {
	marks := func(b []bool) string {
		var sb strings.Builder
		for _, v := range b {
			if v {
				sb.WriteByte('=')
			} else {
				sb.WriteByte('.')
			}
		}
		return sb.String()
	}
	tests := []struct {
		name, x, y string
		wantX      string
		wantY      string
	}{
		{"a changed word at the edge", "This is the gnu build of it. See the site for details.",
			"This is the musl build of it. See the site for details.",
			"===.========", "===.========"},
		{"a template around a name", "npm install --save foo and then yarn add foo to finish it",
			"npm install --save bar-baz and then yarn add bar-baz to finish it",
			"===.====.===", "===.====.==="},
		{"punctuation is not a word change", "for more information. See", "for more information see",
			"====", "===="},
		{"scattered words only", "the cat sat on the mat of a house", "a dog ran to the park on the hill",
			".........", "........."},
		// One or two words matched within two words of a shared run belong to it: "this
		// software" before a word inserted into the sentence.
		{"a word inserted into a sentence", "this software package may be freely used provided that",
			"this software may be freely used provided that",
			"==.======", "========"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, y := analyze(tt.x), analyze(tt.y)
			ax, ay := align(&x, &y)
			if marks(ax) != tt.wantX || marks(ay) != tt.wantY {
				t.Errorf("align = %s, %s; want %s, %s", marks(ax), marks(ay), tt.wantX, tt.wantY)
			}
		})
	}
	long := analyze(strings.Repeat("word ", alignWords+1))
	short := analyze("word word word")
	if ax, ay := align(&long, &short); ax != nil || ay != nil {
		t.Errorf("align of a %d-word text = %v, %v; want nil (left to shingles)", alignWords+1, ax, ay)
	}
}

// Two renderings of a section are the same words only when no word of one is missing from
// the other; link targets and code-fence lines are markup, and a word inside a path or a
// URL the plain text broke over lines is still there.
func TestSameWordSet(t *testing.T) {
	tests := []struct {
		name, x, y string
		want       bool
	}{
		{"markup only", "9.2. Customizing vim\n\n    Caution\n\n    See vim(1).", "## 9.2. Customizing vim\n\n**Caution**\n\n```screen\nSee `vim`(1).\n```", true},
		{"a link target", "Read the habits page.", "Read the [habits page](https://www.example.org/habits.html).", true},
		{"a URL broken over lines", "Get it from http://\n    tug.ctan.org/tex-archive/systems.", "Get it from <http://tug.ctan.org/tex-archive/systems>.", true},
		{"a translated title", "9.2. Personnaliser vim\n\nAttention", "## 9.2. Customizing vim\n\n**Caution**", false},
		{"a title in Japanese", "9.2. vimのカスタム化", "## 9.2. Customizing vim", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameWordSet(tt.x, tt.y); got != tt.want {
				t.Errorf("sameWordSet = %v; want %v", got, tt.want)
			}
		})
	}
}
