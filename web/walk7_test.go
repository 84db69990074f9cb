package web

import (
	"context"
	"fmt"
	"html"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
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

// The guard advice's warning says what is true of its plan: "That is every pair of X not
// yet labeled" only when all its labels are X's; when other bins take some (the walk's
// 14,780 labels, 9,545 of them in j0-0.05), it "includes" X's, with how many.
func TestGuardWholeSaysWhatIsTrue(t *testing.T) {
	t.Parallel()
	bin := func(label string, more int, drawable int64) sweep.PlanBin {
		return sweep.PlanBin{Label: label, More: more, Drawable: drawable}
	}
	for _, tc := range []struct {
		name string
		plan []sweep.PlanBin
		want string
	}{
		{"one bin, all of it", []sweep.PlanBin{bin("j0-0.05", 0, 0), bin("j0.05-0.1", 312, 312)}, "That is every pair of j0.05-0.1 not yet labeled"},
		{"one bin, part of it", []sweep.PlanBin{bin("j0.05-0.1", 312, 5000)}, ""},
		{"several bins, all of one", []sweep.PlanBin{bin("j0-0.05", 9545, 400000), bin("j0.05-0.1", 5235, 5235)},
			"That includes every pair of j0.05-0.1 not yet labeled (5,235 of the 14,780)"},
		{"several bins, all of each", []sweep.PlanBin{bin("j0-0.05", 40, 40), bin("j0.05-0.1", 5235, 5235)},
			"That is every pair of j0-0.05 and j0.05-0.1 not yet labeled"},
		{"several bins, part of each", []sweep.PlanBin{bin("j0-0.05", 40, 400), bin("j0.05-0.1", 52, 5235)}, ""},
	} {
		g := sweep.GuardAdvice{Label: "j0-0.05", FloorLabel: "j0.05-0.1", Plan: tc.plan}
		for _, b := range tc.plan {
			g.More += b.More
		}
		if got := guardView(g, sweepData{}, 1).Whole; got != tc.want {
			t.Errorf("%s: %q; want %q", tc.name, got, tc.want)
		}
	}
	// Through the page: the fixture's guard plan takes every pair of one bin.
	f := newFixture(t, 1<<20)
	_, id := f.sweepWithPlan()
	_, body := get(t, f.h, fmt.Sprintf("/sweeps/%d", id), f.admin)
	if whole := between(body, `data-testid="guard-whole"`, `</p>`); !strings.Contains(whole, "That is every pair of j0.05-0.1 not yet labeled. Without them,") {
		t.Errorf("the dashboard's warning does not say the plan is every pair of j0.05-0.1:\n%s", whole)
	}
}

// The sweeps list shows the newest maxSweepsListed and says how many older ones it leaves
// out, with a link to the next page (?page=, read as the dashboard reads its page): the
// list dropped them without a word.
func TestSweepListPagesOlderSweeps(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	cid, first := f.sweptCorpus(3, "oldest")
	ctx := context.Background()
	rows, err := f.store.Sweeps(ctx, cid)
	if err != nil || len(rows) != 1 {
		t.Fatalf("sweeps: %d, %v", len(rows), err)
	}
	extra := maxSweepsListed + 4 // queued copies, never run: the list shows them as queued
	for i := range extra {
		if _, err := f.store.CreateSweep(ctx, db.NewSweep{CampaignID: cid, Name: fmt.Sprintf("copy %d", i), Grid: rows[0].Grid,
			Total: rows[0].Total, LabelVersion: rows[0].LabelVersion, Labels: "[]"}, "test"); err != nil {
			t.Fatal(err)
		}
	}
	list := fmt.Sprintf("/campaigns/%d/sweeps", cid)
	oldest := fmt.Sprintf(`href="/sweeps/%d"`, first)
	_, body := get(t, f.h, list, f.admin)
	if n := strings.Count(body, `data-testid="sweep-item"`); n != maxSweepsListed {
		t.Errorf("the first page lists %d sweeps; want %d", n, maxSweepsListed)
	}
	if strings.Contains(body, oldest) {
		t.Error("the first page lists the oldest sweep")
	}
	for _, want := range []string{"5 older sweeps are not listed here", fmt.Sprintf(`href="%s?page=2"`, list),
		fmt.Sprintf("sweeps 1–%d of %d, newest first", maxSweepsListed, extra+1)} {
		if !strings.Contains(body, want) {
			t.Errorf("the first page does not say %q", want)
		}
	}
	for _, page := range []string{"2", "9"} { // past the last: the last
		_, body = get(t, f.h, list+"?page="+page, f.admin)
		if n := strings.Count(body, `data-testid="sweep-item"`); n != 5 || !strings.Contains(body, oldest) {
			t.Errorf("page %s lists %d sweeps (the oldest: %v); want the 5 oldest", page, n, strings.Contains(body, oldest))
		}
		if !strings.Contains(body, fmt.Sprintf(`href="%s" rel="prev"`, list)) || strings.Contains(body, `data-testid="sweeps-older"`) {
			t.Errorf("page %s does not link back to the newest sweeps alone", page)
		}
	}
	for _, page := range []string{"0", "-1", "-0", "abc", "%2B2", "2.0"} {
		res, body := get(t, f.h, list+"?page="+page, f.admin)
		v, _ := url.QueryUnescape(page)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, htmlText(fmt.Sprintf("%q is not a page number", v))) {
			t.Errorf("GET ?page=%s: %d; want 422 saying it is not a page number", page, res.StatusCode)
		}
	}
}

