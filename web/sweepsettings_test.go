package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/handoff"
)

// TestSweepSettingsDownload: the live panel links the selected configuration's
// settings.json, which the dedup command's parser reads back as that configuration at
// the slider's threshold.
func TestSweepSettingsDownload(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	_, id := f.sweptCorpus(3, "small")
	results, err := f.sweeps.Results(context.Background(), id)
	if err != nil || len(results) == 0 {
		t.Fatalf("results: %d, %v", len(results), err)
	}
	last := results[len(results)-1]
	q := fmt.Sprintf("?config=%d&t=0.95", last.Ordinal)
	href := fmt.Sprintf("/sweeps/%d/settings.json%s", id, q)
	_, body := get(t, f.h, fmt.Sprintf("/sweeps/%d/live%s", id, q), f.admin)
	if !strings.Contains(body, `data-testid="sweep-settings"`) || !strings.Contains(body, strings.ReplaceAll(href, "&", "&amp;")) {
		t.Fatalf("live panel has no settings.json link %s\n%.600s", href, body)
	}
	runHref := fmt.Sprintf("/sweeps/%d/dedup-jobs/new%s", id, q)
	if !strings.Contains(body, `data-testid="sweep-corpus-run"`) || !strings.Contains(body, strings.ReplaceAll(runHref, "&", "&amp;")) {
		t.Errorf("live panel has no whole-corpus run link %s", runHref)
	}
	if res, page := get(t, f.h, runHref, f.admin); res.StatusCode != http.StatusOK || !strings.Contains(page, "threshold 0.95") {
		t.Errorf("GET %s: %d, the form does not carry the configuration at 0.95:\n%.800s", runHref, res.StatusCode, page)
	}
	res, body := get(t, f.h, href, f.admin)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" ||
		!strings.Contains(res.Header.Get("Content-Disposition"), fmt.Sprintf("sweep-%d-config-%d-settings.json", id, last.Ordinal)) {
		t.Fatalf("GET %s: %d %v", href, res.StatusCode, res.Header)
	}
	p, d, err := handoff.ParseSettings(strings.NewReader(body), "settings.json")
	if err != nil {
		t.Fatalf("ParseSettings: %v\n%s", err, body)
	}
	c := last.Config
	if p.Spec != c.Spec || p.Shape != c.Shape || p.Threshold != 0.95 || string(p.Verification) != string(c.Verification) || p.Rule.String() != "earliest" {
		t.Errorf("settings.json = %+v; want config %v at 0.95 with keeper rule earliest", p, c)
	}
	if d.Source.Sweep != id || d.Source.SweepConfig != int64(last.Ordinal) || d.Source.SignedOff {
		t.Errorf("source = %+v; want sweep %d config %d, not signed off", d.Source, id, last.Ordinal)
	}
	if res, _ := get(t, f.h, fmt.Sprintf("/sweeps/%d/settings.json?config=99999", id), f.admin); res.StatusCode != http.StatusNotFound {
		t.Errorf("settings.json of a configuration the sweep lacks: %d; want 404", res.StatusCode)
	}
}
