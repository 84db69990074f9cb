package web

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// The sweep pages through the real router over a real store: the corpus of
// sweep_fixture_test.go imported with its labels, a small sweep started from the form.

// withSweepCorpus imports the corpus and its labels; it returns the campaign's id.
func (f *fixture) withSweepCorpus(c sweepCorpus) int64 {
	f.t.Helper()
	return f.withSweepLabels(c, c.labelsCSV())
}

// withSweepLabels imports the corpus and the labels given; it returns the campaign's id.
func (f *fixture) withSweepLabels(c sweepCorpus, labelsCSV string) int64 {
	f.t.Helper()
	if _, body := f.waitJob(f.upload("/datasets", "sweep.jsonl", c.jsonl(), nil).Header().Get("Location")); !strings.Contains(body, "import-done") {
		f.t.Fatalf("import failed:\n%s", body)
	}
	ctx := context.Background()
	list, _ := f.store.Datasets(ctx)
	if _, err := ingest.Labels(ctx, f.store, strings.NewReader(labelsCSV), "l.csv", ingest.LabelOptions{DatasetID: list[0].ID, Create: true}); err != nil {
		f.t.Fatal(err)
	}
	camps, err := f.store.Campaigns(ctx)
	if err != nil || len(camps) != 1 {
		f.t.Fatalf("campaigns %v, %v", camps, err)
	}
	return camps[0].ID
}

// smallGridForm is the form a person fills for smallGrid.
// sweptCorpus is withSweepCorpus(newSweepCorpus(docs)) with a small grid named name
// swept over it: the campaign and the finished sweep.
func (f *fixture) sweptCorpus(docs int, name string) (campaignID, sweepID int64) {
	f.t.Helper()
	campaignID = f.withSweepCorpus(newSweepCorpus(docs))
	return campaignID, f.startSweep(campaignID, smallGridForm(name))
}

func smallGridForm(name string) url.Values {
	v := defaultGridForm().values()
	v.Set("name", name)
	v.Set("notes", "three thresholds, one representation")
	v.Set("word", "3")
	v.Set("char", "")
	v.Set("k", "64")
	v.Set("from", "0.3")
	v.Set("to", "0.9")
	v.Set("step", "0.2")
	return v
}

