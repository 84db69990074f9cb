package db

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/review"
)

// A signed-off manifest exported and revoked: its reads agree with what it holds, one
// tombstone is restored by hand, the revoke restores the rest and records who did it.
func TestExportTombstonesAndRevoke(t *testing.T) {
	t.Parallel()
	f, ctx := newReviewFixture(t), t.Context()
	d := f.d
	if c, err := d.CountManifest(ctx, f.m.ID); err != nil || c.Rows != 2 || c.Proposed != 2 || c.Clusters != 1 {
		t.Errorf("CountManifest before decisions = %+v, %v; want 2 rows proposed, 1 cluster", c, err)
	}
	if bulk, err := d.BulkApprovals(ctx, f.m.ID); err != nil || len(bulk) != 0 {
		t.Errorf("BulkApprovals before any = %v, %v; want none", bulk, err)
	}
	m := f.signOff(t)
	if c, _ := d.CountManifest(ctx, m.ID); c.Approved != 2 || c.Undecided() != 0 {
		t.Errorf("CountManifest after sign-off = %+v; want 2 approved, none undecided", c)
	}
	if list, err := d.Manifests(ctx, m.DatasetID); err != nil || len(list) != 1 || list[0].Removals != 2 || list[0].Clusters != 1 {
		t.Errorf("Manifests = %+v, %v; want one with 2 removals in 1 cluster", list, err)
	}
	if rows, err := d.ManifestRows(ctx, m.ID); err != nil || len(rows) != 2 {
		t.Errorf("ManifestRows = %v, %v; want 2", rows, err)
	}
	if byReason, bySize, err := d.RemovalCounts(ctx, m.ID); err != nil || len(byReason) != 1 || bySize[3] != 2 {
		t.Errorf("RemovalCounts = %v, %v, %v; want 2 removals from clusters of 3, one reason", byReason, bySize, err)
	}
	for _, g := range []GroupBy{"source", "lang", "meta:topic"} {
		if _, err := d.ImpactCounts(ctx, m, g); err != nil {
			t.Errorf("ImpactCounts(%s) = %v", g, err)
		}
	}
	if _, err := d.ImpactCounts(ctx, m, "ext_id; DROP TABLE documents"); err == nil {
		t.Error("ImpactCounts of a grouping that is not a column succeeded")
	}
	if rs, err := d.Reviews(ctx, m.ID); err != nil || len(rs) != 1 {
		t.Errorf("Reviews = %+v, %v; want the approver's one", rs, err)
	}
	so, err := d.SignOffs(ctx, m.ID)
	if err != nil || len(so) != 1 || !so[0].Current() {
		t.Fatalf("SignOffs = %+v, %v; want one current", so, err)
	}

	if _, err := d.Export(ctx, f.appr, m.ID); err != nil {
		t.Fatal(err)
	}
	ts, err := d.Tombstones(ctx, m.ID)
	if err != nil || len(ts) != 2 || ts[0].Restored || ts[0].RemovedAt.IsZero() {
		t.Fatalf("Tombstones = %+v, %v; want 2 standing", ts, err)
	}
	if err := d.RestoreTombstone(ctx, f.appr, m.ID, ts[0].Doc); err != nil {
		t.Fatal(err)
	}
	// Restored already: a conflict naming who restored it (it was ErrNotFound, a 404 to the
	// nine losers of ten parallel restores); a document the manifest never removed is
	// ErrNotFound.
	if re, ok := errors.AsType[*review.RestoredError](d.RestoreTombstone(ctx, f.appr, m.ID, ts[0].Doc)); !ok || re.By != "appr" || re.Doc != ts[0].ExtID {
		t.Errorf("restoring a restored document = %+v; want a RestoredError by appr of %s", re, ts[0].ExtID)
	}
	if err := d.RestoreTombstone(ctx, f.appr, m.ID, f.docs["k"]); !errors.Is(err, ErrNotFound) {
		t.Errorf("restoring the keeper, never removed = %v; want ErrNotFound", err)
	}
	n, err := d.Revoke(ctx, f.appr, m.ID, "wrong threshold")
	if err != nil || n != 1 {
		t.Fatalf("Revoke = %d, %v; want the 1 standing tombstone restored", n, err)
	}
	ts, _ = d.Tombstones(ctx, m.ID)
	for _, tb := range ts {
		if !tb.Restored || tb.RestoredBy != "appr" {
			t.Errorf("after revoke: %+v; want restored by appr", tb)
		}
	}
	if so, _ := d.SignOffs(ctx, m.ID); len(so) != 1 || so[0].Current() {
		t.Errorf("sign-offs after revoke = %+v; want the one revoked", so)
	}
	if _, err := d.Revoke(ctx, f.appr, m.ID, "again"); err == nil {
		t.Error("revoking a revoked manifest succeeded")
	}
	ev, err := d.AuditOf(ctx, manifestSubject(m.ID), 100)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range ev {
		seen[e.Action] = true
	}
	for _, want := range []string{"manifest.restore", "manifest.revoke"} {
		if !seen[want] {
			t.Errorf("audit of the manifest lacks %s: %v", want, seen)
		}
	}
	names, err := d.UserNames(ctx)
	if err != nil || names[f.appr.ID] != "appr" || names[f.prep.ID] != "prep" {
		t.Errorf("UserNames = %v, %v; want appr and prep by id", names, err)
	}
}

