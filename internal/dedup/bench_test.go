package dedup

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// BenchmarkRunDemo runs one configuration over the demo sample (2,136 real documents,
// 12.4 MB of text, 832 labeled pairs) end to end, signatures cached: candidates, the
// exact pass, exact verification, three policies, the one-configuration sweep against the
// labels, and the manifest stored. SetBytes is the dataset's text, so MB/s is printed.
func BenchmarkRunDemo(b *testing.B) {
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(b.TempDir(), "demo.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	rep, _, err := demo.Load(ctx, store)
	if err != nil {
		b.Fatal(err)
	}
	u, _ := store.CreateUser(ctx, "t", "prep", auth.Reviewer, "x")
	rule, _ := cluster.ParseRule("longest")
	sigs := sigcache.New(store)
	for _, v := range []review.Verification{review.Exact, review.Estimate} {
		b.Run(string(v), func(b *testing.B) {
			p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: 0.5, Verification: v,
				Policy: cluster.KeeperStar, Rule: rule, CodeVersion: "bench"}
			req := Request{DatasetID: rep.Dataset.ID, Params: p, By: u}
			if _, err := Run(ctx, store, sigs, req, nil); err != nil { // fills the signature cache
				b.Fatal(err)
			}
			b.SetBytes(rep.Bytes)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(ctx, store, sigs, req, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
