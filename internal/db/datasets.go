package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Dataset is one named, versioned import.
type Dataset struct {
	ID          int64
	Name        string
	Version     int
	State       string // importing or ready
	SourceFile  string
	ContentHash string
	Docs        int
	Rejected    int
	CreatedAt   time.Time
}

const datasetColumns = `id, name, version, state, source_file, content_hash, doc_count, rejected, created_at`

func scanDataset(sc scanner) (Dataset, error) {
	var ds Dataset
	var created string
	if err := sc.Scan(&ds.ID, &ds.Name, &ds.Version, &ds.State, &ds.SourceFile, &ds.ContentHash, &ds.Docs, &ds.Rejected, &created); err != nil {
		return ds, notFound(err)
	}
	var err error
	if ds.CreatedAt, err = parseTime("created_at", created); err != nil {
		return ds, fmt.Errorf("dataset %d: %w", ds.ID, err)
	}
	return ds, nil
}

// BeginDataset starts an import: a new version of the named dataset in state
// 'importing', invisible to every reader until FinishDataset.
func (d *DB) BeginDataset(ctx context.Context, name, sourceFile string, by int64) (Dataset, error) {
	var ds Dataset
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		var v int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) + 1 FROM datasets WHERE name = ?`, name).Scan(&v); err != nil {
			return err
		}
		now := d.stamp()
		res, err := tx.ExecContext(ctx, `INSERT INTO datasets (name, version, state, source_file, created_by, created_at, heartbeat_at)
			VALUES (?, ?, 'importing', ?, ?, ?, ?)`, name, v, sourceFile, nullID(by), now, now)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		ds, err = scanDataset(tx.QueryRowContext(ctx, `SELECT `+datasetColumns+` FROM datasets WHERE id = ?`, id))
		return err
	})
	if err != nil {
		return Dataset{}, fmt.Errorf("begin import of dataset %q: %w", name, err)
	}
	return ds, nil
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// NewDocument is a document to insert.
type NewDocument struct {
	ExtID       string
	Text        string
	ContentHash string
	Source      string
	Domain      string
	Lang        string
	Meta        []byte // a JSON object
}

// InsertDocuments adds docs to an importing dataset, in one transaction of its staging
// file (see StagingDir): the store itself holds none of an import's documents until
// FinishDataset copies them in. A document whose external id is already in the dataset
// is not inserted; its index in docs is returned so the caller can report it.
func (d *DB) InsertDocuments(ctx context.Context, datasetID int64, docs []NewDocument) (duplicates []int, err error) {
	err = d.beat(ctx, datasetID)
	if err == nil {
		duplicates, err = d.insertStaged(ctx, datasetID, docs)
	}
	if err != nil {
		return nil, fmt.Errorf("insert documents into dataset %d: %w", datasetID, err)
	}
	return duplicates, nil
}

// heartbeatEvery is how often a running import says so in the store (StaleImportAge
// is how long it may stay silent): a write of the store per batch, each synced, was a
// quarter of a large import's time.
const heartbeatEvery = 10 * time.Second

// beat checks that dataset id is importing and, at most every heartbeatEvery, records
// in the store that its import is alive.
func (d *DB) beat(ctx context.Context, id int64) error {
	var state string
	if err := d.r.QueryRowContext(ctx, `SELECT state FROM datasets WHERE id = ?`, id).Scan(&state); err != nil {
		return notFound(err)
	}
	if state != "importing" {
		return fmt.Errorf("it is %s: documents go in only while importing", state)
	}
	if !d.stages.due(id, d.now(), heartbeatEvery) {
		return nil
	}
	return d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE datasets SET heartbeat_at = ? WHERE id = ? AND state = 'importing'`, d.stamp(), id)
		return err
	})
}

// FinishDataset makes an import visible, recording its content hash and counts: it
// copies the staged documents into the store (see publishStaged), then, in one
// transaction, marks the dataset ready; the staging file goes.
func (d *DB) FinishDataset(ctx context.Context, id int64, contentHash string, rejected int, actor string) (Dataset, error) {
	if err := d.publishStaged(ctx, id); err != nil {
		return Dataset{}, fmt.Errorf("finish import of dataset %d: copy its documents in: %w", id, err)
	}
	var ds Dataset
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE datasets SET state = 'ready', content_hash = ?, rejected = ?,
			doc_count = (SELECT count(*) FROM documents WHERE dataset_id = ?) WHERE id = ? AND state = 'importing'`,
			contentHash, rejected, id, id)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return fmt.Errorf("not importing: %w", err)
		}
		ds, err = scanDataset(tx.QueryRowContext(ctx, `SELECT `+datasetColumns+` FROM datasets WHERE id = ?`, id))
		if err != nil {
			return err
		}
		return d.audit(ctx, tx, actor, "dataset.import", fmt.Sprintf("dataset:%d", id), map[string]any{
			"name": ds.Name, "version": ds.Version, "documents": ds.Docs, "rejected": rejected, "content_hash": contentHash, "file": ds.SourceFile,
		})
	})
	if err != nil {
		return Dataset{}, fmt.Errorf("finish import of dataset %d: %w", id, err)
	}
	if err := d.dropStaging(id); err != nil {
		return ds, fmt.Errorf("finish import of dataset %d: %w", id, err) // ready all the same; CleanStaleImports retries
	}
	return ds, nil
}

// DiscardDataset removes an import that failed: its staging file at once, then its
// dataset (with the documents a copy cut short left in the store, in batches: see
// deleteImport). It first marks the import stale, so that if it fails or is cut short
// the next CleanStaleImports finishes the work.
func (d *DB) DiscardDataset(ctx context.Context, id int64) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE datasets SET heartbeat_at = '' WHERE id = ? AND state = 'importing'`, id)
		return err
	})
	if err == nil {
		err = d.dropStaging(id)
	}
	if err == nil {
		_, err = d.deleteImport(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("discard import of dataset %d: %w", id, err)
	}
	return nil
}

