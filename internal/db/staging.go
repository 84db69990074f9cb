package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// A dataset import is staged in a database file of its own, beside the store's
// (StagingDir), not in the store: its documents go there batch by batch, and only a
// finished import is copied into the store (FinishDataset), in short transactions that
// leave the write lock to labelers between them. A failed, refused or cancelled import
// is discarded by deleting its staging file, at once whatever its size, and the store's
// file never grew for it. Before, the documents went into the store itself: a 4.85 MB
// .gz grew the file from 10.9 MB to 4.31 GB, nearly all of it free pages once the
// import failed (SQLite does not shrink a file by itself), and discarding a failed
// 2.1M-row import, row by row in batches, took 3 min 20 s.
//
// A staging file holds one table, documents, shaped like the store's without the
// dataset column; its ids follow the order of the import, which the copy keeps. It is
// written with the rollback journal in memory and no syncs: it is worth nothing until it
// is copied, and a crash leaves it to CleanStaleImports.

// StagingDir is where a store whose file is dbPath stages its imports.
func StagingDir(dbPath string) string { return dbPath + "-staging" }

// stagings are the staging files this process has open, by dataset id, and when each
// import last recorded its heartbeat.
type stagings struct {
	mu    sync.Mutex
	open  map[int64]*sql.DB
	beats map[int64]time.Time
	// ends are the staging ids that end each batch the import inserted (at most the
	// import's batch of documents or bytes): the copy into the store goes a whole number
	// of them at a time.
	ends map[int64][]int64
}

// ended records that a batch of import id's ended at staging id end.
func (s *stagings) ended(id, end int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ends == nil {
		s.ends = map[int64][]int64{}
	}
	if e := s.ends[id]; len(e) == 0 || e[len(e)-1] < end {
		s.ends[id] = append(e, end)
	}
}

// batchEnds returns import id's batch ends.
func (s *stagings) batchEnds(id int64) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ends[id]
}

// due reports whether import id's heartbeat is due at now (every), and if so counts it
// as done.
func (s *stagings) due(id int64, now time.Time, every time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if last, ok := s.beats[id]; ok && now.Sub(last) < every {
		return false
	}
	if s.beats == nil {
		s.beats = map[int64]time.Time{}
	}
	s.beats[id] = now
	return true
}

func (d *DB) stagingPath(id int64) string {
	return filepath.Join(StagingDir(d.path), "dataset-"+strconv.FormatInt(id, 10)+".db")
}

var stagingName = regexp.MustCompile(`^dataset-(\d+)\.db(-journal)?$`)

const stagingSchema = `CREATE TABLE IF NOT EXISTS documents (
    id           INTEGER PRIMARY KEY,
    ext_id       TEXT NOT NULL UNIQUE,
    text         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    bytes        INTEGER NOT NULL,
    source       TEXT NOT NULL,
    domain       TEXT NOT NULL,
    lang         TEXT NOT NULL,
    meta         TEXT NOT NULL
) STRICT`

// staging returns the staging file of dataset id, opening it (and creating it, with
// create) on first use.
func (d *DB) staging(ctx context.Context, id int64, create bool) (*sql.DB, error) {
	d.stages.mu.Lock()
	defer d.stages.mu.Unlock()
	if s, ok := d.stages.open[id]; ok {
		return s, nil
	}
	path := d.stagingPath(id)
	if !create {
		if _, err := os.Stat(path); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(MEMORY)")
	q.Add("_pragma", "synchronous(OFF)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_txlock", "immediate")
	s, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	s.SetMaxOpenConns(1)
	if _, err := s.ExecContext(ctx, stagingSchema); err != nil {
		s.Close()
		return nil, err
	}
	if d.stages.open == nil {
		d.stages.open = map[int64]*sql.DB{}
	}
	d.stages.open[id] = s
	return s, nil
}

// dropStaging closes and deletes the staging file of dataset id; none is nothing to do.
func (d *DB) dropStaging(id int64) error {
	d.stages.mu.Lock()
	s, ok := d.stages.open[id]
	delete(d.stages.open, id)
	delete(d.stages.beats, id)
	delete(d.stages.ends, id)
	d.stages.mu.Unlock()
	var errs []error
	if ok {
		errs = append(errs, s.Close())
	}
	for _, p := range []string{d.stagingPath(id), d.stagingPath(id) + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove the staging file of dataset %d: %w", id, err)
	}
	return nil
}

// closeStagings closes the staging files left open (the store is closing); the files
// stay for their imports' discards or CleanStaleImports.
func (d *DB) closeStagings() error {
	d.stages.mu.Lock()
	defer d.stages.mu.Unlock()
	var errs []error
	for id, s := range d.stages.open {
		errs = append(errs, s.Close())
		delete(d.stages.open, id)
	}
	return errors.Join(errs...)
}

// insertStaged adds docs to dataset id's staging file in one transaction and returns
// the indexes of those whose external id is there already.
func (d *DB) insertStaged(ctx context.Context, id int64, docs []NewDocument) ([]int, error) {
	s, err := d.staging(ctx, id, true)
	if err != nil {
		return nil, err
	}
	tx, err := s.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO documents (ext_id, text, content_hash, bytes, source, domain, lang, meta)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (ext_id) DO NOTHING`)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	var duplicates []int
	for i, doc := range docs {
		meta := doc.Meta
		if len(meta) == 0 {
			meta = []byte("{}")
		}
		res, err := stmt.ExecContext(ctx, doc.ExtID, doc.Text, doc.ContentHash, len(doc.Text), doc.Source, doc.Domain, doc.Lang, string(meta))
		if err != nil {
			return nil, fmt.Errorf("document %q: %w", doc.ExtID, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			duplicates = append(duplicates, i)
		}
	}
	var end int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM documents`).Scan(&end); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	d.stages.ended(id, end)
	return duplicates, nil
}

