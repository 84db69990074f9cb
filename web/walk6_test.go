package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// Defects a walk of the merged build found (helper walk6), each held here.

// A number in a query is read by one rule whatever the parameter: "t=+1" was read on the
// dashboard while the shape chart refused " 1" and read "+1", and the start page read
// "+0.5". A sign, spaces or an exponent are refused by every parameter, with its range
// (422); the plain spelling is read.
func TestQueryNumbersOneRule(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	_, id := f.sweptCorpus(3, "numbers")
	dash := fmt.Sprintf("/sweeps/%d", id)
	for _, tc := range []struct {
		path, want string
		status     int
	}{
		{dash + "?t=0.5", "", http.StatusOK},
		{dash + "?t=1", "", http.StatusOK},
		{dash + "?t=%2B1", `"+1": want a number in (0, 1]`, http.StatusUnprocessableEntity},
		{dash + "?t=%201", `" 1": want a number in (0, 1]`, http.StatusUnprocessableEntity},
		{dash + "?t=1e0", `"1e0": want a number in (0, 1]`, http.StatusUnprocessableEntity},
		{dash + "?config=%2B0", `"+0" is not a configuration number`, http.StatusUnprocessableEntity},
		{dash + "?page=%201", `" 1" is not a page number`, http.StatusUnprocessableEntity},
		{dash + "?target=%2B1", `"+1": want a percentage`, http.StatusUnprocessableEntity},
		{dash + "?target=1%25", "", http.StatusOK},
		{"/shape.csv?bands=20&rows=5", "", http.StatusOK},
		{"/shape.csv?bands=%2B20&rows=5", `"+20" is not a whole number between 1 and 4096`, http.StatusUnprocessableEntity},
		{"/shape.svg?bands=20&rows=5&threshold=%2B1", `"+1" is not a number between 0 and 1`, http.StatusUnprocessableEntity},
		{"/shape.svg?bands=20&rows=5&threshold=%201", `" 1" is not a number between 0 and 1`, http.StatusUnprocessableEntity},
		{"/?threshold=%2B0.5", `"+0.5" is not a number between 0 and 1`, http.StatusUnprocessableEntity},
		{"/?hashes=0x80", `"0x80" is not a whole number between 1 and 1024`, http.StatusUnprocessableEntity},
	} {
		res, body := get(t, f.h, tc.path, f.admin)
		if res.StatusCode != tc.status {
			t.Errorf("GET %s: %d; want %d", tc.path, res.StatusCode, tc.status)
		}
		if tc.want != "" && !strings.Contains(body, htmlText(tc.want)) {
			t.Errorf("GET %s does not say %s", tc.path, tc.want)
		}
	}
}

// htmlText is s as a page writes it (templ escapes quotes).
func htmlText(s string) string {
	return strings.NewReplacer(`"`, "&#34;", "<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s)
}

// A form's number follows the same rule: an audit of "+5" pairs is refused by name.
func TestFormNumbersOneRule(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	appr := f.signIn("approver")
	for _, v := range []string{"+5", " 5", "5e0"} {
		rec := f.do("POST", fmt.Sprintf("/manifests/%d/audit", m.ID), appr, url.Values{"pairs": {v}})
		_, body := f.follow(rec, appr)
		if want := htmlText(fmt.Sprintf("pairs to label: %q is not a whole number", v)); !strings.Contains(body, want) {
			t.Errorf("audit of %q pairs: the page does not say %s", v, want)
		}
		if strings.Contains(body, "for the audit") {
			t.Errorf("audit of %q pairs drew pairs", v)
		}
	}
}

// An id in a query is answered as the dashboard answers its config: malformed or out of
// range (-1, 0, "+1", "01") is a 422 that says what to choose, like "abc"; one that
// names no manifest is a 404.
func TestDiffIDsOneAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	a, b := itoa64(m.ID), itoa64(f.runOn(m.DatasetID, chainRun, "reviewer").ID) // two manifests: one with itself is refused (walk7)
	for _, tc := range []struct {
		a      string
		status int
	}{
		{a, http.StatusOK},
		{"abc", http.StatusUnprocessableEntity},
		{"-1", http.StatusUnprocessableEntity},
		{"0", http.StatusUnprocessableEntity},
		{"%2B" + a, http.StatusUnprocessableEntity},
		{"0" + a, http.StatusUnprocessableEntity},
		{"99999", http.StatusNotFound},
	} {
		path := "/manifests/diff?a=" + tc.a + "&b=" + b
		res, body := get(t, f.h, path, f.admin)
		if res.StatusCode != tc.status {
			t.Errorf("GET %s: %d; want %d", path, res.StatusCode, tc.status)
		}
		if tc.status == http.StatusUnprocessableEntity && !strings.Contains(body, "Choose two manifests to compare") {
			t.Errorf("GET %s does not say what to choose", path)
		}
		// A manifest that does not exist is named, with the chooser (the other one kept).
		if tc.status == http.StatusNotFound && (!strings.Contains(body, "There is no manifest 99999") ||
			!strings.Contains(body, `value="`+b+`" selected`)) {
			t.Errorf("GET %s does not name the missing manifest with the chooser, the other selected:\n%.2000s", path, body)
		}
	}
	// Which of the two is wrong, and how; every missing manifest named.
	for path, want := range map[string]string{
		"/manifests/diff?a=abc&b=" + b:    "a is not a manifest ID",
		"/manifests/diff?a=" + a + "&b=":  "b is missing",
		"/manifests/diff?a=x&b=-2":        "a is not a manifest ID (a whole number from 1); b is not a manifest ID",
		"/manifests/diff?a=77777&b=88888": "There are no manifests 77777 and 88888",
	} {
		if _, body := get(t, f.h, path, f.admin); !strings.Contains(body, want) {
			t.Errorf("GET %s does not say %q:\n%.1500s", path, want, body)
		}
	}
	res, body := get(t, f.h, "/manifests/diff?a="+a+"&b=88888", f.admin)
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "There is no manifest 88888") {
		t.Errorf("GET /manifests/diff?a=%s&b=88888: %d, naming 88888 %v; want 404 naming it", a, res.StatusCode, strings.Contains(body, "88888"))
	}
	// The chooser tells manifests of one dataset apart: their settings, threshold included.
	if want := "</option>"; strings.Count(body, " t=") < 2 || !strings.Contains(body, want) {
		t.Errorf("the chooser's manifests are not labelled with their settings (t=...):\n%.3000s", body)
	}
}