// StaleImportAge is how long an import may go without inserting before it counts as dead
// (its process killed) and is removed.
const StaleImportAge = 10 * time.Minute

// CleanStaleImports removes the imports that have not inserted anything for olderThan
// (or whose discarding failed), each with its staging file and the documents a copy
// cut short left in the store (in batches: see deleteImport), deletes the staging files
// of imports no longer running, discards the label
// imports left staging and finishes those left publishing (see PublishLabelImport), and
// returns how many imports it handled. It stops at the first error; what it removed stays removed.
func (d *DB) CleanStaleImports(ctx context.Context, olderThan time.Duration) (int, error) {
	cutoff := formatTime(d.now().Add(-olderThan))
	ids, err := queryAll(ctx, d, `SELECT id FROM datasets WHERE state = 'importing' AND heartbeat_at <= ? ORDER BY id`,
		scanValue[int64], cutoff)
	if err != nil {
		return 0, fmt.Errorf("clean stale imports: %w", err)
	}
	n := 0
	for _, id := range ids {
		if err := d.dropStaging(id); err != nil {
			return n, fmt.Errorf("clean stale imports: %w", err)
		}
		gone, err := d.deleteImport(ctx, id)
		if err != nil {
			return n, fmt.Errorf("clean stale imports: dataset %d: %w", id, err)
		}
		if gone {
			n++
		}
	}
	m, err := d.cleanStaleLabelImports(ctx, olderThan)
	n += m
	if err != nil {
		return n, fmt.Errorf("clean stale imports: %w", err)
	}
	if err := d.cleanStagingFiles(ctx); err != nil {
		return n, fmt.Errorf("clean stale imports: %w", err)
	}
	return n, nil
}

// Deleting an import takes many short transactions rather than one long one: one
// transaction over a large import held the write lock for minutes, and every labeler's
// write waited behind it (or failed with SQLITE_BUSY). Each batch aims at
// deleteBatchTime, its size adapting to how long the last one took, and between
// batches the lock is left free for deletePause, long enough for SQLite's busy handler
// to let a waiting writer in.
const (
	deleteBatchTime = 40 * time.Millisecond
	deletePause     = 30 * time.Millisecond
)

// deleteImport deletes the documents of an importing dataset in batches, then the
// dataset; gone is false when there was no such import (removed meanwhile, or ready).
func (d *DB) deleteImport(ctx context.Context, id int64) (gone bool, err error) {
	batch := int64(64)
	for {
		start := time.Now()
		var n int64
		err := d.inTx(ctx, func(tx *sql.Tx) error {
			var state string
			if err := tx.QueryRowContext(ctx, `SELECT state FROM datasets WHERE id = ?`, id).Scan(&state); err != nil {
				return notFound(err)
			}
			if state != "importing" {
				return ErrNotFound
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE id IN (SELECT id FROM documents WHERE dataset_id = ? LIMIT ?)`, id, batch)
			if err != nil {
				return err
			}
			if n, err = res.RowsAffected(); err != nil {
				return err
			}
			if n == 0 {
				_, err = tx.ExecContext(ctx, `DELETE FROM datasets WHERE id = ?`, id)
			}
			return err
		})
		switch {
		case errors.Is(err, ErrNotFound):
			return false, nil
		case err != nil:
			return false, err
		case n == 0:
			return true, nil
		}
		switch took := time.Since(start); {
		case took < deleteBatchTime/2 && batch < 16384:
			batch *= 2
		case took > deleteBatchTime && batch > 1:
			batch /= 2
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(deletePause):
		}
	}
}

// Datasets returns the ready datasets, newest first.
func (d *DB) Datasets(ctx context.Context) ([]Dataset, error) {
	list, err := queryAll(ctx, d, `SELECT `+datasetColumns+` FROM datasets WHERE state = 'ready' ORDER BY id DESC`, scanDataset)
	if err != nil {
		return nil, fmt.Errorf("list datasets: %w", err)
	}
	return list, nil
}

// LatestDataset returns the newest ready version of the named dataset.
func (d *DB) LatestDataset(ctx context.Context, name string) (Dataset, error) {
	ds, err := scanDataset(d.r.QueryRowContext(ctx, `SELECT `+datasetColumns+` FROM datasets
		WHERE name = ? AND state = 'ready' ORDER BY version DESC LIMIT 1`, name))
	if err != nil {
		return ds, fmt.Errorf("dataset %q: %w", name, err)
	}
	return ds, nil
}

// Dataset returns a ready dataset by id.
func (d *DB) Dataset(ctx context.Context, id int64) (Dataset, error) {
	ds, err := scanDataset(d.r.QueryRowContext(ctx, `SELECT `+datasetColumns+` FROM datasets WHERE id = ? AND state = 'ready'`, id))
	if err != nil {
		return ds, fmt.Errorf("dataset %d: %w", id, err)
	}
	return ds, nil
}

// CountDocuments returns the number of documents in ready datasets.
func (d *DB) CountDocuments(ctx context.Context) (int, error) {
	var n int
	err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM documents JOIN datasets ON datasets.id = documents.dataset_id
		WHERE datasets.state = 'ready'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count documents: %w", err)
	}
	return n, nil
}
