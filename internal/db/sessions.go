package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Session is a signed-in browser.
type Session struct {
	User      User
	ExpiresAt time.Time
	LastSeen  time.Time
}

// NewSession is a session to start: a fresh token's hash, the hash of the session the
// browser had before (nil for none; tokens rotate at every sign-in, so it ends in the
// same transaction), and how long it may stay idle.
type NewSession struct {
	UserID    int64
	TokenHash []byte
	Replaces  []byte
	TTL       time.Duration
}

// CreateSession starts a session (after an account was created: its own audit event
// says so).
func (d *DB) CreateSession(ctx context.Context, s NewSession) error {
	if err := d.inTx(ctx, func(tx *sql.Tx) error { return d.createSession(ctx, tx, s) }); err != nil {
		return fmt.Errorf("create session for user %d: %w", s.UserID, err)
	}
	return nil
}

// Login starts a session for u and records the sign-in, from address, in the audit log,
// in one transaction: there is no session without its audit event.
func (d *DB) Login(ctx context.Context, u User, s NewSession, address string) error {
	s.UserID = u.ID
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		if err := d.createSession(ctx, tx, s); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, u, "login", fmt.Sprintf("user:%d", u.ID), map[string]any{"address": address})
	})
	if err != nil {
		return fmt.Errorf("login of user %d: %w", u.ID, err)
	}
	return nil
}

func (d *DB) createSession(ctx context.Context, tx *sql.Tx, s NewSession) error {
	if s.Replaces != nil {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = ?`, s.Replaces); err != nil {
			return err
		}
	}
	now := d.now()
	_, err := tx.ExecContext(ctx, `INSERT INTO sessions (token_hash, user_id, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?)`,
		s.TokenHash, s.UserID, formatTime(now), formatTime(now.Add(s.TTL)), formatTime(now))
	return err
}

// Logout ends the session with that token hash (if it is still there) and, when the
// user is known (ID not 0), records the sign-out in the audit log, in one transaction.
func (d *DB) Logout(ctx context.Context, tokenHash []byte, u User) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = ?`, tokenHash); err != nil {
			return err
		}
		if u.ID == 0 {
			return nil
		}
		return d.auditBy(ctx, tx, u, "logout", fmt.Sprintf("user:%d", u.ID), nil)
	})
	if err != nil {
		return fmt.Errorf("logout: %w", err)
	}
	return nil
}

// SessionByToken returns the live session with that token hash: not expired, its user
// not disabled. Any other is ErrNotFound.
func (d *DB) SessionByToken(ctx context.Context, tokenHash []byte) (Session, error) {
	var s Session
	var role, created, expires, seen string
	err := d.r.QueryRowContext(ctx, `SELECT u.id, u.name, u.role, u.password_hash, u.disabled_at IS NOT NULL, u.created_at, s.expires_at, s.last_seen_at
		FROM sessions s JOIN users u ON u.id = s.user_id
		WHERE s.token_hash = ? AND u.disabled_at IS NULL AND s.expires_at > ?`, tokenHash, d.stamp()).
		Scan(&s.User.ID, &s.User.Name, &role, &s.User.PasswordHash, &s.User.Disabled, &created, &expires, &seen)
	if err == nil {
		err = s.User.parse(role, created)
	}
	if err == nil {
		s.ExpiresAt, err = parseTime("expires_at", expires)
	}
	if err == nil {
		s.LastSeen, err = parseTime("last_seen_at", seen)
	}
	if err != nil {
		return Session{}, fmt.Errorf("session: %w", notFound(err))
	}
	return s, nil
}

// TouchSession records activity and extends the idle deadline by ttl.
func (d *DB) TouchSession(ctx context.Context, tokenHash []byte, ttl time.Duration) error {
	if err := d.inTx(ctx, d.touch(ctx, tokenHash, ttl)); err != nil {
		return fmt.Errorf("touch session: %w", err)
	}
	return nil
}

// TryTouchSession is TouchSession unless another write is running or waiting: then it
// writes nothing and returns false at once. A page that extends its session on the way
// should not queue for the write turn behind a stream of labels (200 people labeling
// at once put every page's p99 there).
func (d *DB) TryTouchSession(ctx context.Context, tokenHash []byte, ttl time.Duration) (bool, error) {
	touched, err := d.tryInTx(ctx, d.touch(ctx, tokenHash, ttl))
	if err != nil {
		return false, fmt.Errorf("touch session: %w", err)
	}
	return touched, nil
}

func (d *DB) touch(ctx context.Context, tokenHash []byte, ttl time.Duration) func(*sql.Tx) error {
	return func(tx *sql.Tx) error {
		now := d.now()
		_, err := tx.ExecContext(ctx, `UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE token_hash = ?`,
			formatTime(now), formatTime(now.Add(ttl)), tokenHash)
		return err
	}
}
