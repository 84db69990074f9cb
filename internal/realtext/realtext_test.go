package realtext

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDocsAreTheCorpusInFileOrder(t *testing.T) {
	t.Parallel()
	all := Docs(t, 0)
	if len(all) != 5000 {
		t.Fatalf("Docs(0) = %d documents; want 5000", len(all))
	}
	first := Docs(t, 3)
	for i, d := range first {
		if d != all[i] || d.ID == "" || d.Text == "" {
			t.Errorf("Docs(3)[%d] = %q; want %q, with an id and a text", i, d.ID, all[i].ID)
		}
	}
	if first[0].ID != "debref-en-preface" {
		t.Errorf("first document %q; want debref-en-preface", first[0].ID)
	}
}

func TestTextsSkipsShortOnes(t *testing.T) {
	t.Parallel()
	texts := Texts(t, 5, 260)
	if len(texts) != 5 {
		t.Fatalf("Texts(5, 260) = %d texts; want 5", len(texts))
	}
	var want []string
	for _, d := range Docs(t, 0) {
		if len(strings.Fields(d.Text)) >= 260 && len(want) < 5 {
			want = append(want, d.Text)
		}
	}
	for i := range texts {
		if texts[i] != want[i] {
			t.Errorf("Texts(5, 260)[%d] is not the corpus's %d-th text of 260 words", i, i+1)
		}
	}
}

func TestRecordsDecodeEveryField(t *testing.T) {
	t.Parallel()
	recs := Records[map[string]json.RawMessage](t, Demo, 2)
	if len(recs) != 2 {
		t.Fatalf("Records(Demo, 2) = %d records; want 2", len(recs))
	}
	for _, k := range []string{"id", "text", "source", "lang"} {
		if _, ok := recs[0][k]; !ok {
			t.Errorf("Records(Demo)[0] has no %q: %v", k, recs[0])
		}
	}
	if whole := Bytes(t, Whole); strings.Count(string(whole), "\n") != 1273 {
		t.Errorf("Bytes(Whole) has %d lines; want 1273", strings.Count(string(whole), "\n"))
	}
}

func TestConcatCutsAtALineEnd(t *testing.T) {
	t.Parallel()
	docs := []DemoDoc{
		{Text: "one\ntwo", Source: "s", Lang: "en"},
		{Text: "other", Source: "t", Lang: "en"},
		{Text: "three\nfour", Source: "s", Lang: "en"},
		{Text: "drei", Source: "s", Lang: "de"},
	}
	for _, tc := range []struct {
		size int
		want string
	}{
		{100, "one\ntwo\n\nthree\nfour"},
		{12, "one\ntwo\n\n"},
		{5, "one\n"},
	} {
		if got := Concat(docs, "s", "en", tc.size); got != tc.want {
			t.Errorf("Concat(s, en, %d) = %q; want %q", tc.size, got, tc.want)
		}
	}
	if got := Concat(DemoDocs(t), "debian-handbook", "en", 24_000); len(got) > 24_000 || len(got) < 20_000 {
		t.Errorf("Concat(demo handbook, 24,000) is %d bytes; want just under 24,000", len(got))
	}
}
