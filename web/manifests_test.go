package web

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// chainDocs is a JSONL sample of real text: a chain A~B~C (A far from C), exact
// duplicates D and D2, a document whose id a spreadsheet would run as a formula, and
// unrelated documents.
func chainDocs(t *testing.T) string {
	t.Helper()
	texts := realtext.Texts(t, 7, 260)
	words := strings.Fields(texts[0])
	seg := func(from, to int) string { return strings.Join(words[20*from:20*to], " ") }
	var b strings.Builder
	add := func(id, text, source string) {
		line, _ := json.Marshal(map[string]string{"id": id, "text": text, "source": source})
		b.Write(line)
		b.WriteByte('\n')
	}
	add("A", seg(0, 10), "npm")
	add("B", seg(1, 11), "npm")
	add("C", seg(2, 12), "npm")
	add("D", texts[1], "debian")
	add("=D2", strings.ToUpper(texts[1]), "debian")
	for i, tx := range texts[2:] {
		add(fmt.Sprintf("other%d", i), tx, "spdx")
	}
	return b.String()
}

// withRun uploads the chain sample, labels (A,B) duplicate and (A,C) not, and runs
// query's configuration over it as the reviewer, through the run form; it returns the
// manifest.
func (f *fixture) withRun(query url.Values) db.Manifest {
	f.t.Helper()
	ctx := context.Background()
	if _, body := f.waitJob(f.upload("/datasets", "chain.jsonl", chainDocs(f.t), nil).Header().Get("Location")); !strings.Contains(body, "import-done") {
		f.t.Fatalf("import failed:\n%s", body)
	}
	list, _ := f.store.Datasets(ctx)
	ds := list[0]
	if _, err := ingest.Labels(ctx, f.store, strings.NewReader("a,b,category,annotator\nA,B,minor,seed\nA,C,different,seed\n"),
		"l.csv", ingest.LabelOptions{DatasetID: ds.ID, Create: true}); err != nil {
		f.t.Fatal(err)
	}
	rec := f.do("POST", fmt.Sprintf("/datasets/%d/runs", ds.ID), f.signIn("reviewer"), query)
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/runs/run-") {
		f.t.Fatalf("start a run: %d %s\n%s", rec.Code, loc, rec.Body.String())
	}
	waitCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	snap, err := f.jobs.Wait(waitCtx, strings.TrimPrefix(loc, "/runs/"))
	if err != nil || snap.Err != "" {
		f.t.Fatalf("run: %v %s", err, snap.Err)
	}
	res, body := get(f.t, f.h, loc, f.signIn("reviewer"))
	m := regexp.MustCompile(`href="/manifests/(\d+)" data-testid="run-manifest"`).FindStringSubmatch(body)
	if res.StatusCode != http.StatusOK || m == nil {
		f.t.Fatalf("run page: %d\n%s", res.StatusCode, body)
	}
	var id int64
	fmt.Sscan(m[1], &id)
	man, err := f.store.Manifest(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return man
}

var chainRun = url.Values{"spec": {"level=word size=5 k=128"}, "bands": {"32"}, "rows": {"4"}, "threshold": {"0.75"},
	"verification": {"exact"}, "policy": {"components"}, "keeper": {"earliest"}, "approvals": {"1"}}

// chainRunWith is chainRun with field set to value.
func chainRunWith(field, value string) url.Values {
	q := maps.Clone(chainRun)
	q.Set(field, value)
	return q
}

