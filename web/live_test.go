package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// runOn runs query's configuration over dataset ds through the run form, as who, and
// returns the manifest (the sample and its labels are withRun's).
func (f *fixture) runOn(ds int64, query url.Values, who string) db.Manifest {
	f.t.Helper()
	ck := f.signIn(who)
	rec := f.do("POST", fmt.Sprintf("/datasets/%d/runs", ds), ck, query)
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/runs/") {
		f.t.Fatalf("start a run: %d %s\n%s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
	return f.manifestOfRun(rec.Header().Get("Location"), ck)
}

// manifestOfRun waits for the run whose page is loc and returns its manifest.
func (f *fixture) manifestOfRun(loc string, ck *http.Cookie) db.Manifest {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	snap, err := f.jobs.Wait(ctx, strings.TrimPrefix(loc, "/runs/"))
	if err != nil || snap.Err != "" {
		f.t.Fatalf("run: %v %s", err, snap.Err)
	}
	_, body := get(f.t, f.h, loc, ck)
	m := regexp.MustCompile(`href="/manifests/(\d+)" data-testid="run-manifest"`).FindStringSubmatch(body)
	if m == nil {
		f.t.Fatalf("run page names no manifest:\n%s", body)
	}
	var id int64
	fmt.Sscan(m[1], &id)
	man, err := f.store.Manifest(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return man
}

// signedOff decides every removal of m (as the reviewer: approved, but excluded in the
// clusters of the documents keep names), requests sign-off and has the approver approve
// it; it returns the manifest.
func (f *fixture) signedOff(m db.Manifest, keep ...string) db.Manifest {
	f.t.Helper()
	f.decideAll(m, keep...)
	rev, appr := f.signIn("reviewer"), f.signIn("approver")
	base := fmt.Sprintf("/manifests/%d", m.ID)
	if rec := f.do("POST", base+"/submit", rev, url.Values{}); rec.Code != http.StatusSeeOther {
		f.t.Fatalf("submit: %d", rec.Code)
	}
	m, _ = f.store.Manifest(context.Background(), m.ID)
	f.do("POST", base+"/reviews", appr, url.Values{"verdict": {"approve"}, "hash": {m.ContentHash}})
	m, _ = f.store.Manifest(context.Background(), m.ID)
	if m.State != review.SignedOff {
		f.t.Fatalf("manifest %d is %s after the approval; want signed off", m.ID, m.State)
	}
	return m
}

// decideAll approves every removal of m as the reviewer, but excludes those of the
// clusters of the documents keep names.
func (f *fixture) decideAll(m db.Manifest, keep ...string) {
	f.t.Helper()
	rev := f.signIn("reviewer")
	ctx := context.Background()
	ids, _ := f.store.DocumentIDs(ctx, m.DatasetID, keep)
	rows, _ := f.store.Clusters(ctx, m.ID, db.ClusterFilter{})
	for _, r := range rows {
		c, _ := f.store.Cluster(ctx, m.ID, r.ID)
		d := "approved"
		for _, doc := range c.Members() {
			for _, id := range ids {
				if doc == id {
					d = "excluded"
				}
			}
		}
		form := url.Values{"decision": {d}, "chained": {strconv.Itoa(manifests.ChainedUndecided(c, m.Params.Threshold))}}
		if rec := f.do("POST", fmt.Sprintf("/manifests/%d/clusters/%d/decide", m.ID, r.ID), rev, form); rec.Code != http.StatusSeeOther {
			f.t.Fatalf("decide cluster %d: %d", r.ID, rec.Code)
		}
	}
}

// A manifest prepared before another's export is stale from that moment: its page, the
// list and the approval form say what changed (which manifest, when, which of its
// documents), request sign-off and approvals are refused with that reason (and audited),
// the run form counts the live documents and links the manifest that removed the
// others, and "prepare a new run" is one click that carries the decisions over.
func TestStaleManifestThroughHandlers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	m1 := f.withRun(chainRun)
	longest := chainRunWith("keeper", "longest")
	inReview := f.runOn(m1.DatasetID, longest, "reviewer")
	draft := f.runOn(m1.DatasetID, chainRun, "reviewer")
	rev, appr := f.signIn("reviewer"), f.signIn("approver")
	f.decideAll(inReview)
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/submit", inReview.ID), rev, url.Values{}); rec.Code != http.StatusSeeOther {
		t.Fatalf("submit: %d", rec.Code)
	}
	f.decideAll(draft)
	// Fresh: no stale mark anywhere.
	if _, body := get(t, f.h, fmt.Sprintf("/manifests/%d", inReview.ID), appr); strings.Contains(body, `data-testid="manifest-stale"`) ||
		!strings.Contains(body, `data-testid="approve"`) {
		t.Fatalf("a fresh manifest in review: stale mark or no approve button\n%.2000s", body)
	}
	// Manifest 1 is signed off (its chain excluded) and exported: =D2 is tombstoned.
	m1 = f.signedOff(m1, "A")
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/export", m1.ID), appr, url.Values{"hash": {m1.ContentHash}, "count": {strconv.Itoa(f.approvedCount(m1))}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("export: %d", rec.Code)
	}
	exported := fmt.Sprintf("manifest %d was exported (1 document tombstoned)", m1.ID)
	for _, m := range []db.Manifest{inReview, draft} {
		_, body := get(t, f.h, fmt.Sprintf("/manifests/%d", m.ID), appr)
		if !strings.Contains(body, `data-testid="manifest-stale"`) || !strings.Contains(body, exported) ||
			!strings.Contains(body, "1 of this manifest&#39;s documents among them (=D2)") {
			t.Errorf("manifest %d's page after manifest %d's export does not say so, naming =D2\n%.3000s", m.ID, m1.ID, body)
		}
	}
	_, list := get(t, f.h, "/manifests", rev)
	for _, m := range []db.Manifest{inReview, draft} {
		if want := fmt.Sprintf(`data-testid="manifest-stale-%d">stale: manifest %d exported`, m.ID, m1.ID); !strings.Contains(list, want) {
			t.Errorf("the manifest list does not mark manifest %d stale (%s)", m.ID, want)
		}
	}
	if strings.Contains(list, fmt.Sprintf(`data-testid="manifest-stale-%d"`, m1.ID)) {
		t.Errorf("the exported manifest %d is marked stale", m1.ID)
	}
	// The approval form says so instead of offering the approval; a post is refused.
	inReview, _ = f.store.Manifest(ctx, inReview.ID)
	_, page := get(t, f.h, fmt.Sprintf("/manifests/%d", inReview.ID), appr)
	if !strings.Contains(page, `data-testid="approval-stale"`) || strings.Contains(page, `data-testid="approve"`) {
		t.Errorf("the approval form of a stale manifest offers the approval or does not say why not\n%.3000s", page)
	}
	_, refusedPage := f.follow(f.do("POST", fmt.Sprintf("/manifests/%d/reviews", inReview.ID), appr,
		url.Values{"verdict": {"approve"}, "hash": {inReview.ContentHash}}), appr)
	if !strings.Contains(refusedPage, `data-testid="manifest-error">Approval refused: the dataset changed since the run: `+exported) {
		t.Errorf("an approval of a stale manifest is not refused naming the export\n%.3000s", refusedPage)
	}
	_, refusedPage = f.follow(f.do("POST", fmt.Sprintf("/manifests/%d/submit", draft.ID), rev, url.Values{}), rev)
	if !strings.Contains(refusedPage, `data-testid="manifest-error">Request sign-off refused: the dataset changed since the run: `+exported) {
		t.Errorf("a request for sign-off of a stale draft is not refused naming the export\n%.3000s", refusedPage)
	}
	for _, m := range []db.Manifest{inReview, draft} {
		if m, _ := f.store.Manifest(ctx, m.ID); m.State != map[int64]review.State{inReview.ID: review.InReview, draft.ID: review.Draft}[m.ID] {
			t.Errorf("manifest %d moved to %s after a refusal", m.ID, m.State)
		}
		events, _ := f.store.AuditOf(ctx, fmt.Sprintf("manifest:%d", m.ID), 100)
		refused := 0
		for _, e := range events {
			if e.Action == "manifest.refused" && strings.Contains(e.Detail, "the dataset changed since the run") {
				refused++
			}
		}
		if refused != 1 {
			t.Errorf("manifest %d: %d refusals in the audit log; want 1", m.ID, refused)
		}
	}
	// The run form counts the live documents and links the manifest that removed two.
	_, form := get(t, f.h, fmt.Sprintf("/datasets/%d/runs/new", m1.DatasetID), rev)
	if !strings.Contains(form, "Over the 9 live documents") || !strings.Contains(form, fmt.Sprintf(`data-testid="run-removed-%d">manifest %d</a>`, m1.ID, m1.ID)) {
		t.Errorf("the run form does not count the live documents or link manifest %d\n%.3000s", m1.ID, form)
	}
	// Prepare it again: one click, a new run over the live documents, decisions carried.
	token := regexp.MustCompile(`name="token" value="([0-9a-f]{32})"`).FindStringSubmatch(refusedPage)
	if token == nil {
		t.Fatalf("the stale draft's page offers no one-click new run\n%.3000s", refusedPage)
	}
	rec := f.do("POST", fmt.Sprintf("/manifests/%d/prepare-again", draft.ID), rev, url.Values{"token": {token[1]}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("prepare again: %d\n%s", rec.Code, rec.Body.String())
	}
	again := f.manifestOfRun(rec.Header().Get("Location"), rev)
	// B and C removed in favour of A as before: their approvals carry over; =D2's
	// removal does not apply any more (it is gone).
	if c := again.CarriedOver; c == nil || c.From != draft.ID || c.Decisions != 2 || c.NotApplying != 1 {
		t.Fatalf("the manifest prepared again carried %+v; want 2 decisions of manifest %d, 1 not applying", again.CarriedOver, draft.ID)
	}
	items, _ := f.store.Items(ctx, again.ID)
	ids, _ := f.store.DocumentIDs(ctx, m1.DatasetID, []string{"=D2"})
	for _, it := range items {
		if it.Doc == ids["=D2"] || it.Keeper == ids["=D2"] {
			t.Errorf("the new run proposes or keeps a tombstoned document: %+v", it)
		}
		if it.Decision != review.Approved {
			t.Errorf("removal of document %d is %s; want the approval carried over", it.Doc, it.Decision)
		}
	}
	_, body := get(t, f.h, fmt.Sprintf("/manifests/%d", again.ID), rev)
	if strings.Contains(body, `data-testid="manifest-stale"`) || !strings.Contains(body, `data-testid="carried-over"`) {
		t.Errorf("the manifest prepared again: stale, or silent on what it carried over\n%.2000s", body)
	}
	if _, body := get(t, f.h, fmt.Sprintf("/manifests/%d", draft.ID), rev); !strings.Contains(body, fmt.Sprintf(`manifest %d</a>.`, again.ID)) {
		t.Errorf("the stale manifest does not link the one prepared again from it")
	}
}

