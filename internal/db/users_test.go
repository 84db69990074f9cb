package db

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// auditActions lists the audit log's actions, oldest first.
func auditActions(t *testing.T, d *DB) []string {
	t.Helper()
	events, err := d.AuditLog(t.Context(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(events))
	for i, e := range events {
		out[len(events)-1-i] = e.Action
	}
	return out
}

func mustUser(t *testing.T, d *DB, name string, role auth.Role) User {
	t.Helper()
	u, err := d.CreateUser(t.Context(), "test", name, role, "hash-of-"+name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// mustSession opens a session of u, valid for an hour, under token.
func mustSession(t *testing.T, d *DB, u User, token string) {
	t.Helper()
	if err := d.CreateSession(t.Context(), NewSession{UserID: u.ID, TokenHash: []byte(token), TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
}

// checkNoSession checks that no session answers to token; what names the session.
func checkNoSession(t *testing.T, d *DB, token, what string) {
	t.Helper()
	if _, err := d.SessionByToken(t.Context(), []byte(token)); !errors.Is(err, ErrNotFound) {
		t.Errorf("%s: %v; want ErrNotFound", what, err)
	}
}

func TestCreateUserAndLookups(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	bo := mustUser(t, d, "bo", auth.Reviewer)
	mustUser(t, d, "ada", auth.Annotator)
	if bo.Role != auth.Reviewer || bo.Name != "bo" || bo.CreatedAt.IsZero() || bo.Disabled {
		t.Errorf("CreateUser = %+v", bo)
	}
	if _, err := d.CreateUser(ctx, "test", "BO", auth.Admin, "x"); !errors.Is(err, ErrConflict) {
		t.Errorf("CreateUser(BO) after bo: %v; want ErrConflict (names are case-insensitive)", err)
	}
	for _, tc := range []struct {
		name   string
		lookup func() (User, error)
		want   string
	}{
		{"by name", func() (User, error) { return d.UserByName(ctx, "bo") }, "bo"},
		{"by name, other case", func() (User, error) { return d.UserByName(ctx, "Bo") }, "bo"},
		{"by id", func() (User, error) { return d.UserByID(ctx, bo.ID) }, "bo"},
		{"unknown name", func() (User, error) { return d.UserByName(ctx, "nobody") }, ""},
		{"unknown id", func() (User, error) { return d.UserByID(ctx, 999) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := tc.lookup()
			if tc.want == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("lookup err = %v; want ErrNotFound", err)
				}
				return
			}
			if err != nil || u.Name != tc.want || u.Role != auth.Reviewer || u.PasswordHash != "hash-of-bo" {
				t.Errorf("lookup = %+v, %v; want %s, a reviewer", u, err, tc.want)
			}
		})
	}
	us, err := d.Users(ctx)
	if err != nil || len(us) != 2 || us[0].Name != "ada" || us[1].Name != "bo" {
		t.Errorf("Users = %+v, %v; want ada, bo", us, err)
	}
	if n, err := d.CountUsers(ctx); n != 2 || err != nil {
		t.Errorf("CountUsers = %d, %v; want 2", n, err)
	}
	if got := auditActions(t, d); strings.Join(got, ",") != "user.create,user.create" {
		t.Errorf("audit log %v; want two user.create", got)
	}
}

// A conflict is recognised by SQLite's extended result code: a UNIQUE violation is one,
// a CHECK violation is not.
func TestIsUniqueUsesTheResultCode(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	mustUser(t, d, "bo", auth.Reviewer)
	_, dup := d.w.ExecContext(ctx, `INSERT INTO users (name, role, created_at) VALUES ('bo', 'admin', 'x')`)
	_, check := d.w.ExecContext(ctx, `INSERT INTO users (name, role, created_at) VALUES ('cy', 'king', 'x')`)
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"unique", dup, true},
		{"check", check, false},
		{"other", errors.New("UNIQUE constraint failed: users.name"), false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isUnique(tc.err); got != tc.want {
				t.Errorf("isUnique(%v) = %v; want %v", tc.err, got, tc.want)
			}
		})
	}
}

