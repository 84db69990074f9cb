package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

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

// auditBy appends to the audit log inside tx, naming the acting user.
func (d *DB) auditBy(ctx context.Context, tx *sql.Tx, actor User, action, subject string, detail map[string]any) error {
	if detail == nil {
		detail = map[string]any{}
	}
	b, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("audit %s detail: %w", action, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO audit_log (at, actor, user_id, action, subject, detail) VALUES (?, ?, ?, ?, ?, ?)`,
		d.stamp(), actor.Name, nullID(actor.ID), action, subject, string(b))
	if err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

// AuditEvent is one entry of the audit log.
type AuditEvent struct {
	ID      int64
	At      time.Time
	Actor   string
	Action  string
	Subject string
	Detail  string // a JSON object
}

// AuditLog returns the newest audit events, at most limit.
func (d *DB) AuditLog(ctx context.Context, limit int) ([]AuditEvent, error) {
	events, err := queryAll(ctx, d, `SELECT id, at, actor, action, subject, detail FROM audit_log ORDER BY id DESC LIMIT ?`,
		func(sc scanner) (AuditEvent, error) {
			var e AuditEvent
			var at string
			if err := sc.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.Subject, &e.Detail); err != nil {
				return e, err
			}
			var err error
			e.At, err = parseTime("at", at)
			return e, err
		}, limit)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return events, nil
}
