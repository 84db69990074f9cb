package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/demo"
)

// Round 1's judges stay scorable against round 1's pairs, and only there: scored against
// the current round their pairs are reported as not in the file.
func TestRunCheckRounds(t *testing.T) {
	dir := filepath.Join("..", "..", "internal", "demo")
	judges := []string{
		filepath.Join(dir, "testdata", "blind", "round1", "judge1.csv"),
		filepath.Join(dir, "testdata", "blind", "round1", "judge2.csv"),
	}
	tests := []struct {
		name  string
		pairs string
		want  []string
		not   []string
	}{
		{"round 1", filepath.Join(dir, demo.BlindPairsPath(1)),
			[]string{"| rules vs judge1 | 84 |", "| rules vs judge2 | 84 |", "| judge1 vs judge2 | 84 | 0.902 |"},
			[]string{"not in the pairs file"}},
		{"current round", filepath.Join(dir, demo.BlindPairsPath(demo.BlindRound)),
			[]string{"not in the pairs file, left out: judge1: pair 1 "},
			[]string{"| rules vs judge1 | 84 |"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			if err := runCheck(&out, tt.pairs, judges); err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.want {
				if !strings.Contains(out.String(), s) {
					t.Errorf("runCheck(%s) lacks %q:\n%s", tt.pairs, s, out.String())
				}
			}
			for _, s := range tt.not {
				if strings.Contains(out.String(), s) {
					t.Errorf("runCheck(%s) has %q:\n%s", tt.pairs, s, out.String())
				}
			}
		})
	}
	if err := runCheck(&strings.Builder{}, filepath.Join(dir, "testdata", "blind", "round9", "pairs.jsonl"), judges); err == nil {
		t.Error("runCheck with a missing pairs file = nil; want an error")
	}
}
