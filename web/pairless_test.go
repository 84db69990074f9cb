package web

import (
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
	// A campaign made anyway (a link kept from before): its pages say the same.
	if rec := f.do("POST", "/datasets/1/campaigns", f.admin, url.Values{}); rec.Code != http.StatusSeeOther {
		t.Fatalf("start a campaign: %d", rec.Code)
	}
	ann := f.signIn("annotator")
	for _, tc := range []struct {
		path  string
		who   *http.Cookie
		wants []string
		wrong []string
	}{
		{"/campaigns/1", f.admin, []string{said, importLink}, []string{`data-testid="start-labeling"`}},
		{"/campaigns/1/next", ann, []string{said, "Admins import data: ask one for a sample of at least two documents."},
			[]string{"Every pair in this campaign has the labels it needs", "draw more pairs"}},
		{"/campaigns/1/sweeps", f.admin, []string{said, importLink}, []string{"No sweeps yet"}},
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
}
