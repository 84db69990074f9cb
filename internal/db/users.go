package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// User is a team member. PasswordHash is never logged or shown.
type User struct {
	ID           int64
	Name         string
	Role         string
	PasswordHash string
	Disabled     bool
	CreatedAt    time.Time
}

// ErrConflict is an insert that collides with an existing row (a taken user name).
var ErrConflict = errors.New("already exists")

const userColumns = `id, name, role, password_hash, disabled_at IS NOT NULL, created_at`

func scanUser(sc scanner) (User, error) {
	var u User
	var created string
	err := sc.Scan(&u.ID, &u.Name, &u.Role, &u.PasswordHash, &u.Disabled, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	u.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	return u, err
}

// CountUsers returns how many accounts exist.
func (d *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, err
}

func insertUser(ctx context.Context, tx *sql.Tx, d *DB, name, role, hash string) (int64, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO users (name, role, password_hash, created_at) VALUES (?, ?, ?, ?)`,
		name, role, hash, d.stamp())
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed") {
			return 0, fmt.Errorf("user %q: %w", name, ErrConflict)
		}
		return 0, err
	}
	return res.LastInsertId()
}

// CreateFirstAdmin creates the first account, an admin, only while there are no users:
// two people racing the setup link cannot both become admin.
func (d *DB) CreateFirstAdmin(ctx context.Context, name, hash string) (User, error) {
	var u User
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("setup is done already: %w", ErrConflict)
		}
		id, err := insertUser(ctx, tx, d, name, "admin", hash)
		if err != nil {
			return err
		}
		if u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id)); err != nil {
			return err
		}
		return d.audit(ctx, tx, name, "user.setup", fmt.Sprintf("user:%d", id), map[string]any{"role": "admin"})
	})
	return u, err
}

// UserByName looks an account up by name (case-insensitive).
func (d *DB) UserByName(ctx context.Context, name string) (User, error) {
	return scanUser(d.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE name = ?`, name))
}

// UserByID looks an account up by id.
func (d *DB) UserByID(ctx context.Context, id int64) (User, error) {
	return scanUser(d.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
}

// Users lists every account by name.
func (d *DB) Users(ctx context.Context) ([]User, error) {
	return queryAll(ctx, d, `SELECT `+userColumns+` FROM users ORDER BY name`, scanUser)
}

// SetRole changes a user's role, recording who did it.
func (d *DB) SetRole(ctx context.Context, actor User, userID int64, role string) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		var old string
		if err := tx.QueryRowContext(ctx, `SELECT role FROM users WHERE id = ?`, userID).Scan(&old); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		if old == role {
			return nil
		}
		if old == "admin" {
			if err := lastAdminGuard(ctx, tx, userID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET role = ? WHERE id = ?`, role, userID); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, actor, "user.role", fmt.Sprintf("user:%d", userID), map[string]any{"from": old, "to": role})
	})
}

// ErrLastAdmin refuses a change that would leave no enabled admin.
var ErrLastAdmin = errors.New("the last enabled admin cannot lose the admin role or be disabled")

func lastAdminGuard(ctx context.Context, tx *sql.Tx, userID int64) error {
	var others int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE role = 'admin' AND disabled_at IS NULL AND id != ?`, userID).Scan(&others)
	if err != nil {
		return err
	}
	if others == 0 {
		return ErrLastAdmin
	}
	return nil
}

// SetDisabled disables or re-enables a user. Disabling ends the user's sessions at once.
func (d *DB) SetDisabled(ctx context.Context, actor User, userID int64, disabled bool) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		var role string
		if err := tx.QueryRowContext(ctx, `SELECT role FROM users WHERE id = ?`, userID).Scan(&role); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		action := "user.enable"
		if disabled {
			action = "user.disable"
			if role == "admin" {
				if err := lastAdminGuard(ctx, tx, userID); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, `UPDATE users SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL`, d.stamp(), userID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, userID); err != nil {
				return err
			}
		} else if _, err := tx.ExecContext(ctx, `UPDATE users SET disabled_at = NULL WHERE id = ?`, userID); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, actor, action, fmt.Sprintf("user:%d", userID), nil)
	})
}

// SetPassword replaces a user's password hash and ends their other sessions.
func (d *DB) SetPassword(ctx context.Context, userID int64, hash string) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, userID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, userID)
		return err
	})
}

// Session is a signed-in browser.
type Session struct {
	User      User
	ExpiresAt time.Time
	LastSeen  time.Time
}

