package db

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/migrations"
)

// auditFile is a store file at path with n audit events, closed; it returns the head.
func auditFile(t *testing.T, path string, n int) review.AuditHead {
	t.Helper()
	ctx := t.Context()
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range n {
		if err := d.Audit(ctx, "tester", "test.event", fmt.Sprintf("thing:%d", i), map[string]any{"n": i}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := d.VerifyAudit(ctx, review.AuditHead{})
	if err != nil || !c.Intact() || c.Rows != n {
		t.Fatalf("VerifyAudit of an untouched log = %+v, %v", c, err)
	}
	return review.AuditHead{Hash: c.Head, Entries: c.Rows}
}

// tamper runs statements on the file as someone holding it would, with the sqlite
// shell: no store, no pragmas.
func tamper(t *testing.T, path string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range stmts {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// fileBytes returns every file of the database's directory, named, bytes and all.
func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(path), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(append(out, e.Name()...), 0), b...)
	}
	return out
}

// rehash is what someone who knows the (public) hashing does after editing: every
// hash from row from on computed again, so the chain alone verifies.
func rehash(t *testing.T, path string, from int64) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx := t.Context()
	rows, err := collect(ctx, raw, `SELECT `+auditColumns+` FROM audit_log ORDER BY id`, scanAuditRow)
	if err != nil {
		t.Fatal(err)
	}
	prev := ""
	for _, r := range rows {
		if r.ID >= from {
			r.PrevHash = prev
			r.Hash = r.sum()
			if _, err := raw.Exec(`UPDATE audit_log SET prev_hash = ?, hash = ? WHERE id = ?`, r.PrevHash, r.Hash, r.ID); err != nil {
				t.Fatal(err)
			}
		}
		prev = r.Hash
	}
}

const dropTriggers = `DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete; DROP TRIGGER audit_log_chained`

// The three tamperings of the report, each reported by "audit verify" (which used to
// open the file to write and seal rows without hashes first, then call them intact),
// and a chain rewritten and hashed again, or cut short, caught by the head a sign-off
// published. Verifying leaves the file byte for byte as it was, and opening the store
// (a server start) seals nothing.
func TestAuditVerifyReportsTampering(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	forged := `INSERT INTO audit_log (id, at, actor, action, subject, detail, prev_hash, hash)
		VALUES (9, '2026-01-01T00:00:00Z', 'mallory', 'user.role', 'user:1', '{"after":"admin"}', '', '')`
	for _, tc := range []struct {
		name    string
		stmts   []string
		rehash  int64 // rows hashed again from this one on (0: none)
		keep    bool  // check against the head before the tampering
		broken  int64
		problem string
	}{
		{"forged tail row with empty hashes", []string{dropTriggers, forged}, 0, false, 9, "the row has no hash"},
		{"edited row, hashes blanked from it on", []string{dropTriggers, `UPDATE audit_log SET actor = 'mallory' WHERE id = 3`,
			`UPDATE audit_log SET prev_hash = '', hash = '' WHERE id >= 3`}, 0, false, 3, "the row has no hash"},
		{"deleted middle row, later hashes blanked", []string{dropTriggers, `DELETE FROM audit_log WHERE id = 4`,
			`UPDATE audit_log SET prev_hash = '', hash = '' WHERE id > 4`}, 0, false, 5, "the row has no hash"},
		{"edited row, chain hashed again", []string{dropTriggers, `UPDATE audit_log SET actor = 'mallory' WHERE id = 3`}, 3, true, 0,
			"no entry carries the head kept elsewhere"},
		{"rows cut off the end", []string{dropTriggers, `DELETE FROM audit_log WHERE id > 6`}, 0, true, 0, "no entry carries the head kept elsewhere"},
		{"deleted middle row, chain hashed again", []string{dropTriggers, `DELETE FROM audit_log WHERE id = 4`}, 5, true, 0,
			"no entry carries the head kept elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.db")
			head := auditFile(t, path, 8)
			tamper(t, path, tc.stmts...)
			if tc.rehash != 0 {
				rehash(t, path, tc.rehash)
			}
			var kept review.AuditHead
			if tc.keep {
				kept = head
			}
			before := fileBytes(t, path)
			c, err := VerifyAuditFile(ctx, path, kept)
			if err != nil {
				t.Fatal(err)
			}
			if c.Intact() || c.BrokenAt != tc.broken || !strings.Contains(c.Problem, tc.problem) {
				t.Errorf("VerifyAuditFile = %+v; want broken at %d, %q", c, tc.broken, tc.problem)
			}
			if !bytes.Equal(fileBytes(t, path), before) {
				t.Error("verifying changed the database file")
			}
			// A server start seals nothing: the forgery stays visible.
			d, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
			if again, err := VerifyAuditFile(ctx, path, kept); err != nil || again.BrokenAt != c.BrokenAt || again.Problem != c.Problem {
				t.Errorf("after the store opened: %+v, %v; want %+v", again, err, c)
			}
		})
	}
}

