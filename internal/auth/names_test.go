package auth

import (
	"strings"
	"testing"
)

func TestNormalizeName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		refused  string // part of the error, "" when accepted
	}{
		{"alice", "alice", ""},
		{"  Ada   Lovelace ", "Ada Lovelace", ""},
		{"ａｌｉｃｅ", "alice", ""}, // full width
		{"ﬁona", "fiona", ""},
		{"Zoë", "Zoë", ""},
		{"Ольга", "Ольга", ""}, // one alphabet, not Latin
		{"cli:root", "", "colon"},
		{"cli꞉root", "", "colon"}, // a modifier letter colon
		{"import:alice", "", "colon"},
		{"ali\u200bce", "", "invisible"}, // zero-width space
		{"ali\u200dce", "", "invisible"}, // zero-width joiner
		{"ali\u202ece", "", "invisible"}, // right-to-left override
		{"ali\u00adce", "", "invisible"}, // soft hyphen
		{"a\tb", "", "invisible"},
		{"аlice", "", "alphabets"}, // a Cyrillic а
		{"pаypal", "", "alphabets"},
		{"System", "", "reserved"},
		{"sys tem", "", "reserved"},
		{"", "", "1 to 64"},
		{"   ", "", "1 to 64"},
		{strings.Repeat("x", 65), "", "1 to 64"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := NormalizeName(tc.in)
			switch {
			case tc.refused == "" && (err != nil || got != tc.want):
				t.Errorf("NormalizeName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Errorf("NormalizeName(%q) = %q, %v; want refused (%s)", tc.in, got, err, tc.refused)
			}
		})
	}
}

func TestNameSkeleton(t *testing.T) {
	t.Parallel()
	same := [][2]string{
		{"alice", "ALICE"},
		{"alice", "a1ice"},
		{"alice", "aIice"}, // a capital I
		{"coco", "сосо"},   // Cyrillic
		{"coco", "C0C0"},
		{"mary", "rnary"},
		{"will", "vvill"},
		{"ada lovelace", "Ada  Lovelace"},
		{"ako", "ακο"}, // Greek that reads Latin
		{"ada", "ａｄａ"},
	}
	for _, p := range same {
		if a, b := NameSkeleton(p[0]), NameSkeleton(p[1]); a != b {
			t.Errorf("NameSkeleton(%q) = %q, NameSkeleton(%q) = %q; want the same", p[0], a, p[1], b)
		}
	}
	for _, p := range [][2]string{{"alice", "alina"}, {"bob", "rob"}, {"ann", "anna"}, {"zoe", "zoë"}} {
		if NameSkeleton(p[0]) == NameSkeleton(p[1]) {
			t.Errorf("NameSkeleton(%q) = NameSkeleton(%q); want them apart", p[0], p[1])
		}
	}
}