// publishStaged copies the staged documents of dataset id into the store, in import
// order, a whole number of the import's own batches (each at most the import's batch of
// documents or bytes) per transaction, as many as copy in about copyBatchTime: one
// transaction over a large import would hold every labeler's write back for minutes,
// and a commit per small batch would spend the copy's time syncing. The dataset stays
// importing, so invisible, until FinishDataset's last transaction. A copy cut short
// leaves documents in the store that the import's discard (or CleanStaleImports)
// deletes.
func (d *DB) publishStaged(ctx context.Context, id int64) error {
	s, err := d.staging(ctx, id, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing was staged
	}
	if err != nil {
		return err
	}
	var last int64
	if err := s.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM documents`).Scan(&last); err != nil {
		return err
	}
	ends := d.stages.batchEnds(id)
	if len(ends) == 0 || ends[len(ends)-1] < last {
		ends = append(ends, last) // staged by another handle of the file: one batch
	}
	conn, err := d.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS staging`, d.stagingPath(id)); err != nil {
		return err
	}
	defer func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `DETACH DATABASE staging`); err != nil {
			// Never hand a connection with the file attached back to the pool.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	k := 1 // import batches per transaction
	for lo, i := int64(0), 0; i < len(ends); {
		hi := ends[min(i+k, len(ends))-1]
		var took time.Duration // copying, not committing: a sync costs what it costs, whatever the batch
		err := d.connTx(ctx, conn, func(tx *sql.Tx) error {
			var state string
			if err := tx.QueryRowContext(ctx, `SELECT state FROM datasets WHERE id = ?`, id).Scan(&state); err != nil {
				return notFound(err)
			}
			if state != "importing" {
				return fmt.Errorf("it is %s: documents go in only while importing", state)
			}
			start := time.Now()
			if _, err := tx.ExecContext(ctx, `INSERT INTO main.documents (dataset_id, ext_id, text, content_hash, bytes, source, domain, lang, meta)
				SELECT ?, ext_id, text, content_hash, bytes, source, domain, lang, meta FROM staging.documents
				WHERE id > ? AND id <= ? ORDER BY id`, id, lo, hi); err != nil {
				return err
			}
			took = time.Since(start)
			_, err := tx.ExecContext(ctx, `UPDATE datasets SET heartbeat_at = ? WHERE id = ?`, d.stamp(), id)
			return err
		})
		if err != nil {
			return err
		}
		lo, i = hi, min(i+k, len(ends))
		switch {
		case took < copyBatchTime/2 && k < 1024:
			k *= 2
		case took > copyBatchTime && k > 1:
			k /= 2
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// copyBatchTime is how long one transaction of a copy into the store aims to take (it
// never copies less than one of the import's batches). Between transactions the write
// turn goes to whoever waits for it, first come first served (see DB.writeTurn), so a
// labeler waits at most about one of them; no pause is needed for that, and pauses (as
// deleteImport's) made a 200,000-document copy take 27 s instead of a few.
const copyBatchTime = 100 * time.Millisecond

// connTx is inTx on one connection of the writer pool (one with a file attached).
func (d *DB) connTx(ctx context.Context, conn *sql.Conn, fn func(tx *sql.Tx) error) error {
	select {
	case d.writeTurn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("begin: %w", ctx.Err())
	}
	defer func() { <-d.writeTurn }()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// cleanStagingFiles deletes the staging files of imports that are no longer running:
// their dataset is gone, ready, or in ids (stale imports being removed). A file whose
// import is live (this process's or another's) stays.
func (d *DB) cleanStagingFiles(ctx context.Context) error {
	entries, err := os.ReadDir(StagingDir(d.path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		m := stagingName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		id, _ := strconv.ParseInt(m[1], 10, 64)
		var state string
		err := d.r.QueryRowContext(ctx, `SELECT state FROM datasets WHERE id = ?`, id).Scan(&state)
		switch {
		case errors.Is(err, sql.ErrNoRows), err == nil && state != "importing":
			errs = append(errs, d.dropStaging(id))
		case err != nil:
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
