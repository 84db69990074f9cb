package web

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// waitRun waits for the run-page job at location and returns its page.
func (f *fixture) waitRun(location string) (int, string) {
	f.t.Helper()
	if !strings.HasPrefix(location, "/runs/") {
		f.t.Fatalf("answer went to %q; want a run page", location)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := f.jobs.Wait(ctx, strings.TrimPrefix(location, "/runs/")); err != nil {
		f.t.Fatal(err)
	}
	res, body := get(f.t, f.h, location, f.admin)
	return res.StatusCode, body
}

// Production results uploaded on the manifests page: a job with the run's progress page,
// a draft manifest whose sample of clusters is what people review, and the rest
// approved on its strength once the sample is decided.
func TestUploadResultsThroughTheManifestsPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	run := f.withRun(chainRun)
	_, page := get(t, f.h, "/manifests", f.admin)
	for _, w := range []string{`data-testid="results-form"`, `action="/manifests/import"`, `enctype="multipart/form-data"`,
		// The run is a draft: no configuration production may have run yet.
		`<option value="0" selected>the file&#39;s own (manifest files)</option>`} {
		if !strings.Contains(page, w) {
			t.Errorf("manifests page lacks %s", w)
		}
	}
	pairs := "id_a,id_b,score\nA,B,0.82\nB,C,0.8\nD,=D2,1\nother0,other1,0.31\nother2,other3,0.45\n"
	fields := map[string]string{"dataset": itoa64(run.DatasetID), "format": "pairs", "config": itoa64(run.ID), "sample": "2", "seed": "9",
		"approvals": "1"} // lowered by choice: one approver signs it off below

	// A pair file without the configuration production ran is sent back to the form.
	rec := f.upload("/manifests/import", "pairs.csv", pairs, map[string]string{"dataset": itoa64(run.DatasetID), "format": "pairs"})
	if _, body := f.follow(rec, f.admin); !strings.Contains(body, "configuration: choose the manifest whose configuration production ran") {
		t.Errorf("upload without a configuration: the page does not say so")
	}
	// Unknown ids fail the job by file, line and field; nothing is stored.
	rec = f.upload("/manifests/import", "pairs.csv", pairs+"A,ghost,0.9\n", fields)
	status, body := f.waitRun(rec.Header().Get("Location"))
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, `pairs.csv:7: field id_b: no document &#34;ghost&#34; in the dataset`) {
		t.Errorf("unknown id: %d\n%s", status, body)
	}
	if list, _ := f.store.Manifests(context.Background(), run.DatasetID); len(list) != 1 {
		t.Errorf("%d manifests after a refused import; want the run's alone", len(list))
	}
	// Each refused record on a line of its own (they ran together on one line).
	rec = f.upload("/manifests/import", "pairs.csv", pairs+"A,ghost,0.9\nB,ghost2,0.8\n", fields)
	if _, body := f.waitRun(rec.Header().Get("Location")); !strings.Contains(body, `<p>pairs.csv: 2 documents that dataset`) ||
		!strings.Contains(body, `<li>pairs.csv:7: field id_b: no document &#34;ghost&#34; in the dataset`) ||
		!strings.Contains(body, `<li>pairs.csv:8: field id_b: no document &#34;ghost2&#34; in the dataset`) {
		t.Errorf("two unknown ids: not one list item each\n%s", body)
	}

	rec = f.upload("/manifests/import", "pairs.csv", pairs, fields)
	status, body = f.waitRun(rec.Header().Get("Location"))
	m := regexp.MustCompile(`href="/manifests/(\d+)" data-testid="run-manifest"`).FindStringSubmatch(body)
	if status != http.StatusOK || m == nil || !strings.Contains(body, "import of pairs.csv (pairs)") {
		t.Fatalf("import page: %d\n%s", status, body)
	}
	id := m[1]
	if _, list := get(t, f.h, "/manifests", f.admin); !strings.Contains(list, `data-testid="manifest-imported">imported from pairs: pairs.csv`) {
		t.Error("the list of manifests does not say which one was imported")
	}
	_, body = get(t, f.h, "/manifests/"+id, f.admin)
	for _, w := range []string{`data-testid="imported-from"`, "pairs.csv (pairs)", "4 clusters, 5 removals",
		"the engine&#39;s: connected components of its pairs", // what the engine did, not the configuration's policy
		`data-testid="sample-summary"`, "a stratified sample of 2 of 4 clusters", "seed 9", `data-testid="sample-strata"`,
		`disabled data-testid="approve-outside"`} {
		if !strings.Contains(body, w) {
			t.Errorf("imported manifest page lacks %s", w)
		}
	}
	// The review sample, in the cluster pages.
	_, list := get(t, f.h, "/manifests/"+id+"/clusters?sample=1", f.admin)
	if n := strings.Count(list, `data-testid="in-sample"`); n != 2 {
		t.Errorf("sample filter lists %d clusters in the sample; want 2\n%s", n, list)
	}
	rec = f.do("POST", "/manifests/"+id+"/approve-outside-sample", f.admin, nil)
	if _, body := f.follow(rec, f.admin); !strings.Contains(body, `data-testid="manifest-error">Decide every removal of the review sample first`) {
		t.Errorf("approval outside an undecided sample: the manifest's page does not say why it was refused")
	}
	for _, cid := range regexp.MustCompile(`data-testid="cluster-(\d+)"`).FindAllStringSubmatch(list, -1) {
		mid, _ := strconv.ParseInt(id, 10, 64)
		clid, _ := strconv.ParseInt(cid[1], 10, 64)
		man, _ := f.store.Manifest(context.Background(), mid)
		c, _ := f.store.Cluster(context.Background(), mid, clid)
		rec := f.do("POST", "/manifests/"+id+"/clusters/"+cid[1]+"/decide", f.admin, map[string][]string{"decision": {"approved"},
			"chained": {strconv.Itoa(manifests.ChainedUndecided(c, man.Params.Threshold))}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("decide cluster %s: %d\n%s", cid[1], rec.Code, rec.Body.String())
		}
	}
	_, body = f.follow(f.do("POST", "/manifests/"+id+"/approve-outside-sample", f.admin, nil), f.admin)
	if !strings.Contains(body, "outside the review sample, on the strength of the sample") || !strings.Contains(body, "0 undecided") {
		t.Errorf("after approving the rest:\n%s", body)
	}
	// Sign-off: the record says the review was of a sample, and how it was drawn.
	if rec := f.do("POST", "/manifests/"+id+"/submit", f.admin, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("request sign-off: %d\n%s", rec.Code, rec.Body.String())
	}
	_, body = get(t, f.h, "/manifests/"+id, f.admin)
	hash := regexp.MustCompile(`data-hash="(m[0-9a-f]+)"`).FindStringSubmatch(body)
	if hash == nil {
		t.Fatal("no content hash on the manifest page")
	}
	if rec := f.do("POST", "/manifests/"+id+"/reviews", f.signIn("approver"), map[string][]string{"verdict": {"approve"}, "hash": {hash[1]}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("approve: %d\n%s", rec.Code, rec.Body.String())
	}
	_, record := get(t, f.h, "/manifests/"+id+"/signoff", f.admin)
	for _, w := range []string{"Imported from production", "pairs.csv (pairs)", "a sample: a stratified sample of 2 of 4 clusters",
		"the engine&#39;s: connected components of its pairs",
		"seed 9", "The review sample&#39;s strata", "outside the review sample, on its strength"} {
		if !strings.Contains(record, w) {
			t.Errorf("sign-off record page lacks %q", w)
		}
	}
	_, js := get(t, f.h, "/manifests/"+id+"/signoff.json", f.admin)
	for _, w := range []string{`"reviewed_a_sample": true`, `"seed": 9`, `"strata": [`, `"outside_sample": true`, `"format": "pairs"`} {
		if !strings.Contains(js, w) {
			t.Errorf("signoff.json lacks %s", w)
		}
	}
}

// datatrove's .clusters with its .remove, both on the form: the engine's keepers hold.
func TestUploadDatatroveClustersWithRemove(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	run := f.withRun(chainRun)
	// The chain sample's documents in import order: A B C D =D2 other0...; datatrove
	// kept C (index 2) and =D2 (index 4).
	var clusters, remove bytes.Buffer
	for _, p := range [][2]uint32{{0, 0}, {1, 0}, {2, 0}, {3, 1}, {4, 1}} {
		binary.Write(&clusters, binary.LittleEndian, p)
	}
	binary.Write(&remove, binary.LittleEndian, []uint32{0, 1, 3})
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, file := range []struct {
		field, name string
		body        []byte
	}{{"file", "000000.clusters", clusters.Bytes()}, {"remove", "000000.remove", remove.Bytes()}} {
		fw, _ := mw.CreateFormFile(file.field, file.name)
		fw.Write(file.body)
	}
	for k, v := range map[string]string{"dataset": itoa64(run.DatasetID), "format": "datatrove", "config": itoa64(run.ID)} {
		mw.WriteField(k, v)
	}
	mw.Close()
	req := httptest.NewRequest(http.MethodPost, "/manifests/import", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(f.admin)
	rec := serve(f.h, req)
	status, body := f.waitRun(rec.Header().Get("Location"))
	m := regexp.MustCompile(`href="/manifests/(\d+)" data-testid="run-manifest"`).FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("import page: %d\n%s", status, body)
	}
	_, page := get(t, f.h, "/manifests/"+m[1], f.admin)
	if !strings.Contains(page, "000000.clusters (datatrove)") || !strings.Contains(page, "the engine&#39;s, as the file gives them") {
		t.Errorf("manifest page does not name the file and the engine's keepers:\n%s", page)
	}
	_, list := get(t, f.h, "/manifests/"+m[1]+"/clusters", f.admin)
	for _, keeper := range []string{`<td data-label="Keeper">C`, `<td data-label="Keeper">=D2`} {
		if !strings.Contains(strings.Join(strings.Fields(list), ""), strings.ReplaceAll(keeper, " ", "")) {
			t.Errorf("cluster list lacks keeper %s", keeper)
		}
	}
}

// The form's configuration defaults to the newest signed-off manifest of the dataset,
// not the newest of any state (a draft, an imported manifest); a manifest file imported
// with a configuration that differs from its rows is refused naming the setting, and
// with the file's own keeps its threshold and policy.
func TestResultsFormConfigurationDefault(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	run := f.withRun(chainRun)
	keeperStar := run.Params
	keeperStar.Policy = "keeper-star"
	signed := f.withManifest(keeperStar, true)
	higher := run.Params
	higher.Threshold = 0.9
	draft := f.withManifest(higher, false) // the newest, a draft
	_, page := get(t, f.h, "/manifests", f.admin)
	sel := regexp.MustCompile(`(?s)<select name="config"[^>]*>(.*?)</select>`).FindStringSubmatch(page)
	if sel == nil {
		t.Fatal("no configuration select on the manifests page")
	}
	chosen := regexp.MustCompile(`<option value="(\d+)" selected>`).FindAllStringSubmatch(sel[1], -1)
	if len(chosen) != 1 || chosen[0][1] != itoa64(signed.ID) {
		t.Errorf("preselected %v; want the signed-off manifest %d alone (not the draft %d)", chosen, signed.ID, draft.ID)
	}
	if want := fmt.Sprintf(`data-defaults="{&#34;%d&#34;:&#34;%d&#34;}"`, run.DatasetID, signed.ID); !strings.Contains(page, want) {
		t.Errorf("config select lacks %s", want)
	}

	// The run's removals as a manifest file (what its export writes), at 0.75.
	rows, err := f.store.ManifestRows(context.Background(), run.ID)
	if err != nil || len(rows) == 0 {
		t.Fatalf("rows %v, %v", rows, err)
	}
	var file bytes.Buffer
	if err := review.WriteJSONL(&file, review.ExportHeader{Manifest: run.ID, Dataset: run.Dataset, Params: run.Params}, rows); err != nil {
		t.Fatal(err)
	}
	rec := f.upload("/manifests/import", "removals.jsonl", file.String(), map[string]string{"dataset": itoa64(run.DatasetID), "format": "manifest", "config": itoa64(draft.ID)})
	status, body := f.waitRun(rec.Header().Get("Location"))
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "removals.jsonl: threshold: the file&#39;s rows say 0.75, the configuration given says 0.9") {
		t.Errorf("a 0.9 configuration over a 0.75 manifest file: %d\n%s", status, body)
	}
	rec = f.upload("/manifests/import", "removals.jsonl", file.String(), map[string]string{"dataset": itoa64(run.DatasetID), "format": "manifest", "config": "0"})
	status, body = f.waitRun(rec.Header().Get("Location"))
	m := regexp.MustCompile(`href="/manifests/(\d+)" data-testid="run-manifest"`).FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("the file's own configuration: %d\n%s", status, body)
	}
	_, body = get(t, f.h, "/manifests/"+m[1], f.admin)
	for _, w := range []string{"components, as the file&#39;s rows say", "<dd>0.750</dd>"} {
		if !strings.Contains(body, w) {
			t.Errorf("imported manifest page lacks %s", w)
		}
	}
	// Rows of another dataset: refused, unless the form says they are this one's.
	other := strings.ReplaceAll(file.String(), `"dataset":"`+run.Dataset.Name+`"`, `"dataset":"elsewhere"`)
	fields := map[string]string{"dataset": itoa64(run.DatasetID), "format": "manifest", "config": "0"}
	status, body = f.waitRun(f.upload("/manifests/import", "removals.jsonl", other, fields).Header().Get("Location"))
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "removals.jsonl:1: field dataset: its rows are of dataset &#34;elsewhere&#34;") {
		t.Errorf("rows of another dataset: %d\n%s", status, body)
	}
	fields["other_dataset"] = "1"
	if status, body = f.waitRun(f.upload("/manifests/import", "removals.jsonl", other, fields).Header().Get("Location")); status != http.StatusOK {
		t.Errorf("rows of another dataset, said to be this one's: %d\n%s", status, body)
	}
	// The imported drafts are newer still, and still not the default.
	_, page = get(t, f.h, "/manifests", f.admin)
	sel = regexp.MustCompile(`(?s)<select name="config"[^>]*>(.*?)</select>`).FindStringSubmatch(page)
	if chosen := regexp.MustCompile(`<option value="(\d+)" selected>`).FindAllStringSubmatch(sel[1], -1); len(chosen) != 1 || chosen[0][1] != itoa64(signed.ID) {
		t.Errorf("after an import preselected %v; want manifest %d", chosen, signed.ID)
	}
}