// Twenty approvals sent at once by one approver (a double click, a script) store one
// review row and one audit event (issue 25.8: 20 rows).
func TestParallelApprovalsAreStoredOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	m := f.withRun(chainRun)
	f.decideAll(m)
	rev, appr := f.signIn("reviewer"), f.signIn("approver")
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/settings", m.ID), rev, url.Values{"approvals": {"2"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("settings: %d", rec.Code)
	}
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/submit", m.ID), rev, url.Values{}); rec.Code != http.StatusSeeOther {
		t.Fatalf("submit: %d", rec.Code)
	}
	m, _ = f.store.Manifest(ctx, m.ID)
	var wg sync.WaitGroup
	codes := make(chan int, 20)
	for range 20 {
		wg.Go(func() {
			codes <- f.do("POST", fmt.Sprintf("/manifests/%d/reviews", m.ID), appr, url.Values{"verdict": {"approve"}, "hash": {m.ContentHash}}).Code
		})
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusSeeOther {
			t.Errorf("a parallel approval answered %d; want 303", c)
		}
	}
	reviews, _ := f.store.Reviews(ctx, m.ID)
	events, _ := f.store.AuditOf(ctx, fmt.Sprintf("manifest:%d", m.ID), 1000)
	n := 0
	for _, e := range events {
		if e.Action == "manifest.review" {
			n++
		}
	}
	if len(reviews) != 1 || n != 1 {
		t.Errorf("20 parallel approvals by one approver: %d review rows, %d audit events; want 1 and 1", len(reviews), n)
	}
	if _, body := get(t, f.h, fmt.Sprintf("/manifests/%d", m.ID), appr); !strings.Contains(body, "Approvals 1 of 2") {
		t.Errorf("the manifest page does not count one approval of two")
	}
}

