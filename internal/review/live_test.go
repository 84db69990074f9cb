package review

import (
	"strings"
	"testing"
	"time"
)

// The live documents' texts count in words: one approval, two approvals.
func TestLiveTextsCountInWords(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	conflicts := func(n int) *ConflictError {
		return &ConflictError{Conflicts: []Conflict{{Doc: "d1", Manifest: 2, At: at}}, Total: n}
	}
	stale := func(events, pairs int) string {
		return Staleness{LabelEvents: events, LabelPairs: pairs, LabelsAt: at, Campaign: "default"}.Reasons()[0]
	}
	for _, tc := range []struct {
		name, got, want string
	}{
		{"lowered to one", Lowering{From: 2, To: 1, By: "admin", At: at}.Text(), "lowered from 2 to 1 approval by admin on 2026-03-01 09:30 UTC"},
		{"lowered to none", Lowering{From: 2, To: 0, By: "admin", At: at}.Text(), "lowered from 2 to 0 approvals by admin on 2026-03-01 09:30 UTC"},
		{"one label event", stale(1, 1), "the labels changed since the run: 1 label event on 1 pair of campaign default, the last on 2026-03-01 09:30 UTC;"},
		{"label events", stale(1200, 3), "the labels changed since the run: 1,200 label events on 3 pairs of campaign default,"},
		{"one conflict", conflicts(1).Error(), "1 removal conflicts with other manifests' exports: d1 was tombstoned by manifest 2"},
		{"conflicts", conflicts(12).Error(), "12 removals conflict with other manifests' exports: d1 was tombstoned by manifest 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.HasPrefix(tc.got, tc.want) {
				t.Errorf("text %q; want it to start %q", tc.got, tc.want)
			}
		})
	}
}