// The reads of a dataset's documents: streamed in import order, looked up by id, and
// their metadata keys.
func TestDocumentReads(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	ds, ids := withDocs(t, d, "docs", 3)
	var seen []int64
	if err := d.EachDocument(ctx, ds.ID, func(doc Document) error { seen = append(seen, doc.ID); return nil }); err != nil || len(seen) != 3 || seen[0] != ids[0] {
		t.Errorf("EachDocument saw %v, %v; want %v", seen, err, ids)
	}
	stop := errors.New("stop")
	if err := d.EachDocument(ctx, ds.ID, func(Document) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("EachDocument with a failing fn = %v; want its error", err)
	}
	if infos, err := d.DocInfos(ctx, ids[:2]); err != nil || len(infos) != 2 || infos[ids[1]].ExtID != "d1" {
		t.Errorf("DocInfos = %+v, %v; want d0 and d1", infos, err)
	}
	if all, err := d.DatasetDocs(ctx, ds.ID); err != nil || len(all) != 3 {
		t.Errorf("DatasetDocs = %+v, %v; want 3", all, err)
	}
	if keys, err := d.MetaKeys(ctx, ds.ID); err != nil {
		t.Errorf("MetaKeys = %v, %v", keys, err)
	}
	if texts, err := d.DatasetTexts(ctx, ds.ID); err != nil || len(texts) != 3 {
		t.Errorf("DatasetTexts = %d, %v; want 3", len(texts), err)
	}
	if src, langs, err := d.DocumentCounts(ctx, ds.ID); err != nil || len(src) != 1 || len(langs) != 1 {
		t.Errorf("DocumentCounts = %v %v, %v; want one source and one language", src, langs, err)
	}
	if got, err := d.LatestDataset(ctx, "docs"); err != nil || got.ID != ds.ID {
		t.Errorf("LatestDataset = %+v, %v; want %d", got, err, ds.ID)
	}
	if got, err := d.DatasetVersion(ctx, "docs", ds.Version); err != nil || got.ID != ds.ID {
		t.Errorf("DatasetVersion = %+v, %v; want %d", got, err, ds.ID)
	}
	if _, err := d.DatasetVersion(ctx, "docs", ds.Version+1); !errors.Is(err, ErrNotFound) {
		t.Errorf("DatasetVersion(next) = %v; want ErrNotFound", err)
	}
	if ok, err := d.IntegrityCheck(ctx); err != nil || !ok {
		t.Errorf("IntegrityCheck = %v, %v; want ok", ok, err)
	}
}

// The lookups by a list of ids bind at most maxParams ids into one IN (...) list: a
// longer list is read in parts, and every id of it is found.
func TestLookupsOfMoreIDsThanOneQueryBinds(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	n := maxParams + 3
	ds, ids := withDocs(t, d, "many", n)
	ext := make([]string, n)
	for i := range ext {
		ext[i] = fmt.Sprintf("d%d", i)
	}
	byExt, err := d.DocumentIDs(ctx, ds.ID, ext)
	if err != nil || len(byExt) != n || byExt[ext[n-1]] != ids[n-1] {
		t.Errorf("DocumentIDs of %d ids = %d found, %v; want all", n, len(byExt), err)
	}
	texts, err := d.DocumentTexts(ctx, ids)
	if err != nil || len(texts) != n || texts[n-1] != fmt.Sprintf("text of document %d in many", n-1) {
		t.Errorf("DocumentTexts of %d ids = %d, %v; want all, aligned", n, len(texts), err)
	}
	infos, err := d.DocInfos(ctx, ids)
	if err != nil || len(infos) != n || infos[ids[n-1]].ExtID != ext[n-1] {
		t.Errorf("DocInfos of %d ids = %d, %v; want all", n, len(infos), err)
	}
	var sizes []int
	for marks, args := range inLists(ids, "first") {
		if strings.Count(marks, "?") != len(args)-1 || args[0] != "first" {
			t.Errorf("inLists: %d placeholders for %v", strings.Count(marks, "?"), args)
		}
		sizes = append(sizes, len(args)-1)
	}
	if !slices.Equal(sizes, []int{maxParams, 3}) {
		t.Errorf("inLists of %d ids: lists of %v; want [%d 3]", n, sizes, maxParams)
	}
}