// A configuration typed by hand or linked from another page prefills the form; a bad
// field is named; a good one runs in the background and ends in a draft manifest.
func TestRunFormPrefillErrorsAndRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	rev := f.signIn("reviewer")
	res, body := get(t, f.h, "/datasets/1/runs/new?spec=k%3D64&bands=16&rows=4&threshold=0.7&verification=estimate&policy=complete-link&keeper=longest", rev)
	for _, want := range []string{`value="k=64"`, `value="16"`, `value="4"`,
		`value="0.7"`, `<option value="estimate" selected>`, `<option value="complete-link" selected>`, `value="longest"`} {
		if res.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("prefilled run form lacks %s (status %d)", want, res.StatusCode)
		}
	}
	for _, tc := range []struct {
		field, value, want string
	}{
		{"bands", "0", "bands: want a whole number"},
		{"rows", "9", "bands × rows: shape 32x9 needs 288 hash values"},
		{"threshold", "1.5", "threshold: 1.5 is not in (0, 1]"},
		{"keeper", "tallest", `unknown criterion \"tallest\"`},
		{"policy", "single", `unknown policy \"single\"`},
		{"spec", "k=zero", "spec k"},
		{"campaign", "999", "campaign: no such campaign of this dataset"},
		{"approvals", "1000000", "approvals: want a whole number from 1 to 20"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			form := chainRunWith(tc.field, tc.value)
			// Refused: a 303 back to the form, which says why and keeps what was sent.
			rec := f.do("POST", "/datasets/1/runs", rev, form)
			loc, body := f.follow(rec, rev)
			if !strings.HasPrefix(loc, "/datasets/1/runs/new?notice=") || !strings.Contains(body, strings.ReplaceAll(tc.want, `\"`, "&#34;")) {
				t.Errorf("run with %s=%s: sent to %s; want the form naming %q\n%s", tc.field, tc.value, loc, tc.want, body)
			}
			if tc.field == "threshold" && !strings.Contains(body, `value="1.5"`) {
				t.Errorf("the refused form lost the threshold sent")
			}
		})
	}
	m := f.withRun(chainRun)
	if m.State != review.Draft || m.Params.Policy != cluster.Components || len(m.Comparison) != 3 {
		t.Fatalf("manifest after the run: %+v", m)
	}
	res, body = get(t, f.h, fmt.Sprintf("/manifests/%d", m.ID), rev)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `data-testid="false-merges-components">1 of 1`) ||
		!strings.Contains(body, `data-testid="false-merges-keeper-star">0 of 1`) {
		t.Errorf("manifest page: %d; want every policy with its false merges\n%s", res.StatusCode, body)
	}
}

// Every page of a manifest renders for every role, changes nothing, and shows each role
// only the actions it can take.
func TestManifestPagesByRole(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	ctx := context.Background()
	rows, _ := f.store.Clusters(ctx, m.ID, db.ClusterFilter{})
	c := rows[0] // the chained cluster, riskiest first
	if !c.Chained {
		t.Fatalf("first cluster by risk %+v is not the chained one", c)
	}
	other := f.runOn(m.DatasetID, chainRun, "reviewer") // the diff compares two manifests (one with itself is refused)
	pages := []string{"/manifests", fmt.Sprintf("/manifests/diff?a=%d&b=%d", m.ID, other.ID), fmt.Sprintf("/manifests/%d", m.ID),
		fmt.Sprintf("/manifests/%d?group=lang", m.ID), fmt.Sprintf("/manifests/%d/impact.svg?group=source", m.ID),
		fmt.Sprintf("/manifests/%d/impact.png", m.ID), fmt.Sprintf("/manifests/%d/impact.csv", m.ID),
		fmt.Sprintf("/manifests/%d/clusters", m.ID), fmt.Sprintf("/manifests/%d/clusters?reason=exact&pending=1", m.ID),
		fmt.Sprintf("/manifests/%d/clusters?group=source&value=npm&chained=1", m.ID),
		fmt.Sprintf("/manifests/%d/clusters/%d", m.ID, c.ID), fmt.Sprintf("/manifests/%d/clusters/%d?view=shared", m.ID, c.ID),
		fmt.Sprintf("/manifests/%d/clusters/%d?view=unified", m.ID, c.ID),
		fmt.Sprintf("/manifests/%d/clusters/%d/matrix.svg", m.ID, c.ID), fmt.Sprintf("/manifests/%d/clusters/%d/chain.csv", m.ID, c.ID)}
	for _, role := range auth.Roles {
		ck := f.signIn(string(role))
		for _, p := range pages {
			before, _ := f.store.Fingerprint(ctx, "sessions")
			res, body := get(t, f.h, p, ck)
			if res.StatusCode != http.StatusOK {
				t.Errorf("GET %s as %s: %d\n%.400s", p, role, res.StatusCode, body)
			}
			if after, _ := f.store.Fingerprint(ctx, "sessions"); after != before {
				t.Errorf("GET %s as %s changed the database", p, role)
			}
		}
		_, page := get(t, f.h, fmt.Sprintf("/manifests/%d/clusters/%d", m.ID, c.ID), ck)
		_, overview := get(t, f.h, fmt.Sprintf("/manifests/%d", m.ID), ck)
		decides := role.Can(auth.PrepareManifests)
		if got := strings.Contains(page, `data-testid="approve-B"`); got != decides {
			t.Errorf("cluster page as %s shows decision buttons: %v; want %v", role, got, decides)
		}
		if got := strings.Contains(overview, `data-testid="bulk-form"`); got != decides {
			t.Errorf("manifest page as %s shows bulk approval: %v; want %v", role, got, decides)
		}
		if strings.Contains(overview, `data-testid="approve"`) {
			t.Errorf("a draft offers approval to %s", role)
		}
		if got := strings.Contains(overview, `data-testid="review-form"`); got != role.Can(auth.Approve) {
			t.Errorf("manifest page as %s shows the verdict form: %v; want it for approvers only", role, got)
		}
		_, home := get(t, f.h, "/", ck)
		if got := strings.Contains(home, `href="/audit"`); got != (role == auth.Admin) {
			t.Errorf("audit link for %s: %v; want it for admins only", role, got)
		}
		if res, _ := get(t, f.h, "/audit", ck); (res.StatusCode == http.StatusOK) != (role == auth.Admin) {
			t.Errorf("GET /audit as %s: %d", role, res.StatusCode)
		}
	}
}