// The results form carries a one-time token: the same upload sent several times at once
// (a double click) makes one draft manifest, and every post is sent to its import.
func TestUploadResultsSentTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	run := f.withRun(chainRun)
	_, page := get(t, f.h, "/manifests", f.admin)
	form := page[strings.Index(page, `data-testid="results-form"`):]
	tok := regexp.MustCompile(`name="token" value="([0-9a-f]{32})"`).FindStringSubmatch(form[:strings.Index(form, "</form>")])
	if tok == nil {
		t.Fatal("the results form has no one-time token")
	}
	pairs := "id_a,id_b,score\nA,B,0.82\nB,C,0.8\n"
	fields := map[string]string{"dataset": itoa64(run.DatasetID), "format": "pairs", "config": itoa64(run.ID), "token": tok[1]}
	const posts = 3
	locs := make([]string, posts)
	done := make(chan bool)
	for i := range posts {
		go func() {
			defer func() { done <- true }()
			locs[i] = strings.Split(f.upload("/manifests/import", "pairs.csv", pairs, fields).Header().Get("Location"), "?")[0]
		}()
	}
	for range posts {
		<-done
	}
	for i, loc := range locs {
		if !strings.HasPrefix(loc, "/runs/") || loc != locs[0] {
			t.Errorf("post %d went to %q, post 0 to %q; want the one import's page for all", i, loc, locs[0])
		}
	}
	for _, loc := range locs {
		if strings.HasPrefix(loc, "/runs/") {
			f.waitRun(loc)
		}
	}
	if list, _ := f.store.Manifests(context.Background(), run.DatasetID); len(list) != 2 {
		t.Errorf("%d manifests; want 2: the run's and one for the upload sent %d times", len(list), posts)
	}
}

