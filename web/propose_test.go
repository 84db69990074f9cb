package web

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// A configuration chosen on a sweep's dashboard (a complete-link one, not the run form's
// default policy) is proposed through the link, which opens the run form filled with it;
// the form as posted runs that configuration with the keeper rule the link carries, and
// the draft manifest holds it.
func TestProposalRunsTheConfiguration(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	_, id := f.sweptCorpus(4, "propose")
	ctx := context.Background()
	sw, err := f.sweeps.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	results, err := f.sweeps.Results(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var pick *sweeprun.Result
	for i, r := range results {
		if r.Config.Policy == cluster.CompleteLink && r.Config.Verification == sweep.ExactJaccard {
			pick = &results[i]
		}
	}
	if pick == nil {
		t.Fatalf("no complete-link result among %d", len(results))
	}

	_, body := get(t, f.h, fmt.Sprintf("/sweeps/%d?config=%d", id, pick.Ordinal), f.admin)
	m := regexp.MustCompile(`data-testid="propose-form" data-href="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the dashboard at config %d offers no proposal\n%.2000s", pick.Ordinal, body)
	}
	href := html.UnescapeString(m[1])
	u, err := url.Parse(href)
	if err != nil || u.Path != fmt.Sprintf("/datasets/%d/runs/new", sw.DatasetID) {
		t.Fatalf("proposal link %s (%v)", href, err)
	}
	keeper := u.Query().Get("keeper")
	if keeper == "" {
		t.Fatalf("proposal link %s carries no keeper rule", href)
	}
	res, form := get(t, f.h, href, f.admin)
	c := pick.Config
	for _, want := range []string{`<option value="complete-link" selected>`, `<option value="exact" selected>`,
		fmt.Sprintf(`value="%s"`, html.EscapeString(c.Spec.String())), fmt.Sprintf(`value="%d"`, c.Shape.Bands),
		fmt.Sprintf(`value="%s"`, fmtFloat(c.Threshold)), fmt.Sprintf(`value="%s"`, html.EscapeString(keeper))} {
		if res.StatusCode != http.StatusOK || !strings.Contains(form, want) {
			t.Errorf("the run form the proposal opens lacks %s (status %d)", want, res.StatusCode)
		}
	}

	post := u.Query()
	post.Set("approvals", "1")
	rec := f.do("POST", fmt.Sprintf("/datasets/%d/runs", sw.DatasetID), f.admin, post)
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/runs/") {
		t.Fatalf("run the proposal: %d %s\n%s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
	man := f.manifestOfRun(rec.Header().Get("Location"), f.admin)
	if got := sweep.ConfigOf(man.Params); got != c {
		t.Errorf("the manifest ran %v; the dashboard proposed %v", got, c)
	}
	if man.Params.Rule.String() != keeper || man.CampaignID != sw.CampaignID {
		t.Errorf("the manifest's keeper rule %q, campaign %d; want %q, %d", man.Params.Rule, man.CampaignID, keeper, sw.CampaignID)
	}
}
