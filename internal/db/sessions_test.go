package db

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
)

func TestLoginRotatesAndAudits(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	bo := mustUser(t, d, "bo", auth.Reviewer)
	if err := d.Login(ctx, bo, NewSession{TokenHash: []byte("first"), TTL: time.Hour}, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	s, err := d.SessionByToken(ctx, []byte("first"))
	if err != nil || s.User.ID != bo.ID || s.User.Role != auth.Reviewer || s.LastSeen.IsZero() || !s.ExpiresAt.After(s.LastSeen) {
		t.Fatalf("SessionByToken = %+v, %v", s, err)
	}
	// The next sign-in from that browser replaces the session.
	if err := d.Login(ctx, bo, NewSession{TokenHash: []byte("second"), Replaces: []byte("first"), TTL: time.Hour}, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	checkNoSession(t, d, "first", "replaced session")
	if _, err := d.SessionByToken(ctx, []byte("second")); err != nil {
		t.Errorf("new session: %v", err)
	}
	events, _ := d.AuditLog(ctx, 10)
	if events[0].Action != "login" || events[0].Actor != "bo" || !strings.Contains(events[0].Detail, "192.0.2.1") {
		t.Errorf("newest audit event %+v; want bo's login with the address", events[0])
	}
}

// A sign-in whose audit event cannot be written leaves no session behind.
func TestLoginWithoutAuditLeavesNoSession(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	bo := mustUser(t, d, "bo", auth.Reviewer)
	if _, err := d.w.ExecContext(ctx, `DROP TABLE audit_log`); err != nil {
		t.Fatal(err)
	}
	if err := d.Login(ctx, bo, NewSession{TokenHash: []byte("t"), TTL: time.Hour}, "192.0.2.1"); err == nil {
		t.Fatal("Login without an audit log: no error")
	}
	checkNoSession(t, d, "t", "session after a failed login")
	if err := d.Logout(ctx, []byte("t"), bo); err == nil {
		t.Error("Logout without an audit log: no error")
	}
}

func TestSessionLifetime(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	bo := mustUser(t, d, "bo", auth.Annotator)
	start := time.Now()
	mustSession(t, d, bo, "s")
	for _, tc := range []struct {
		name  string
		at    time.Duration // after start
		touch bool          // touch at this time instead of looking up
		alive bool
	}{
		{"fresh", 0, false, true},
		{"idle 50 minutes", 50 * time.Minute, false, true},
		{"touched at 50 minutes", 50 * time.Minute, true, true},
		{"90 minutes: alive thanks to the touch", 90 * time.Minute, false, true},
		{"idle past the extended deadline", 111 * time.Minute, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d.now = func() time.Time { return start.Add(tc.at) }
			if tc.touch {
				if err := d.TouchSession(ctx, []byte("s"), time.Hour); err != nil {
					t.Fatal(err)
				}
			}
			_, err := d.SessionByToken(ctx, []byte("s"))
			if tc.alive != (err == nil) {
				t.Errorf("SessionByToken at +%v = %v; want alive %v", tc.at, err, tc.alive)
			}
			if !tc.alive && !errors.Is(err, ErrNotFound) {
				t.Errorf("expired session: %v; want ErrNotFound", err)
			}
		})
	}
}

func TestLogout(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	bo := mustUser(t, d, "bo", auth.Annotator)
	mustSession(t, d, bo, "s")
	if err := d.Logout(ctx, []byte("s"), bo); err != nil {
		t.Fatal(err)
	}
	checkNoSession(t, d, "s", "session after logout")
	// A dead cookie of nobody known: the session goes, nothing is audited.
	if err := d.Logout(ctx, []byte("dead"), User{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(auditActions(t, d), ","); got != "user.create,logout" {
		t.Errorf("audit log %s; want user.create,logout", got)
	}
}

func TestAuditWrites(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	if err := d.Audit(ctx, "bo", "login.failed", "user", map[string]any{"address": "192.0.2.9"}); err != nil {
		t.Fatal(err)
	}
	events, err := d.AuditLog(ctx, 10)
	if err != nil || len(events) != 1 || events[0].Detail != `{"address":"192.0.2.9"}` || events[0].At.IsZero() {
		t.Fatalf("AuditLog = %+v, %v", events, err)
	}
	if err := d.Audit(ctx, "bo", "x", "y", map[string]any{"bad": func() {}}); err == nil {
		t.Error("an audit detail that is not JSON: no error")
	}
}

// TryTouchSession extends a session only when no write holds or waits for the write
// turn, and otherwise writes nothing and returns at once.
func TestTryTouchSession(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	bo := mustUser(t, d, "bo", auth.Annotator)
	start := time.Now()
	mustSession(t, d, bo, "s")
	d.now = func() time.Time { return start.Add(10 * time.Minute) }
	holding, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- d.inTx(ctx, func(*sql.Tx) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	touched, err := d.TryTouchSession(ctx, []byte("s"), time.Hour)
	if err != nil || touched {
		t.Errorf("TryTouchSession while another write runs = %v, %v; want false, nil", touched, err)
	}
	if s, err := d.SessionByToken(ctx, []byte("s")); err != nil || s.LastSeen.After(start.Add(time.Minute)) {
		t.Errorf("session after a refused touch: last seen %v, %v; want unchanged", s.LastSeen, err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	touched, err = d.TryTouchSession(ctx, []byte("s"), time.Hour)
	if err != nil || !touched {
		t.Errorf("TryTouchSession with the turn free = %v, %v; want true, nil", touched, err)
	}
	s, err := d.SessionByToken(ctx, []byte("s"))
	if err != nil || s.LastSeen.Sub(start.Add(10*time.Minute)).Abs() > time.Second {
		t.Errorf("session after a touch: last seen %v, %v; want %v", s.LastSeen, err, start.Add(10*time.Minute))
	}
}
