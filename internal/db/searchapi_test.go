package db

import (
	"errors"
	"slices"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// API tokens: stored by hash only, found by it, revoked once, audited; a token carries
// its creator's account as it is now, and disabling or demoting the creator revokes
// their tokens.
func TestAPITokens(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	admin := mustUser(t, d, "ada", auth.Admin)
	other := mustUser(t, d, "bo", auth.Admin)
	hash := auth.HashToken("dsk_secret")
	tok, err := d.CreateAPIToken(ctx, admin, "pipeline", hash)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name != "pipeline" || tok.Scope != ScopeSearch || tok.CreatedBy != "ada" || tok.Revoked || !tok.LastUsed.IsZero() ||
		tok.CreatorRole != auth.Admin || tok.CreatorDisabled || tok.CreatedAt.IsZero() {
		t.Errorf("created token: %+v", tok)
	}
	if _, err := d.CreateAPIToken(ctx, admin, "again", hash); !errors.Is(err, ErrConflict) {
		t.Errorf("a second token with the same hash: %v; want ErrConflict", err)
	}
	var stored int
	d.w.QueryRowContext(ctx, `SELECT count(*) FROM api_tokens WHERE token_hash = ? AND name = 'pipeline'`, hash).Scan(&stored)
	if stored != 1 {
		t.Fatalf("the token is not stored by its hash")
	}
	got, err := d.APITokenByHash(ctx, hash)
	if err != nil || got.ID != tok.ID {
		t.Fatalf("APITokenByHash = %+v, %v", got, err)
	}
	if _, err := d.APITokenByHash(ctx, auth.HashToken("dsk_other")); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown token: %v; want ErrNotFound", err)
	}
	if ok, err := d.TryTouchAPIToken(ctx, tok.ID); err != nil || !ok {
		t.Errorf("TryTouchAPIToken = %v, %v; want written", ok, err)
	}
	if got, _ := d.APITokenByHash(ctx, hash); got.LastUsed.IsZero() {
		t.Error("the token's last use was not recorded")
	}
	revoked, err := d.RevokeAPIToken(ctx, other, tok.ID)
	if err != nil || !revoked.Revoked || revoked.RevokedBy != "bo" || revoked.RevokedAt.IsZero() {
		t.Fatalf("RevokeAPIToken = %+v, %v", revoked, err)
	}
	if _, err := d.RevokeAPIToken(ctx, other, tok.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoking twice: %v; want ErrNotFound", err)
	}
	if got, err := d.APITokenByHash(ctx, hash); err != nil || !got.Revoked {
		t.Errorf("a revoked token is still found (the caller refuses it): %+v, %v", got, err)
	}

	// Disabling the creator revokes what they made; a token of someone demoted shows
	// their role now.
	t2, _ := d.CreateAPIToken(ctx, other, "bo's", auth.HashToken("dsk_bo"))
	t3, _ := d.CreateAPIToken(ctx, admin, "ada's", auth.HashToken("dsk_ada"))
	if err := d.SetDisabled(ctx, admin, other.ID, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.APITokenByHash(ctx, auth.HashToken("dsk_bo")); !got.Revoked || !got.CreatorDisabled {
		t.Errorf("token of a disabled admin: %+v; want revoked", got)
	}
	list, err := d.APITokens(ctx)
	if err != nil || len(list) != 3 || list[0].ID != t3.ID || list[1].ID != t2.ID || list[2].ID != tok.ID {
		t.Errorf("APITokens = %+v, %v; want the three, newest first", list, err)
	}
	actions := auditActions(t, d)
	for _, want := range []string{"api_token.create", "api_token.revoke"} {
		if !slices.Contains(actions, want) {
			t.Errorf("audit log lacks %s: %v", want, actions)
		}
	}
}

// A search index is made only from a signed-off manifest and copies its configuration;
// its documents go in all or none, read back in order, with their signatures and
// shingle sets intact; a revoked manifest shows on the index.
func TestSearchIndexes(t *testing.T) {
	t.Parallel()
	f, ctx := newReviewFixture(t), t.Context()
	admin := mustUser(t, f.d, "ada", auth.Admin)
	_, err := f.d.CreateSearchIndex(ctx, admin, "early", f.m.ID)
	if _, ok := errors.AsType[*review.RefusedError](err); !ok {
		t.Errorf("an index from a draft: %v; want refused", err)
	}
	if _, err := f.d.CreateSearchIndex(ctx, admin, "none", 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("an index from no manifest: %v; want ErrNotFound", err)
	}
	m := f.signOff(t)
	x, err := f.d.CreateSearchIndex(ctx, admin, "stream", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if x.Name != "stream" || x.ManifestID != m.ID || x.ManifestHash != m.ContentHash || x.ManifestState != review.SignedOff ||
		x.Params.Threshold != m.Params.Threshold || x.Params.Spec.String() != m.Params.Spec.String() || x.CreatedBy != "ada" {
		t.Errorf("index: %+v", x)
	}
	sigs, err := m.Params.Spec.Signatures([]string{"one two three four five six", "seven eight nine ten eleven twelve"})
	if err != nil {
		t.Fatal(err)
	}
	docs := []SearchDoc{{ID: "a", Signature: sigs[0], Shingles: []uint64{1, 2, 1 << 63}}, {ID: "b", Signature: sigs[1]}}
	if err := f.d.InsertSearchDocs(ctx, x.ID, docs); err != nil {
		t.Fatal(err)
	}
	if err := f.d.InsertSearchDocs(ctx, x.ID, nil); err != nil {
		t.Errorf("inserting nothing: %v", err)
	}
	// An id it holds already: nothing of the batch is stored.
	err = f.d.InsertSearchDocs(ctx, x.ID, []SearchDoc{{ID: "c", Signature: docs[0].Signature}, {ID: "a", Signature: docs[0].Signature}})
	if !errors.Is(err, ErrConflict) {
		t.Errorf("a batch naming a stored id: %v; want ErrConflict", err)
	}
	var read []SearchDoc
	if err := f.d.EachSearchDoc(ctx, x.ID, func(doc SearchDoc) error { read = append(read, doc); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(read) != 2 || read[0].ID != "a" || read[1].ID != "b" || !slices.Equal(read[0].Signature, docs[0].Signature) ||
		!slices.Equal(read[0].Shingles, docs[0].Shingles) || read[1].Shingles != nil {
		t.Errorf("documents read back: %+v; want a and b as stored, c not", read)
	}
	stop := errors.New("stop")
	if err := f.d.EachSearchDoc(ctx, x.ID, func(SearchDoc) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("EachSearchDoc with fn failing = %v; want fn's error", err)
	}
	list, err := f.d.SearchIndexes(ctx)
	if err != nil || len(list) != 1 || list[0].Docs != 2 {
		t.Errorf("SearchIndexes = %+v, %v; want one index of 2 documents", list, err)
	}
	if _, err := f.d.SearchIndexByID(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("SearchIndexByID(999) = %v; want ErrNotFound", err)
	}
	// A stored signature of the wrong length is reported, not misread.
	if _, err := f.d.w.ExecContext(ctx, `UPDATE search_documents SET signature = x'0102' WHERE doc_id = 'b'`); err != nil {
		t.Fatal(err)
	}
	if err := f.d.EachSearchDoc(ctx, x.ID, func(SearchDoc) error { return nil }); err == nil {
		t.Error("a damaged signature was read without an error")
	}
	if _, ok := shinglesFromBytes([]byte{1, 2, 3}); ok {
		t.Error("a shingle set of 3 bytes was read")
	}
	// Revoking the manifest shows on its index, which then stops answering.
	if _, err := f.d.Export(ctx, f.appr, m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.d.Revoke(ctx, f.appr, m.ID, "wrong threshold"); err != nil {
		t.Fatal(err)
	}
	if got, err := f.d.SearchIndexByID(ctx, x.ID); err != nil || got.ManifestState != review.Revoked {
		t.Errorf("index of a revoked manifest: %+v, %v; want its state revoked", got, err)
	}
}