// A keeper rule the dashboard cannot read is a 422 naming the parameter, as target=, t=,
// config= and page= are (it was a 400), on the dashboard and on its fragments and charts;
// and "-0" is refused by every number parameter, as "+0" is (config= and target= read
// it as 0, page= refused it).
func TestSweepQueryRefusalsOneStatus(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	_, id := f.sweptCorpus(3, "refusals")
	dash := fmt.Sprintf("/sweeps/%d", id)
	for _, tc := range []struct{ path, want string }{
		{dash + "?keeper=nope", `keeper: "nope": unknown criterion "nope"; a keeper rule is criteria joined by >`},
		{dash + "/live?keeper=nope", `keeper: "nope": unknown criterion`},
		{dash + "/charts/scurve.svg?keeper=nope", `keeper: "nope": unknown criterion`},
		{dash + "?config=-0", `config: "-0" is not a configuration number`},
		{dash + "?target=-0", `target: "-0": want a percentage from 0 to 100`},
		{dash + "?target=-0.0", `target: "-0.0": want a percentage from 0 to 100`},
		{dash + "?page=-0", `page: "-0" is not a page number`},
		{dash + "?t=-0", `"-0": want a number in (0, 1]`},
		{"/shape.csv?bands=20&rows=-0", `"-0" is not a whole number between 1 and 4096`},
	} {
		res, body := get(t, f.h, tc.path, f.admin)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, htmlText(tc.want)) {
			t.Errorf("GET %s: %d; want 422 saying %s\n%.400s", tc.path, res.StatusCode, tc.want, body)
		}
	}
	for _, path := range []string{dash + "?config=0", dash + "?target=0", dash + "?keeper=longest", dash + "?page=1"} {
		if res, _ := get(t, f.h, path, f.admin); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d; want 200", path, res.StatusCode)
		}
	}
	for s, want := range map[string]bool{"0": true, "-1": true, "-0.5": true, "-10": true, "0.0": true, "-0": false, "-00": false, "-0.0": false, "-.0": false, "-": false} {
		if got := plainNumber(s, true); got != want {
			t.Errorf("plainNumber(%q) = %v; want %v", s, got, want)
		}
	}
}

