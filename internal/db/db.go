// Package db is Dedup Studio's store: one SQLite file through modernc.org/sqlite (pure
// Go), every SQL statement, transactions, and the migration runner.
//
// Two pools share the file. Writers take the write lock at BEGIN (_txlock=immediate), so
// a read-then-write transaction never fails with SQLITE_BUSY halfway; readers use a
// read-only pool, so reads in WAL mode never queue behind a writer. Every connection
// gets WAL, synchronous=FULL (labels and approvals survive a power cut, not just a
// crash), foreign keys and a busy timeout through the DSN.
package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/dedupstudio/dedupstudio/migrations"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("not found")

// DB is the store.
type DB struct {
	w    *sql.DB // writes: immediate transactions
	r    *sql.DB // reads
	path string
	now  func() time.Time
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
	}
	return "file:" + filepath.ToSlash(path) + "?" + q.Encode()
}

// Open opens (creating if needed) the database at path and brings its schema up to
// date. A database whose schema is newer than this binary knows is refused.
func Open(ctx context.Context, path string) (*DB, error) {
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(4)
	d := &DB{w: w, path: path, now: time.Now}
	if err := d.migrate(ctx, migrations.Files); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(8)
	d.r = r
	if err := d.cleanStaleImports(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Close closes both pools.
func (d *DB) Close() error {
	var errs []error
	if d.r != nil {
		errs = append(errs, d.r.Close())
	}
	errs = append(errs, d.w.Close())
	return errors.Join(errs...)
}

// Path returns the database file's path.
func (d *DB) Path() string { return d.path }

func (d *DB) stamp() string { return d.now().UTC().Format(time.RFC3339Nano) }

// inTx runs fn in a write transaction, committing if it returns nil.
func (d *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

var migrationName = regexp.MustCompile(`^(\d{4})_[a-z0-9_]+\.sql$`)

type migration struct {
	version int
	name    string
	sql     string
}

func readMigrations(files fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		v, _ := strconv.Atoi(m[1])
		b, err := fs.ReadFile(files, e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migrations: %s out of sequence (want version %d)", m.name, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion returns the highest migration applied.
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := d.w.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// migrate applies the pending migrations of files in order, each in its own
// transaction together with its record in schema_migrations.
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
	current, err := d.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if current > len(ms) {
		return fmt.Errorf("database %s has schema version %d, newer than this binary knows (%d): run a newer Dedup Studio", d.path, current, len(ms))
	}
	for _, m := range ms[current:] {
		err := d.inTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
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

// IntegrityCheck runs SQLite's integrity check.
func (d *DB) IntegrityCheck(ctx context.Context) (bool, error) {
	var res string
	if err := d.w.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return false, err
	}
	return res == "ok", nil
}

// Fingerprint hashes every row of every table but those named in except: two equal
// fingerprints mean nothing was written in between. For tests and diagnostics.
func (d *DB) Fingerprint(ctx context.Context, except ...string) (string, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return "", err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return "", err
		}
		if !slices.Contains(except, name) {
			tables = append(tables, name)
		}
	}
	rows.Close()
	h := sha256.New()
	for _, t := range tables {
		rows, err := d.r.QueryContext(ctx, `SELECT * FROM "`+t+`" ORDER BY 1`)
		if err != nil {
			return "", err
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		fmt.Fprintf(h, "table %s\n", t)
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", err
			}
			fmt.Fprintf(h, "%v\n", vals)
		}
		rows.Close()
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// scanner is what both *sql.Row and *sql.Rows offer.
type scanner interface{ Scan(...any) error }

// queryAll runs a read query and scans every row with scan.
func queryAll[T any](ctx context.Context, d *DB, query string, scan func(scanner) (T, error), args ...any) ([]T, error) {
	rows, err := d.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