// "Make keeper" in a one-cluster manifest whose cluster holds the highest removal ids
// answered 500 (UNIQUE constraint failed: manifest_items.id) every time (issue 25.6).
func TestMakeKeeperInAOneClusterManifest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	run := f.withRun(chainRun)
	chain := f.clusterWith(run, "A")
	// A manifest of that one cluster, as a reviewer's upload of results would make it.
	reviewer, _ := f.store.UserByName(ctx, "reviewer")
	chain.ID = 0
	m, err := f.store.CreateManifest(ctx, reviewer, db.NewManifest{DatasetID: run.DatasetID, Params: run.Params, DatasetHash: run.DatasetHash,
		ApprovalsRequired: 1, Clusters: []db.Cluster{chain}})
	if err != nil {
		t.Fatal(err)
	}
	c := f.clusterWith(m, "A")
	last := c.Items[len(c.Items)-1]
	rev := f.signIn("reviewer")
	rec := f.do("POST", fmt.Sprintf("/manifests/%d/clusters/%d/keeper", m.ID, c.ID), rev, url.Values{"doc": {itoa64(last.Doc)}, "reason": {"the maintained copy"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("make keeper in the cluster with the highest removal ids: %d; want 303\n%.500s", rec.Code, rec.Body.String())
	}
	if c2 := f.clusterWith(m, "A"); c2.Keeper != last.Doc {
		t.Errorf("keeper after make keeper: %d; want %d", c2.Keeper, last.Doc)
	}
}

// clusterWith returns m's cluster holding the document ext.
func (f *fixture) clusterWith(m db.Manifest, ext string) db.Cluster {
	f.t.Helper()
	ctx := context.Background()
	ids, _ := f.store.DocumentIDs(ctx, m.DatasetID, []string{ext})
	rows, _ := f.store.Clusters(ctx, m.ID, db.ClusterFilter{})
	for _, r := range rows {
		c, _ := f.store.Cluster(ctx, m.ID, r.ID)
		for _, d := range c.Members() {
			if d == ids[ext] {
				return c
			}
		}
	}
	f.t.Fatalf("manifest %d has no cluster holding %s", m.ID, ext)
	return db.Cluster{}
}

// A run killed while it saved its manifest was a 404 after the restart ("No such run"),
// with no record of what happened. Its record says so now: the page says it was
// interrupted, while doing what, that nothing was saved, and offers to run it again.
func TestInterruptedRunSaysSo(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	m := f.withRun(chainRun)
	reviewer, _ := f.store.UserByName(ctx, "reviewer")
	// What a process killed during the save leaves: a record running, in its last phase,
	// and no job of it in the registry of the process that starts next.
	form := url.Values{"spec": {"level=word size=5 k=128"}, "threshold": {"0.75"}}
	id, err := f.store.StartRun(ctx, reviewer, db.NewRun{DatasetID: m.DatasetID, Title: "chain v1, components 32x4 t=0.75 exact", Form: form.Encode()})
	if err != nil {
		t.Fatal(err)
	}
	f.store.SetRunJob(ctx, id, "run-killed")
	f.store.SetRunPhase(ctx, id, "saving the manifest")
	if n, err := f.store.MarkRunsInterrupted(ctx); err != nil || n != 1 {
		t.Fatalf("MarkRunsInterrupted = %d, %v; want 1", n, err)
	}
	res, body := get(t, f.h, "/runs/run-killed", f.signIn("reviewer"))
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `data-testid="run-interrupted"`) ||
		!strings.Contains(body, "the server stopped while it was saving the manifest") || !strings.Contains(body, "No manifest was made") {
		t.Fatalf("the page of a run killed while saving: %d\n%.2000s", res.StatusCode, body)
	}
	if !strings.Contains(body, fmt.Sprintf(`href="/datasets/%d/runs/new?%s" data-testid="run-again"`, m.DatasetID, strings.ReplaceAll(form.Encode(), "&", "&amp;"))) {
		t.Errorf("the interrupted run does not offer to run it again with its settings\n%.2000s", body)
	}
	// Someone else's run stays unseen.
	if res, _ := get(t, f.h, "/runs/run-killed", f.signInAs("other-reviewer", "reviewer")); res.StatusCode != http.StatusNotFound {
		t.Errorf("another reviewer sees the run's record: %d", res.StatusCode)
	}
	// The run that finished keeps its record too (the first run recorded): done, with
	// its manifest, found by its job after a restart.
	done, err := f.store.Run(ctx, 1)
	if err != nil || done.State != db.RunDone || done.ManifestID != m.ID || done.JobID == "" {
		t.Fatalf("the record of the run that made manifest %d: %+v, %v", m.ID, done, err)
	}
	if byJob, err := f.store.RunByJob(ctx, done.JobID); err != nil || byJob.ID != done.ID {
		t.Errorf("RunByJob(%s) = %+v, %v", done.JobID, byJob, err)
	}
}

