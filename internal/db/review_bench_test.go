package db

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// BenchmarkDecide measures one review decision (one transaction: the item, its bucket
// and the content hash, the undo record, the chained audit event, synchronous=FULL)
// in a manifest of 3,200 removals in 640 clusters.
func BenchmarkDecide(b *testing.B) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	ds, _ := d.BeginDataset(ctx, "many", "many.jsonl", 0)
	var docs []NewDocument
	for i := range 3840 {
		docs = append(docs, NewDocument{ExtID: fmt.Sprintf("d%05d", i), Text: "t", ContentHash: fmt.Sprintf("h%d", i)})
	}
	d.InsertDocuments(ctx, ds.ID, docs)
	d.FinishDataset(ctx, ds.ID, "h", 0, "t")
	infos, _ := d.DatasetDocs(ctx, ds.ID)
	rule, _ := cluster.ParseRule("earliest")
	nm := NewManifest{DatasetID: ds.ID, Params: review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 8},
		Threshold: 0.8, Verification: review.Exact, Policy: cluster.KeeperStar, Rule: rule}}
	for c := range 640 {
		k := infos[c*6].ID
		dc := Cluster{Keeper: k, KeeperRule: "earliest", Size: 6, Weakest: k}
		for j := 1; j <= 5; j++ {
			dc.Items = append(dc.Items, Item{Doc: infos[c*6+j].ID, Keeper: k, Exact: 0.9, Reason: cluster.Near})
		}
		nm.Clusters = append(nm.Clusters, dc)
	}
	u, _ := d.CreateUser(ctx, "t", "u", auth.Reviewer, "h")
	m, err := d.CreateManifest(ctx, u, nm)
	if err != nil {
		b.Fatal(err)
	}
	decisions := []review.Decision{review.Approved, review.Excluded}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Decide(ctx, u, m.ID, Decision{Items: []int64{int64(i%3200 + 1)}, Decision: decisions[(i/3200)%2], Action: "decide"}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
