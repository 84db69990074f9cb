package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/review"
)

// The audit log is append-only (triggers refuse updates and deletes) and hash-chained:
// every row carries the hash of the row before it and its own hash over its content and
// that link, so an edit to any row, or a row removed from the middle, breaks the chain
// at the first row it touches (VerifyAudit). The writer computes both hashes inside the
// transaction that writes the row, whose write lock makes the chain a single line.
//
// A row's hash is the SHA-256 (hex) of "dedupstudio audit v1\n" followed by the JSON
// array [id, at, actor, user_id or null, action, subject, detail, prev_hash]. The chain
// alone cannot show rows cut off its end, nor a chain rewritten and hashed again from
// some row on (the hashing is no secret): the head (the last hash and the number of
// entries) is published in every sign-off record and export and on the audit page, and
// VerifyAudit checks a head kept elsewhere against the chain.

// auditRow is one row of the log as the chain reads it.
type auditRow struct {
	ID       int64
	At       string
	Actor    string
	UserID   sql.NullInt64
	Action   string
	Subject  string
	Detail   string
	PrevHash string
	Hash     string
}

// sum returns the row's hash.
func (r auditRow) sum() string {
	var uid any
	if r.UserID.Valid {
		uid = r.UserID.Int64
	}
	b, _ := json.Marshal([]any{r.ID, r.At, r.Actor, uid, r.Action, r.Subject, r.Detail, r.PrevHash}) // strings and numbers always marshal
	sum := sha256.Sum256(append([]byte("dedupstudio audit v1\n"), b...))
	return hex.EncodeToString(sum[:])
}