// A stored time that does not parse is an error naming the column, not a zero time.
func TestBadStoredTimeIsAnError(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	u := mustUser(t, d, "bo", auth.Reviewer)
	if _, err := d.w.ExecContext(ctx, `UPDATE users SET created_at = 'yesterday' WHERE id = ?`, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.UserByID(ctx, u.ID); err == nil || !strings.Contains(err.Error(), "created_at") {
		t.Errorf("UserByID of a row with a bad time: %v; want an error naming created_at", err)
	}
	if _, err := d.Users(ctx); err == nil {
		t.Error("Users with a bad time: no error")
	}
}

func TestCreateFirstAdminOnce(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	u, err := d.CreateFirstAdmin(ctx, "root", "h")
	if err != nil || u.Role != auth.Admin {
		t.Fatalf("CreateFirstAdmin = %+v, %v; want an admin", u, err)
	}
	if _, err := d.CreateFirstAdmin(ctx, "root2", "h"); !errors.Is(err, ErrConflict) {
		t.Errorf("second CreateFirstAdmin: %v; want ErrConflict", err)
	}
	if got := auditActions(t, d); len(got) != 1 || got[0] != "user.setup" {
		t.Errorf("audit log %v; want one user.setup", got)
	}
}

// Approvers counts enabled admins and approvers, not reviewers, annotators or a
// disabled approver, and never the preparer, whose approval does not count: an admin
// alone has nobody to approve what they prepare (the form offered them 1 approval, and
// the first approver invited later signed 286 removals off alone).
func TestApprovers(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	if n, err := d.Approvers(ctx, 0); n != 0 || err != nil {
		t.Fatalf("Approvers of no accounts = %d, %v; want 0", n, err)
	}
	root := mustUser(t, d, "root", auth.Admin)
	if n, err := d.Approvers(ctx, root.ID); n != 0 || err != nil {
		t.Errorf("Approvers(root) of root alone = %d, %v; want 0", n, err)
	}
	ann := mustUser(t, d, "ann", auth.Approver)
	off := mustUser(t, d, "off", auth.Approver)
	rev := mustUser(t, d, "rev", auth.Reviewer)
	mustUser(t, d, "lab", auth.Annotator)
	if err := d.SetDisabled(ctx, root, off.ID, true); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		preparer int64
		want     int
	}{
		{"nobody", 0, 2},
		{"root", root.ID, 1},
		{"ann", ann.ID, 1},
		{"rev", rev.ID, 2},
		{"off", off.ID, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n, err := d.Approvers(ctx, tc.preparer); n != tc.want || err != nil {
				t.Errorf("Approvers(%s) = %d, %v; want %d", tc.name, n, err, tc.want)
			}
		})
	}
}

func TestSetRoleKeepsAnAdmin(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	root := mustUser(t, d, "root", auth.Admin)
	bo := mustUser(t, d, "bo", auth.Annotator)
	for _, tc := range []struct {
		name string
		user int64
		role auth.Role
		want error
	}{
		{"demote the only admin", root.ID, auth.Reviewer, ErrLastAdmin},
		{"promote", bo.ID, auth.Admin, nil},
		{"same role again", bo.ID, auth.Admin, nil},
		{"demote with another admin", root.ID, auth.Approver, nil},
		{"demote the last one again", bo.ID, auth.Annotator, ErrLastAdmin},
		{"unknown user", 999, auth.Admin, ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := d.SetRole(ctx, root, tc.user, tc.role)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("SetRole(%d, %s) = %v; want %v", tc.user, tc.role, err, tc.want)
			}
			if tc.want == nil {
				if u, _ := d.UserByID(ctx, tc.user); u.Role != tc.role {
					t.Errorf("role after SetRole = %s; want %s", u.Role, tc.role)
				}
			}
		})
	}
	events, _ := d.AuditLog(ctx, 10)
	if events[0].Action != "user.role" || !strings.Contains(events[0].Detail, `"from":"admin","to":"approver"`) {
		t.Errorf("newest audit event %+v; want the role change from admin to approver", events[0])
	}
}

