package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/demo"
)

// LoadDemoIfEmpty loads the demo sample into a store that has no datasets yet, so a new
// user opens the server on real data.
func LoadDemoIfEmpty(ctx context.Context, store *db.DB, log *slog.Logger) error {
	list, err := store.Datasets(ctx)
	if err != nil || len(list) > 0 {
		return err
	}
	start := time.Now()
	rep, lrep, err := demo.Load(ctx, store)
	if err != nil {
		return err
	}
	log.Info("empty database: loaded the demo sample", "dataset", rep.Dataset.Name, "documents", rep.Accepted,
		"labels", lrep.Accepted, "duration", time.Since(start).Round(time.Millisecond))
	return nil
}