// The impact chart and the manifest page refuse a grouping the dataset does not have
// (422, naming the choices), as the dashboard's charts refuse a threshold out of range,
// instead of drawing the default under the name asked for.
func TestImpactUnknownGroupRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	for _, path := range []string{"/manifests/%d/impact.svg?group=nope", "/manifests/%d/impact.csv?group=nope", "/manifests/%d?group=nope",
		"/manifests/%d/impact.png?group=meta:nope"} {
		path = fmt.Sprintf(path, m.ID)
		res, body := get(t, f.h, path, f.admin)
		if res.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("GET %s: %d; want 422", path, res.StatusCode)
		}
		if !strings.Contains(body, "want one of source, domain, lang") {
			t.Errorf("GET %s does not name the groupings:\n%.1500s", path, body)
		}
	}
	for _, path := range []string{"/manifests/%d/impact.svg", "/manifests/%d/impact.svg?group=lang", "/manifests/%d?group=domain"} {
		path = fmt.Sprintf(path, m.ID)
		if res, _ := get(t, f.h, path, f.admin); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d; want 200", path, res.StatusCode)
		}
	}
}

// A refused audit request is one action in the audit log, whoever refuses it: the page's
// refusal of a malformed size was logged as "audit", the store's of a size out of range
// as "request an audit".
func TestRefusedActionsOneName(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	appr := f.signIn("approver")
	for _, pairs := range []string{"abc", "0"} { // the page refuses the first, manifests the second
		f.follow(f.do("POST", fmt.Sprintf("/manifests/%d/audit", m.ID), appr, url.Values{"pairs": {pairs}}), appr)
	}
	events, err := f.store.AuditLog(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range events {
		if e.Action != "manifest.refused" {
			continue
		}
		var d struct{ Action string }
		if err := json.Unmarshal([]byte(e.Detail), &d); err != nil {
			t.Fatalf("detail %s: %v", e.Detail, err)
		}
		actions = append(actions, d.Action)
	}
	if len(actions) != 2 || actions[0] != "request an audit" || actions[1] != "request an audit" {
		t.Errorf("refused audit requests are logged as %q; want \"request an audit\" twice", actions)
	}
	// Every form posted to a manifest has its action named.
	chi.Walk(f.h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if method == http.MethodPost && strings.HasPrefix(route, "/manifests/{manifest}/") && !strings.Contains(route, "/dedup-jobs") && refusedActions[route] == "" {
			t.Errorf("POST %s: no action name for its refusals in refusedActions", route)
		}
		return nil
	})
}