// startSweep posts the form as admin, waits for the sweep and returns its id.
func (f *fixture) startSweep(campaignID int64, form url.Values) int64 {
	f.t.Helper()
	rec := f.do("POST", fmt.Sprintf("/campaigns/%d/sweeps", campaignID), f.admin, form)
	loc := rec.Header().Get("Location")
	m := regexp.MustCompile(`^/sweeps/(\d+)`).FindStringSubmatch(loc)
	if rec.Code != http.StatusSeeOther || m == nil {
		f.t.Fatalf("start sweep: %d %s; want 303 to /sweeps/N\n%s", rec.Code, loc, rec.Body.String())
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sw, err := f.sweeps.Wait(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	if sw.State != sweeprun.Done {
		f.t.Fatalf("sweep %d: %s (%s); want done", id, sw.State, sw.Error)
	}
	return id
}

func TestSweepListAndForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	cid := f.withSweepCorpus(newSweepCorpus(4))
	path := fmt.Sprintf("/campaigns/%d/sweeps", cid)

	res, body := get(t, f.h, path, f.admin)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	for _, want := range []string{`data-testid="sweeps-empty"`, `data-testid="sweep-form"`, `value="1-5"`, `value="3-7"`, `value="128, 256"`,
		`value="0.3"`, `value="0.95"`, `value="0.05"`, `value="auto"`, `name="verification" value="estimate" checked`} {
		if !strings.Contains(body, want) {
			t.Errorf("the new-sweep form lacks %s (prefilled with sweep.DefaultGrid)", want)
		}
	}
	if !strings.Contains(body, "with the shapes chosen at each k when it starts") {
		t.Error("the form does not say how the configurations are counted")
	}

	// A refused form comes back with the message naming the field and what was typed.
	bad := smallGridForm("bad")
	bad.Set("word", "3-x")
	loc, body := f.follow(f.do("POST", path, f.admin, bad), f.admin)
	if !strings.HasPrefix(loc, path) || !strings.Contains(body, `data-testid="notice-error"`) || !strings.Contains(body, "word: ") ||
		!strings.Contains(body, `value="3-x"`) {
		t.Errorf("refused form: at %s, want the error naming word and the value kept\n%s", loc, body)
	}

	// A campaign with no label yet: nothing to score, and the form says what to do.
	list0, _ := f.store.Datasets(context.Background())
	empty, err := f.store.EnsureCampaign(context.Background(), list0[0].ID, "unlabeled", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, body = f.follow(f.do("POST", fmt.Sprintf("/campaigns/%d/sweeps", empty.ID), f.admin, smallGridForm("nothing")), f.admin)
	if !strings.Contains(body, `data-testid="notice-error"`) || !strings.Contains(body, "no counted label yet") {
		t.Error("a sweep of a campaign without labels: want an error saying to label pairs first")
	}

	// Started, it is listed with its state and label-set version.
	id := f.startSweep(cid, smallGridForm("small"))
	_, body = get(t, f.h, path, f.admin)
	if !strings.Contains(body, fmt.Sprintf(`href="/sweeps/%d"`, id)) || !strings.Contains(body, `data-state="done"`) {
		t.Errorf("the list does not show sweep %d done", id)
	}
	if strings.Contains(body, `data-testid="labels-changed"`) {
		t.Error("labels changed reported with no label changed")
	}
	// A new label since: both pages offer a re-run that includes it.
	c := newSweepCorpus(4)
	ctx := context.Background()
	list, _ := f.store.Datasets(ctx)
	extra := fmt.Sprintf("a,b,category,duplicate,annotator\n%s,%s,different,no,seed\n", c.ids[1], c.ids[7])
	if _, err := ingest.Labels(ctx, f.store, strings.NewReader(extra), "more.csv", ingest.LabelOptions{DatasetID: list[0].ID, Create: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, fmt.Sprintf("/sweeps/%d", id)} {
		_, body = get(t, f.h, p, f.admin)
		if !strings.Contains(body, `data-testid="labels-changed"`) || !strings.Contains(body, "re-run to include 1 new label") {
			t.Errorf("%s: no \"re-run to include 1 new label\" after a new label", p)
		}
	}
	// The campaign page links to the sweeps for those who run them.
	if _, body := get(t, f.h, fmt.Sprintf("/campaigns/%d", cid), f.admin); !strings.Contains(body, `data-testid="sweeps-link"`) {
		t.Error("the campaign page has no link to its sweeps for an admin")
	}
}

// sweepWithPlan sweeps labels drawn by the studio with one minor edit of eight labeled:
// the bin of minor edits, where every configuration removes documents, is mostly
// unlabeled, so the dashboard gives a labeling plan and recall's guard advice. It returns
// the campaign and the sweep.
func (f *fixture) sweepWithPlan() (campaignID, sweepID int64) {
	f.t.Helper()
	c := newSweepCorpus(8)
	minor := 0
	c.labels = slices.DeleteFunc(c.labels, func(l corpusLabel) bool {
		if l.category != "minor" {
			return false
		}
		minor++
		return minor > 1
	})
	campaignID = f.withSweepLabels(c, c.labelsDesignCSV(50000))
	return campaignID, f.startSweep(campaignID, smallGridForm("design"))
}

// TestSweepDashboardNotEnoughLabels: labels drawn by the studio (pairs of a few
// duplicates, the rest random). Their high bins hold a handful of labels, which cannot
// bound false removals at 1%: the page says so first, names the closest configuration
// without tagging anything "recommended" or preselecting one whose point estimate breaks
// the target, and gives a labeling plan whose form draws exactly its pairs.
func TestSweepDashboardNotEnoughLabels(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	cid, id := f.sweepWithPlan()
	results, err := f.sweeps.Results(context.Background(), id)
	if err != nil || len(results) == 0 {
		t.Fatalf("results: %d, %v", len(results), err)
	}
	for _, r := range results {
		e := r.Dataset
		if e == nil || e.Unit != sweep.FalseRemovalUnit || len(e.Rules) != len(sweep.DefaultRules()) {
			t.Fatalf("configuration %d: dataset estimate %+v; want one per keeper rule", r.Ordinal, e)
		}
		for _, re := range e.Rules {
			if re.FalseRemovalRate.Hi > 1 || re.FalseRemovals.Hi > float64(re.Removals) || re.FalseRemovals.Lo > re.FalseRemovals.Value {
				t.Errorf("configuration %d, %s: false removals %+v over %d removals; want within [0, removals]", r.Ordinal, re.Rule, re.FalseRemovals, re.Removals)
			}
		}
	}
	_, body := get(t, f.h, fmt.Sprintf("/sweeps/%d", id), f.admin)
	for _, want := range []string{`data-testid="rec-unmet"`, `data-testid="label-plan"`, `data-testid="plan-bins"`, `data-testid="plan-draw"`,
		`data-testid="keeper-select"`, `data-testid="model-bins"`, `data-testid="false-removal-definition"`, `data-testid="sel-rules"`} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	if strings.Contains(body, "Start from") || strings.Contains(body, `<span class="badge">recommended</span>`) {
		t.Error("dashboard recommends a configuration as meeting the target")
	}
	// The plan's form draws its counts: posting it adds pairs in those bins.
	m := regexp.MustCompile(`name="counts" value="([0-9,]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no counts in the plan's form")
	}
	want := 0
	for _, n := range strings.Split(m[1], ",") {
		k, _ := strconv.Atoi(n)
		want += k
	}
	pairCount := func() int {
		refs, err := f.store.PairDocs(context.Background(), cid)
		if err != nil {
			t.Fatal(err)
		}
		return len(refs)
	}
	// Recall's guard bin: the bin of J = 0 under the lowest labeled duplicate (j0.05-0.1)
	// saw none in its 9 labels, which cannot rule out a third of its pairs; its pairs
	// cannot be drawn, so the advice asks for the floor bin's and its form draws them
	// (before the plan's form, which asks for the same bin).
	a, err := f.sweeps.Analyze(context.Background(), id, sweep.DefaultTarget)
	if err != nil || a.Guard == nil {
		t.Fatalf("analysis: guard advice %+v, %v; want advice for the guard bin", a.Guard, err)
	}
	for _, want := range []string{`data-testid="guard-plan"`, `data-testid="guard-bins"`, `data-testid="guard-draw"`,
		fmt.Sprintf("label %d more pairs in %s.", a.Guard.More, a.Guard.FloorLabel), "more than all of the duplicates recall counts",
		"No more of j0's pairs can be drawn", `data-testid="guard-whole"`, "That is every pair of j0.05-0.1 not yet labeled"} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	gm := regexp.MustCompile(`(?s)data-testid="guard-draw".*?name="counts" value="([0-9,]+)"`).FindStringSubmatch(body)
	ga := regexp.MustCompile(`<form method="post" action="([^"]+)" class="actions" data-testid="guard-draw"`).FindStringSubmatch(body)
	if gm == nil || ga == nil {
		t.Fatal("no counts or action in the guard's form")
	}
	before := pairCount()
	if rec := f.do(http.MethodPost, ga[1], f.admin, url.Values{"counts": {gm[1]}, "scheme": {"j21"}, "bin": {"-1"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("drawing the guard's plan: %d\n%s", rec.Code, rec.Body.String())
	}
	if got := pairCount() - before; got == 0 || got > a.Guard.More {
		t.Errorf("the guard's draw added %d pairs; it asks for %d", got, a.Guard.More)
	}
	before = pairCount()
	// Posted where the page's form posts (its action was a route that did not exist).
	action := regexp.MustCompile(`<form method="post" action="([^"]+)" class="actions" data-testid="plan-draw"`).FindStringSubmatch(body)
	if action == nil {
		t.Fatal("no action on the plan's form")
	}
	rec := f.do(http.MethodPost, action[1], f.admin, url.Values{"counts": {m[1]}, "scheme": {"j21"}, "bin": {"-1"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("drawing the plan: %d\n%s", rec.Code, rec.Body.String())
	}
	if got := pairCount() - before; got == 0 || got > want {
		t.Errorf("the plan's draw added %d pairs; it asks for %d", got, want)
	}
	// A target the labels can meet gets a recommendation and no plan.
	_, body = get(t, f.h, fmt.Sprintf("/sweeps/%d?target=100", id), f.admin)
	if !strings.Contains(body, "Start from") || strings.Contains(body, `data-testid="label-plan"`) {
		t.Error("at a 100% target the dashboard gives no recommendation, or still plans labels")
	}
}

func TestSweepDashboard(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	cid, id := f.sweptCorpus(4, "small")
	ctx := context.Background()
	results, err := f.sweeps.Results(ctx, id)
	if err != nil || len(results) == 0 {
		t.Fatalf("results: %d, %v", len(results), err)
	}
	page := fmt.Sprintf("/sweeps/%d", id)

	res, body := get(t, f.h, page, f.admin)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", page, res.StatusCode, body)
	}
	// The labeled-pairs basis is said once: the basis paragraph, not again as a note.
	if n := strings.Count(body, "how it was"); n != 1 {
		t.Errorf("GET %s says %d times that no labeled pair records how it was drawn or chosen; want once", page, n)
	}
	for _, want := range []string{`data-testid="sweep-recommendation"`, `data-testid="rec-reason"`, `data-testid="sweep-basis" data-basis="labeled pairs"`,
		`data-testid="sweep-label-version"`, `data-testid="slider"`, `data-testid="propose"`, `data-testid="tradeoff-chart"`,
		`data-testid="scurve-chart"`, `data-testid="category-chart"`, `data-testid="histogram-chart"`, `data-testid="heatmap-chart"`,
		`data-testid="sweep-rerun"`, `data-testid="baseline-row"`, "three thresholds, one representation", "Flagged and skipped pairs are left out"} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %s", want)
		}
	}
	if got := strings.Count(body, `data-testid="config-row"`); got != len(results) {
		t.Errorf("table has %d rows; want %d", got, len(results))
	}

	// Sorting by recall, highest first, server-side.
	_, body = get(t, f.h, page+"?sort=recall&dir=desc", f.admin)
	rows := regexp.MustCompile(`<tr data-config="(\d+)"`).FindAllStringSubmatch(body, -1)
	byOrd := map[int]sweep.Result{}
	for _, r := range results {
		byOrd[r.Ordinal] = r.Result
	}
	prev := 2.0
	for _, m := range rows {
		n, _ := strconv.Atoi(m[1])
		v := byOrd[n].Headline().Recall.Value
		if v > prev {
			t.Errorf("sorted by recall descending, %v follows %v", v, prev)
		}
		prev = v
	}

	// The configuration with the most misses, at a threshold a little higher: its misses
	// are listed with links to their pair pages.
	worst := results[0]
	for _, r := range results {
		if r.Recall.Of-r.Recall.Hits > worst.Recall.Of-worst.Recall.Hits {
			worst = r
		}
	}
	q := fmt.Sprintf("?config=%d&t=0.95", worst.Ordinal)
	_, body = get(t, f.h, page+q, f.admin)
	if !strings.Contains(body, `data-testid="misses"`) || !strings.Contains(body, fmt.Sprintf(`href="/campaigns/%d/pairs/`, cid)) {
		t.Errorf("config %d at 0.95: no misses listed with pair links", worst.Ordinal)
	}
	if !strings.Contains(body, `data-testid="live-threshold">0.95<`) {
		t.Error("the live panel does not show the slider's threshold 0.95")
	}

	// The live fragment alone, as the slider fetches it.
	res, frag := get(t, f.h, page+"/live"+q, f.admin)
	if res.StatusCode != http.StatusOK || !strings.Contains(frag, `id="sweep-live"`) || strings.Contains(frag, "<html") {
		t.Errorf("live fragment: %d, want the fragment only\n%.300s", res.StatusCode, frag)
	}
	// The progress fragment of a finished sweep.
	if res, frag := get(t, f.h, page+"/progress", f.admin); res.StatusCode != http.StatusOK || !strings.Contains(frag, `data-state="done"`) {
		t.Errorf("progress fragment: %d\n%.300s", res.StatusCode, frag)
	}

	// Every chart in every format; SVGs under the SVG policy.
	for _, kind := range []string{"tradeoff", "scurve", "categories", "histogram", "heatmap"} {
		for _, format := range []string{"svg", "png", "csv"} {
			t.Run(kind+"."+format, func(t *testing.T) {
				res, body := get(t, f.h, fmt.Sprintf("%s/charts/%s.%s%s", page, kind, format, q), f.admin)
				if res.StatusCode != http.StatusOK {
					t.Fatalf("%d\n%.300s", res.StatusCode, body)
				}
				ct := res.Header.Get("Content-Type")
				switch format {
				case "svg":
					if ct != "image/svg+xml" || res.Header.Get("Content-Security-Policy") != svgCSP || !strings.Contains(body, "<svg") || strings.Contains(body, "style=") {
						t.Errorf("SVG: %s, CSP %q, inline styles %v", ct, res.Header.Get("Content-Security-Policy"), strings.Contains(body, "style="))
					}
				case "png":
					if ct != "image/png" || !strings.HasPrefix(body, "\x89PNG") {
						t.Errorf("PNG: %s", ct)
					}
				case "csv":
					if recs, err := csv.NewReader(strings.NewReader(body)).ReadAll(); err != nil || len(recs) < 2 {
						t.Errorf("CSV: %d records, %v", len(recs), err)
					}
				}
			})
		}
	}

	// All results as CSV.
	res, body = get(t, f.h, page+"/results.csv", f.admin)
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if res.StatusCode != http.StatusOK || err != nil || len(recs) != len(results)+1 {
		t.Errorf("results.csv: %d, %d records (%v); want %d", res.StatusCode, len(recs), err, len(results)+1)
	}

	// Bad choices name what is wrong.
	for _, tc := range []struct {
		query  string
		status int
	}{
		{"?config=99999", http.StatusNotFound},
		{"?config=x", http.StatusUnprocessableEntity},
		{"?t=2", http.StatusUnprocessableEntity},
		{"?target=lots", http.StatusUnprocessableEntity},
		{"?target=NaN", http.StatusUnprocessableEntity},
		{"?target=%20nan", http.StatusUnprocessableEntity},
	} {
		if res, _ := get(t, f.h, page+tc.query, f.admin); res.StatusCode != tc.status {
			t.Errorf("GET %s%s: %d; want %d", page, tc.query, res.StatusCode, tc.status)
		}
	}
	if res, _ := get(t, f.h, "/sweeps/999", f.admin); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /sweeps/999: %d; want 404", res.StatusCode)
	}
	// Starting takes the limits renaming has: a name over 200 characters starts nothing.
	before, _ := f.sweeps.List(context.Background(), cid)
	long := smallGridForm(strings.Repeat("é", 201))
	rec := f.do("POST", fmt.Sprintf("/campaigns/%d/sweeps", cid), f.admin, long)
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "#new") {
		t.Errorf("start with a 201-character name: %d %s; want back to the form", rec.Code, rec.Header().Get("Location"))
	}
	if after, _ := f.sweeps.List(context.Background(), cid); len(after) != len(before) {
		t.Errorf("a 201-character name started a sweep (%d -> %d)", len(before), len(after))
	}

	// A target nobody meets says so.
	_, body = get(t, f.h, page+"?target=0", f.admin)
	if !strings.Contains(body, "No configuration meets the target") && !strings.Contains(body, "Start from") {
		t.Error("target 0: no recommendation line")
	}
}

// A running sweep's box says how far it is, and polls; a stopped one says why.
func TestSweepProgressView(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	srv := &server{sweeps: f.sweeps, now: func() time.Time { return time.Date(2026, 1, 1, 12, 0, 30, 0, time.UTC) }}
	rep, _ := newSweepCorpus(3).report(t)
	var rs []sweeprun.Result
	for i, r := range rep.Results[:5] {
		rs = append(rs, sweeprun.Result{Ordinal: i, Result: r})
	}
	started := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		sw    sweeprun.Sweep
		wants []string
	}{
		{sweeprun.Sweep{ID: 7, State: sweeprun.Running, Done: 5, Total: 20, StartedAt: started},
			[]string{`data-state="running"`, `data-poll="/sweeps/7/progress"`, "5 of 20", "(25%)", "30s so far", "<progress", rep.Results[4].Config.Label()}},
		{sweeprun.Sweep{ID: 7, State: sweeprun.Interrupted, Done: 5, Total: 20, StartedAt: started},
			[]string{`data-state="interrupted"`, "5 of 20 configurations scored"}},
		{sweeprun.Sweep{ID: 7, State: sweeprun.Failed, Done: 0, Total: 20, Error: "the sweep failed on an internal error"},
			[]string{`data-testid="sweep-error"`, "internal error"}},
	} {
		var b strings.Builder
		if err := templates.SweepProgressFragment(srv.progressView(tc.sw, rs)).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.wants {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s sweep: the progress box lacks %q\n%s", tc.sw.State, w, b.String())
			}
		}
		if running := strings.Contains(b.String(), "<progress"); running != (tc.sw.State == sweeprun.Running) {
			t.Errorf("%s sweep: progress bar shown %v", tc.sw.State, running)
		}
	}
}