func TestSetDisabledEndsSessions(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	root := mustUser(t, d, "root", auth.Admin)
	bo := mustUser(t, d, "bo", auth.Annotator)
	mustSession(t, d, bo, "bo-session")
	if err := d.SetDisabled(ctx, root, root.ID, true); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("disabling the only admin: %v; want ErrLastAdmin", err)
	}
	if err := d.SetDisabled(ctx, root, bo.ID, true); err != nil {
		t.Fatal(err)
	}
	if u, _ := d.UserByID(ctx, bo.ID); !u.Disabled {
		t.Error("bo is not disabled")
	}
	checkNoSession(t, d, "bo-session", "a disabled user's session")
	if err := d.SetDisabled(ctx, root, bo.ID, false); err != nil {
		t.Fatal(err)
	}
	if u, _ := d.UserByID(ctx, bo.ID); u.Disabled {
		t.Error("bo is still disabled after enabling")
	}
	if err := d.SetDisabled(ctx, root, 999, true); !errors.Is(err, ErrNotFound) {
		t.Errorf("disabling an unknown user: %v; want ErrNotFound", err)
	}
	if got := strings.Join(auditActions(t, d), ","); !strings.HasSuffix(got, "user.disable,user.enable") {
		t.Errorf("audit log %s; want user.disable then user.enable", got)
	}
}

func TestSetPasswordEndsSessions(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	bo := mustUser(t, d, "bo", auth.Annotator)
	mustSession(t, d, bo, "s")
	if err := d.SetPassword(ctx, bo.ID, "new-hash"); err != nil {
		t.Fatal(err)
	}
	if u, _ := d.UserByID(ctx, bo.ID); u.PasswordHash != "new-hash" {
		t.Errorf("hash after SetPassword = %q", u.PasswordHash)
	}
	checkNoSession(t, d, "s", "session after a password change")
	if err := d.SetPassword(ctx, 999, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetPassword of an unknown user: %v; want ErrNotFound", err)
	}
}

func TestInvites(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	root := mustUser(t, d, "root", auth.Admin)
	mustUser(t, d, "taken", auth.Annotator)
	if err := d.CreateInvite(ctx, root, []byte("tok"), auth.Reviewer, "for bo", time.Hour); err != nil {
		t.Fatal(err)
	}
	inv, err := d.InviteByToken(ctx, []byte("tok"))
	if err != nil || inv.Role != auth.Reviewer || inv.CreatedBy != "root" || inv.Note != "for bo" {
		t.Fatalf("InviteByToken = %+v, %v", inv, err)
	}
	// A taken name leaves the invite unused.
	if _, err := d.AcceptInvite(ctx, []byte("tok"), "TAKEN", "h"); !errors.Is(err, ErrConflict) {
		t.Errorf("accepting with a taken name: %v; want ErrConflict", err)
	}
	u, err := d.AcceptInvite(ctx, []byte("tok"), "bo", "h")
	if err != nil || u.Role != auth.Reviewer || u.Name != "bo" {
		t.Fatalf("AcceptInvite = %+v, %v", u, err)
	}
	for _, tc := range []struct {
		name  string
		token string
		now   time.Time
	}{
		{"used", "tok", time.Now()},
		{"unknown", "nope", time.Now()},
		{"expired", "late", time.Now().Add(2 * time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.token == "late" {
				if err := d.CreateInvite(ctx, root, []byte("late"), auth.Annotator, "", time.Hour); err != nil {
					t.Fatal(err)
				}
				d.now = func() time.Time { return tc.now }
				defer func() { d.now = time.Now }()
			}
			if _, err := d.InviteByToken(ctx, []byte(tc.token)); !errors.Is(err, ErrNotFound) {
				t.Errorf("InviteByToken(%s) = %v; want ErrNotFound", tc.name, err)
			}
			if _, err := d.AcceptInvite(ctx, []byte(tc.token), "someone-"+tc.name, "h"); !errors.Is(err, ErrNotFound) {
				t.Errorf("AcceptInvite(%s) = %v; want ErrNotFound", tc.name, err)
			}
		})
	}
	if got := strings.Join(auditActions(t, d), ","); !strings.Contains(got, "invite.create,invite.accept") {
		t.Errorf("audit log %s; want invite.create then invite.accept", got)
	}
}