// The guard's advice names, in each sentence, the bin it is about: with none of the
// guard bin's pairs left to draw, its heading said "label 8 more pairs around j0" over a
// plan of j0.05-0.1's pairs, and the warning after it, on j0.05-0.1, ended on "those 188
// pairs", which are j0's.
func TestGuardAdviceNamesItsBins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	_, id := f.sweepWithPlan()
	_, body := get(t, f.h, fmt.Sprintf("/sweeps/%d", id), f.admin)
	guard := between(body, `data-testid="guard-plan"`, `data-testid="guard-bins"`)
	m := regexp.MustCompile(`the \d+ labels of (\S+) just below saw none, but up to (\d+) of its pairs`).FindStringSubmatch(guard)
	if m == nil {
		t.Fatalf("no guard advice on the page:\n%.3000s", guard)
	}
	bin, upper := m[1], m[2]
	rows := regexp.MustCompile(`<tr><td>([^<]+)</td><td class="num">\d+</td><td class="num">(\d+)</td></tr>`).FindAllStringSubmatch(
		between(body, `data-testid="guard-bins"`, `</table>`), -1)
	var to []string
	for _, r := range rows {
		if r[2] != "0" {
			to = append(to, r[1])
		}
	}
	if len(to) != 1 || to[0] == bin {
		t.Fatalf("the fixture's guard plan labels %q, not one bin other than the guard's %s", to, bin)
	}
	if want := "more pairs in " + to[0] + ".</strong>"; !strings.Contains(guard, want) {
		t.Errorf("the guard's heading does not say its labels go to %s (%q):\n%s", to[0], want, guard)
	}
	whole := between(body, `data-testid="guard-whole"`, `</p>`)
	if !strings.Contains(whole, "every pair of "+to[0]+" not yet labeled") || !strings.Contains(whole, "the "+upper+" pairs of "+bin+" that could be duplicates") {
		t.Errorf("the warning does not name %s for its pairs and %s for the %s that could be duplicates:\n%s", to[0], bin, upper, whole)
	}
}

// between is the part of s after the first from and before the next to ("" without from).
func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	before, _, _ := strings.Cut(after, to)
	return before
}

// A recommendation (or the closest configuration) that has the same figures under other
// cluster policies says so, naming them: the page named only the first of the tie.
func TestRecommendationNamesItsTies(t *testing.T) {
	t.Parallel()
	found := false
	for _, setup := range []func(f *fixture) (int64, int64){(*fixture).sweepWithPlan, func(f *fixture) (int64, int64) { return f.sweptCorpus(3, "ties") }} {
		f := newFixture(t, 1<<20)
		_, id := setup(f)
		a, err := f.sweeps.Analyze(context.Background(), id, sweep.DefaultTarget)
		if err != nil || a.RecErr != nil {
			t.Fatalf("analysis: %v, %v", err, a.RecErr)
		}
		rs, err := f.sweeps.Results(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		rec := rs[a.Rec.Index].Config
		var tied []string
		for j, r := range rs {
			c := r.Config
			c.Policy = rec.Policy
			if j != a.Rec.Index && c == rec && a.Headlines[j] == a.Headlines[a.Rec.Index] {
				tied = append(tied, policyWords(r.Config.Policy))
			}
		}
		_, body := get(t, f.h, fmt.Sprintf("/sweeps/%d", id), f.admin)
		rec2 := between(body, `data-testid="sweep-recommendation"`, `data-testid="rec-reason"`)
		if len(tied) == 0 {
			if strings.Contains(rec2, "the same figures under") {
				t.Errorf("sweep %d: the recommendation claims a tie it does not have:\n%s", id, rec2)
			}
			continue
		}
		if want := "(the same figures under " + joinList(tied, "and") + ")."; !strings.Contains(rec2, want) {
			t.Errorf("sweep %d: the recommendation (%s) ties under %q; the page does not say %q:\n%s", id, rec.Label(), tied, want, rec2)
		}
		found = true
	}
	if !found {
		t.Error("neither fixture's recommendation ties across cluster policies: the test shows nothing")
	}
}

// Recall reads one way on the dashboard: the recommendation said "estimated recall
// 0.540, 95% interval 0.044–0.591" above a card and a table saying 54.0% and
// 4.4–59.1%. It says the selected configuration's figures as the card does.
func TestRecallOneFormat(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	_, id := f.sweepWithPlan()
	_, body := get(t, f.h, fmt.Sprintf("/sweeps/%d", id), f.admin)
	reason := between(body, `data-testid="rec-reason">`, `<`)
	m := regexp.MustCompile(`recall (\d+\.\d%), 95% interval (\d+\.\d–\d+\.\d%)`).FindStringSubmatch(reason)
	if m == nil {
		t.Fatalf("the recommendation does not write recall as a percentage with its interval: %q", reason)
	}
	// The closest is preselected for show: the card's recall is the reason's.
	card := between(body, `data-testid="sweep-selected"`, `False-removal rate`)
	if !strings.Contains(card, m[1]) || !strings.Contains(card, m[2]) {
		t.Errorf("the reason's recall %s (%s) is not the selected configuration's:\n%s", m[1], m[2], card)
	}
	if regexp.MustCompile(`(?i)recall[^.<]*\b0\.\d{3}\b`).MatchString(body) {
		t.Errorf("recall is still written as a fraction somewhere: %q", regexp.MustCompile(`(?i)recall[^.<]*\b0\.\d{3}\b`).FindString(body))
	}
}