// Looking changes nothing: every GET of a finished sweep (page, fragments, charts, CSV)
// as every role leaves the database as it was (sessions aside).
func TestSweepGETsChangeNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	cid, id := f.sweptCorpus(3, "small")
	ctx := context.Background()
	results, _ := f.sweeps.Results(ctx, id)
	q := fmt.Sprintf("?config=%d&t=0.55", results[len(results)-1].Ordinal)
	var paths []string
	for _, p := range []string{"", "/progress", "/live", "/results.csv", "/charts/tradeoff.svg", "/charts/scurve.png", "/charts/histogram.csv",
		"/charts/categories.svg", "/charts/heatmap.svg"} {
		paths = append(paths, fmt.Sprintf("/sweeps/%d%s%s", id, p, q))
	}
	paths = append(paths, fmt.Sprintf("/campaigns/%d/sweeps", cid))
	for _, role := range []string{"annotator", "reviewer", "approver", "admin"} {
		c := f.signIn(role)
		for _, path := range paths {
			before, err := f.store.Fingerprint(ctx, "sessions")
			if err != nil {
				t.Fatal(err)
			}
			if res, _ := get(t, f.h, path, c); res.StatusCode != http.StatusOK {
				t.Errorf("GET %s as %s: %d", path, role, res.StatusCode)
			}
			if after, _ := f.store.Fingerprint(ctx, "sessions"); after != before {
				t.Errorf("GET %s as %s changed the database", path, role)
			}
		}
	}
}

