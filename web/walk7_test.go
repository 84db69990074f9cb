package web

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Defects a walk of the merged build found (helper webfix2), each held here.

// Labels stay blind on sweep pages: an annotator reads no labeled pair's number, label or
// category on the dashboard, its live fragment, its downloads or its charts' tables, and
// reads instead who sees the misses and false merges; a reviewer sees the lists, each
// pair linked to its page.
func TestSweepOutcomesBlindForAnnotators(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	_, id := f.sweptCorpus(3, "blind")
	pairLink := regexp.MustCompile(`/campaigns/\d+/pairs/\d+`)
	paths := []string{"/sweeps/%d", "/sweeps/%d/live", "/sweeps/%d/results.csv", "/sweeps/%d/settings.json"}
	for _, chart := range []string{"tradeoff", "heatmap", "scurve", "categories", "histogram"} {
		paths = append(paths, "/sweeps/%d/charts/"+chart+".csv", "/sweeps/%d/charts/"+chart+".svg")
	}
	for _, role := range []string{"annotator", "reviewer"} {
		c := f.signIn(role)
		blind := role == "annotator"
		for _, p := range paths {
			p = fmt.Sprintf(p, id)
			res, body := get(t, f.h, p, c)
			if res.StatusCode != http.StatusOK {
				t.Errorf("%s GET %s: %d", role, p, res.StatusCode)
				continue
			}
			if blind && (pairLink.MatchString(body) || strings.Contains(body, `data-testid="outcome"`) || strings.Contains(body, "J=")) {
				t.Errorf("%s GET %s names labeled pairs:\n%.600s", role, p, pairLink.FindString(body))
			}
		}
		_, dash := get(t, f.h, fmt.Sprintf("/sweeps/%d", id), c)
		if got := strings.Contains(dash, `data-testid="outcomes-blind"`); got != blind {
			t.Errorf("%s: the dashboard says who sees the lists: %v; want %v", role, got, blind)
		}
		if blind && !strings.Contains(dash, "Reviewers, approvers and admins see which labeled pairs") {
			t.Errorf("%s: the dashboard does not say who sees the misses and false merges", role)
		}
		if !blind && (!strings.Contains(dash, `data-testid="misses"`) || !pairLink.MatchString(dash)) {
			t.Errorf("%s: the dashboard lists no misses linked to their pairs", role)
		}
	}
}
