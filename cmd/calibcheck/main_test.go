package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestTruthTable(t *testing.T) {
	var out, log bytes.Buffer
	if err := run(context.Background(), []string{"-truth", "-grid", "fast", "-policies", "components"}, &out, &log); err != nil {
		t.Fatal(err)
	}
	// 42x3 at 0.5 under exact verification misses one duplicate pair of 10,753 at 0.5.
	for _, want := range []string{"Population: 3062 documents, 21179 pairs", "| word5 k128 42x3 >=0.50 exact | 18513 | 10752 | 0.9999 | 1.0000 | 0.9933 | components | earliest | 1081 | 121 (0.1119) | 433 (0.4006) | 299 (0.2766) |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the truth table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestFlagsRefused(t *testing.T) {
	cases := map[string][]string{
		"-grid \"huge\": want default or fast": {"-grid", "huge"},
		"-policies: cluster: policy":           {"-policies", "single-link"},
		"-taus: label rule \"half\"":           {"-taus", "half"},
		"-taus: label rule 0.30~0.20":          {"-taus", "0.5,0.3~0.2"},
		"-bars \"strict\": want issue or fast": {"-bars", "strict"},
		"unexpected argument \"x\"":            {"x"},
	}
	for want, args := range cases {
		err := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run(%q) = %v; want an error saying %q", args, err, want)
		}
	}
}