// A comparison the diff page cannot make (an id missing or malformed, or a manifest with
// itself) is a 422 that shows the form choosing two manifests and the way back to the
// manifests list, instead of a dead end; two different manifests compare as before.
func TestDiffRefusalOffersAChoice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	// No manifest, then one: the page says so in words ("There 0 are fewer than two
	// manifests" before) and what to do.
	tooFew := func(want string) {
		t.Helper()
		res, body := get(t, f.h, "/manifests/diff", f.admin)
		if res.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET /manifests/diff: %d; want 200 saying %q:\n%.2000s", res.StatusCode, want, body)
		}
	}
	tooFew("There is no manifest yet: run a configuration")
	m := f.withRun(chainRun)
	tooFew("There is one manifest: nothing to compare it with yet.")
	other := f.runOn(m.DatasetID, chainRun, "reviewer")
	a, b := itoa64(m.ID), itoa64(other.ID)
	// Without a query the page is the chooser, no error, the two latest chosen (older first).
	res, body := get(t, f.h, "/manifests/diff", f.admin)
	if res.StatusCode != http.StatusOK || strings.Contains(body, "Choose two manifests to compare:") ||
		!strings.Contains(body, `<option value="`+a+`" selected>`) || !strings.Contains(body, `data-testid="diff-form"`) {
		t.Errorf("GET /manifests/diff: %d; want 200, the chooser with no error and manifest %s first:\n%.3000s", res.StatusCode, a, body)
	}
	for _, tc := range []struct{ query, want string }{
		{"?a=" + a, "Choose two manifests to compare: b is missing."},
		{"?a=abc&b=" + b, "Choose two manifests to compare: a is not a manifest ID (a whole number from 1)."},
		{"?a=" + a + "&b=" + a, "Choose two different manifests to compare: a and b are both manifest " + a + "."},
	} {
		path := "/manifests/diff" + tc.query
		res, body := get(t, f.h, path, f.admin)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s: %d; want 422 saying %q", path, res.StatusCode, tc.want)
		}
		for _, want := range []string{`data-testid="diff-form"`, `<select name="a">`, `<select name="b">`, `href="/manifests" data-testid="diff-manifests"`,
			`data-testid="whoami"`} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: the page lacks %s", path, want)
			}
		}
		if strings.Contains(body, `data-testid="diff-entered"`) {
			t.Errorf("GET %s shows a comparison", path)
		}
	}
	// The form keeps the id that was given: a=M&b=M has M chosen in the first list.
	_, body = get(t, f.h, "/manifests/diff?a="+a+"&b="+a, f.admin)
	if !strings.Contains(body, `<option value="`+a+`" selected>`) {
		t.Errorf("the chooser does not keep manifest %s chosen", a)
	}
	if res, body := get(t, f.h, "/manifests/diff?a="+a+"&b="+b, f.admin); res.StatusCode != http.StatusOK || !strings.Contains(body, `data-testid="diff-entered"`) {
		t.Errorf("GET /manifests/diff?a=%s&b=%s: %d; want the comparison", a, b, res.StatusCode)
	}
}

// A run post that lacks one of the run's settings is refused naming it, back on the form
// as every refused run is, and starts nothing: a post of role and name alone made a
// manifest of defaults nobody chose. The form as the browser sends it (every field,
// prefilled) still runs.
func TestRunPostNeedsItsSettings(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ds := f.chainDataset()
	rev := f.signIn("reviewer")
	path := fmt.Sprintf("/datasets/%d/runs", ds)
	ctx := context.Background()
	manifestsNow := func() int {
		list, err := f.store.Manifests(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	for _, tc := range []struct {
		name string
		form url.Values
		want string
	}{
		{"role and name", url.Values{"role": {"reviewer"}, "name": {"x"}}, "spec: missing"},
		{"no threshold", func() url.Values { v := maps.Clone(chainRun); v.Del("threshold"); return v }(), "threshold: missing"},
		{"blank bands", chainRunWith("bands", " "), "bands: missing"},
		{"no keeper", func() url.Values { v := maps.Clone(chainRun); v.Del("keeper"); return v }(), "keeper: missing"},
	} {
		rec := f.do("POST", path, rev, tc.form)
		loc, body := f.follow(rec, rev)
		if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, path+"/new?notice=") || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d to %s; want the form saying %q", tc.name, rec.Code, loc, tc.want)
		}
	}
	if n := manifestsNow(); n != 0 {
		t.Fatalf("refused posts made %d manifests", n)
	}
	// The form as a browser sends it: its inputs' values and its selects' chosen options.
	_, page := get(t, f.h, path+"/new", rev)
	form := between(page, `data-testid="run-form"`, `</form>`)
	sent := url.Values{}
	for _, m := range regexp.MustCompile(`<input[^>]* name="([a-z]+)"[^>]* value="([^"]*)"`).FindAllStringSubmatch(form, -1) {
		sent.Set(m[1], html.UnescapeString(m[2]))
	}
	for _, sel := range regexp.MustCompile(`(?s)<select name="([a-z]+)".*?</select>`).FindAllStringSubmatch(form, -1) {
		opt := regexp.MustCompile(`<option value="([^"]*)" selected>`).FindStringSubmatch(sel[0])
		if opt == nil {
			opt = regexp.MustCompile(`<option value="([^"]*)"`).FindStringSubmatch(sel[0])
		}
		sent.Set(sel[1], opt[1])
	}
	for _, name := range append(slices.Clone(runSettings), "token", "campaign", "approvals") {
		if !sent.Has(name) {
			t.Errorf("the run form does not send %s", name)
		}
	}
	sent.Set("approvals", "1")
	if rec := f.do("POST", path, rev, sent); rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/runs/") {
		t.Errorf("the form as sent: %d to %s; want a run", rec.Code, rec.Header().Get("Location"))
	}
}

