package campaign

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
)

// largeCampaign is a store with a generated campaign (see dbtest): 1M label events over
// 100k pairs and 50k documents, or DEDUP_BENCH_EVENTS events (and a tenth as many
// pairs) for a quicker look.
func largeCampaign(b *testing.B) (*db.DB, db.Campaign) {
	b.Helper()
	events := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("DEDUP_BENCH_EVENTS")); err == nil && n >= 1000 {
		events = n
	}
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "large.db")
	store := dbtest.OpenFile(b, path)
	start := time.Now()
	built, err := dbtest.Build(ctx, path, "large", dbtest.Campaign{Docs: max(100, events/20), Pairs: events / 10, Events: events})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d events over %d pairs in %v", events, events/10, time.Since(start).Round(time.Millisecond))
	c, err := store.Campaign(ctx, built.CampaignID)
	if err != nil {
		b.Fatal(err)
	}
	return store, c
}

// The campaign page's numbers over 1M label events and 100k pairs:
//   - Tally: a look after one new label (what a page view costs while people label);
//   - TallyCold: the first look of a process (reads the whole log once);
//   - FromScratch: Summary as it was computed for every page view before the tallies;
//   - Counts, CountsFromScratch: the start page's label counts, from the tallies (after
//     one new label) and as db.DatasetOverview computes them from the log.
func BenchmarkSummary(b *testing.B) {
	store, c := largeCampaign(b)
	ctx := context.Background()
	refs, _ := store.PairDocs(ctx, c.ID)
	// each times look in the benchmark's loop.
	each := func(b *testing.B, look func() error) {
		b.ReportAllocs()
		for b.Loop() {
			if err := look(); err != nil {
				b.Fatal(err)
			}
		}
	}
	// afterNewLabel times look after each new label by annotator (not timed), once it has
	// looked before the first.
	afterNewLabel := func(b *testing.B, annotator string, look func() error) {
		if err := look(); err != nil {
			b.Fatal(err)
		}
		i := 0
		each(b, func() error {
			b.StopTimer()
			if _, err := store.RecordEvent(ctx, c.ID, refs[i%len(refs)].ID, db.NewLabel{Annotator: annotator, Category: "exact"}, 0); err != nil {
				b.Fatal(err)
			}
			i++
			b.StartTimer()
			return look()
		})
	}
	b.Run("Tally", func(b *testing.B) {
		t := NewTally(store)
		afterNewLabel(b, "bench", func() error { _, err := t.Summary(ctx, c); return err })
	})
	b.Run("TallyCold", func(b *testing.B) {
		each(b, func() error { _, err := NewTally(store).Summary(ctx, c); return err })
	})
	b.Run("FromScratch", func(b *testing.B) {
		each(b, func() error { _, err := Summary(ctx, store, c); return err })
	})
	b.Run("Counts", func(b *testing.B) {
		t := NewTally(store)
		afterNewLabel(b, "bench2", func() error { _, err := t.Counts(ctx, c); return err })
	})
	b.Run("CountsFromScratch", func(b *testing.B) {
		each(b, func() error { _, err := store.DatasetOverview(ctx, c.DatasetID); return err })
	})
}
