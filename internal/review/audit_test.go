package review

import (
	"errors"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/audit"
)

// AuditOf is audit.Estimate of the frame's counts, less the mistakes excluded since, at
// most the uncertain removals left, per removal now.
func TestAuditOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		c    AuditCounts
		want func(audit.Result) int // the upper bound wanted, from the estimate of the frame
	}{
		{"no label", AuditCounts{FrameRemovals: 1000, FrameCertain: 400, Drawn: 300, Removals: 1000, Certain: 400},
			func(r audit.Result) int { return 600 }},
		{"zero in 300", AuditCounts{FrameRemovals: 1000, FrameCertain: 400, Drawn: 300, Labeled: 300, Removals: 1000, Certain: 400},
			func(r audit.Result) int { return int(r.Upper) }},
		{"two mistakes, one excluded since", AuditCounts{FrameRemovals: 1000, FrameCertain: 400, Drawn: 300, Labeled: 280, Mistakes: 2,
			MistakesGone: 1, Removals: 999, Certain: 400}, func(r audit.Result) int { return int(r.Upper) - 1 }},
		{"most excluded since", AuditCounts{FrameRemovals: 1000, FrameCertain: 0, Drawn: 10, Labeled: 1, Removals: 3, Certain: 0},
			func(r audit.Result) int { return 3 }},
		{"every removal identical", AuditCounts{FrameRemovals: 50, FrameCertain: 50, Removals: 50, Certain: 50},
			func(r audit.Result) int { return 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := AuditOf(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := audit.Estimate(tc.c.FrameRemovals, tc.c.FrameCertain, tc.c.Labeled, tc.c.Mistakes)
			if want := tc.want(r); a.Upper != want || float64(a.UpperRate) != float64(want)/float64(tc.c.Removals) {
				t.Errorf("AuditOf(%+v) = upper %d (%v); want %d", tc.c, a.Upper, a.UpperRate, want)
			}
		})
	}
	if _, err := AuditOf(AuditCounts{FrameRemovals: 10, FrameCertain: 2, Labeled: 9}); err == nil {
		t.Error("AuditOf takes 9 labels of 8 uncertain removals")
	}
}

func TestThousands(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1942: "1,942", 1234567: "1,234,567", -1942: "-1,942"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q; want %q", n, got, want)
		}
	}
}

func TestPercent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rate float64
		want string
	}{{0, "0%"}, {0.01, "1%"}, {0.015, "1.5%"}, {0.0046, "0.46%"}, {0.00001, "0.001%"}, {0.6667, "67%"}, {1, "100%"}} {
		if got := Percent(tc.rate); got != tc.want {
			t.Errorf("Percent(%v) = %q; want %q", tc.rate, got, tc.want)
		}
	}
}

// The rule refuses the last approval without an audit, with an audit that no longer
// covers the manifest, and with an upper end over the target, naming both.
func TestCheckAuditGate(t *testing.T) {
	t.Parallel()
	ok, _ := AuditOf(AuditCounts{FrameRemovals: 1000, FrameCertain: 400, Drawn: 300, Labeled: 300, Removals: 1000, Certain: 400})
	high, _ := AuditOf(AuditCounts{FrameRemovals: 1000, FrameCertain: 400, Drawn: 300, Labeled: 100, Removals: 1000, Certain: 400})
	moved := ok
	moved.Covers, moved.Uncovered = false, 3
	for _, tc := range []struct {
		name   string
		gate   AuditGate
		a      *Audit
		refuse string // "" when it counts
	}{
		{"no rule, no audit", AuditGate{}, nil, ""},
		{"no audit", AuditGate{Target: 1}, nil, "has none"},
		{"zero in 300 under 1%", AuditGate{Target: 1}, &ok, ""},
		{"zero in 100 over 1%", AuditGate{Target: 1}, &high, "it is " + Percent(float64(high.UpperRate)) + " now"},
		{"outside the frame", AuditGate{Target: 1}, &moved, "3 removals outside it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckAuditGate(tc.gate, tc.a)
			var re *RefusedError
			switch {
			case tc.refuse == "" && err != nil:
				t.Errorf("CheckAuditGate = %v; want it to count", err)
			case tc.refuse != "" && (!errors.As(err, &re) || !strings.Contains(re.Msg, tc.refuse) || !strings.Contains(re.Msg, "at or under 1%")):
				t.Errorf("CheckAuditGate = %v; want a refusal naming the target and %q", err, tc.refuse)
			}
		})
	}
}

func TestParseAuditGate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want float64
		bad  bool
	}{{"", 0, false}, {"1", 1, false}, {" 0.5 % ", 0.5, false}, {"0", 0, false}, {"-1", 0, true}, {"51", 0, true}, {"NaN", 0, true}, {"x", 0, true}} {
		got, err := ParseAuditGate(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseAuditGate(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

// WouldSignOff: the approval that completes the tally with someone apart from the
// deciders signs off; one that leaves it short, or all deciders', does not.
func TestWouldSignOff(t *testing.T) {
	t.Parallel()
	one := []Review{{UserID: 2, Verdict: Approve}}
	for _, tc := range []struct {
		name      string
		reviews   []Review
		user      int64
		required  int
		undecided int
		deciders  map[int64]bool
		want      bool
	}{
		{"the second of two", one, 3, 2, 0, nil, true},
		{"the first of two", nil, 3, 2, 0, nil, false},
		{"undecided removals", one, 3, 2, 1, nil, false},
		{"all deciders", one, 3, 2, 0, map[int64]bool{2: true, 3: true}, false},
		{"the same approver again", one, 2, 2, 0, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WouldSignOff(tc.reviews, 1, tc.user, tc.required, tc.undecided, tc.deciders); got != tc.want {
				t.Errorf("WouldSignOff = %v; want %v", got, tc.want)
			}
		})
	}
}