func TestSweepActions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	_, id := f.sweptCorpus(3, "small")
	page := fmt.Sprintf("/sweeps/%d", id)

	// A finished sweep: nothing to cancel or resume; the notice says why.
	for _, action := range []string{"cancel", "resume"} {
		loc, body := f.follow(f.do("POST", page+"/"+action, f.admin, url.Values{}), f.admin)
		if !strings.HasPrefix(loc, page) || !strings.Contains(body, `data-testid="notice-error"`) {
			t.Errorf("%s of a finished sweep: at %s, want an error notice", action, loc)
		}
	}
	// Name and notes are editable; an empty name is refused, naming the field.
	_, body := f.follow(f.do("POST", page+"/notes", f.admin, url.Values{"name": {"renamed"}, "notes": {"tried k=64 only"}}), f.admin)
	if !strings.Contains(body, "<h1>Sweep: renamed</h1>") || !strings.Contains(body, "tried k=64 only") {
		t.Error("name and notes not saved")
	}
	_, body = f.follow(f.do("POST", page+"/notes", f.admin, url.Values{"name": {" "}, "notes": {"kept"}}), f.admin)
	if !strings.Contains(body, `data-testid="notice-error"`) || !strings.Contains(body, "name: give the sweep a name") || !strings.Contains(body, ">kept</textarea>") {
		t.Error("an empty name: want the error naming the field and the notes kept")
	}
	// Re-run starts a new sweep of the same grid.
	rec := f.do("POST", page+"/rerun", f.admin, url.Values{})
	loc := rec.Header().Get("Location")
	m := regexp.MustCompile(`^/sweeps/(\d+)`).FindStringSubmatch(loc)
	if rec.Code != http.StatusSeeOther || m == nil || m[1] == strconv.FormatInt(id, 10) {
		t.Fatalf("rerun: %d %s; want a redirect to a new sweep", rec.Code, loc)
	}
	rid, _ := strconv.ParseInt(m[1], 10, 64)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sw, err := f.sweeps.Wait(ctx, rid)
	if err != nil || sw.State != sweeprun.Done || sw.Total == 0 {
		t.Fatalf("re-run: %+v, %v", sw, err)
	}
	orig, _ := f.sweeps.Get(ctx, id)
	if sw.Total != orig.Total {
		t.Errorf("re-run has %d configurations; the original %d", sw.Total, orig.Total)
	}
}

