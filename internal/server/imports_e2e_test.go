package server

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
)

// TestBrowserBringYourOwnData is issue 15's browser test. In headless Chromium a person
// uploads real documents whose fields have names of their own (doc_key, body; metadata
// chosen), then a label file into a campaign the form creates, with an annotator for
// the rows that name none. The same files imported the command line's way (the choices
// the flags fill) into a second database must land exactly alike: documents, metadata,
// campaign, labels. Uploading the documents again is refused as identical, and the
// import page's button imports them as a new version all the same.
func TestBrowserBringYourOwnData(t *testing.T) {
	base, setup, store := startServerStore(t)
	p := page{t, browser(t)}
	p.createAccount(setup, "ada", "a long enough password")
	docs, _ := filepath.Abs("../../web/testdata/custom-fields.jsonl")
	labelFile, _ := filepath.Abs("../../web/testdata/custom-labels.csv")

	docChoices := ingest.DocumentChoices{Dataset: "handbook", IDField: "doc_key", TextField: "body", Meta: "license, title"}
	labelChoices := ingest.LabelChoices{Dataset: "handbook", Campaign: "gold", Create: true, Annotator: "judge1"}

	upload := func() {
		p.do(chromedp.Navigate(base+"/datasets/new"), chromedp.WaitVisible(`[data-testid="upload-form"]`),
			chromedp.SetUploadFiles(`[data-testid="upload-file"]`, []string{docs}),
			chromedp.SetValue(`input[name="dataset"]`, docChoices.Dataset),
			chromedp.SetValue(`[data-testid="upload-id-field"]`, docChoices.IDField),
			chromedp.SetValue(`[data-testid="upload-text-field"]`, docChoices.TextField),
			chromedp.SetValue(`[data-testid="upload-meta"]`, docChoices.Meta),
			chromedp.Click(`[data-testid="upload-submit"]`))
	}
	upload()
	p.waitFor(`document.querySelector('[data-testid="import-status"]')?.dataset.state === "done"`)
	p.screenshot("byod-import-done")

	p.do(chromedp.Navigate(base+"/labels/new"), chromedp.WaitVisible(`[data-testid="labels-form"]`),
		chromedp.SetValue(`[data-testid="labels-dataset"]`, labelChoices.Dataset),
		chromedp.SetValue(`[data-testid="labels-campaign"]`, labelChoices.Campaign),
		chromedp.Click(`[data-testid="labels-create"]`),
		chromedp.SetValue(`[data-testid="labels-annotator"]`, labelChoices.Annotator),
		chromedp.SetUploadFiles(`[data-testid="labels-file"]`, []string{labelFile}),
		chromedp.Click(`[data-testid="labels-submit"]`))
	p.waitFor(`!!document.querySelector('[data-testid="coverage"]')`)
	notice := p.text(`[data-testid="notice"]`)
	if !strings.Contains(notice, "Campaign “gold” (created) of handbook version 1: 6 new, 0 unchanged, 0 rejected of 6 rows.") ||
		!strings.Contains(notice, "custom-labels.csv:4: field duplicate") {
		t.Errorf("notice after the label upload: %q", notice)
	}
	if o := p.text(`[data-testid="overrides"]`); !strings.Contains(o, "exact copy (the category says duplicate): 1 labeled not a duplicate") {
		t.Errorf("campaign page overrides: %q", o)
	}
	p.screenshot("byod-campaign")

	// The command line's way, into a database of its own.
	ctx := context.Background()
	cli := openStore(t, "cli.db")
	opt := docChoices.Options()
	if _, err := ingest.File(ctx, cli, docs, opt); err != nil {
		t.Fatal(err)
	}
	_, lopt, err := labelChoices.Resolve(ctx, cli)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.LabelsFile(ctx, cli, labelFile, lopt); err != nil {
		t.Fatal(err)
	}
	web, cmd := landed(t, store), landed(t, cli)
	if web.docs != cmd.docs || web.labels != cmd.labels {
		t.Errorf("the upload landed\n%s\n%s\nthe command line\n%s\n%s", web.docs, web.labels, cmd.docs, cmd.labels)
	}
	if !strings.Contains(web.docs, `hb-en-US-kali lang="" meta={"license":"CC-BY-SA-3.0 OR GPL-2.0-or-later","title":"A.8. Kali Linux"}`) {
		t.Errorf("documents (custom id, chosen metadata only):\n%s", web.docs)
	}
	if !strings.Contains(web.labels, "gold hb-ar-MA-kali~hb-en-US-kali import:judge1 exact false") || !strings.Contains(web.labels, "import:judge2 boilerplate false") {
		t.Errorf("labels (the form's annotator for rows without one):\n%s", web.labels)
	}

	// The same documents again: refused as identical; the page offers a new version.
	upload()
	p.waitFor(`document.querySelector('[data-testid="import-status"]')?.dataset.state === "failed"`)
	if msg := p.text(`[data-testid="import-identical"]`); !strings.Contains(msg, "Version 1 of handbook holds these documents already: 8 documents") {
		t.Errorf("identical upload: %q", msg)
	}
	p.screenshot("byod-identical")
	p.do(chromedp.Click(`[data-testid="import-new-version"]`))
	p.waitFor(`document.querySelector('[data-testid="import-status"]')?.dataset.state === "done"`)
	if done := p.text(`[data-testid="import-done"]`); !strings.Contains(done, "handbook version 2") {
		t.Errorf("after confirming: %q", done)
	}
}

// landing is what an import put in a store, as comparable text.
type landing struct{ docs, labels string }

// landed lists the documents of dataset "handbook" version 1 (id, source, lang,
// metadata, text length) and the standing labels of its campaigns.
func landed(t *testing.T, store *db.DB) landing {
	t.Helper()
	ctx := context.Background()
	ds, err := store.DatasetVersion(ctx, "handbook", 1)
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	err = store.EachDocument(ctx, ds.ID, func(d db.Document) error {
		docs = append(docs, fmt.Sprintf("%s lang=%q meta=%s text=%d", d.ExtID, d.Lang, d.Meta, len(d.Text)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var ls []string
	for _, name := range []string{"gold"} {
		c, err := store.CampaignNamed(ctx, ds.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := store.CurrentLabels(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range cur {
			a, b := min(l.ExtA, l.ExtB), max(l.ExtA, l.ExtB)
			ls = append(ls, fmt.Sprintf("%s %s~%s %s %s %v %q", name, a, b, l.Annotator, l.Category, l.Duplicate, l.Note))
		}
	}
	slices.Sort(ls)
	return landing{strings.Join(docs, "\n"), strings.Join(ls, "\n")}
}
