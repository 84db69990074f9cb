// Package db is Dedup Studio's store: one SQLite file through modernc.org/sqlite (pure
// Go), every SQL statement, transactions, and the migration runner.
//
// Two pools share the file. Writers take the write lock at BEGIN (_txlock=immediate), so
// a read-then-write transaction never fails with SQLITE_BUSY halfway; readers use a
// read-only pool, so reads in WAL mode never queue behind a writer. Every connection
// gets WAL, synchronous=FULL (labels and approvals survive a power cut, not just a
// crash), foreign keys and a busy timeout through the DSN.
//
// Values leave the store typed and parsed once, here: a campaign's lsh.Spec and
// []labels.Category, a user's auth.Role, an event's labels.Kind, times. Every error
// comes wrapped with the operation that met it; the ones a caller acts on are
// ErrNotFound, ErrConflict (detected by SQLite's result code), ErrStale and
// ErrLastAdmin, found with errors.Is.
package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/dedupstudio/dedupstudio/migrations"

	"github.com/dedupstudio/dedupstudio/internal/errkind"
)

// Errors a caller may act on; every other error is an internal failure. Each comes
// wrapped with the operation that met it, so test for them with errors.Is.
var (
	// ErrNotFound is a looked-up row that does not exist (or is not visible yet, like a
	// dataset still importing).
	ErrNotFound = errkind.New(errkind.NotFound, "not found")
	// ErrConflict is an insert that collides with an existing row: a taken user name, a
	// second first admin.
	ErrConflict = errkind.New(errkind.Conflict, "already exists")
	// ErrStale is an edit made against a state that has changed since it was shown
	// (another tab, another request): nothing is written, the person looks again.
	ErrStale = errkind.New(errkind.Conflict, "changed since it was shown")
	// ErrLastAdmin refuses a change that would leave no enabled admin.
	ErrLastAdmin = errkind.New(errkind.Conflict, "the last enabled admin cannot lose the admin role or be disabled")
)

// isUnique reports whether err is SQLite refusing a row that breaks a UNIQUE or
// PRIMARY KEY constraint (by its extended result code, not its text).
func isUnique(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// Times are stored as RFC 3339 text in UTC, with nanoseconds.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// parseTime reads a stored time; column names it in the error.
func parseTime(column, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("column %s: %w", column, err)
	}
	return t, nil
}

// oneRow checks that a statement changed a row: none is ErrNotFound.
func oneRow(res sql.Result) error { return rowOr(res, ErrNotFound) }

// rowOr checks that a statement changed a row: none is the error none (ErrStale for an
// update guarded by the state it expects).
func rowOr(res sql.Result, none error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return none
	}
	return nil
}

// parseOptTime is parseTime for a column that may be empty: "" is the zero time.
func parseOptTime(column, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return parseTime(column, s)
}

// notFound turns a query's sql.ErrNoRows into ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// DB is the store.
type DB struct {
	w    *sql.DB // writes: immediate transactions
	r    *sql.DB // reads
	path string
	now  func() time.Time

	docCounts sync.Map // dataset id -> docCounts of a ready dataset (they never change)
	// writeTurn lets one write transaction of this process run at a time, in arrival
	// order. SQLite admits one writer anyway; queueing here keeps writers out of its busy
	// handler, which is not fair: a connection that has waited a while polls every 100 ms
	// and loses to fresh ones, so under steady load it can wait past busy_timeout and fail
	// with SQLITE_BUSY (16 reviewers deciding at once did). busy_timeout still covers
	// other processes (the command line).
	writeTurn chan struct{}
	stages    stagings // the staging files of this process's imports (staging.go)
}

// dsn builds the connection string; pragmas go in the DSN so every pooled connection
// has them (an Exec would reach only one connection).
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	if readOnly {
		q.Add("mode", "ro")
	} else {
		q.Add("_txlock", "immediate")
		// Statement journals (a statement with triggers or ON CONFLICT keeps one) in
		// memory rather than a temporary file: a write syscall per page was a third of a
		// label import's time.
		q.Add("_pragma", "temp_store(memory)")
	}
	return "file:" + filepath.ToSlash(path) + "?" + q.Encode()
}

// Open opens (creating if needed) the database at path and brings its schema up to
// date. A database whose schema is newer than this binary knows is refused. Imports
// left behind by a killed process are not cleaned here (that can take a while): the
// server runs CleanStaleImports in the background.
func Open(ctx context.Context, path string) (*DB, error) {
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(4)
	d := &DB{w: w, path: path, now: time.Now, writeTurn: make(chan struct{}, 1)}
	if err := d.migrate(ctx, migrations.Files); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s read-only: %w", path, err)
	}
	r.SetMaxOpenConns(8)
	d.r = r
	return d, nil
}

// Close closes both pools.
func (d *DB) Close() error {
	var errs []error
	errs = append(errs, d.closeStagings())
	if d.r != nil {
		errs = append(errs, d.r.Close())
	}
	errs = append(errs, d.w.Close())
	return errors.Join(errs...)
}

// Path returns the database file's path.
func (d *DB) Path() string { return d.path }

func (d *DB) stamp() string { return formatTime(d.now()) }