// Audit records an event outside any other change (a failed sign-in).
func (d *DB) Audit(ctx context.Context, actor, action, subject string, detail map[string]any) error {
	if err := d.inTx(ctx, func(tx *sql.Tx) error { return d.audit(ctx, tx, actor, action, subject, detail) }); err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

// AuditBy records an event by a signed-in user outside any other change (an admin
// clearing a sign-in lockout, which lives in memory).
func (d *DB) AuditBy(ctx context.Context, actor User, action, subject string, detail map[string]any) error {
	if err := d.inTx(ctx, func(tx *sql.Tx) error { return d.auditBy(ctx, tx, actor, action, subject, detail) }); err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

// audit appends to the audit log inside tx, for an actor known by name only (the
// command line, imports, the demo).
func (d *DB) audit(ctx context.Context, tx *sql.Tx, actor, action, subject string, detail map[string]any) error {
	return d.auditBy(ctx, tx, User{Name: actor}, action, subject, detail)
}

// auditBy appends to the audit log inside tx, naming the acting user, and links the row
// into the chain.
func (d *DB) auditBy(ctx context.Context, tx *sql.Tx, actor User, action, subject string, detail map[string]any) error {
	if detail == nil {
		detail = map[string]any{}
	}
	b, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("audit %s detail: %w", action, err)
	}
	var last auditRow
	err = tx.QueryRowContext(ctx, `SELECT id, hash FROM audit_log ORDER BY id DESC LIMIT 1`).Scan(&last.ID, &last.Hash)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	r := auditRow{ID: last.ID + 1, At: d.stamp(), Actor: actor.Name, Action: action, Subject: subject, Detail: string(b), PrevHash: last.Hash}
	if actor.ID != 0 {
		r.UserID = sql.NullInt64{Int64: actor.ID, Valid: true}
	}
	r.Hash = r.sum()
	_, err = tx.ExecContext(ctx, `INSERT INTO audit_log (id, at, actor, user_id, action, subject, detail, prev_hash, hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.At, r.Actor, r.UserID, r.Action, r.Subject, r.Detail, r.PrevHash, r.Hash)
	if err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

const auditColumns = `id, at, actor, user_id, action, subject, detail, prev_hash, hash`

func scanAuditRow(sc scanner) (auditRow, error) {
	var r auditRow
	return r, sc.Scan(&r.ID, &r.At, &r.Actor, &r.UserID, &r.Action, &r.Subject, &r.Detail, &r.PrevHash, &r.Hash)
}

// sealLegacyAudit links the rows written before the log was chained into the chain, in
// order. It runs once, inside the transaction that applies migration 0006 (which adds
// the hash columns and a trigger that allows exactly this): from then on every row is
// hashed by the transaction that inserts it, and a row without its hash is a row
// someone forged (migration 0020 refuses it; VerifyAudit reports it).
func sealLegacyAudit(ctx context.Context, tx *sql.Tx) error {
	todo, err := collect(ctx, tx, `SELECT `+auditColumns+` FROM audit_log ORDER BY id`, scanAuditRow)
	if err != nil {
		return fmt.Errorf("seal the audit log: %w", err)
	}
	prev := ""
	for _, r := range todo {
		r.PrevHash = prev
		r.Hash = r.sum()
		if _, err := tx.ExecContext(ctx, `UPDATE audit_log SET prev_hash = ?, hash = ? WHERE id = ?`, r.PrevHash, r.Hash, r.ID); err != nil {
			return fmt.Errorf("seal the audit log: row %d: %w", r.ID, err)
		}
		prev = r.Hash
	}
	return nil
}

// auditHead reads the chain's head inside q's view: the last row's hash and the number
// of rows. An empty log has the zero head.
func auditHead(ctx context.Context, q querier) (review.AuditHead, error) {
	var h review.AuditHead
	err := q.QueryRowContext(ctx, `SELECT hash, (SELECT count(*) FROM audit_log) FROM audit_log ORDER BY id DESC LIMIT 1`).Scan(&h.Hash, &h.Entries)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return review.AuditHead{}, fmt.Errorf("audit head: %w", err)
	}
	return h, nil
}

// ExportAuditHead returns the chain's head as it was when the manifest was last
// exported (its export event being the head), which the export publishes with its
// files; ErrNotFound when it never was.
func (d *DB) ExportAuditHead(ctx context.Context, manifestID int64) (review.AuditHead, error) {
	var h review.AuditHead
	err := d.r.QueryRowContext(ctx, `SELECT a.hash, (SELECT count(*) FROM audit_log b WHERE b.id <= a.id) FROM audit_log a
		WHERE a.subject = ? AND a.action = 'manifest.export' ORDER BY a.id DESC LIMIT 1`, manifestSubject(manifestID)).Scan(&h.Hash, &h.Entries)
	if err != nil {
		return review.AuditHead{}, fmt.Errorf("audit head at the export of manifest %d: %w", manifestID, notFound(err))
	}
	return h, nil
}

// AuditCheck is the outcome of VerifyAudit.
type AuditCheck struct {
	Rows int
	// Head is the hash of the last row: keep it elsewhere to detect rows cut off the end
	// or a chain rewritten from some row on.
	Head string
	// BrokenAt is the id of the first row that breaks the chain (0 when none does),
	// and Problem what is wrong: with that row, or with the head kept elsewhere that the
	// chain was checked against.
	BrokenAt int64
	Problem  string
	// Kept is the head checked against (zero: none), and KeptAt the entry that carries
	// its hash (0: no entry does).
	Kept   review.AuditHead
	KeptAt int64
}

// Intact reports whether the chain verified, and holds the head kept elsewhere when one
// was given.
func (c AuditCheck) Intact() bool { return c.BrokenAt == 0 && c.Problem == "" }

// VerifyAudit walks the audit log in order and recomputes every row's hash and link.
// It names the first row whose content does not match its hash (edited), that has no
// hash (never sealed: forged), or that does not carry the hash of the row before it (a
// row before it deleted, or edited along with its hash). With a head kept elsewhere (a
// sign-off record's), it also checks that an entry carries that hash, as many entries
// in: otherwise entries were cut off the end, or the chain was rewritten and hashed
// again from some entry up to it. It only reads.
func (d *DB) VerifyAudit(ctx context.Context, kept review.AuditHead) (AuditCheck, error) {
	c, err := verifyAudit(ctx, d.r, kept)
	if err != nil {
		return AuditCheck{}, fmt.Errorf("verify the audit log: %w", err)
	}
	return c, nil
}

// VerifyAuditFile is VerifyAudit over the database file at path, opened read-only and
// without migrating (or anything else) first: checking a log must never write to it
// (the store used to open it to write and seal rows without hashes before checking).
// The file is left byte for byte as it was. A file no process has open (no -wal beside
// it) is opened immutable, so not even the WAL index files appear beside it; one a
// server has open is read through its WAL, read-only.
func VerifyAuditFile(ctx context.Context, path string, kept review.AuditHead) (AuditCheck, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return AuditCheck{}, fmt.Errorf("verify the audit log of %s: no such file (-db names the store to check)", path)
	} else if err != nil {
		return AuditCheck{}, fmt.Errorf("verify the audit log of %s: %w", path, err)
	}
	q := url.Values{}
	if _, err := os.Stat(path + "-wal"); err == nil {
		q.Add("mode", "ro")
	} else {
		q.Add("immutable", "1")
	}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	pool, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?"+q.Encode())
	if err != nil {
		return AuditCheck{}, fmt.Errorf("verify the audit log of %s: %w", path, err)
	}
	defer pool.Close()
	pool.SetMaxOpenConns(1)
	c, err := verifyAudit(ctx, pool, kept)
	if err != nil {
		return AuditCheck{}, fmt.Errorf("verify the audit log of %s: %w", path, err)
	}
	return c, nil
}

// verifyAudit is VerifyAudit over q.
func verifyAudit(ctx context.Context, q querier, kept review.AuditHead) (AuditCheck, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_log ORDER BY id`)
	if err != nil {
		return AuditCheck{}, err
	}
	defer rows.Close()
	c := AuditCheck{Kept: kept}
	prev := auditRow{}
	for rows.Next() {
		r, err := scanAuditRow(rows)
		if err != nil {
			return AuditCheck{}, err
		}
		c.Rows++
		switch {
		case r.Hash == "":
			c.BrokenAt, c.Problem = r.ID, "the row has no hash: every entry is hashed when it is written, so it was added (or blanked) by hand"
		case r.PrevHash != prev.Hash:
			what := "the start of the log"
			if prev.ID != 0 {
				what = fmt.Sprintf("row %d", prev.ID)
			}
			c.BrokenAt, c.Problem = r.ID, "the row does not link to "+what+": a row before it was removed, or edited with its hash"
		case r.sum() != r.Hash:
			c.BrokenAt, c.Problem = r.ID, "the row's content does not match its hash: it was edited after it was written"
		}
		if c.BrokenAt != 0 {
			return c, nil
		}
		if kept.Hash != "" && r.Hash == kept.Hash && c.KeptAt == 0 {
			c.KeptAt = r.ID
			if kept.Entries != 0 && kept.Entries != c.Rows {
				c.Problem = fmt.Sprintf("the head kept elsewhere is entry %d, %d entries in, but was published with %d entries", r.ID, c.Rows, kept.Entries)
			}
		}
		prev = r
		c.Head = r.Hash
	}
	if err := rows.Err(); err != nil {
		return AuditCheck{}, err
	}
	if kept.Hash != "" && c.KeptAt == 0 {
		c.Problem = fmt.Sprintf("no entry carries the head kept elsewhere (%s): the log was cut off before it (it holds %d entries now), "+
			"or rewritten and hashed again from an entry up to it", kept, c.Rows)
	}
	return c, nil
}

// AuditEvent is one entry of the audit log.
type AuditEvent struct {
	ID      int64
	At      time.Time
	Actor   string
	UserID  int64 // 0 for the command line and the system
	Action  string
	Subject string
	Detail  string // a JSON object
	Hash    string
}

func scanAuditEvent(sc scanner) (AuditEvent, error) {
	r, err := scanAuditRow(sc)
	if err != nil {
		return AuditEvent{}, err
	}
	e := AuditEvent{ID: r.ID, Actor: r.Actor, UserID: r.UserID.Int64, Action: r.Action, Subject: r.Subject, Detail: r.Detail, Hash: r.Hash}
	e.At, err = parseTime("at", r.At)
	return e, err
}

// AuditLog returns the newest audit events, at most limit.
func (d *DB) AuditLog(ctx context.Context, limit int) ([]AuditEvent, error) {
	events, err := queryAll(ctx, d, `SELECT `+auditColumns+` FROM audit_log ORDER BY id DESC LIMIT ?`, scanAuditEvent, limit)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return events, nil
}

// AuditOf returns the audit events about one subject ("manifest:3"), oldest first, at
// most limit (the newest ones when there are more).
func (d *DB) AuditOf(ctx context.Context, subject string, limit int) ([]AuditEvent, error) {
	events, err := queryAll(ctx, d, `SELECT `+auditColumns+` FROM (SELECT `+auditColumns+` FROM audit_log WHERE subject = ?
		ORDER BY id DESC LIMIT ?) ORDER BY id`, scanAuditEvent, subject, limit)
	if err != nil {
		return nil, fmt.Errorf("audit log of %s: %w", subject, err)
	}
	return events, nil
}

// UserNames returns every account's name by id, for showing names where the log holds
// ids ("user:2").
func (d *DB) UserNames(ctx context.Context) (map[int64]string, error) {
	type idName struct {
		id   int64
		name string
	}
	list, err := queryAll(ctx, d, `SELECT id, name FROM users`, func(sc scanner) (idName, error) {
		var x idName
		return x, sc.Scan(&x.id, &x.name)
	})
	if err != nil {
		return nil, fmt.Errorf("user names: %w", err)
	}
	out := make(map[int64]string, len(list))
	for _, x := range list {
		out[x.id] = strings.TrimSpace(x.name)
	}
	return out, nil
}