// Roles without the sweep permission see the sweeps but not the form, and their POSTs
// are refused; labels stay blind for annotators.
func TestSweepPermissions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	cid, id := f.sweptCorpus(3, "small")
	for _, role := range []string{"annotator", "approver", "reviewer"} {
		t.Run(role, func(t *testing.T) {
			c := f.signIn(role)
			runs := role == "reviewer"
			_, list := get(t, f.h, fmt.Sprintf("/campaigns/%d/sweeps", cid), c)
			if strings.Contains(list, `data-testid="sweep-form"`) != runs || strings.Contains(list, `data-testid="who-runs"`) == runs {
				t.Errorf("%s: form shown %v, who-runs shown %v; want the form only for roles that run sweeps", role,
					strings.Contains(list, `data-testid="sweep-form"`), strings.Contains(list, `data-testid="who-runs"`))
			}
			_, camp := get(t, f.h, fmt.Sprintf("/campaigns/%d", cid), c)
			if strings.Contains(camp, `data-testid="sweeps-link"`) != runs || strings.Contains(camp, `data-testid="who-sweeps"`) == runs {
				t.Errorf("%s: the campaign page's sweeps link is wrong for the role", role)
			}
			rec := f.do("POST", fmt.Sprintf("/campaigns/%d/sweeps", cid), c, smallGridForm("mine"))
			if runs != (rec.Code == http.StatusSeeOther) || !runs && rec.Code != http.StatusForbidden {
				t.Errorf("%s POST a sweep: %d", role, rec.Code)
			}
			for _, action := range []string{"cancel", "resume", "rerun"} {
				if rec := f.do("POST", fmt.Sprintf("/sweeps/%d/%s", id, action), c, url.Values{}); !runs && rec.Code != http.StatusForbidden {
					t.Errorf("%s POST %s: %d; want 403", role, action, rec.Code)
				}
			}
			res, dash := get(t, f.h, fmt.Sprintf("/sweeps/%d", id), c)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s GET the dashboard: %d", role, res.StatusCode)
			}
			if strings.Contains(dash, `data-testid="sweep-rerun"`) != runs {
				t.Errorf("%s: re-run button shown %v", role, !runs)
			}
			blind := role == "annotator"
			if strings.Contains(dash, `data-testid="outcomes-blind"`) != blind {
				t.Errorf("%s: labeled examples hidden %v; want hidden only for annotators", role, !blind)
			}
		})
	}
	// Wait for the reviewer's sweep, so the store closes after it.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	list, _ := f.sweeps.List(ctx, cid)
	for _, sw := range list {
		f.sweeps.Wait(ctx, sw.ID)
	}
}

