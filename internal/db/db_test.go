package db

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dedupstudio/dedupstudio/migrations"
)

func openTest(t *testing.T) *DB {
	t.Helper()
	d, err := Open(t.Context(), filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Every pooled connection, not just the first, must carry the pragmas.
func TestPragmasOnEveryConnection(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	for name, pool := range map[string]*sql.DB{"write": d.w, "read": d.r} {
		c1, err := pool.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := pool.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range []*sql.Conn{c1, c2} {
			for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "foreign_keys": "1", "busy_timeout": "10000"} {
				var got string
				if err := c.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s pool, connection %d: PRAGMA %s = %s; want %s", name, i+1, pragma, got, want)
				}
			}
		}
		c1.Close()
		c2.Close()
	}
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	ctx := t.Context()
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := readMigrations(migrations.Files)
	last := ms[len(ms)-1].version
	if v, _ := d.SchemaVersion(ctx); v != last {
		t.Errorf("schema version %d; want %d", v, last)
	}
	// Every table is STRICT.
	rows, err := d.r.QueryContext(ctx, `SELECT name, strict FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var strict int
		rows.Scan(&name, &strict)
		if strict != 1 {
			t.Errorf("table %s is not STRICT", name)
		}
	}
	rows.Close()
	// A newer migration applies on the next open, once; so does one numbered below the
	// newest applied that was not applied yet (numbers are handed out ahead).
	next := fstest.MapFS{}
	for _, m := range ms {
		next[m.name] = &fstest.MapFile{Data: []byte(m.sql)}
	}
	next["README.txt"] = &fstest.MapFile{Data: []byte("not a migration: its name does not count")}
	next[fmt.Sprintf("%04d_twin.sql", last)] = &fstest.MapFile{Data: []byte(`CREATE TABLE twin (x INTEGER) STRICT;`)}
	next[name(last+2)] = &fstest.MapFile{Data: []byte(`CREATE TABLE extra (x INTEGER) STRICT;`)}
	if err := d.migrate(ctx, next); err == nil {
		t.Error("two migrations of one version accepted")
	}
	delete(next, fmt.Sprintf("%04d_twin.sql", last))
	if err := d.migrate(ctx, next); err != nil {
		t.Fatal(err)
	}
	next[fmt.Sprintf("%04d_late.sql", last+1)] = &fstest.MapFile{Data: []byte(`CREATE TABLE late (x INTEGER) STRICT;`)}
	if err := d.migrate(ctx, next); err != nil {
		t.Fatal(err)
	}
	if err := d.migrate(ctx, next); err != nil { // nothing left to apply
		t.Fatal(err)
	}
	if v, _ := d.SchemaVersion(ctx); v != last+2 {
		t.Errorf("after the new migrations: version %d; want %d", v, last+2)
	}
	for _, table := range []string{"extra", "late"} {
		if _, err := d.w.ExecContext(ctx, `INSERT INTO `+table+` (x) VALUES (1)`); err != nil {
			t.Errorf("table %s of a later migration: %v", table, err)
		}
	}
	d.Close()
	// The shipped binary knows fewer migrations than the database has: refused clearly.
	_, err = Open(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "newer than this binary") {
		t.Errorf("Open of a newer database: %v; want a refusal", err)
	}
}

func name(v int) string { return fmt.Sprintf("%04d_extra.sql", v) }

func TestImportLifecycle(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	ds, err := d.BeginDataset(ctx, "sample", "a.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Version != 1 || ds.State != "importing" {
		t.Fatalf("BeginDataset = %+v", ds)
	}
	dups, err := d.InsertDocuments(ctx, ds.ID, []NewDocument{{ExtID: "a", Text: "x"}, {ExtID: "b", Text: "y"}, {ExtID: "a", Text: "z"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(dups) != 1 || dups[0] != 2 {
		t.Errorf("duplicates = %v; want [2]", dups)
	}
	// Invisible while importing.
	if list, _ := d.Datasets(ctx); len(list) != 0 {
		t.Errorf("importing dataset visible: %v", list)
	}
	if _, err := d.Dataset(ctx, ds.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Dataset(importing) err = %v; want ErrNotFound", err)
	}
	done, err := d.FinishDataset(ctx, ds.ID, "hash", 1, "tester")
	if err != nil {
		t.Fatal(err)
	}
	if done.Docs != 2 || done.State != "ready" {
		t.Errorf("FinishDataset = %+v", done)
	}
	if _, err := d.InsertDocuments(ctx, ds.ID, []NewDocument{{ExtID: "c", Text: "late"}}); err == nil {
		t.Error("inserted into a ready dataset")
	}
	// A second import of the same name is version 2; discarding it leaves version 1 alone.
	ds2, _ := d.BeginDataset(ctx, "sample", "b.jsonl", 0)
	d.InsertDocuments(ctx, ds2.ID, []NewDocument{{ExtID: "q", Text: "q"}})
	if ds2.Version != 2 {
		t.Errorf("second import version %d; want 2", ds2.Version)
	}
	if err := d.DiscardDataset(ctx, ds2.ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := d.CountDocuments(ctx); n != 2 {
		t.Errorf("documents after discard: %d; want 2", n)
	}
	// Stale imports (a killed process) are cleaned; fresh ones are left to their process.
	ds3, _ := d.BeginDataset(ctx, "sample", "c.jsonl", 0)
	if n, _ := d.CleanStaleImports(ctx, time.Hour); n != 0 {
		t.Errorf("cleaned %d fresh imports", n)
	}
	d.now = func() time.Time { return time.Now().Add(2 * StaleImportAge) }
	if n, _ := d.CleanStaleImports(ctx, StaleImportAge); n != 1 {
		t.Errorf("cleaned %d stale imports; want 1 (dataset %d)", n, ds3.ID)
	}
}

func TestAuditLogIsAppendOnly(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	ds, _ := d.BeginDataset(ctx, "s", "f", 0)
	d.FinishDataset(ctx, ds.ID, "h", 0, "alice")
	events, err := d.AuditLog(ctx, 10)
	if err != nil || len(events) != 1 || events[0].Action != "dataset.import" || events[0].Actor != "alice" {
		t.Fatalf("audit log = %+v, %v", events, err)
	}
	if _, err := d.w.ExecContext(ctx, `UPDATE audit_log SET actor = 'mallory'`); err == nil {
		t.Error("audit log row updated")
	}
	if _, err := d.w.ExecContext(ctx, `DELETE FROM audit_log`); err == nil {
		t.Error("audit log row deleted")
	}
}

func TestLabelHistoryAppends(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	ds, _ := d.BeginDataset(ctx, "s", "f", 0)
	d.InsertDocuments(ctx, ds.ID, []NewDocument{{ExtID: "a", Text: "x", Source: "web", Lang: "en"}, {ExtID: "b", Text: "y", Source: "web", Lang: "de"}})
	d.FinishDataset(ctx, ds.ID, "h", 0, "")
	c, err := d.EnsureCampaign(ctx, ds.ID, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := d.DocumentIDs(ctx, ds.ID, []string{"a", "b", "zz"})
	if len(ids) != 2 {
		t.Fatalf("DocumentIDs = %v", ids)
	}
	first := NewLabel{DocA: ids["b"], DocB: ids["a"], Annotator: "ann", Category: "minor", Duplicate: true}
	second := first
	second.Category = "different"
	second.Duplicate = false
	if err := d.AddLabels(ctx, c.ID, []NewLabel{first}, "ann"); err != nil {
		t.Fatal(err)
	}
	if err := d.AddLabels(ctx, c.ID, []NewLabel{second}, "ann"); err != nil {
		t.Fatal(err)
	}
	var events, withPrev int
	d.r.QueryRowContext(ctx, `SELECT count(*), count(previous_id) FROM label_events`).Scan(&events, &withPrev)
	if events != 2 || withPrev != 1 {
		t.Errorf("events %d (with previous %d); want 2 (1)", events, withPrev)
	}
	o, err := d.DatasetOverview(ctx, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o.Pairs != 1 || len(o.Categories) != 1 || o.Categories[0] != (Count{"different", 1}) || len(o.Langs) != 2 {
		t.Errorf("overview = %+v", o)
	}
}

// An empty optional time column is the zero time; a bad one names its column.
func TestParseOptTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		name, in string
		want     time.Time
		wantErr  string
	}{
		{"empty", "", time.Time{}, ""},
		{"set", at.Format(time.RFC3339Nano), at, ""},
		{"bad", "yesterday", time.Time{}, "column finished_at: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseOptTime("finished_at", tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Errorf("parseOptTime(%q) = %v, %v; want an error starting %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !got.Equal(tt.want) {
				t.Errorf("parseOptTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}