// A label added after the sign-off marks the sign-off record's label figures stale, on
// its page and in signoff.json (issue 25.8).
func TestLabelAfterSignOffMarksTheRecordStale(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	m := f.signedOff(f.withRun(chainRun))
	appr := f.signIn("approver")
	path := fmt.Sprintf("/manifests/%d/signoff", m.ID)
	if _, body := get(t, f.h, path, appr); strings.Contains(body, `data-testid="signoff-labels-stale"`) {
		t.Fatal("the record says its labels are stale before any new label")
	}
	if _, err := ingest.Labels(ctx, f.store, strings.NewReader("a,b,category,annotator\nB,C,minor,late\n"), "late.csv",
		ingest.LabelOptions{DatasetID: m.DatasetID}); err != nil {
		t.Fatal(err)
	}
	if _, body := get(t, f.h, path, appr); !strings.Contains(body, `data-testid="signoff-labels-stale">The label figures below are stale: campaign`) ||
		!strings.Contains(body, "1 label event on 1 pair") {
		t.Errorf("the record does not say a label came after its figures\n%.2000s", body)
	}
	_, js := get(t, f.h, path+".json", appr)
	var so struct {
		LabelsSince *struct {
			Events int `json:"label_events"`
		} `json:"labels_since"`
	}
	if err := json.Unmarshal([]byte(js), &so); err != nil || so.LabelsSince == nil || so.LabelsSince.Events != 1 {
		t.Errorf("signoff.json labels_since: %+v, %v\n%.500s", so.LabelsSince, err, js)
	}
}

