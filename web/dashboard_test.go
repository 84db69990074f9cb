package web

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Issue 27's dashboard sentences: a sweep that has its turn is starting, not "queued
// until the sweep before it finishes" (there was none); a queued one says its place;
// no time known says no time (the run page said "starting , 0s so far.").
func TestProgressSentences(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p     templates.SweepProgress
		phase string
		want  string
	}{
		{templates.SweepProgress{State: string(sweeprun.Queued)}, "queued", "Starting: reading the labels and the documents."},
		{templates.SweepProgress{State: string(sweeprun.Queued), Elapsed: "2s"}, "queued", "Starting: reading the labels and the documents, 2s so far."},
		{templates.SweepProgress{State: string(sweeprun.Queued), Position: 2}, "queued", "Queued, position 2: one sweep runs at a time, and this one starts when the 2 before it finish. Cancel takes it out of the queue."},
		{templates.SweepProgress{State: string(sweeprun.Running), Elapsed: "0s"}, "loading", "Reading the labels and the documents."},
		{templates.SweepProgress{State: string(sweeprun.Running), Elapsed: "5s"}, "Computing signatures: 10 of 20 documents.", "Computing signatures: 10 of 20 documents, 5s so far."},
		{templates.SweepProgress{State: string(sweeprun.Running), Done: 5, Total: 20, Percent: 25, Elapsed: "30s"}, "scoring", "5 of 20 configurations scored (25%), 30s so far."},
		// Declined configurations are done but not scored: said apart.
		{templates.SweepProgress{State: string(sweeprun.Running), Done: 100, Total: 200, Declined: 84, Percent: 50, Elapsed: "30s"}, "scoring", "16 of 200 configurations scored and 84 declined (50%), 30s so far."},
	} {
		if got := progressLine(tc.p, tc.phase); got != tc.want {
			t.Errorf("progressLine(%+v, %q) = %q; want %q", tc.p, tc.phase, got, tc.want)
		}
	}
	for _, tc := range []struct {
		s    templates.RunStatus
		want string
	}{
		{templates.RunStatus{Phase: "starting", Elapsed: "0s"}, "Starting."},
		{templates.RunStatus{Phase: "", Elapsed: ""}, "Starting."},
		{templates.RunStatus{Phase: "verifying pairs", Done: 40, Total: 200, Elapsed: "3s"}, "Verifying pairs: 40 of 200, 3s so far."},
	} {
		var b strings.Builder
		tc.s.Running = true
		if err := templates.RunStatusPage(tc.s).Render(t.Context(), &b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), `data-testid="run-running">`+tc.want+" This page refreshes itself") {
			t.Errorf("run page for %+v lacks %q", tc.s, tc.want)
		}
	}
}

// The table of configurations pages (a sweep of thousands sent them all: 4 MB), says
// which rows it shows and numbers them by what config= and a whole-corpus run take; the
// outcome lists name the representation their J is measured on.
func TestSweepTablePagesAndNumbers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	cid := f.withSweepCorpus(newSweepCorpus(3))
	form := smallGridForm("paged")
	form.Set("word", "2-5") // 4 representations × 14 thresholds × 2 verifications: 112 configurations
	form.Set("k", "64")
	form.Set("from", "0.3")
	form.Set("to", "0.95")
	form.Set("step", "0.05")
	id := f.startSweep(cid, form)
	page := fmt.Sprintf("/sweeps/%d", id)
	rowRE := regexp.MustCompile(`<tr data-config="(\d+)"[^>]*data-testid="config-row"><td class="num" data-testid="config-number">(\d+)</td>`)
	_, body := get(t, f.h, page, f.admin)
	rows := rowRE.FindAllStringSubmatch(body, -1)
	total := regexp.MustCompile(`configurations 1–100 of (\d+) \(page 1 of (\d+)\)`).FindStringSubmatch(body)
	if len(rows) != 100 || total == nil {
		t.Fatalf("first page: %d rows, pager %v; want 100 rows and 'configurations 1–100 of N'", len(rows), total)
	}
	for _, r := range rows {
		if r[1] != r[2] {
			t.Errorf("row of configuration %s is numbered %s", r[1], r[2])
		}
	}
	if !strings.Contains(body, `data-testid="table-next"`) || strings.Contains(body, `data-testid="table-prev"`) {
		t.Error("the first page links no next page, or a previous one")
	}
	// The old "show all" is a page too.
	if _, all := get(t, f.h, page+"?rows=all", f.admin); len(rowRE.FindAllString(all, -1)) > 100 {
		t.Errorf("?rows=all sends %d rows; want a page of 100", len(rowRE.FindAllString(all, -1)))
	}
	_, second := get(t, f.h, page+"?page=2", f.admin)
	rows2 := rowRE.FindAllStringSubmatch(second, -1)
	if len(rows2) == 0 || rows2[0][1] == rows[0][1] || !strings.Contains(second, "configurations 101–") || !strings.Contains(second, `data-testid="table-prev"`) {
		t.Errorf("page 2: %d rows starting at %v", len(rows2), rows2[:min(1, len(rows2))])
	}
	if res, _ := get(t, f.h, page+"?page=x", f.admin); res.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("?page=x: %d; want 422", res.StatusCode)
	}
}

// The outcome lists name the representation their J is measured on (the pair page
// shows another, the campaign's, and said nothing of either); /dedup-jobs says where the
// configuration number is.
func TestOutcomesNameTheirRepresentation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	cid, id := f.sweptCorpus(3, "corpus")
	_, body := get(t, f.h, fmt.Sprintf("/sweeps/%d", id), f.admin)
	if !regexp.MustCompile(`data-testid="outcome"[^\n]*J=[0-9.]+ \(word 3-shingles\)`).MatchString(body) {
		t.Error("the outcome lists do not name the representation of their J")
	}
	if _, pair := get(t, f.h, fmt.Sprintf("/campaigns/%d/pairs/2", cid), f.admin); !regexp.MustCompile(`Jaccard <span class="muted">\((word|char) \d-shingles\)</span>`).MatchString(pair) {
		t.Error("the pair page does not name the representation of its Jaccard")
	}
	if res, _ := get(t, f.h, fmt.Sprintf("/sweeps/%d/dedup-jobs/new?%s", id, url.Values{"config": {"0"}}.Encode()), f.signIn("reviewer")); res.StatusCode != http.StatusOK {
		t.Errorf("a run from configuration 0: %d", res.StatusCode)
	}
	_, list := get(t, f.h, "/dedup-jobs", f.signIn("reviewer"))
	if !strings.Contains(list, "The configuration number is the # column of the sweep") {
		t.Error("/dedup-jobs does not say where the configuration number is")
	}
}

// A running sweep's page does not call its figures "labeled pairs: none records the
// sampling design" before its model exists (it said so, and "dataset" once done).
func TestRunningBasis(t *testing.T) {
	t.Parallel()
	if b, s := runningBasis(nil); b != "not known yet" || !strings.Contains(s, "known with the first results") {
		t.Errorf("runningBasis(no results) = %q, %q", b, s)
	}
	rep, _ := newSweepCorpus(3).report(t)
	if b, s := runningBasis(rep.Results[:2]); b != string(rep.Results[0].Headline().Basis) || strings.Contains(s, "none records") {
		t.Errorf("runningBasis(results) = %q, %q; want the first result's basis %q", b, s, rep.Results[0].Headline().Basis)
	}
}