// A results file over the server's row cap fails its job with 422, naming the file and
// the first line past the cap; nothing is stored.
func TestUploadResultsOverTheRowCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	run := f.withRun(chainRun)
	d := testDeps(f.store, f.jobs)
	d.Sweeps, d.MaxUpload, d.MaxResultRows = f.sweeps, 1<<20, 4
	f.h = New(d)
	fields := map[string]string{"dataset": itoa64(run.DatasetID), "format": "pairs", "config": itoa64(run.ID)}
	pairs := "id_a,id_b,score\n" + strings.Repeat("A,B,0.82\n", 5)
	rec := f.upload("/manifests/import", "pairs.csv", pairs, fields)
	status, body := f.waitRun(rec.Header().Get("Location"))
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "pairs.csv:6: more than 4 rows, the cap on one results import") {
		t.Errorf("over the row cap: %d\n%s", status, body)
	}
	if list, _ := f.store.Manifests(context.Background(), run.DatasetID); len(list) != 1 {
		t.Errorf("%d manifests after a refused import; want the run's alone", len(list))
	}
	// At the cap, the same pair in four rows is one pair.
	rec = f.upload("/manifests/import", "pairs.csv", "id_a,id_b,score\n"+strings.Repeat("A,B,0.82\n", 4), fields)
	if status, body := f.waitRun(rec.Header().Get("Location")); status != http.StatusOK || !strings.Contains(body, `data-testid="run-manifest"`) {
		t.Errorf("at the row cap: %d\n%s", status, body)
	}
}