// The start page's shape agrees with its numbers: "128 bands × 1 row", not "1 rows".
func TestShapeWordsAgree(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	tags := regexp.MustCompile(`<[^>]+>`)
	for _, tc := range []struct{ query, want string }{
		{"?threshold=0", "128 bands × 1 row"},
		{"?threshold=0.8", " bands × "},
	} {
		_, body := get(t, f.h, "/"+tc.query, f.admin)
		text := strings.Join(strings.Fields(tags.ReplaceAllString(between(body, `<p class="big">`, `</p>`), " ")), " ")
		if !strings.Contains(text, tc.want) || strings.Contains(text, " 1 rows") || strings.Contains(text, " 1 bands") {
			t.Errorf("GET /%s: the shape reads %q; want %q", tc.query, text, tc.want)
		}
	}
}

// A form declared over the body limit is refused (413) on the usual page, with the
// navigation and the name of who is signed in, and nothing saved; it was a bare page.
func TestFormTooLargeKeepsTheLayout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	ann := f.signIn("annotator")
	big := url.Values{"category": {"exact"}, "note": {strings.Repeat("n", 2<<20)}}.Encode()
	rec := f.postBody("/campaigns/1/pairs/1/label", ann, strings.NewReader(big), int64(len(big)))
	body := rec.Body.String()
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "The form is larger than the limit of 1024 KiB: nothing was saved.") {
		t.Fatalf("declared over the limit: %d\n%.500s", rec.Code, body)
	}
	for _, want := range []string{`<span data-testid="whoami">annotator</span>`, `data-testid="logout"`, "<nav", `href="/"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the 413 page lacks %s", want)
		}
	}
}

// The cluster list refuses a reason or grouping it does not offer, naming the choices, as
// the manifest page refuses an unknown grouping: it ignored them and showed the whole
// list under the filter's heading. An empty choice is "any", as the form sends it.
func TestClusterListUnknownFilterRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	for q, want := range map[string]string{"group=nope&value=x": "want one of source, domain, lang", "group=%ff": "want one of source, domain, lang",
		"reason=fuzzy": "want one of exact, near"} {
		path := fmt.Sprintf("/manifests/%d/clusters?%s", m.ID, q)
		res, body := get(t, f.h, path, f.admin)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d; want 422 saying %q:\n%.1200s", path, res.StatusCode, want, body)
		}
	}
	for _, q := range []string{"", "reason=&group=&value=", "reason=near&group=lang&value=en", "group=source&value=", "pending=1"} {
		path := fmt.Sprintf("/manifests/%d/clusters?%s", m.ID, q)
		if res, _ := get(t, f.h, path, f.admin); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d; want 200", path, res.StatusCode)
		}
	}
}

// A sweep on the dataset basis states what its estimates assume once: in the notes under
// the label counts, not again above the bins' table (walk 8).
func TestModelAssumptionSaidOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	_, id := f.sweepWithPlan()
	path := fmt.Sprintf("/sweeps/%d", id)
	res, body := get(t, f.h, path, f.admin)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `data-testid="model-bins"`) {
		t.Fatalf("GET %s: %d, bins table %v", path, res.StatusCode, strings.Contains(body, `data-testid="model-bins"`))
	}
	if n := strings.Count(body, html.EscapeString(sweep.ModelAssumption[:60])); n != 1 {
		t.Errorf("GET %s states the model's assumption %d times; want once", path, n)
	}
}

// Counts of a thousand or more carry their separator wherever a page writes them (walk 8:
// "1000 Monte Carlo replicates" beside "1,764 pairs").
func TestBasisSentenceThousands(t *testing.T) {
	t.Parallel()
	s := basisSentence(&sweep.Model{Replicates: 1000, Pairs: 1764, Basis: "the studio's draws"})
	if !strings.Contains(s, "1,000 Monte Carlo replicates") {
		t.Errorf("basisSentence = %q; want 1,000 Monte Carlo replicates", s)
	}
}
