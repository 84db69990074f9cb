package web

import (
	"net/http"
	"strings"
	"testing"
)

// Issue 8 item 7: counts agree with their words, every page names its icon, and the ?
// help lists "/ focus the threshold field" only where there is one.
func TestFeedbackWords(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	for _, tc := range []struct {
		body, want string
	}{
		{`{"id":"1","text":"one"}` + "\n" + `{"id":"2"}` + "\n", "1 bad record was skipped."},
		{`{"id":"3","text":"one"}` + "\n" + `{"id":"4"}` + "\n" + `{"id":"5"}` + "\n", "2 bad records were skipped."},
	} {
		rec := f.upload("/datasets", "some.jsonl", tc.body, map[string]string{"skip_bad": "1"})
		if _, page := f.waitJob(rec.Header().Get("Location")); !strings.Contains(page, tc.want) {
			t.Errorf("import page lacks %q", tc.want)
		}
	}
	if _, home := get(t, f.h, "/", f.admin); !strings.Contains(home, "2 records were rejected") {
		t.Error(`the start page does not say "2 records were rejected"`)
	}
	_, home := get(t, f.h, "/", f.admin)
	_, team := get(t, f.h, "/admin/users", f.admin)
	if !strings.Contains(home, `<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">`) {
		t.Error("the page names no icon")
	}
	if res, svg := get(t, f.h, "/static/favicon.svg", f.admin); res.StatusCode != http.StatusOK || !strings.HasPrefix(svg, "<svg") {
		t.Errorf("favicon: %d", res.StatusCode)
	}
	help := func(page string) string {
		i := strings.Index(page, `data-testid="help"`)
		if i < 0 {
			t.Fatal("no help dialog")
		}
		return page[i:]
	}
	if !strings.Contains(help(home), "focus the threshold field") {
		t.Error("the start page's help does not list /, which focuses its threshold field")
	}
	if strings.Contains(help(team), "focus the threshold field") {
		t.Error("the Team page's help lists /, but the page has no threshold field")
	}
}
