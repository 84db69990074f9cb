package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// BenchmarkStaleManifestPages measures what staleness and conflicts cost the pages that
// show them, on the demo sample (2,136 documents): two manifests of the same dataset at
// a generous threshold (about 500 removals each, overlapping), the first exported, so the
// second is stale and its keepers and removals meet the first's; then the stale
// manifest's page and the manifest list through the router, and the staleness alone
// (db.DB.Staleness: the changes since the run, the documents each touched, and the
// snapshot of the live documents that says the change still holds).
//
//	go test ./web -run '^$' -bench StaleManifestPages -benchtime 50x
func BenchmarkStaleManifestPages(b *testing.B) {
	if testing.Short() {
		b.Skip("runs two configurations over the demo sample")
	}
	ctx := context.Background()
	store := dbtest.Open(b)
	reg := jobs.NewRegistry(ctx)
	b.Cleanup(func() { reg.Shutdown(ctx) })
	rep, _, err := demo.Load(ctx, store)
	if err != nil {
		b.Fatal(err)
	}
	prep, _ := store.CreateUser(ctx, "bench", "prep", auth.Reviewer, "x")
	appr, _ := store.CreateUser(ctx, "bench", "appr", auth.Approver, "x")
	sigs := sigcache.New(store)
	run := func(rule string) db.Manifest {
		r, _ := cluster.ParseRule(rule)
		p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: 0.5, Verification: review.Exact,
			Policy: cluster.KeeperStar, Rule: r, CodeVersion: "bench"}
		m, err := manifests.Run(ctx, store, sigs, manifests.Request{DatasetID: rep.Dataset.ID, Params: p, By: prep, ApprovalsRequired: 1}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	first, second := run("earliest"), run("longest")
	items, _ := store.Items(ctx, first.ID)
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	if _, err := store.Decide(ctx, prep, first.ID, db.Decision{Items: ids, Decision: review.Approved, Action: "decide"}); err != nil {
		b.Fatal(err)
	}
	if err := store.RequestSignOff(ctx, prep, first.ID); err != nil {
		b.Fatal(err)
	}
	first, _ = store.Manifest(ctx, first.ID)
	if _, err := manifests.Review(ctx, store, appr, first, review.Approve, "", first.ContentHash, "bench"); err != nil {
		b.Fatal(err)
	}
	first, _ = store.Manifest(ctx, first.ID)
	if _, err := manifests.Export(ctx, store, appr, first, first.ContentHash); err != nil {
		b.Fatal(err)
	}
	st, err := store.Staleness(ctx, second)
	if err != nil || !st.Stale() {
		b.Fatalf("the second manifest is not stale: %+v, %v", st, err)
	}
	_, conflicts, err := store.CrossConflicts(ctx, second)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("manifest %d: %d removals exported; manifest %d: %d removals, stale (%d of its documents touched); %d conflicts with open manifests",
		first.ID, len(items), second.ID, len(mustItems(b, store, second.ID)), st.Changes[0].Touched, conflicts)
	b.Run("staleness", func(b *testing.B) {
		for b.Loop() {
			if _, err := store.Staleness(ctx, second); err != nil {
				b.Fatal(err)
			}
		}
	})
	cookie := sessionFor(b, store, appr.ID)
	h := New(testDeps(store, reg))
	for _, bc := range []struct{ name, url string }{
		{"stale manifest page", fmt.Sprintf("/manifests/%d", second.ID)},
		{"manifest list", "/manifests"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, bc.url, nil)
				req.AddCookie(cookie)
				rec := serve(h, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d", bc.url, rec.Code)
				}
			}
		})
	}
}

func mustItems(b *testing.B, store *db.DB, id int64) []db.Item {
	b.Helper()
	items, err := store.Items(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	return items
}
