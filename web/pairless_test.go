package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A dataset of one document has no pair: the start page said "No labeled pairs yet.
// Start labeling" with the button, the labeling queue "every pair has the labels it
// needs ... draw more pairs", the sweeps page "No sweeps yet. Start one below". Each
// says there is no pair and what to do: import at least two documents.
func TestOneDocumentDatasetHasNoPairs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	if _, body := f.waitJob(f.upload("/datasets", "one.jsonl", `{"id":"only","text":"the one and only document of this dataset"}`+"\n", nil).Header().Get("Location")); !strings.Contains(body, "import-done") {
		t.Fatalf("import failed:\n%s", body)
	}
	const said = `data-testid="no-pairs"><p><strong>1 document, so no pairs.</strong> A pair takes two documents: this dataset has nothing to label, sweep or deduplicate.</p>`
	const importLink = `href="/datasets/new" data-testid="import-more">Import a sample of at least two documents</a>`
	_, home := get(t, f.h, "/", f.admin)
	for _, want := range []string{said, importLink, `data-testid="dataset-docs">1</strong> document from`} {
		if !strings.Contains(home, want) {
			t.Errorf("start page lacks %s", want)
		}
	}
	for _, wrong := range []string{"No labeled pairs yet", `data-testid="start-campaign-one"`} {
		if strings.Contains(home, wrong) {
			t.Errorf("start page still offers %s", wrong)
		}
	}
	// Starting a campaign anyway (a page kept from before) is refused, naming why, and
	// stores nothing.
	ctx := context.Background()
	before, err := f.store.Fingerprint(ctx, "sessions")
	if err != nil {
		t.Fatal(err)
	}
	const why = "one has 1 document, so no pairs: a pair takes two documents; import a sample of at least two"
	if rec := f.do("POST", "/datasets/1/campaigns", f.admin, url.Values{}); rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), why) {
		t.Errorf("start a campaign on one document: %d; want 422 saying %q\n%s", rec.Code, why, rec.Body.String())
	}
	if after, _ := f.store.Fingerprint(ctx, "sessions"); after != before {
		t.Errorf("a refused campaign changed the store")
	}
	// A campaign made before the refusal: its pages say the same.
	if _, err := f.store.EnsureCampaign(ctx, 1, "default", nil); err != nil {
		t.Fatal(err)
	}
	ann := f.signIn("annotator")
	for _, tc := range []struct {
		path  string
		who   *http.Cookie
		wants []string
		wrong []string
	}{
		{"/campaigns/1", f.admin, []string{said, importLink, "<h2>Settings</h2>"}, []string{`data-testid="start-labeling"`, `data-testid="sweeps-link"`,
			`data-testid="coverage"`, "draw more pairs", "<h2>Agreement</h2>", `data-testid="sample-form"`, "Draw pairs to label"}},
		{"/campaigns/1", ann, []string{said}, []string{`data-testid="who-sweeps"`, `data-testid="who-draws"`, "<h2>Agreement</h2>"}},
		{"/datasets/1/runs/new", f.admin, []string{said, importLink}, []string{`data-testid="run-form"`, "1 documents"}},
		{"/campaigns/1/next", ann, []string{said, "Admins import data: ask one for a sample of at least two documents."},
			[]string{"Every pair in this campaign has the labels it needs", "draw more pairs"}},
		{"/campaigns/1/sweeps", f.admin, []string{said, importLink}, []string{"No sweeps yet", `data-testid="sweep-form"`}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res, body := get(t, f.h, tc.path, tc.who)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%d", res.StatusCode)
			}
			for _, want := range tc.wants {
				if !strings.Contains(body, want) {
					t.Errorf("lacks %s\n%s", want, body)
				}
			}
			for _, wrong := range tc.wrong {
				if strings.Contains(body, wrong) {
					t.Errorf("still says %s", wrong)
				}
			}
		})
	}

	// A draw and a run posted anyway (pages kept from before) go back to their page with
	// why, whatever their fields say, and store nothing.
	before, err = f.store.Fingerprint(ctx, "sessions")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, back, why string
		form            url.Values
	}{
		{"/campaigns/1/sample", "/campaigns/1?notice=", why, url.Values{"per_bin": {"10"}, "boundary": {"10"}, "random": {"10"}}},
		{"/campaigns/1/sample", "/campaigns/1?notice=", why, url.Values{}},
		{"/datasets/1/runs", "/datasets/1/runs/new?notice=", "one has 1 document: nothing to deduplicate",
			url.Values{"token": {"t1"}}}, // refused for its documents before its missing fields
		{"/campaigns/1/sweeps", "/campaigns/1/sweeps?notice=", why, smallGridForm("one")},
		{"/campaigns/1/sweeps", "/campaigns/1/sweeps?notice=", why, url.Values{}},
	} {
		t.Run("POST "+tc.path, func(t *testing.T) {
			loc, body := f.follow(f.do("POST", tc.path, f.admin, tc.form), f.admin)
			if !strings.HasPrefix(loc, tc.back) || !strings.Contains(body, tc.why) {
				t.Errorf("went to %s; want %s saying %q\n%s", loc, tc.back, tc.why, body)
			}
		})
	}
	if after, _ := f.store.Fingerprint(ctx, "sessions"); after != before {
		t.Errorf("a refused draw, run or sweep changed the store")
	}
}
