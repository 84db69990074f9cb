package sweeprun

import (
	"context"
	"testing"
)

// BenchmarkSelect moves the threshold slider of one configuration of a demo sweep (word
// 5-shingles, k=64, exact Jaccard, 2,136 documents, 826 labeled pairs): each Select
// rescores, lists the pairs' outcomes and bins the collision rates from the prepared
// candidates. The target is a live slider: well under 50 ms.
func BenchmarkSelect(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	grid := smallGrid()
	grid.Specs = grid.Specs[len(grid.Specs)/2 : len(grid.Specs)/2+1] // word 5, k=64
	sw, err := e.svc.Start(ctx, StartRequest{CampaignID: e.campaign.ID, Grid: grid})
	if err != nil {
		b.Fatal(err)
	}
	if sw, err = e.svc.Wait(ctx, sw.ID); err != nil {
		b.Fatal(err)
	}
	rs, err := e.svc.Results(ctx, sw.ID)
	if err != nil {
		b.Fatal(err)
	}
	c := rs[len(rs)-1].Config
	if _, err := e.svc.Select(ctx, sw.ID, c, 0.5); err != nil { // prepares
		b.Fatal(err)
	}
	ths := []float64{0.42, 0.55, 0.68, 0.81, 0.93}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := e.svc.Select(ctx, sw.ID, c, ths[i%len(ths)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