// Whoever made the review decisions may approve but not alone: an admin who approved
// every removal of a manifest a reviewer ran, requested sign-off and approved it, signed
// it off alone (issue 25.4). Two approvals are the default; fewer is recorded.
func TestSeparationOfDutiesThroughHandlers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	m := f.withRun(chainRun) // approvals 1: lowered from 2, recorded
	admin, appr := f.admin, f.signIn("approver")
	base := fmt.Sprintf("/manifests/%d", m.ID)
	if rec := f.do("POST", base+"/bulk", admin, url.Values{"bar": {"0.75"}, "expect": {"2"}}); rec.Code != http.StatusSeeOther {
		t.Fatal(rec.Code)
	}
	rows, _ := f.store.Clusters(ctx, m.ID, db.ClusterFilter{})
	for _, r := range rows {
		c, _ := f.store.Cluster(ctx, m.ID, r.ID)
		f.do("POST", fmt.Sprintf("%s/clusters/%d/decide", base, r.ID), admin, url.Values{"decision": {"approved"},
			"chained": {strconv.Itoa(manifests.ChainedUndecided(c, m.Params.Threshold))}})
	}
	if rec := f.do("POST", base+"/submit", admin, url.Values{}); rec.Code != http.StatusSeeOther {
		t.Fatal(rec.Code)
	}
	m, _ = f.store.Manifest(ctx, m.ID)
	_, page := f.follow(f.do("POST", base+"/reviews", admin, url.Values{"verdict": {"approve"}, "hash": {m.ContentHash}}), admin)
	if m, _ := f.store.Manifest(ctx, m.ID); m.State != review.InReview {
		t.Fatalf("the admin who made every decision signed it off alone: %s", m.State)
	}
	if !strings.Contains(page, `data-testid="separation-waiting"`) || !strings.Contains(page, "an approver who made none of its decisions must approve it too") {
		t.Errorf("the page does not say who must still approve\n%.3000s", page)
	}
	if _, body := get(t, f.h, base, appr); !strings.Contains(body, `data-testid="deciders">Review decisions by admin`) {
		t.Errorf("the page does not name the deciders")
	}
	f.do("POST", base+"/reviews", appr, url.Values{"verdict": {"approve"}, "hash": {m.ContentHash}})
	if m, _ = f.store.Manifest(ctx, m.ID); m.State != review.SignedOff {
		t.Fatalf("after an approver who decided nothing: %s; want signed off", m.State)
	}
	_, rec := get(t, f.h, base+"/signoff", appr)
	for _, want := range []string{"lowered from 2 to 1 approval by reviewer", "Review decisions by", "<dd>admin</dd>"} {
		if !strings.Contains(rec, want) {
			t.Errorf("the sign-off record lacks %q", want)
		}
	}
	events, _ := f.store.AuditOf(ctx, "manifest:"+itoa64(m.ID), 100)
	lowered := false
	for _, e := range events {
		lowered = lowered || (e.Action == "manifest.prepare" && strings.Contains(e.Detail, `"approvals_lowered"`))
	}
	if !lowered {
		t.Error("the lowering to one approval is not in the audit log")
	}
	// The run form offers two.
	if _, form := get(t, f.h, fmt.Sprintf("/datasets/%d/runs/new", m.DatasetID), f.signIn("reviewer")); !strings.Contains(form, `name="approvals" value="2"`) {
		t.Error("the run form does not offer two approvals by default")
	}
}

