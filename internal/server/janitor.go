package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/db"
)

// CleanImports removes the imports a killed process left behind, and those whose
// discarding failed or was cut short (db.DiscardDataset marks them stale first): once
// at once, then every `every` until ctx ends. It runs beside the server, so a large
// leftover never keeps the server from listening, and its batches leave the write
// lock to labelers between them. A failure is logged and tried again next round.
func CleanImports(ctx context.Context, store *db.DB, log *slog.Logger, every time.Duration) {
	for {
		start := time.Now()
		n, err := store.CleanStaleImports(ctx, db.StaleImportAge)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("cleaning up stale imports failed; trying again later", "err", err, "removed", n, "retry_in", every)
		case n > 0:
			log.Info("removed stale imports", "imports", n, "duration", time.Since(start).Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}