// TestSweepFormGuards: the form carries a one-time token, so the same form posted twice
// (a double click, a replayed POST) starts one sweep; a grid over the signature limit is
// refused on the form naming the field and the limit; a representation the spec parser
// refuses is named by its field with what is allowed, not Go's parser text.
func TestSweepFormGuards(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	cid := f.withSweepCorpus(newSweepCorpus(4))
	path := fmt.Sprintf("/campaigns/%d/sweeps", cid)
	_, body := get(t, f.h, path, f.admin)
	m := regexp.MustCompile(`name="token" value="([0-9a-f]{32})"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the new-sweep form has no one-time token")
	}
	form := smallGridForm("once")
	form.Set("token", m[1])
	first := f.do("POST", path, f.admin, form)
	again := f.do("POST", path, f.admin, form)
	if first.Code != http.StatusSeeOther || again.Code != http.StatusSeeOther {
		t.Fatalf("posts answered %d and %d; want 303 twice", first.Code, again.Code)
	}
	loc1, loc2 := first.Header().Get("Location"), again.Header().Get("Location")
	if strings.Split(loc1, "?")[0] != strings.Split(loc2, "?")[0] {
		t.Errorf("the second post led to %s, the first to %s; want the same sweep", loc2, loc1)
	}
	if _, body := f.follow(again, f.admin); !strings.Contains(body, "This form was sent already") {
		t.Error("the second post does not say the form was sent already")
	}
	if list, _ := f.sweeps.List(context.Background(), cid); len(list) != 1 {
		t.Errorf("%d sweeps after posting one form twice; want 1", len(list))
	}
	if _, body = get(t, f.h, path, f.admin); strings.Contains(body, `value="`+m[1]+`"`) {
		t.Error("the form shown again reuses the token that was spent")
	}

	// Over the signature limit (lowered to what the corpus cannot reach with 2 char sizes at k=4096).
	f.sweeps.SetVolumeLimit(100_000)
	big := smallGridForm("big")
	big.Set("char", "3-4")
	big.Set("k", "4096")
	_, body = f.follow(f.do("POST", path, f.admin, big), f.admin)
	if !strings.Contains(body, `data-testid="notice-error"`) || !strings.Contains(body, "k: ") || !strings.Contains(body, "over the limit of 100,000") ||
		!strings.Contains(body, "documents × representations × k") {
		t.Errorf("a grid over the signature limit: want an error naming k and the limit\n%s", body)
	}
	f.sweeps.SetVolumeLimit(0)

	// A seed that is not a number.
	bad := smallGridForm("bad seed")
	bad.Set("seed", "abc")
	_, body = f.follow(f.do("POST", path, f.admin, bad), f.admin)
	if !strings.Contains(body, "seed: ") || !strings.Contains(body, "is not a whole number from 0 to 18446744073709551615") || strings.Contains(body, "strconv") {
		t.Errorf("a bad seed: want the field and the allowed values, no Go error text\n%s", body)
	}
	if list, _ := f.sweeps.List(context.Background(), cid); len(list) != 1 {
		t.Errorf("%d sweeps after two refused forms; want 1", len(list))
	}
	f.sweeps.Wait(context.Background(), 1)
}

// TestSweepFormConcurrentPosts: ten different forms posted at once make ten sweeps that
// run one at a time (the others say "queued, position N"); one form posted ten times at
// once makes one sweep.
func TestSweepFormConcurrentPosts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	cid := f.withSweepCorpus(newSweepCorpus(4))
	path := fmt.Sprintf("/campaigns/%d/sweeps", cid)
	post := func(token string) *httptest.ResponseRecorder {
		form := smallGridForm("parallel " + token)
		form.Set("token", token)
		return f.do("POST", path, f.admin, form)
	}
	var wg sync.WaitGroup
	codes := make([]int, 10)
	for i := range 10 {
		wg.Go(func() { codes[i] = post("same-form").Code })
	}
	wg.Wait()
	list, _ := f.sweeps.List(context.Background(), cid)
	if len(list) != 1 {
		t.Fatalf("one form posted 10 times at once made %d sweeps (answers %v); want 1", len(list), codes)
	}
	for i := range 10 {
		wg.Go(func() { codes[i] = post(fmt.Sprintf("form-%d", i)).Code })
	}
	wg.Wait()
	list, _ = f.sweeps.List(context.Background(), cid)
	if len(list) != 11 {
		t.Fatalf("10 forms made %d more sweeps (answers %v); want 10", len(list)-1, codes)
	}
	queuedSeen := false
	for {
		list, _ = f.sweeps.List(context.Background(), cid)
		running, finished := 0, 0
		for _, sw := range list {
			switch sw.State {
			case sweeprun.Running:
				running++
			case sweeprun.Done:
				finished++
			case sweeprun.Queued:
				if !queuedSeen {
					if _, body := get(t, f.h, fmt.Sprintf("/sweeps/%d", sw.ID), f.admin); strings.Contains(body, "Queued, position ") {
						queuedSeen = true
					}
				}
			}
		}
		if running > 1 {
			t.Fatalf("%d sweeps running at once; want one at a time", running)
		}
		if finished == len(list) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !queuedSeen {
		t.Error("no queued sweep's page said \"Queued, position N\"")
	}
}

// TestSweepRerunPostedTwice: the re-run form carries a one-time token, so the same form
// posted twice (a double click) makes one re-run, and the second answer leads to it.
func TestSweepRerunPostedTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	cid, id := f.sweptCorpus(3, "first")
	_, page := get(t, f.h, fmt.Sprintf("/sweeps/%d", id), f.admin)
	m := regexp.MustCompile(`action="/sweeps/\d+/rerun" class="row"><input type="hidden" name="token" value="([0-9a-f]{32})"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the re-run form carries no one-time token:\n%s", page)
	}
	form := url.Values{"token": {m[1]}}
	first := f.do("POST", fmt.Sprintf("/sweeps/%d/rerun", id), f.admin, form)
	second := f.do("POST", fmt.Sprintf("/sweeps/%d/rerun", id), f.admin, form)
	list, _ := f.sweeps.List(context.Background(), cid)
	if len(list) != 2 {
		t.Fatalf("%d sweeps after one re-run form posted twice; want 2 (the sweep and one re-run)", len(list))
	}
	if first.Code != http.StatusSeeOther || second.Code != http.StatusSeeOther || first.Header().Get("Location") == "" ||
		strings.Split(first.Header().Get("Location"), "?")[0] != strings.Split(second.Header().Get("Location"), "?")[0] {
		t.Errorf("answers %d %q and %d %q; want both to lead to the one re-run", first.Code, first.Header().Get("Location"),
			second.Code, second.Header().Get("Location"))
	}
	for _, sw := range list {
		f.sweeps.Wait(context.Background(), sw.ID)
	}
}