// A document one open manifest keeps and another proposes to remove is flagged on both
// manifests' pages and on the cluster pages (issue 24): exporting both could leave its
// cluster with no copy.
func TestCrossConflictsFlaggedOnBoth(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	m1 := f.withRun(chainRun) // keeps A, removes B and C
	m2 := f.runOn(m1.DatasetID, chainRun, "reviewer")
	rev := f.signIn("reviewer")
	ids, _ := f.store.DocumentIDs(ctx, m1.DatasetID, []string{"A", "B"})
	chain2 := f.clusterWith(m2, "A")
	// In manifest 2 B becomes the keeper: A is removed there, kept in manifest 1.
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/clusters/%d/keeper", m2.ID, chain2.ID), rev,
		url.Values{"doc": {itoa64(ids["B"])}, "reason": {"B is the maintained copy"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("make keeper: %d", rec.Code)
	}
	chain1 := f.clusterWith(m1, "A")
	_, page1 := get(t, f.h, fmt.Sprintf("/manifests/%d", m1.ID), rev)
	if want := fmt.Sprintf("A is kept here (cluster %d) but manifest %d (draft) proposes to remove it", chain1.ID, m2.ID); !strings.Contains(page1, `data-testid="cross-conflicts"`) ||
		!strings.Contains(page1, want) {
		t.Errorf("manifest %d's page does not flag A (%s)\n%.3000s", m1.ID, want, page1)
	}
	_, page2 := get(t, f.h, fmt.Sprintf("/manifests/%d", m2.ID), rev)
	if want := fmt.Sprintf("A is removed here (cluster %d) but manifest %d (draft) keeps it in cluster %d", chain2.ID, m1.ID, chain1.ID); !strings.Contains(page2, want) {
		t.Errorf("manifest %d's page does not flag A (%s)", m2.ID, want)
	}
	_, cl := get(t, f.h, fmt.Sprintf("/manifests/%d/clusters/%d", m1.ID, chain1.ID), rev)
	if want := fmt.Sprintf(`data-testid="conflict-A">manifest %d (draft) removes it</a>`, m2.ID); !strings.Contains(cl, want) {
		t.Errorf("the cluster page of manifest %d does not flag its keeper A (%s)", m1.ID, want)
	}
	_, list := get(t, f.h, "/manifests", rev)
	if !strings.Contains(list, fmt.Sprintf(`data-testid="manifest-conflicts-%d"`, m1.ID)) || !strings.Contains(list, fmt.Sprintf(`data-testid="manifest-conflicts-%d"`, m2.ID)) {
		t.Error("the manifest list does not count the conflicts of both")
	}
}

// Every refusal in the review path is in the audit log once with its reason, whether the
// rules refused (a request for sign-off with undecided removals) or the page did (a
// malformed link to cut).
func TestRefusalsAreAudited(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	m := f.withRun(chainRun)
	rev := f.signIn("reviewer")
	chain := f.clusterWith(m, "A")
	f.follow(f.do("POST", fmt.Sprintf("/manifests/%d/submit", m.ID), rev, url.Values{}), rev)
	f.follow(f.do("POST", fmt.Sprintf("/manifests/%d/clusters/%d/cut", m.ID, chain.ID), rev, url.Values{"link": {"not a link"}}), rev)
	events, _ := f.store.AuditOf(ctx, "manifest:"+itoa64(m.ID), 100)
	var got []string
	for _, e := range events {
		if e.Action == "manifest.refused" {
			got = append(got, e.Detail)
		}
	}
	if len(got) != 2 || !strings.Contains(got[0], `"action":"request sign-off"`) || !strings.Contains(got[0], "have no decision yet") ||
		!strings.Contains(got[1], `"action":"cut"`) || !strings.Contains(got[1], "link: choose a link of the cluster") {
		t.Errorf("refusals in the audit log: %q; want the request for sign-off and the cut, each with its reason", got)
	}
}

// approvedCount is how many removals of m an export tombstones: what its confirmation
// states.
func (f *fixture) approvedCount(m db.Manifest) int {
	f.t.Helper()
	counts, err := f.store.CountManifest(context.Background(), m.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return counts.Approved
}
