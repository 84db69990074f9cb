package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Defects a walk of the merged build found (helper walk5), each held here.

// The labeling plans' draw forms are for the roles that may draw pairs; others read who
// can, instead of a button that answers 403.
func TestPlanDrawOnlyForThoseWhoDraw(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	_, id := f.sweepWithPlan()
	page := fmt.Sprintf("/sweeps/%d", id)
	_, body := get(t, f.h, page, f.admin)
	if !strings.Contains(body, `data-testid="plan-draw"`) {
		t.Fatal("the admin sees no draw form on the plan")
	}
	for _, role := range []string{"annotator", "approver"} {
		_, body := get(t, f.h, page, f.signIn(role))
		if strings.Contains(body, `data-testid="plan-draw"`) || strings.Contains(body, "/sample") {
			t.Errorf("%s: the dashboard offers a draw form the role may not post", role)
		}
		if !strings.Contains(body, `data-testid="plan-draw-who"`) || !strings.Contains(body, "ask one of them to draw these") {
			t.Errorf("%s: the dashboard does not say who draws the plan's pairs", role)
		}
	}
}

// A label posted to a pair the campaign does not have is not found, whatever its form.
func TestLabelUnknownPairIsNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	for _, form := range []url.Values{{}, {"category": {"different"}}} {
		for _, id := range []string{"99999", "9223372036854775807"} {
			rec := f.do("POST", "/campaigns/1/pairs/"+id+"/label", f.admin, form)
			if rec.Code != http.StatusNotFound {
				t.Errorf("label of pair %s with form %v: %d, want 404", id, form, rec.Code)
			}
		}
	}
}

// Exporting a manifest that is not signed off says so, not that the count is wrong.
func TestExportDraftSaysNotSignedOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	rec := f.do("POST", fmt.Sprintf("/manifests/%d/export", m.ID), f.signIn("approver"), url.Values{"count": {"505"}, "hash": {m.ContentHash}})
	_, body := f.follow(rec, f.signIn("approver"))
	if strings.Contains(body, "tombstones 0 documents") || strings.Contains(body, "confirm the export") {
		t.Errorf("a draft's export is refused over its count:\n%.2000s", body)
	}
	if !strings.Contains(strings.ToLower(body), "signed off") {
		t.Errorf("a draft's export refusal does not say it is not signed off:\n%.2000s", body)
	}
}

// A refused value is quoted short on the page and in the audit log, which keeps it for
// good: 900,000 digits posted as an audit's size cost a line, not 900 kB.
func TestRefusedValuesAreQuotedShort(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	long := strings.Repeat("9", 900_000)
	appr := f.signIn("approver")
	rec := f.do("POST", fmt.Sprintf("/manifests/%d/audit", m.ID), appr, url.Values{"pairs": {long}})
	_, body := f.follow(rec, appr)
	if strings.Contains(body, strings.Repeat("9", 1000)) {
		t.Errorf("the page repeats the 900,000 digits (%d bytes)", len(body))
	}
	if !strings.Contains(body, "900,000 characters") {
		t.Errorf("the page does not say how long the refused value was:\n%.2000s", body)
	}
	events, err := f.store.AuditLog(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range events {
		if e.Action == "manifest.refused" {
			found = true
			if len(e.Detail) > 2000 {
				t.Errorf("the audit log keeps a %d-byte refusal", len(e.Detail))
			}
		}
	}
	if !found {
		t.Error("the refusal is not in the audit log")
	}
}
