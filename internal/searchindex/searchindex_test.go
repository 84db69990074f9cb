package searchindex

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/incremental"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// setup opens a store file with a dataset and a signed-off manifest, and returns the
// store, the admin and the manifest.
func setup(t *testing.T, path string) (*db.DB, db.User, db.Manifest) {
	t.Helper()
	ctx := context.Background()
	store := dbtest.OpenFile(t, path)
	r, err := corpus.NewReader(strings.NewReader(`{"id":"a","text":"one two three four five six"}`+"\n"+`{"id":"b","text":"seven eight nine ten eleven"}`+"\n"),
		"d.jsonl", corpus.JSONL, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ingest.Documents(ctx, store, r, "d.jsonl", ingest.Options{Dataset: "d", Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := store.CreateUser(ctx, "test", "admin", auth.Admin, "x")
	prep, _ := store.CreateUser(ctx, "test", "prep", auth.Reviewer, "x")
	appr, _ := store.CreateUser(ctx, "test", "appr", auth.Approver, "x")
	rule, _ := cluster.ParseRule("earliest")
	p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 4}, Threshold: 0.7, Verification: review.Exact,
		Policy: cluster.Components, Rule: rule, CodeVersion: "test"}
	snap, err := store.DatasetSnapshot(ctx, rep.Dataset.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := store.CreateManifest(ctx, prep, db.NewManifest{DatasetID: rep.Dataset.ID, Params: p, DatasetHash: snap, ApprovalsRequired: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := manifests.RequestSignOff(ctx, store, prep, m); err != nil {
		t.Fatal(err)
	}
	m, _ = store.Manifest(ctx, m.ID)
	if _, err := manifests.Review(ctx, store, appr, m, review.Approve, "", m.ContentHash, "test"); err != nil {
		t.Fatal(err)
	}
	m, _ = store.Manifest(ctx, m.ID)
	return store, admin, m
}

func text(n int) string {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "word%d ", (i*7+n)%1000)
	}
	return b.String()
}

// What one process inserts, the next rebuilds: Warm loads every index at start (the
// shingle sets of exact verification too), and searches then find what was inserted.
// A revoked manifest's index is skipped by Warm and refused by Open.
func TestWarmRebuildsAndRevokedIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	store, admin, m := setup(t, path)
	x, err := store.CreateSearchIndex(ctx, admin, "stream", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	svc := New(store, nil)
	ix, err := svc.Open(ctx, x.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix.SearchInsert(ctx, []incremental.Doc{{ID: "p", Text: text(0)}, {ID: "q", Text: text(500)}})
	if err != nil || !res[0].Inserted || !res[1].Inserted {
		t.Fatalf("insert: %+v, %v", res, err)
	}
	if _, err := svc.Open(ctx, 999); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("unknown index: %v; want db.ErrNotFound", err)
	}

	// A second process over the same file.
	store2 := dbtest.OpenFile(t, path)
	svc2 := New(store2, nil)
	if err := svc2.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	svc2.mu.Lock()
	loaded := len(svc2.m)
	svc2.mu.Unlock()
	if loaded != 1 {
		t.Fatalf("Warm loaded %d indexes; want 1", loaded)
	}
	ix2, err := svc2.Open(ctx, x.ID)
	if err != nil || ix2.Len() != 2 {
		t.Fatalf("after Warm: %v, %d documents; want 2", err, ix2.Len())
	}
	got := ix2.Search([]incremental.Doc{{ID: "p2", Text: text(0) + " extra"}})
	if len(got[0].Duplicates) != 1 || got[0].Duplicates[0].ID != "p" || got[0].Duplicates[0].Jaccard < 0.7 {
		t.Errorf("search after a restart: %+v", got)
	}

	// Revoked: the loaded copy is dropped, Open refuses, Warm skips it.
	appr, _ := store.UserByName(ctx, "appr")
	m, _ = store.Manifest(ctx, m.ID)
	if _, err := manifests.Revoke(ctx, store, appr, m, "wrong threshold"); err != nil {
		t.Fatal(err)
	}
	svc2.CloseManifest(m.ID)
	if _, err := svc2.Open(ctx, x.ID); !errors.Is(err, ErrRevoked) {
		t.Errorf("revoked: %v; want ErrRevoked", err)
	}
	svc3 := New(store, nil)
	if err := svc3.Warm(ctx); err != nil || len(svc3.m) != 0 {
		t.Errorf("Warm over a revoked index: %v, %d loaded; want none", err, len(svc3.m))
	}
}