// An intact log verifies against the head a sign-off kept, also once it has grown;
// a head with the wrong number of entries, or from another log, does not.
func TestAuditVerifyAgainstAKeptHead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "audit.db")
	head := auditFile(t, path, 5)
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		d.Audit(ctx, "tester", "later", "", nil)
	}
	d.Close()
	c, err := VerifyAuditFile(ctx, path, head)
	if err != nil || !c.Intact() || c.KeptAt != 5 || c.Rows != 8 {
		t.Errorf("against the kept head = %+v, %v; want intact, the head at entry 5 of 8", c, err)
	}
	wrong := head
	wrong.Entries = 4
	if c, _ := VerifyAuditFile(ctx, path, wrong); c.Intact() || !strings.Contains(c.Problem, "published with 4 entries") {
		t.Errorf("against a head with the wrong count = %+v; want refused", c)
	}
	other := auditFile(t, filepath.Join(t.TempDir(), "other.db"), 5)
	if c, _ := VerifyAuditFile(ctx, path, other); c.Intact() || c.KeptAt != 0 {
		t.Errorf("against another log's head = %+v; want refused", c)
	}
	if _, err := VerifyAuditFile(ctx, filepath.Join(t.TempDir(), "missing.db"), review.AuditHead{}); err == nil {
		t.Error("a missing file verified")
	}
}

// No row joins the log without its hash, out of turn or unlinked, while the triggers
// stand; no row can be "sealed" after the fact.
func TestAuditRowsAreInsertedHashed(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.db")
	auditFile(t, path, 3)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var last string
	raw.QueryRow(`SELECT hash FROM audit_log WHERE id = 3`).Scan(&last)
	good := strings.Repeat("a", 64)
	for _, q := range []string{
		`INSERT INTO audit_log (id, at, action, prev_hash, hash) VALUES (4, 'x', 'forged', '', '')`,
		`INSERT INTO audit_log (id, at, action, prev_hash, hash) VALUES (4, 'x', 'forged', 'nope', '` + good + `')`,
		`INSERT INTO audit_log (id, at, action, prev_hash, hash) VALUES (5, 'x', 'forged', '` + last + `', '` + good + `')`,
		`UPDATE audit_log SET hash = '' WHERE id = 3`,
		`UPDATE audit_log SET prev_hash = '' WHERE id = 2`,
	} {
		if _, err := raw.Exec(q); err == nil {
			t.Errorf("accepted with the triggers in place: %s", q)
		}
	}
}

// Rows written before the log was chained (schema 5) are sealed once, in order, by the
// migration that chains it; nothing seals rows afterwards.
func TestAuditSealedWhenChained(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	ms, err := readMigrations(migrations.Files)
	if err != nil {
		t.Fatal(err)
	}
	upTo := func(v int) fstest.MapFS {
		fsys := fstest.MapFS{}
		for _, m := range ms {
			if m.version <= v {
				fsys[m.name] = &fstest.MapFile{Data: []byte(m.sql)}
			}
		}
		return fsys
	}
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	old := &DB{w: w, path: path, now: func() time.Time { return time.Now() }, writeTurn: make(chan struct{}, 1)}
	if err := old.migrate(ctx, upTo(5)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // as a binary before schema 6 wrote them: no hashes
		if _, err := w.Exec(`INSERT INTO audit_log (at, actor, action, subject, detail) VALUES (?, 'old', 'legacy', ?, '{}')`,
			old.stamp(), fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Audit(ctx, "tester", "after", "", nil)
	if c, err := d.VerifyAudit(ctx, review.AuditHead{}); err != nil || !c.Intact() || c.Rows != 4 {
		t.Errorf("after the upgrade: %+v, %v; want 4 intact rows", c, err)
	}
}

// Verifying the file of a running server reads the entries still in its WAL.
func TestAuditVerifyFileOfARunningStore(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	path := d.Path()
	for range 4 {
		d.Audit(ctx, "tester", "live", "", nil)
	}
	c, err := VerifyAuditFile(ctx, path, review.AuditHead{})
	if err != nil || !c.Intact() || c.Rows != 4 {
		t.Errorf("VerifyAuditFile of a running store = %+v, %v; want 4 intact entries", c, err)
	}
	if err := d.Audit(ctx, "tester", "after the check", "", nil); err != nil {
		t.Errorf("the store cannot write after a check: %v", err)
	}
}
