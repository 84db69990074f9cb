package dbtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
)

// Open returns a new, empty store in tb.TempDir(), closed when the test ends.
func Open(tb testing.TB) *db.DB {
	tb.Helper()
	return OpenFile(tb, filepath.Join(tb.TempDir(), "test.db"))
}

// OpenFile opens (creating it if need be) the store at path, for tests that hand the
// file to a command or open it again; it is closed when the test ends.
func OpenFile(tb testing.TB, path string) *db.DB {
	tb.Helper()
	store, err := db.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	return store
}

// Dataset stores docs as a ready dataset called name, the way an import leaves it, and
// returns it.
func Dataset(tb testing.TB, store *db.DB, name string, docs []db.NewDocument) db.Dataset {
	tb.Helper()
	ctx := context.Background()
	ds, err := store.BeginDataset(ctx, name, name+".jsonl", 0)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := store.InsertDocuments(ctx, ds.ID, docs); err != nil {
		tb.Fatal(err)
	}
	if ds, err = store.FinishDataset(ctx, ds.ID, "h", 0, "test"); err != nil {
		tb.Fatal(err)
	}
	return ds
}