// The whole review through the handlers: decisions, a cut and its undo, sign-off
// request, self-approval refused, an approver signs off, export, the files.
func TestReviewThroughHandlers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	ctx := context.Background()
	rev, appr := f.signIn("reviewer"), f.signIn("approver")
	ids, _ := f.store.DocumentIDs(ctx, m.DatasetID, []string{"A", "B", "C", "D", "=D2"})
	rows, _ := f.store.Clusters(ctx, m.ID, db.ClusterFilter{})
	chain, _ := f.store.Cluster(ctx, m.ID, rows[0].ID)
	itemOf := func(c db.Cluster, doc int64) db.Item {
		for _, it := range c.Items {
			if it.Doc == doc {
				return it
			}
		}
		t.Fatalf("no item for document %d in %+v", doc, c)
		return db.Item{}
	}
	// want is what the form's answer means: 303 done, 404 no such thing, 409 or 422
	// refused, which is a 303 too, to a page that says why (once).
	post := func(ck *http.Cookie, path string, form url.Values, want int) string {
		t.Helper()
		rec := f.do("POST", path, ck, form)
		if want == http.StatusConflict || want == http.StatusUnprocessableEntity {
			if _, body := f.follow(rec, ck); !strings.Contains(body, `-error">`) {
				t.Fatalf("POST %s %v: the page it went to does not say why it was refused\n%.600s", path, form, body)
			}
			return rec.Header().Get("Location")
		}
		if rec.Code != want {
			t.Fatalf("POST %s %v: %d; want %d\n%.600s", path, form, rec.Code, want, rec.Body.String())
		}
		return rec.Header().Get("Location")
	}
	base := fmt.Sprintf("/manifests/%d", m.ID)
	// Exclude C: back on the cluster page, focused on the next undecided removal (B).
	loc := post(rev, fmt.Sprintf("%s/items/%d", base, itemOf(chain, ids["C"]).ID), url.Values{"decision": {"excluded"}, "cluster": {fmt.Sprint(chain.ID)}}, http.StatusSeeOther)
	if want := fmt.Sprintf("focus=%d", itemOf(chain, ids["B"]).ID); !strings.Contains(loc, want) {
		t.Errorf("after excluding C: %s; want the focus on B (%s)", loc, want)
	}
	// An item of another cluster is refused.
	post(rev, fmt.Sprintf("%s/items/%d", base, 99999), url.Values{"decision": {"approved"}, "cluster": {fmt.Sprint(chain.ID)}}, http.StatusNotFound)
	// Cut at the suggested link, then undo it, then cut again.
	link := url.Values{"link": {fmt.Sprintf("%d-%d", chain.Cut.A, chain.Cut.B)}}
	post(rev, fmt.Sprintf("%s/clusters/%d/cut", base, chain.ID), link, http.StatusSeeOther)
	if c, _ := f.store.Cluster(ctx, m.ID, chain.ID); len(c.Items) != 1 {
		t.Fatalf("after the cut the cluster has %d removals; want 1", len(c.Items))
	}
	post(rev, base+"/undo", url.Values{}, http.StatusSeeOther)
	if c, _ := f.store.Cluster(ctx, m.ID, chain.ID); len(c.Items) != 2 || itemOf(c, ids["C"]).Decision != review.Excluded {
		t.Fatalf("after undoing the cut: %+v", c)
	}
	post(rev, fmt.Sprintf("%s/clusters/%d/cut", base, chain.ID), url.Values{"link": {"998-999"}}, http.StatusUnprocessableEntity)
	post(rev, fmt.Sprintf("%s/clusters/%d/cut", base, chain.ID), link, http.StatusSeeOther)
	// Request sign-off too early, then approve the rest and request it.
	post(rev, base+"/submit", url.Values{}, http.StatusConflict)
	post(rev, base+"/bulk", url.Values{"bar": {"2"}}, http.StatusUnprocessableEntity)
	// A bar under the threshold is refused; a good one shows its count first, and that
	// count is what the approval must confirm.
	post(rev, base+"/bulk", url.Values{"bar": {"0.5"}}, http.StatusUnprocessableEntity)
	// The same bars typed into the address say the same, where the preview would be.
	for bar, why := range map[string]string{
		"0.5": "0.5 is under the manifest&#39;s threshold 0.75", "NaN": "want a similarity in (0, 1], e.g. 0.95",
		"-1": "want a similarity in (0, 1], e.g. 0.95", "x": "want a similarity in (0, 1], e.g. 0.95",
	} {
		res, page := get(t, f.h, base+"?bulk="+url.QueryEscape(bar), rev)
		if res.StatusCode != http.StatusOK || !strings.Contains(page, `data-testid="bulk-refused">bar: `) || !strings.Contains(page, why) {
			t.Errorf("GET ?bulk=%s: %d, no bulk-refused saying %q\n%s", bar, res.StatusCode, why, page)
		}
	}
	if loc := post(rev, base+"/bulk", url.Values{"bar": {"0.75"}}, http.StatusSeeOther); loc != base+"?bulk=0.75#bulk-form" {
		t.Errorf("bulk approval without its count: to %s; want the manifest page showing the count", loc)
	}
	if _, page := get(t, f.h, base+"?bulk=0.75", rev); !strings.Contains(page, `data-testid="bulk-confirm"`) || !strings.Contains(page, `name="expect" value="2"`) {
		t.Errorf("the bulk preview does not show the count of 2 removals to confirm")
	} else if !strings.Contains(page, `data-testid="bulk-count">2 removals</strong>`) || !strings.Contains(page, "Approve 2 removals</button>") {
		t.Errorf("the bulk preview does not say its count in words (2 removals)")
	}
	post(rev, base+"/bulk", url.Values{"bar": {"0.75"}, "expect": {"3"}}, http.StatusConflict)
	post(rev, base+"/bulk", url.Values{"bar": {"0.75"}, "expect": {"2"}}, http.StatusSeeOther)
	post(rev, fmt.Sprintf("%s/clusters/%d/comment", base, chain.ID), url.Values{"comment": {"C is a different part of the manual"}}, http.StatusSeeOther)
	post(rev, base+"/submit", url.Values{}, http.StatusSeeOther)
	m, _ = f.store.Manifest(ctx, m.ID)
	// The preparer cannot approve (not even as admin), nor can an approver approve a hash
	// it was not shown.
	prep, _ := f.store.UserByName(ctx, "reviewer")
	if m.PreparedBy != prep.ID {
		t.Fatalf("prepared by %d; want the reviewer", m.PreparedBy)
	}
	hash := url.Values{"verdict": {"approve"}, "hash": {m.ContentHash}}
	post(appr, base+"/reviews", url.Values{"verdict": {"approve"}, "hash": {"mother"}}, http.StatusConflict)
	post(appr, base+"/export", url.Values{"hash": {m.ContentHash}}, http.StatusConflict)
	_, page := get(t, f.h, base, appr)
	if !strings.Contains(page, `data-testid="approve"`) {
		t.Error("an approver does not see the approval form of a manifest in review")
	}
	post(appr, base+"/reviews", hash, http.StatusSeeOther)
	m, _ = f.store.Manifest(ctx, m.ID)
	if m.State != review.SignedOff {
		t.Fatalf("state after approval: %s", m.State)
	}
	res, body := get(t, f.h, base+"/signoff", f.signIn("annotator"))
	if res.StatusCode != http.StatusOK || !strings.Contains(body, m.ContentHash) || !strings.Contains(body, m.DatasetHash) ||
		!strings.Contains(body, "approver") || !strings.Contains(body, "keeper") {
		t.Errorf("sign-off page: %d\n%.600s", res.StatusCode, body)
	}
	// Downloads wait for the export.
	if res, _ := get(t, f.h, base+"/removals.csv", appr); res.StatusCode != http.StatusConflict {
		t.Errorf("removals.csv before the export: %d; want 409", res.StatusCode)
	}
	post(appr, base+"/export", url.Values{"hash": {m.ContentHash}}, http.StatusUnprocessableEntity) // no count confirmed
	post(appr, base+"/export", url.Values{"hash": {m.ContentHash}, "count": {"3"}}, http.StatusUnprocessableEntity)
	post(appr, base+"/export", url.Values{"hash": {m.ContentHash}, "count": {"2"}}, http.StatusSeeOther)
	// An exported manifest takes no bulk approval, whatever the bar: the post says so
	// (it said the bar was under the threshold) and the preview typed into the address
	// says the same (it showed nothing).
	const noChange = "this manifest is exported: it no longer changes (revoke it, then prepare a new run)"
	for _, bar := range []string{"0.5", "0.75"} {
		if _, page := f.follow(f.do("POST", base+"/bulk", rev, url.Values{"bar": {bar}}), rev); !strings.Contains(page, noChange) {
			t.Errorf("bulk approval at %s of an exported manifest: the page it went to does not say %q", bar, noChange)
		}
		if _, page := get(t, f.h, base+"?bulk="+bar, rev); !strings.Contains(page, `data-testid="bulk-refused">`+noChange) {
			t.Errorf("GET ?bulk=%s of an exported manifest does not say %q", bar, noChange)
		}
	}
	res, body = get(t, f.h, base+"/removals.csv", f.signIn("annotator"))
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if res.StatusCode != http.StatusOK || err != nil || len(recs) != 3 {
		t.Fatalf("removals.csv: %d, %v, %d records\n%s", res.StatusCode, err, len(recs), body)
	}
	got := map[string]string{}
	for _, r := range recs[1:] {
		got[r[3]] = r[4]
	}
	if got["B"] != "A" || got["'=D2"] != "D" || len(got) != 2 {
		t.Errorf("removals.csv rows %v; want B kept as A and the neutralised '=D2 as D", got)
	}
	res, body = get(t, f.h, base+"/split.jsonl", appr)
	if res.StatusCode != http.StatusOK || strings.Count(body, `"split":"removed"`) != 2 || strings.Count(body, `"split":"kept"`) != 8 {
		t.Errorf("split.jsonl: %d, %d removed, %d kept", res.StatusCode, strings.Count(body, `"split":"removed"`), strings.Count(body, `"split":"kept"`))
	}
	res, body = get(t, f.h, base+"/signoff.json", appr)
	var so struct {
		Status string
		Record review.Record
	}
	if err := json.Unmarshal([]byte(body), &so); err != nil || so.Status != "current" || so.Record.ManifestHash != m.ContentHash ||
		so.Record.Params.Spec.ID() != lsh.DefaultSpec().ID() || len(so.Record.Approvals) != 1 {
		t.Errorf("signoff.json: %d %v %+v", res.StatusCode, err, so)
	}
	// Restore one, revoke the rest.
	post(appr, fmt.Sprintf("%s/tombstones/%d/restore", base, ids["B"]), url.Values{}, http.StatusSeeOther)
	// Back already: 409 on the manifest's page, which says so (it was a 404).
	if rec := f.do("POST", fmt.Sprintf("%s/tombstones/%d/restore", base, ids["B"]), appr, url.Values{}); rec.Code != http.StatusConflict ||
		!strings.Contains(rec.Body.String(), "Document B was already restored by approver on ") {
		t.Errorf("restoring B again: %d; want 409 saying it is back already\n%.600s", rec.Code, rec.Body.String())
	}
	post(appr, base+"/revoke", url.Values{"reason": {"test"}}, http.StatusSeeOther)
	stones, _ := f.store.Tombstones(ctx, m.ID)
	for _, s := range stones {
		if !s.Restored {
			t.Errorf("tombstone of %s stands after the revocation", s.ExtID)
		}
	}
	// The admin's audit page names people and reads well; the chain verifies.
	_, audit := get(t, f.h, "/audit", f.admin)
	for _, want := range []string{"The hash chain verifies", "exported a manifest", "cut a chain", "reviewer", "manifest hash: m"} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit page lacks %q", want)
		}
	}
	if strings.Contains(audit, `{&#34;`) || strings.Contains(audit, "user:") {
		t.Error("the audit page shows raw JSON or user ids")
	}
}