// CreateSession stores a session under the hash of its token.
func (d *DB) CreateSession(ctx context.Context, userID int64, tokenHash []byte, ttl time.Duration) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		now := d.now().UTC()
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (token_hash, user_id, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?)`,
			tokenHash, userID, now.Format(time.RFC3339Nano), now.Add(ttl).Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
		return err
	})
}

// SessionByToken returns the live session with that token hash: not expired, its user
// not disabled.
func (d *DB) SessionByToken(ctx context.Context, tokenHash []byte) (Session, error) {
	var s Session
	var created, expires, seen string
	err := d.r.QueryRowContext(ctx, `SELECT u.id, u.name, u.role, u.password_hash, u.disabled_at IS NOT NULL, u.created_at, s.expires_at, s.last_seen_at
		FROM sessions s JOIN users u ON u.id = s.user_id
		WHERE s.token_hash = ? AND u.disabled_at IS NULL AND s.expires_at > ?`, tokenHash, d.stamp()).
		Scan(&s.User.ID, &s.User.Name, &s.User.Role, &s.User.PasswordHash, &s.User.Disabled, &created, &expires, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return s, ErrNotFound
	}
	s.User.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	s.ExpiresAt, _ = time.Parse(time.RFC3339Nano, expires)
	s.LastSeen, _ = time.Parse(time.RFC3339Nano, seen)
	return s, err
}

// TouchSession records activity and extends an idle deadline.
func (d *DB) TouchSession(ctx context.Context, tokenHash []byte, ttl time.Duration) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		now := d.now().UTC()
		_, err := tx.ExecContext(ctx, `UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE token_hash = ?`,
			now.Format(time.RFC3339Nano), now.Add(ttl).Format(time.RFC3339Nano), tokenHash)
		return err
	})
}

// DeleteSession ends a session.
func (d *DB) DeleteSession(ctx context.Context, tokenHash []byte) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = ?`, tokenHash)
		return err
	})
}

// Invite is a one-time link to join with a role.
type Invite struct {
	Role      string
	Note      string
	CreatedBy string
	ExpiresAt time.Time
}

// CreateInvite stores an invite under its token hash.
func (d *DB) CreateInvite(ctx context.Context, actor User, tokenHash []byte, role, note string, ttl time.Duration) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		now := d.now().UTC()
		if _, err := tx.ExecContext(ctx, `INSERT INTO invites (token_hash, role, note, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
			tokenHash, role, note, actor.ID, now.Format(time.RFC3339Nano), now.Add(ttl).Format(time.RFC3339Nano)); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, actor, "invite.create", "invite", map[string]any{"role": role, "note": note})
	})
}

// InviteByToken returns an unused, unexpired invite.
func (d *DB) InviteByToken(ctx context.Context, tokenHash []byte) (Invite, error) {
	var inv Invite
	var expires string
	err := d.r.QueryRowContext(ctx, `SELECT i.role, i.note, u.name, i.expires_at FROM invites i JOIN users u ON u.id = i.created_by
		WHERE i.token_hash = ? AND i.used_at IS NULL AND i.expires_at > ?`, tokenHash, d.stamp()).Scan(&inv.Role, &inv.Note, &inv.CreatedBy, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return inv, ErrNotFound
	}
	inv.ExpiresAt, _ = time.Parse(time.RFC3339Nano, expires)
	return inv, err
}

// AcceptInvite creates the invited user and uses the invite up, in one transaction, so
// a link works once.
func (d *DB) AcceptInvite(ctx context.Context, tokenHash []byte, name, hash string) (User, error) {
	var u User
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		var role string
		err := tx.QueryRowContext(ctx, `SELECT role FROM invites WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`, tokenHash, d.stamp()).Scan(&role)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		id, err := insertUser(ctx, tx, d, name, role, hash)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE invites SET used_at = ?, used_by = ? WHERE token_hash = ?`, d.stamp(), id, tokenHash); err != nil {
			return err
		}
		if u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id)); err != nil {
			return err
		}
		return d.audit(ctx, tx, name, "invite.accept", fmt.Sprintf("user:%d", id), map[string]any{"role": role})
	})
	return u, err
}

// Audit records an event outside any other change (logins, failed logins).
func (d *DB) Audit(ctx context.Context, actor, action, subject string, detail map[string]any) error {
	return d.inTx(ctx, func(tx *sql.Tx) error { return d.audit(ctx, tx, actor, action, subject, detail) })
}

// CreateUser adds an account directly (for the command line and tests; people join
// through invites).
func (d *DB) CreateUser(ctx context.Context, actor, name, role, hash string) (User, error) {
	var u User
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		id, err := insertUser(ctx, tx, d, name, role, hash)
		if err != nil {
			return err
		}
		if u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id)); err != nil {
			return err
		}
		return d.audit(ctx, tx, actor, "user.create", fmt.Sprintf("user:%d", id), map[string]any{"role": role})
	})
	return u, err
}
