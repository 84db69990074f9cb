package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// User is a team member. PasswordHash is never logged or shown.
type User struct {
	ID           int64
	Name         string
	Role         auth.Role
	PasswordHash string
	Disabled     bool
	CreatedAt    time.Time
}

const userColumns = `id, name, role, password_hash, disabled_at IS NOT NULL, created_at`

func scanUser(sc scanner) (User, error) {
	var u User
	var role, created string
	if err := sc.Scan(&u.ID, &u.Name, &role, &u.PasswordHash, &u.Disabled, &created); err != nil {
		return u, notFound(err)
	}
	return u, u.parse(role, created)
}

// parse fills the typed fields of u from their stored text.
func (u *User) parse(role, created string) error {
	var err error
	if u.Role, err = auth.ParseRole(role); err != nil {
		return fmt.Errorf("user %d: %w", u.ID, err)
	}
	if u.CreatedAt, err = parseTime("created_at", created); err != nil {
		return fmt.Errorf("user %d: %w", u.ID, err)
	}
	return nil
}

// CountUsers returns how many accounts exist.
func (d *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// insertUser adds an account inside tx and returns it, its name in the form it is
// stored in (auth.NormalizeName); a taken name is ErrConflict, one that looks like an
// existing account's (or like the rule labels' annotator) auth.ErrLookalikeName.
func (d *DB) insertUser(ctx context.Context, tx *sql.Tx, name string, role auth.Role, hash string) (User, error) {
	if err := labels.CheckAccountName(name); err != nil {
		return User{}, fmt.Errorf("user %q: %w", name, err)
	}
	stored, err := auth.NormalizeName(name)
	if err != nil {
		return User{}, fmt.Errorf("user %q: %w", name, err)
	}
	name = stored
	if err := lookalike(ctx, tx, name); err != nil {
		return User{}, fmt.Errorf("user %q: %w", name, err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO users (name, role, password_hash, created_at) VALUES (?, ?, ?, ?)`,
		name, string(role), hash, d.stamp())
	if isUnique(err) {
		return User{}, fmt.Errorf("user %q: %w", name, ErrConflict)
	}
	if err != nil {
		return User{}, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return User{}, err
	}
	return scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
}

// lookalike refuses name when it reads as an existing account's name or as the rule
// labels' annotator (their auth.NameSkeleton is the same) without being that very name
// (which the UNIQUE constraint refuses as taken).
func lookalike(ctx context.Context, tx *sql.Tx, name string) error {
	names, err := collect(ctx, tx, `SELECT name FROM users`, scanValue[string])
	if err != nil {
		return err
	}
	skeleton := auth.NameSkeleton(name)
	for _, n := range append([]string{labels.RuleAnnotator}, names...) {
		if auth.NameSkeleton(n) == skeleton && !strings.EqualFold(n, name) {
			if n == labels.RuleAnnotator {
				return labels.ErrReservedName
			}
			return auth.ErrLookalikeName
		}
	}
	return nil
}

// CreateFirstAdmin creates the first account, an admin, only while there are no users:
// two people racing the setup link cannot both become admin (the second gets
// ErrConflict).
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
		var err error
		if u, err = d.insertUser(ctx, tx, name, auth.Admin, hash); err != nil {
			return err
		}
		return d.audit(ctx, tx, name, "user.setup", fmt.Sprintf("user:%d", u.ID), map[string]any{"role": auth.Admin})
	})
	if err != nil {
		return User{}, fmt.Errorf("create first admin: %w", err)
	}
	return u, nil
}

// CreateUser adds an account directly (for the command line and tests; people join
// through invites).
func (d *DB) CreateUser(ctx context.Context, actor, name string, role auth.Role, hash string) (User, error) {
	var u User
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if u, err = d.insertUser(ctx, tx, name, role, hash); err != nil {
			return err
		}
		return d.audit(ctx, tx, actor, "user.create", fmt.Sprintf("user:%d", u.ID), map[string]any{"role": role})
	})
	if err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	return u, nil
}

// UserByName looks an account up by name (case-insensitive).
func (d *DB) UserByName(ctx context.Context, name string) (User, error) {
	u, err := scanUser(d.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE name = ?`, name))
	if err != nil {
		return u, fmt.Errorf("user %q: %w", name, err)
	}
	return u, nil
}

// UserByID looks an account up by id.
func (d *DB) UserByID(ctx context.Context, id int64) (User, error) {
	u, err := scanUser(d.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
	if err != nil {
		return u, fmt.Errorf("user %d: %w", id, err)
	}
	return u, nil
}

// Users lists every account by name.
func (d *DB) Users(ctx context.Context) ([]User, error) {
	us, err := queryAll(ctx, d, `SELECT `+userColumns+` FROM users ORDER BY name`, scanUser)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return us, nil
}

// Approvers counts the people who may approve a manifest prepared by preparer (a user
// id; 0 counts everyone): the enabled accounts whose role may approve, other than
// preparer, whose own approval never counts (review.ErrSelfApproval). It is the most
// approvals the team can give that manifest.
func (d *DB) Approvers(ctx context.Context, preparer int64) (int, error) {
	users, err := d.Users(ctx)
	if err != nil {
		return 0, fmt.Errorf("count approvers: %w", err)
	}
	n := 0
	for _, u := range users {
		if !u.Disabled && u.Role.Can(auth.Approve) && u.ID != preparer {
			n++
		}
	}
	return n, nil
}

// roleOf reads a user's role inside tx.
func roleOf(ctx context.Context, tx *sql.Tx, userID int64) (auth.Role, error) {
	var role string
	if err := tx.QueryRowContext(ctx, `SELECT role FROM users WHERE id = ?`, userID).Scan(&role); err != nil {
		return "", notFound(err)
	}
	return auth.ParseRole(role)
}

// SetRole changes a user's role, recording who did it. Demoting the last enabled admin
// is ErrLastAdmin. Demoting an admin revokes the API tokens they made, so promoting
// them again does not bring the tokens back.
func (d *DB) SetRole(ctx context.Context, actor User, userID int64, role auth.Role) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		old, err := roleOf(ctx, tx, userID)
		if err != nil {
			return err
		}
		if old == role {
			return nil
		}
		if old == auth.Admin {
			if err := lastAdminGuard(ctx, tx, userID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET role = ? WHERE id = ?`, string(role), userID); err != nil {
			return err
		}
		if old == auth.Admin {
			if err := d.revokeAPITokensOf(ctx, tx, actor, userID, "creator no longer an admin"); err != nil {
				return err
			}
		}
		return d.auditBy(ctx, tx, actor, "user.role", fmt.Sprintf("user:%d", userID), map[string]any{"from": old, "to": role})
	})
	if err != nil {
		return fmt.Errorf("set role of user %d: %w", userID, err)
	}
	return nil
}

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

// SetDisabled disables or re-enables a user. Disabling ends the user's sessions at once
// and revokes the API tokens they made (enabling them again does not bring those back);
// disabling the last enabled admin is ErrLastAdmin.
func (d *DB) SetDisabled(ctx context.Context, actor User, userID int64, disabled bool) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		role, err := roleOf(ctx, tx, userID)
		if err != nil {
			return err
		}
		if !disabled {
			if _, err := tx.ExecContext(ctx, `UPDATE users SET disabled_at = NULL WHERE id = ?`, userID); err != nil {
				return err
			}
			return d.auditBy(ctx, tx, actor, "user.enable", fmt.Sprintf("user:%d", userID), nil)
		}
		if role == auth.Admin {
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
		if err := d.revokeAPITokensOf(ctx, tx, actor, userID, "creator disabled"); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, actor, "user.disable", fmt.Sprintf("user:%d", userID), nil)
	})
	if err != nil {
		return fmt.Errorf("set user %d disabled=%v: %w", userID, disabled, err)
	}
	return nil
}

// SetPassword replaces a user's password hash and ends their sessions.
func (d *DB) SetPassword(ctx context.Context, userID int64, hash string) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, userID)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("set password of user %d: %w", userID, err)
	}
	return nil
}

// Invite is a one-time link to join with a role.
type Invite struct {
	Role      auth.Role
	Note      string
	CreatedBy string
	ExpiresAt time.Time
}

// CreateInvite stores an invite under its token hash.
func (d *DB) CreateInvite(ctx context.Context, actor User, tokenHash []byte, role auth.Role, note string, ttl time.Duration) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		now := d.now()
		if _, err := tx.ExecContext(ctx, `INSERT INTO invites (token_hash, role, note, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
			tokenHash, string(role), note, actor.ID, formatTime(now), formatTime(now.Add(ttl))); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, actor, "invite.create", "invite", map[string]any{"role": role, "note": note})
	})
	if err != nil {
		return fmt.Errorf("create invite: %w", err)
	}
	return nil
}

