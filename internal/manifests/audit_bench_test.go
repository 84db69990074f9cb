package manifests

import (
	"context"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// BenchmarkAuditDemo measures an audit of 300 pairs on the demo's most destructive
// manifest (char 3-shingles, k=128, 37 × 3, estimate ≥ 0.30, connected components,
// earliest keeper: 1,942 of 2,136 documents removed; issue 23's example):
//   - request: reading the removals, the draw, storing the audit with its frame and its
//     pairs in the demo's campaign, scoring the new pairs and ranking the queue (each
//     iteration audits a fresh copy of the manifest, copied with the timer stopped);
//   - figure: the manifest page's figure (AuditOf) with every pair labeled;
//   - next: the labeling queue's next pair for an annotator while the audit is open
//     (the audit's pairs labeled: the walk passes over all 300 of them).
func BenchmarkAuditDemo(b *testing.B) {
	ctx := context.Background()
	store, rep, prep := demoStore(b)
	appr, _ := store.CreateUser(ctx, "t", "appr", auth.Approver, "x")
	ann, _ := store.CreateUser(ctx, "t", "ann", auth.Annotator, "x")
	spec, err := lsh.ParseSpec("level=char size=3 k=128")
	if err != nil {
		b.Fatal(err)
	}
	rule, _ := cluster.ParseRule("earliest")
	p := review.Params{Spec: spec, Shape: lsh.Shape{Bands: 37, Rows: 3}, Threshold: 0.30, Verification: review.Estimate,
		Policy: cluster.Components, Rule: rule, CodeVersion: "bench"}
	base, err := Run(ctx, store, sigcache.New(store), Request{DatasetID: rep.Dataset.ID, Params: p, By: prep}, nil)
	if err != nil {
		b.Fatal(err)
	}
	rows, err := store.Clusters(ctx, base.ID, db.ClusterFilter{})
	if err != nil {
		b.Fatal(err)
	}
	var clusters []db.Cluster
	for _, r := range rows {
		c, err := store.Cluster(ctx, base.ID, r.ID)
		if err != nil {
			b.Fatal(err)
		}
		clusters = append(clusters, c)
	}
	copyOf := func() db.Manifest {
		m, err := store.CreateManifest(ctx, prep, db.NewManifest{DatasetID: base.DatasetID, CampaignID: base.CampaignID, Params: base.Params,
			DatasetHash: base.DatasetHash, ApprovalsRequired: 2, Clusters: clusters, LiveMark: base.LiveMark, LabelMark: base.LabelMark})
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	var last db.Manifest
	b.Run("request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			last = copyOf()
			b.StartTimer()
			out, err := RequestAudit(ctx, store, appr, last, 300, 0)
			if err != nil || out.Added != 300 {
				b.Fatalf("request: %+v, %v", out, err)
			}
			b.ReportMetric(float64(out.Audit.Removals), "removals")
			b.ReportMetric(float64(out.Audit.Removals-out.Audit.Certain), "uncertain")
		}
	})
	st, err := store.AuditState(ctx, last.ID)
	if err != nil {
		b.Fatal(err)
	}
	c, err := store.Campaign(ctx, st.CampaignID)
	if err != nil {
		b.Fatal(err)
	}
	for _, pr := range st.Pairs {
		if _, err := store.RecordEvent(ctx, c.ID, pr.PairID, db.NewLabel{Annotator: ann.Name, UserID: ann.ID, Kind: labels.KindLabel,
			Category: "minor", Duplicate: true}, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("figure", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a, err := AuditOf(ctx, store, last)
			if err != nil || a.Labeled != 300 {
				b.Fatalf("figure: %+v, %v", a, err)
			}
		}
	})
	b.Run("next", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := campaign.Next(ctx, store, c, ann.Name, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
