package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The audit log is append-only (triggers refuse updates and deletes) and hash-chained:
// every row carries the hash of the row before it and its own hash over its content and
// that link, so an edit to any row, or a row removed from the middle, breaks the chain
// at the first row it touches (VerifyAudit). The writer computes both hashes inside the
// transaction that writes the row, whose write lock makes the chain a single line.
//
// A row's hash is the SHA-256 (hex) of "dedupstudio audit v1\n" followed by the JSON
// array [id, at, actor, user_id or null, action, subject, detail, prev_hash]. The chain
// cannot show rows cut off its end: compare the head hash (AuditCheck.Head) with one kept
// elsewhere for that.

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

// sealAudit links the rows written before the log was chained (schema 6) into the chain,
// in order, once. The update trigger allows exactly this: an unsealed row getting its
// hashes.
func (d *DB) sealAudit(ctx context.Context) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		var first sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT min(id) FROM audit_log WHERE hash = ''`).Scan(&first); err != nil || !first.Valid {
			return err
		}
		var prev string
		err := tx.QueryRowContext(ctx, `SELECT hash FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT 1`, first.Int64).Scan(&prev)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_log WHERE id >= ? ORDER BY id`, first.Int64)
		if err != nil {
			return err
		}
		var todo []auditRow
		for rows.Next() {
			r, err := scanAuditRow(rows)
			if err != nil {
				rows.Close()
				return err
			}
			todo = append(todo, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range todo {
			if r.Hash != "" {
				return fmt.Errorf("row %d is sealed but follows unsealed rows", r.ID)
			}
			r.PrevHash = prev
			r.Hash = r.sum()
			if _, err := tx.ExecContext(ctx, `UPDATE audit_log SET prev_hash = ?, hash = ? WHERE id = ?`, r.PrevHash, r.Hash, r.ID); err != nil {
				return fmt.Errorf("row %d: %w", r.ID, err)
			}
			prev = r.Hash
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("seal the audit log of %s: %w", d.path, err)
	}
	return nil
}

// AuditCheck is the outcome of VerifyAudit.
type AuditCheck struct {
	Rows int
	// Head is the hash of the last row: keep it elsewhere to detect rows cut off the end.
	Head string
	// BrokenAt is the id of the first row that breaks the chain (0 when it is intact),
	// and Problem what is wrong with it.
	BrokenAt int64
	Problem  string
}

// Intact reports whether the chain verified.
func (c AuditCheck) Intact() bool { return c.BrokenAt == 0 }

// VerifyAudit walks the audit log in order and recomputes every row's hash and link.
// It names the first row whose content does not match its hash (edited), or that does
// not carry the hash of the row before it (a row before it deleted or edited along
// with its hash).
func (d *DB) VerifyAudit(ctx context.Context) (AuditCheck, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_log ORDER BY id`)
	if err != nil {
		return AuditCheck{}, fmt.Errorf("verify the audit log: %w", err)
	}
	defer rows.Close()
	var c AuditCheck
	prev := auditRow{}
	for rows.Next() {
		r, err := scanAuditRow(rows)
		if err != nil {
			return AuditCheck{}, fmt.Errorf("verify the audit log: %w", err)
		}
		c.Rows++
		switch {
		case r.Hash == "":
			c.BrokenAt, c.Problem = r.ID, "the row is not sealed: it has no hash"
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
		prev = r
		c.Head = r.Hash
	}
	if err := rows.Err(); err != nil {
		return AuditCheck{}, fmt.Errorf("verify the audit log: %w", err)
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
