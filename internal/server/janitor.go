package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
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

// UploadDir is where a server whose database is dbPath keeps uploads while it imports
// them: a directory of its own next to the database, so that what a killed process left
// there can be found and removed at the next start (CleanUploads).
func UploadDir(dbPath string) string { return dbPath + "-uploads" }

// CleanUploads empties dir, the server's upload directory (UploadDir), at start:
// what is there was left by a process that died while receiving or importing an
// upload (kill -9, a crash), since a running server removes each upload once its import
// ends. Each entry removed is logged; a missing directory is nothing to do.
func CleanUploads(dir string, log *slog.Logger) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clean uploads: %w", err)
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		var files, bytes int64
		filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if info, err := d.Info(); err == nil {
					files++
					bytes += info.Size()
				}
			}
			return nil
		})
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, err)
			continue
		}
		log.Info("removed a stale upload", "path", path, "files", files, "bytes", bytes)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clean uploads: %w", err)
	}
	return nil
}