// A keeper rule the dashboard cannot read is refused as its other parameters are: 422
// naming the parameter and what a keeper rule may be (not the package's error chain,
// "keeper: cluster: rule: unknown criterion"; nor a 400 unlike target=, t= or page=).
func TestSweepDashboardBadKeeper(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	id := f.startSweep(f.withSweepCorpus(newSweepCorpus(4)), smallGridForm("small"))
	for _, tc := range []struct{ keeper, want string }{
		{"bogus", `keeper: &#34;bogus&#34;: unknown criterion &#34;bogus&#34;; a keeper rule is criteria joined by &gt;`},
		{"source(", `keeper: &#34;source(&#34;: unclosed ( in &#34;source(&#34;; a keeper rule is`},
	} {
		t.Run(tc.keeper, func(t *testing.T) {
			res, body := get(t, f.h, fmt.Sprintf("/sweeps/%d?keeper=%s", id, url.QueryEscape(tc.keeper)), f.admin)
			if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, tc.want) ||
				!strings.Contains(body, "longest, shortest, earliest, source(a,b,…), language(en,de,…)") || strings.Contains(body, "cluster:") {
				t.Errorf("keeper=%s: %d; want 422 saying %s and the rules\n%s", tc.keeper, res.StatusCode, tc.want, body)
			}
		})
	}
}