// Sixteen reviewers decide 200 removals each at once, through the handlers: every
// decision is stored once, none fails (no SQLITE_BUSY), and the audit chain verifies.
func TestConcurrentReviewers(t *testing.T) {
	t.Parallel()
	const reviewers = 16
	perReviewer := 200
	if testing.Short() {
		perReviewer = 20
	}
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	const perCluster = 5
	clusters := reviewers * perReviewer / perCluster
	var docs []db.NewDocument
	for i := range clusters * (perCluster + 1) {
		docs = append(docs, db.NewDocument{ExtID: fmt.Sprintf("d%05d", i), Text: fmt.Sprintf("text %d", i), ContentHash: fmt.Sprintf("h%d", i)})
	}
	ds := dbtest.Dataset(t, f.store, "many", docs)
	ids, _ := f.store.DatasetDocs(ctx, ds.ID)
	rule, _ := cluster.ParseRule("earliest")
	nm := db.NewManifest{DatasetID: ds.ID, Params: review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 8}, Threshold: 0.8,
		Verification: review.Exact, Policy: cluster.KeeperStar, Rule: rule}}
	for c := range clusters {
		k := ids[c*(perCluster+1)].ID
		dc := db.Cluster{Keeper: k, KeeperRule: "earliest", Size: perCluster + 1, WeakestLink: 0.9, Weakest: k}
		for j := 1; j <= perCluster; j++ {
			d := ids[c*(perCluster+1)+j].ID
			dc.Items = append(dc.Items, db.Item{Doc: d, Keeper: k, Score: 0.9, Estimate: 0.9, Exact: 0.9, Reason: cluster.Near})
			dc.Links = append(dc.Links, db.Link{A: k, B: d, Sim: 0.9})
		}
		nm.Clusters = append(nm.Clusters, dc)
	}
	admin, _ := f.store.UserByName(ctx, "admin")
	m, err := f.store.CreateManifest(ctx, admin, nm)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := f.store.Clusters(ctx, m.ID, db.ClusterFilter{})
	type job struct{ item, cluster int64 }
	var work [reviewers][]job
	for i, r := range rows {
		c, _ := f.store.Cluster(ctx, m.ID, r.ID)
		for _, it := range c.Items {
			w := i * reviewers / len(rows)
			work[w] = append(work[w], job{it.ID, c.ID})
		}
	}
	cookies := make([]*http.Cookie, reviewers)
	for i := range cookies {
		cookies[i] = f.signInAs(fmt.Sprintf("rev%02d", i), auth.Reviewer)
	}
	var wg sync.WaitGroup
	failures := make(chan string, reviewers*perReviewer)
	for i := range reviewers {
		wg.Go(func() {
			for _, j := range work[i] {
				rec := f.do("POST", fmt.Sprintf("/manifests/%d/items/%d", m.ID, j.item), cookies[i],
					url.Values{"decision": {"approved"}, "cluster": {fmt.Sprint(j.cluster)}})
				if rec.Code != http.StatusSeeOther {
					failures <- fmt.Sprintf("reviewer %d, item %d: %d %.200s", i, j.item, rec.Code, rec.Body.String())
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	for msg := range failures {
		t.Error(msg)
	}
	counts, _ := f.store.CountManifest(ctx, m.ID)
	total := reviewers * perReviewer
	if counts.Approved != total || counts.Proposed != 0 {
		t.Errorf("approved %d, undecided %d; want %d and 0", counts.Approved, counts.Proposed, total)
	}
	events, _ := f.store.AuditOf(ctx, fmt.Sprintf("manifest:%d", m.ID), 10*total)
	decided := map[string]int{}
	for _, e := range events {
		if e.Action == "manifest.decide" {
			decided[e.Actor]++
		}
	}
	n := 0
	for _, k := range decided {
		n += k
	}
	if n != total || len(decided) != reviewers {
		t.Errorf("%d decision events by %d reviewers; want %d by %d", n, len(decided), total, reviewers)
	}
	for i := range reviewers {
		acts, _ := f.store.RecentActions(ctx, m.ID, mustUser(t, f, fmt.Sprintf("rev%02d", i)), 1000)
		if len(acts) != perReviewer {
			t.Errorf("reviewer %d has %d recorded decisions; want %d", i, len(acts), perReviewer)
		}
	}
	check, err := f.store.VerifyAudit(ctx, review.AuditHead{})
	if err != nil || !check.Intact() {
		t.Errorf("audit chain after the concurrent review: %+v, %v", check, err)
	}
	m2, _ := f.store.Manifest(ctx, m.ID)
	allRows, _ := f.store.ManifestRows(ctx, m.ID)
	if review.ManifestHash(m2.Dataset, m2.Params, allRows) != m2.ContentHash {
		t.Error("the stored content hash is not the hash of the stored rows")
	}
}

// signInAs creates a user with a name and a role and returns a live session cookie.
func (f *fixture) signInAs(name string, role auth.Role) *http.Cookie {
	f.t.Helper()
	ctx := context.Background()
	u, err := f.store.CreateUser(ctx, "test", name, role, "x")
	if err != nil {
		f.t.Fatal(err)
	}
	return sessionFor(f.t, f.store, u.ID)
}

func mustUser(t *testing.T, f *fixture, name string) int64 {
	t.Helper()
	u, err := f.store.UserByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// The manifest's settings take the run form's rule for approvals: 1 to 20 (more than
// the team has approvers is allowed, and said: TestLoweringIsRecorded).
func TestManifestApprovalsSetting(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	rev := f.signIn("reviewer")
	path := fmt.Sprintf("/manifests/%d/settings", m.ID)
	if loc, body := f.follow(f.do("POST", path, rev, url.Values{"approvals": {"50"}}), rev); loc != fmt.Sprintf("/manifests/%d", m.ID) && !strings.HasPrefix(loc, fmt.Sprintf("/manifests/%d?", m.ID)) ||
		!strings.Contains(body, `data-testid="manifest-error">approvals required: want a whole number from 1 to 20`) {
		t.Errorf("approvals=50: sent to %s; want the manifest page naming the range\n%s", loc, body)
	}
	if rec := f.do("POST", path, rev, url.Values{"approvals": {"1"}}); rec.Code != http.StatusSeeOther {
		t.Errorf("approvals=1: %d; want 303", rec.Code)
	}
}

// TestRunFormPostedTwice: the run form carries a one-time token; the same form posted
// twice (a double click, a replayed POST) starts one run and makes one manifest.
func TestRunFormPostedTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	first := f.withRun(chainRun) // the sample, its labels and a run without a token
	rev := f.signIn("reviewer")
	_, body := get(t, f.h, fmt.Sprintf("/datasets/%d/runs/new", first.DatasetID), rev)
	m := regexp.MustCompile(`name="token" value="([0-9a-f]{32})"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the run form has no one-time token")
	}
	form := chainRunWith("token", m[1])
	path := fmt.Sprintf("/datasets/%d/runs", first.DatasetID)
	one, two := f.do("POST", path, rev, form), f.do("POST", path, rev, form)
	loc := one.Header().Get("Location")
	if one.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/runs/run-") {
		t.Fatalf("first post: %d %s", one.Code, loc)
	}
	if two.Code != http.StatusSeeOther || strings.Split(two.Header().Get("Location"), "?")[0] != loc {
		t.Fatalf("second post: %d to %s; want 303 to the first run %s", two.Code, two.Header().Get("Location"), loc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := f.jobs.Wait(ctx, strings.TrimPrefix(loc, "/runs/")); err != nil {
		t.Fatal(err)
	}
	ms, err := f.store.Manifests(context.Background(), first.DatasetID)
	if err != nil || len(ms) != 2 {
		t.Errorf("%d manifests (%v); want 2: the tokenless run and one for the form posted twice", len(ms), err)
	}
}

// The manifest and cluster pages say what a POST did once, to the person who sent it:
// the message is a notice kept on the server, not text in the URL, so a link someone
// sends cannot put words of its own on these pages (?msg=... was shown as the page's
// own green message), and a reload does not repeat it.
func TestManifestMessagesAreNotInTheURL(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	rev := f.signIn("reviewer")
	base := fmt.Sprintf("/manifests/%d", m.ID)
	rows, _ := f.store.Clusters(context.Background(), m.ID, db.ClusterFilter{})
	cl := fmt.Sprintf("%s/clusters/%d", base, rows[0].ID)
	const forged = "Security team: this manifest is verified, approve it at once"
	for _, path := range []string{base, cl} {
		if _, body := get(t, f.h, path+"?msg="+url.QueryEscape(forged), f.signIn("approver")); strings.Contains(body, forged) {
			t.Errorf("GET %s?msg=... shows the link's text as the page's message", path)
		}
	}
	// Refused too: a 303 to the page that says why, once (README: every form answers with
	// a redirect), not the page rendered as the answer to a POST with 409 or 422.
	for _, tc := range []struct {
		path       string
		form       url.Values
		page, want string
	}{
		{base + "/bulk", url.Values{"bar": {"2"}}, base, `data-testid="manifest-error">bar: want a similarity in (0, 1]`},
		{base + "/submit", nil, base, `data-testid="manifest-error">`},
		{cl + "/cut", url.Values{"link": {"998-999"}}, cl, `data-testid="cluster-error">`},
		{base + "/bulk", url.Values{"bar": {"0.9"}, "expect": {"1"}}, base, `data-testid="manifest-message">Approved `},
		{cl + "/comment", url.Values{"comment": {"looked at it"}}, cl, `data-testid="cluster-message">Comment added.`},
	} {
		form := tc.form
		rec := f.do("POST", tc.path, rev, form)
		loc := rec.Header().Get("Location")
		if rec.Code != http.StatusSeeOther || strings.Contains(loc, "msg=") || !strings.HasPrefix(loc, tc.page) {
			t.Errorf("POST %s: %d to %s; want 303 to %s without the message in the URL", tc.path, rec.Code, loc, tc.page)
			continue
		}
		if _, body := get(t, f.h, loc, rev); !strings.Contains(body, tc.want) {
			t.Errorf("after POST %s the page does not say %q", tc.path, tc.want)
		}
		if _, body := get(t, f.h, loc, rev); strings.Contains(body, tc.want) {
			t.Errorf("reloading %s says %q again", loc, tc.want)
		}
	}
}

// TestIDsInURLsAreCanonical: an {id} in a URL is a positive decimal number written the
// one way (loadByID): a sign, leading zeros, zero, a negative, an overflow or a word is
// a 404, so one thing has one address.
func TestIDsInURLsAreCanonical(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	rows, _ := f.store.Clusters(context.Background(), m.ID, db.ClusterFilter{})
	rev := f.signIn("reviewer")
	for _, pattern := range []string{"/manifests/%s", "/manifests/" + itoa64(m.ID) + "/clusters/%s", "/datasets/%s/runs/new", "/documents/%s/raw"} {
		good := map[string]string{"/manifests/%s": itoa64(m.ID), "/datasets/%s/runs/new": itoa64(m.DatasetID), "/documents/%s/raw": "1"}[pattern]
		if good == "" {
			good = itoa64(rows[0].ID)
		}
		if res, _ := get(t, f.h, fmt.Sprintf(pattern, good), rev); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d; want 200", fmt.Sprintf(pattern, good), res.StatusCode)
		}
		for _, bad := range []string{"+" + good, "0" + good, "00" + good, "0", "-" + good, "99999999999999999999", "1e0", "abc", "%20" + good} {
			if res, _ := get(t, f.h, fmt.Sprintf(pattern, bad), rev); res.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s: %d; want 404", fmt.Sprintf(pattern, bad), res.StatusCode)
			}
		}
	}
}

// The estimates' agreement line says its count in words: "over 1 pair", not "1 pairs".
func TestEstimateRowsAgreementInWords(t *testing.T) {
	for units, want := range map[int]string{1: "over 1 pair labeled twice", 3: "over 3 pairs labeled twice"} {
		rows := estimateRows(&review.Estimates{AlphaUnits: units})
		if got := rows[1].Value; rows[1].Name != "Agreement" || !strings.Contains(got, want) {
			t.Errorf("%d pairs: %s %q; want %q", units, rows[1].Name, got, want)
		}
	}
}