// InviteByToken returns an unused, unexpired invite, or ErrNotFound.
func (d *DB) InviteByToken(ctx context.Context, tokenHash []byte) (Invite, error) {
	var inv Invite
	var role, expires string
	err := d.r.QueryRowContext(ctx, `SELECT i.role, i.note, u.name, i.expires_at FROM invites i JOIN users u ON u.id = i.created_by
		WHERE i.token_hash = ? AND i.used_at IS NULL AND i.expires_at > ?`, tokenHash, d.stamp()).Scan(&role, &inv.Note, &inv.CreatedBy, &expires)
	if err == nil {
		inv.Role, err = auth.ParseRole(role)
	}
	if err == nil {
		inv.ExpiresAt, err = parseTime("expires_at", expires)
	}
	if err != nil {
		return Invite{}, fmt.Errorf("invite: %w", notFound(err))
	}
	return inv, nil
}

// AcceptInvite creates the invited user and uses the invite up, in one transaction, so
// a link works once. A used or expired invite is ErrNotFound; a taken name ErrConflict.
func (d *DB) AcceptInvite(ctx context.Context, tokenHash []byte, name, hash string) (User, error) {
	var u User
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		var text string
		err := tx.QueryRowContext(ctx, `SELECT role FROM invites WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`, tokenHash, d.stamp()).Scan(&text)
		if err != nil {
			return notFound(err)
		}
		role, err := auth.ParseRole(text)
		if err != nil {
			return err
		}
		if u, err = d.insertUser(ctx, tx, name, role, hash); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE invites SET used_at = ?, used_by = ? WHERE token_hash = ?`, d.stamp(), u.ID, tokenHash); err != nil {
			return err
		}
		return d.audit(ctx, tx, name, "invite.accept", fmt.Sprintf("user:%d", u.ID), map[string]any{"role": role})
	})
	if err != nil {
		return User{}, fmt.Errorf("accept invite: %w", err)
	}
	return u, nil
}

// PendingInvite is an invite that can still be used, for the Team page.
type PendingInvite struct {
	TokenHash []byte // names it (a revoke form); reveals nothing of the link
	Role      auth.Role
	Note      string
	CreatedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// PendingInvites lists the unused, unexpired invites, newest first.
func (d *DB) PendingInvites(ctx context.Context) ([]PendingInvite, error) {
	invs, err := queryAll(ctx, d, `SELECT i.token_hash, i.role, i.note, u.name, i.created_at, i.expires_at
		FROM invites i JOIN users u ON u.id = i.created_by
		WHERE i.used_at IS NULL AND i.expires_at > ? ORDER BY i.created_at DESC, i.rowid DESC`,
		func(sc scanner) (PendingInvite, error) {
			var inv PendingInvite
			var role, created, expires string
			if err := sc.Scan(&inv.TokenHash, &role, &inv.Note, &inv.CreatedBy, &created, &expires); err != nil {
				return inv, err
			}
			var err error
			if inv.Role, err = auth.ParseRole(role); err != nil {
				return inv, err
			}
			if inv.CreatedAt, err = parseTime("created_at", created); err != nil {
				return inv, err
			}
			inv.ExpiresAt, err = parseTime("expires_at", expires)
			return inv, err
		}, d.stamp())
	if err != nil {
		return nil, fmt.Errorf("pending invites: %w", err)
	}
	return invs, nil
}

// RevokeInvite deletes an unused invite, so its link stops working, and records who
// did it. An unknown, used or expired invite is ErrNotFound.
func (d *DB) RevokeInvite(ctx context.Context, actor User, tokenHash []byte) (PendingInvite, error) {
	inv := PendingInvite{TokenHash: tokenHash}
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		var role string
		err := tx.QueryRowContext(ctx, `SELECT role, note FROM invites WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`,
			tokenHash, d.stamp()).Scan(&role, &inv.Note)
		if err != nil {
			return notFound(err)
		}
		if inv.Role, err = auth.ParseRole(role); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM invites WHERE token_hash = ?`, tokenHash); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, actor, "invite.revoke", "invite", map[string]any{"role": inv.Role, "note": inv.Note})
	})
	if err != nil {
		return PendingInvite{}, fmt.Errorf("revoke invite: %w", err)
	}
	return inv, nil
}