// inTx runs fn in a write transaction, committing if it returns nil. The caller names
// the operation in the error it returns.
func (d *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	select {
	case d.writeTurn <- struct{}{}: // goroutines blocked on a channel are served first come, first served
	case <-ctx.Done():
		return fmt.Errorf("begin: %w", ctx.Err())
	}
	defer func() { <-d.writeTurn }()
	return d.runTx(ctx, fn)
}

// tryInTx is inTx when no write of this process is running or waiting; otherwise it
// writes nothing and returns false at once. (A turn handed back goes straight to a
// waiting writer, so a free turn means nobody waits.)
func (d *DB) tryInTx(ctx context.Context, fn func(tx *sql.Tx) error) (bool, error) {
	select {
	case d.writeTurn <- struct{}{}:
	default:
		return false, nil
	}
	defer func() { <-d.writeTurn }()
	return true, d.runTx(ctx, fn)
}

// runTx runs fn in a write transaction, the write turn taken.
func (d *DB) runTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback() // the error that made us roll back is the one worth returning
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// auditChainVersion is the migration that chains the audit log: the rows written before
// it are sealed in the transaction that applies it.
const auditChainVersion = 6

var migrationName = regexp.MustCompile(`^(\d{4})_[a-z0-9_]+\.sql$`)

type migration struct {
	version int
	name    string
	sql     string
}

func readMigrations(files fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		v, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, fmt.Errorf("migrations: %s: %w", e.Name(), err)
		}
		b, err := fs.ReadFile(files, e.Name())
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("migrations: %s and %s have the same version", ms[i-1].name, ms[i].name)
		}
	}
	return ms, nil
}

// SchemaVersion returns the highest migration applied.
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := d.w.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version of %s: %w", d.path, err)
	}
	return v, nil
}

// migrate applies the migrations of files not applied yet, in the order of their
// versions, each in its own transaction together with its record in
// schema_migrations. Versions may have gaps (numbers are handed out ahead to work in
// progress), and one that lands after a higher one was applied is applied then: what
// counts is which are applied, not the highest. A database with a version this binary
// does not know is refused.
func (d *DB) migrate(ctx context.Context, files fs.FS) error {
	ms, err := readMigrations(files)
	if err != nil {
		return err
	}
	if _, err := d.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("open %s: %w", d.path, err)
	}
	applied, err := d.appliedVersions(ctx)
	if err != nil {
		return err
	}
	known := map[int]bool{}
	for _, m := range ms {
		known[m.version] = true
	}
	done := map[int]bool{}
	for _, v := range applied {
		if !known[v] {
			return fmt.Errorf("database %s has schema version %d, newer than this binary knows (%d): run a newer Dedup Studio", d.path, v, ms[len(ms)-1].version)
		}
		done[v] = true
	}
	for _, m := range ms {
		if done[m.version] {
			continue
		}
		err := d.inTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			if m.version == auditChainVersion {
				if err := sealLegacyAudit(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, strings.TrimSuffix(m.name, ".sql"), d.stamp())
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}

// appliedVersions lists the migrations recorded in schema_migrations (read through the
// writer pool: migrations run before the readers open).
func (d *DB) appliedVersions(ctx context.Context) ([]int, error) {
	out, err := collect(ctx, d.w, `SELECT version FROM schema_migrations ORDER BY version`, scanValue[int])
	if err != nil {
		return nil, fmt.Errorf("schema versions of %s: %w", d.path, err)
	}
	return out, nil
}

// IntegrityCheck runs SQLite's integrity check.
func (d *DB) IntegrityCheck(ctx context.Context) (bool, error) {
	var res string
	if err := d.w.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return false, fmt.Errorf("integrity check of %s: %w", d.path, err)
	}
	return res == "ok", nil
}

// Fingerprint hashes every row of every table but those named in except: two equal
// fingerprints mean nothing was written in between. For tests and diagnostics.
func (d *DB) Fingerprint(ctx context.Context, except ...string) (string, error) {
	tables, err := queryAll(ctx, d, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
		scanValue[string])
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	h := sha256.New()
	for _, t := range tables {
		if slices.Contains(except, t) {
			continue
		}
		fmt.Fprintf(h, "table %s\n", t)
		if err := hashRows(ctx, d.r, t, h); err != nil {
			return "", fmt.Errorf("fingerprint of table %s: %w", t, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashRows(ctx context.Context, pool *sql.DB, table string, w io.Writer) error {
	rows, err := pool.QueryContext(ctx, `SELECT * FROM "`+table+`" ORDER BY 1`)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		fmt.Fprintf(w, "%v\n", vals)
	}
	return rows.Err()
}

// scanner is what both *sql.Row and *sql.Rows offer.
type scanner interface{ Scan(...any) error }

// scanValue scans a row of one column.
func scanValue[T any](sc scanner) (T, error) {
	var v T
	return v, sc.Scan(&v)
}

// queryAll runs a read query and scans every row with scan.
func queryAll[T any](ctx context.Context, d *DB, query string, scan func(scanner) (T, error), args ...any) ([]T, error) {
	return collect(ctx, d.r, query, scan, args...)
}
