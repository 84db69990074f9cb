package auth

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var cheap = Params{Memory: 1024, Time: 1, Threads: 1}

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	h, err := HashPassword("correct horse battery", cheap)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=1024,t=1,p=1$") || strings.Contains(h, "correct horse") {
		t.Errorf("hash %q", h)
	}
	if ok, err := CheckPassword(h, "correct horse battery"); !ok || err != nil {
		t.Errorf("right password refused: %v", err)
	}
	if ok, _ := CheckPassword(h, "correct horse batterz"); ok {
		t.Error("wrong password accepted")
	}
	h2, _ := HashPassword("correct horse battery", cheap)
	if h2 == h {
		t.Error("two hashes of one password are equal: salt missing")
	}
	if _, err := CheckPassword("$2a$10$bcrypt", "x"); err == nil {
		t.Error("a non-argon2id hash was checked")
	}
}

func TestRolesGrant(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		role Role
		perm Permission
		want bool
	}{
		{Annotator, Label, true}, {Annotator, RunSweeps, false}, {Annotator, Approve, false}, {Annotator, ManageUsers, false},
		{Reviewer, Label, true}, {Reviewer, RunSweeps, true}, {Reviewer, PrepareManifests, true}, {Reviewer, Approve, false},
		{Approver, Approve, true}, {Approver, PrepareManifests, false}, {Approver, Label, false},
		{Admin, ManageUsers, true}, {Admin, ImportData, true},
		{Annotator, ReadLabels, false}, {Reviewer, ReadLabels, true}, {Approver, ReadLabels, true},
		{Admin, ManageUsers, true}, {Admin, ImportData, true}, {Admin, Approve, true},
		// A manifest's audit: whoever may prepare or approve manifests requests one.
		{Annotator, RequestAudit, false}, {Reviewer, RequestAudit, true}, {Approver, RequestAudit, true}, {Admin, RequestAudit, true},
	} {
		t.Run(fmt.Sprintf("%s/%s", tc.role, tc.perm), func(t *testing.T) {
			if got := tc.role.Can(tc.perm); got != tc.want {
				t.Errorf("%s.Can(%s) = %v; want %v", tc.role, tc.perm, got, tc.want)
			}
		})
	}
	for _, r := range Roles {
		if !r.Can(View) {
			t.Errorf("%s cannot view", r)
		}
	}
}

// Issue 8: the first account (an admin) could not label, adjudicate or start a
// campaign. An admin holds every permission there is.
func TestAdminHoldsEveryPermission(t *testing.T) {
	t.Parallel()
	for _, p := range Permissions {
		if !Admin.Can(p) {
			t.Errorf("Admin.Can(%s) = false; want true", p)
		}
		if rs := RolesWith(p); len(rs) == 0 || rs[len(rs)-1] != Admin {
			t.Errorf("RolesWith(%s) = %v; want it to end with admin", p, rs)
		}
	}
	if got := RolesWith(Adjudicate); len(got) != 2 || got[0] != Reviewer {
		t.Errorf("RolesWith(Adjudicate) = %v; want [reviewer admin]", got)
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	a, ha := NewToken()
	b, _ := NewToken()
	if a == b || len(a) != 22 || string(HashToken(a)) != string(ha) {
		t.Errorf("tokens %q %q", a, b)
	}
}

func TestLimiter(t *testing.T) {
	t.Parallel()
	l := NewLimiter(3, time.Minute)
	now := time.Unix(1000, 0)
	for range 3 {
		if ok, _ := l.Allowed("alice", now); !ok {
			t.Fatal("refused before the limit")
		}
		l.Fail("alice", now)
	}
	if ok, wait := l.Allowed("alice", now); ok || wait != time.Minute {
		t.Errorf("after 3 failures: allowed=%v wait=%v", ok, wait)
	}
	if ok, _ := l.Allowed("bob", now); !ok {
		t.Error("another key limited")
	}
	if ok, _ := l.Allowed("alice", now.Add(61*time.Second)); !ok {
		t.Error("still limited after the window")
	}
	l.Fail("alice", now)
	l.Reset("alice")
	if ok, _ := l.Allowed("alice", now); !ok {
		t.Error("limited after Reset")
	}
}
