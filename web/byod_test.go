package web

import (
	"context"
	"html"
	"net/http"
	"os"
	"strings"
	"testing"
)

// uploadFile posts a file of testdata through the upload form with fields.
func (f *fixture) uploadFile(path, file string, fields map[string]string) (loc, body string) {
	f.t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		f.t.Fatal(err)
	}
	rec := f.upload(path, file, string(b), fields)
	if path == "/datasets" {
		_, body := f.waitJob(rec.Header().Get("Location"))
		return rec.Header().Get("Location"), body
	}
	return f.follow(rec, f.admin)
}

// TestPagesShowCommandsForThisDatabase is issue 15 item 6: a command a page suggests
// names the running server's database by its absolute path, so it works as shown.
func TestPagesShowCommandsForThisDatabase(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	path := f.store.Path()
	if !strings.HasPrefix(path, "/") {
		t.Fatalf("the fixture's database %q is not absolute: the test cannot tell", path)
	}
	for _, tc := range []struct{ page, want string }{
		{"/", "go run ./cmd/server import -db " + path + " -in docs.jsonl.gz"},
		{"/datasets/new", "go run ./cmd/server import -db " + path + " -in docs.jsonl.gz -dataset NAME"},
		{"/audit", "go run ./cmd/server audit verify -db " + path},
	} {
		if _, body := get(t, f.h, tc.page, f.admin); !strings.Contains(html.UnescapeString(body), tc.want) {
			t.Errorf("%s does not suggest %q", tc.page, tc.want)
		}
	}
	f.uploadFile("/datasets", "custom-fields.jsonl", map[string]string{"id_field": "doc_key", "text_field": "body"})
	if _, body := get(t, f.h, "/labels/new", f.admin); !strings.Contains(body, "go run ./cmd/server import-labels -db "+path+" -dataset NAME") {
		t.Errorf("/labels/new does not suggest import-labels with -db %s", path)
	}
}

// TestUploadFormsTakeTheCommandLineOptions is issue 15 items 2, 3, 4 and 7 through the
// handlers: field mapping and metadata for documents; dataset version, campaign,
// creating it, annotator for labels; repeats counted unchanged; overrides and the
// coverage matrix split by answer on the campaign page.
func TestUploadFormsTakeTheCommandLineOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	// A wrong id field is refused naming it; the right one lands.
	if _, body := f.uploadFile("/datasets", "custom-fields.jsonl", map[string]string{"dataset": "hb"}); !strings.Contains(body, "field id: missing") {
		t.Errorf("custom fields without mapping: %s", body)
	}
	_, body := f.uploadFile("/datasets", "custom-fields.jsonl", map[string]string{"dataset": "hb", "id_field": "doc_key", "text_field": "body", "meta": "title"})
	if !strings.Contains(body, `data-testid="import-done"`) {
		t.Fatalf("custom fields with mapping: %s", body)
	}
	// Identical again: refused, the page offers a new version.
	_, body = f.uploadFile("/datasets", "custom-fields.jsonl", map[string]string{"dataset": "hb", "id_field": "doc_key", "text_field": "body", "meta": "title"})
	if !strings.Contains(body, `data-testid="import-identical"`) || !strings.Contains(body, "Version 1 of <strong>hb</strong> holds these documents already") {
		t.Errorf("identical upload: %s", body)
	}

	fields := map[string]string{"dataset": "hb", "version": "1", "campaign": "gold", "annotator": "judge1"}
	if loc, body := f.uploadFile("/labels", "custom-labels.csv", fields); !strings.HasPrefix(loc, "/labels/new?") || !strings.Contains(body, "no such campaign &#34;gold&#34;") {
		t.Errorf("labels into a campaign that is not there went to %s: %s", loc, body)
	}
	fields["create"] = "1"
	loc, body := f.uploadFile("/labels", "custom-labels.csv", fields)
	if !strings.HasPrefix(loc, "/campaigns/") || !strings.Contains(body, "Campaign “gold” (created) of hb version 1: 6 new, 0 unchanged, 0 rejected of 6 rows.") {
		t.Fatalf("labels went to %s: %s", loc, body)
	}
	for _, want := range []string{
		`custom-labels.csv:4: field duplicate: category &#34;exact copy&#34; says duplicate, this row says not a duplicate`,
		`data-testid="overrides"`, `exact copy (the category says duplicate): 1 labeled not a duplicate`,
		`boilerplate-heavy <span class="muted" data-testid="coverage-split">· duplicate</span>`,
		`boilerplate-heavy <span class="muted" data-testid="coverage-split">· not a duplicate</span>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("campaign page lacks %q", want)
		}
	}
	if strings.Contains(body, `formatting change <span class="muted" data-testid="coverage-split">`) {
		t.Error("a category answered one way only is split")
	}
	loc2, body := f.uploadFile("/labels", "custom-labels.csv", fields)
	if loc2 != loc[:strings.Index(loc, "?")]+loc2[strings.Index(loc2, "?"):] || !strings.Contains(body, "0 new, 6 unchanged, 0 rejected of 6 rows.") {
		t.Errorf("repeat label upload went to %s: %s", loc2, body)
	}
	if loc, body := f.uploadFile("/labels", "custom-labels.csv", map[string]string{"dataset": "hb", "version": "x"}); !strings.HasPrefix(loc, "/labels/new?") || !strings.Contains(body, "version: want a version number") {
		t.Errorf("a version that is no number went to %s: %s", loc, body)
	}
}

// TestNewVersionSentTwice: "Import it as a new version anyway" sent several times at once
// (a double click) imports one new version, and every post is sent to that import; none
// tells the person to upload the file again, which would make yet another version.
func TestNewVersionSentTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	fields := map[string]string{"dataset": "hb", "id_field": "doc_key", "text_field": "body"}
	f.uploadFile("/datasets", "custom-fields.jsonl", fields)
	refusedAt, body := f.uploadFile("/datasets", "custom-fields.jsonl", fields)
	if !strings.Contains(body, `data-testid="import-identical"`) {
		t.Fatalf("identical upload: %s", body)
	}
	const posts = 4
	locs := make([]string, posts)
	bodies := make([]string, posts)
	done := make(chan bool)
	for i := range posts {
		go func() {
			defer func() { done <- true }()
			rec := f.do("POST", refusedAt+"/new-version", f.admin, nil)
			locs[i] = strings.Split(rec.Header().Get("Location"), "?")[0]
			if rec.Code != http.StatusSeeOther {
				bodies[i] = rec.Body.String()
			}
		}()
	}
	for range posts {
		<-done
	}
	var started string
	for i, loc := range locs {
		if !strings.HasPrefix(loc, "/imports/") || loc == refusedAt {
			t.Errorf("post %d went to %q (%s); want the new version's import", i, loc, bodies[i])
			continue
		}
		if started == "" {
			started = loc
		} else if loc != started {
			t.Errorf("post %d went to %s, another post to %s: two imports started", i, loc, started)
		}
	}
	if started == "" {
		t.Fatal("no post started the new version's import")
	}
	f.waitJob(started)
	ds, err := f.store.Datasets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	versions := 0
	for _, d := range ds {
		if d.Name == "hb" {
			versions++
		}
	}
	if versions != 2 {
		t.Errorf("%d versions of hb; want 2 (the first upload and one new version)", versions)
	}
}