// The Team page lists the invites that can still be used, newest first; a revoked one
// stops working and is recorded, and revoking one used, unknown or revoked already is
// ErrNotFound and writes nothing.
func TestPendingAndRevokedInvites(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	root := mustUser(t, d, "root", auth.Admin)
	for _, tok := range []string{"a", "b", "used"} {
		if err := d.CreateInvite(ctx, root, []byte(tok), auth.Annotator, "for "+tok, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.AcceptInvite(ctx, []byte("used"), "cy", "h"); err != nil {
		t.Fatal(err)
	}
	list, err := d.PendingInvites(ctx)
	if err != nil || len(list) != 2 || string(list[0].TokenHash) != "b" || string(list[1].TokenHash) != "a" {
		t.Fatalf("PendingInvites = %+v, %v; want b then a", list, err)
	}
	if p := list[1]; p.Role != auth.Annotator || p.Note != "for a" || p.CreatedBy != "root" || !p.ExpiresAt.After(p.CreatedAt) {
		t.Errorf("pending invite a = %+v", p)
	}
	inv, err := d.RevokeInvite(ctx, root, []byte("a"))
	if err != nil || inv.Role != auth.Annotator || inv.Note != "for a" {
		t.Fatalf("RevokeInvite(a) = %+v, %v", inv, err)
	}
	if _, err := d.AcceptInvite(ctx, []byte("a"), "dee", "h"); !errors.Is(err, ErrNotFound) {
		t.Errorf("accepting a revoked invite = %v; want ErrNotFound", err)
	}
	before, err := d.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"a", "used", "nope"} {
		if _, err := d.RevokeInvite(ctx, root, []byte(tok)); !errors.Is(err, ErrNotFound) {
			t.Errorf("RevokeInvite(%s) = %v; want ErrNotFound", tok, err)
		}
	}
	if after, _ := d.Fingerprint(ctx); after != before {
		t.Error("a refused revoke wrote to the store")
	}
	if list, _ := d.PendingInvites(ctx); len(list) != 1 || string(list[0].TokenHash) != "b" {
		t.Errorf("PendingInvites after the revoke = %+v; want b", list)
	}
	if got := strings.Join(auditActions(t, d), ","); !strings.HasSuffix(got, "invite.accept,invite.revoke") {
		t.Errorf("audit log %s; want the accept then one revoke", got)
	}
}

// Account names are stored normalized, and a name that reads as an existing account's
// (letters of another alphabet that look the same, 0 for o, I for l) or as the rule
// labels' annotator is refused, whatever creates the account.
func TestLookalikeNamesRefused(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	for _, name := range []string{"coco", "Ada  Lovelace"} {
		if _, err := d.CreateUser(ctx, "test", name, "annotator", "x"); err != nil {
			t.Fatal(err)
		}
	}
	if u, err := d.UserByName(ctx, "Ada Lovelace"); err != nil || u.Name != "Ada Lovelace" {
		t.Errorf("UserByName(Ada Lovelace) = %+v, %v; want the account stored with one space", u, err)
	}
	for _, tc := range []struct {
		name string
		want error
	}{
		{"сосо", auth.ErrLookalikeName}, // Cyrillic
		{"C0C0", auth.ErrLookalikeName},
		{"ada lovelace", ErrConflict}, // the same name
		{"ＣＯＣＯ", ErrConflict},         // full width: the same name once normalized
		{"dem0-rules", labels.ErrReservedName},
	} {
		if _, err := d.CreateUser(ctx, "test", tc.name, "annotator", "x"); !errors.Is(err, tc.want) {
			t.Errorf("CreateUser(%q) = %v; want %v", tc.name, err, tc.want)
		}
	}
	for _, name := range []string{"cli:root", "ali\u200bce"} {
		if _, err := d.CreateUser(ctx, "test", name, "annotator", "x"); err == nil {
			t.Errorf("CreateUser(%q) accepted", name)
		}
	}
	if _, err := d.CreateUser(ctx, "test", "cora", "annotator", "x"); err != nil {
		t.Errorf("CreateUser(cora): %v", err)
	}
}
