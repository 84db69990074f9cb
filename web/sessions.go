package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Sessions: who is signed in, the cookie that says so, signing in and out, and the
// middleware that lets a request through by role.

const (
	cookieName       = "dedup_session"
	secureCookieName = "__Host-dedup_session"
	sessionTTL       = 12 * time.Hour // idle time before a session ends
)

type keyUser struct{}

// userOf returns the signed-in user, or nil.
func userOf(r *http.Request) *db.User { return userOfCtx(r.Context()) }

func userOfCtx(ctx context.Context) *db.User {
	u, _ := ctx.Value(keyUser{}).(*db.User)
	return u
}

// secure reports whether the request reached us over TLS, directly or through a proxy
// that we were told to trust.
func (s *server) secure(r *http.Request) bool {
	return r.TLS != nil || (s.trustProxy && r.Header.Get("X-Forwarded-Proto") == "https")
}

// clientAddr is the peer's IP: forwarding headers are not trusted for rate limiting,
// since any client can set them.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func sessionToken(r *http.Request) string {
	for _, name := range []string{secureCookieName, cookieName} {
		if c, err := r.Cookie(name); err == nil && c.Value != "" {
			return c.Value
		}
	}
	return ""
}

// sessionHash is the stored hash of the request's session token, nil without one.
func sessionHash(r *http.Request) []byte {
	if token := sessionToken(r); token != "" {
		return auth.HashToken(token)
	}
	return nil
}

func (s *server) setSessionCookie(w http.ResponseWriter, r *http.Request, token string, maxAge int) {
	c := &http.Cookie{Name: cookieName, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: maxAge}
	if s.secure(r) {
		c.Name, c.Secure = secureCookieName, true
	}
	http.SetCookie(w, c)
}

// authenticate puts the session's user, if any, in the request context, and keeps the
// session alive (at most once a minute).
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hash := sessionHash(r)
		if hash == nil || s.store == nil || isAPI(r) { // the API knows tokens, not sessions
			next.ServeHTTP(w, r)
			return
		}
		sess, err := s.store.SessionByToken(r.Context(), hash)
		if errors.Is(err, db.ErrNotFound) {
			s.setSessionCookie(w, r, "", -1) // a dead cookie: drop it
			next.ServeHTTP(w, r)
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if idle := s.now().Sub(sess.LastSeen); idle > time.Minute {
			// A failed touch costs the session at most a minute of its idle time, and is
			// worth a page no more than a 500: log it and go on. While the session has
			// hours left, the touch does not wait for the write turn (a page would queue
			// behind everyone's labels): a busy turn leaves it to a later request.
			var err error
			if idle > time.Hour {
				err = s.store.TouchSession(r.Context(), hash, sessionTTL)
			} else {
				_, err = s.store.TryTouchSession(r.Context(), hash, sessionTTL)
			}
			if err != nil {
				s.log.Error("touch session", "err", err, "user", sess.User.Name, "request_id", requestIDOf(r))
			}
		}
		u := sess.User
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyUser{}, &u)))
	})
}

// require lets through signed-in users whose role has perm. Others are sent to sign in
// (pages) or refused (everything else).
func (s *server) require(perm auth.Permission) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u := userOf(r)
			if u == nil {
				if r.Method == http.MethodGet {
					http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
					return
				}
				s.renderError(w, r, http.StatusUnauthorized, "Sign in first.")
				return
			}
			if !u.Role.Can(perm) {
				s.renderError(w, r, http.StatusForbidden, fmt.Sprintf("Your role (%s) does not allow this.", u.Role))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// safeNext keeps a post-login redirect on this site. next must be a path-absolute URL
// (one leading slash, then path, query or fragment) that parses with no scheme, host or
// user, and holds no control characters and no backslash: browsers drop tabs and line
// breaks from a URL and read a backslash as a slash, so "/\t/evil.example" or
// "/\\evil.example" would leave the site as "//evil.example". Anything else is "/".
func safeNext(next string) string {
	if next == "" || next[0] != '/' || len(next) > maxNext {
		return "/"
	}
	for i := 0; i < len(next); i++ {
		if c := next[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "/"
		}
	}
	if strings.HasPrefix(next, "//") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return "/"
	}
	return next
}

// maxNext bounds a post-login redirect; longer ones are not links this site makes.
const maxNext = 2048

// newSession is a fresh session for u replacing the request's (tokens rotate at every
// sign-in), and the token for its cookie.
func newSession(r *http.Request, u db.User) (db.NewSession, string) {
	token, hash := auth.NewToken()
	return db.NewSession{UserID: u.ID, TokenHash: hash, Replaces: sessionHash(r), TTL: sessionTTL}, token
}

// startSession signs u in right after their account was created (its audit event says
// so).
func (s *server) startSession(w http.ResponseWriter, r *http.Request, u db.User) error {
	sess, token := newSession(r, u)
	if err := s.store.CreateSession(r.Context(), sess); err != nil {
		return err
	}
	s.setSessionCookie(w, r, token, 0)
	return nil
}

func (s *server) showLogin(w http.ResponseWriter, r *http.Request) {
	if userOf(r) != nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	n, err := s.store.CountUsers(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.SignInPage(templates.SignIn{Page: s.page(r, "Sign in"), Mode: "login", Action: "/login",
		Next: r.URL.Query().Get("next"), NoAccounts: n == 0}))
}

// hashWait is how long a sign-in from a failing address waits for a free password
// check before it is turned away with 429 (the checks run a few at a time: see
// auth.HashGate); quietHashWait is the wait of one from a known or quiet address, which
// a flood's burst of first tries may hold up but should not turn away (it stays under
// the server's 30 s to read a request, past which the request's context ends).
const (
	hashWait      = 3 * time.Second
	quietHashWait = 20 * time.Second
)

// login checks a name and password. The attempt is counted against the sign-in limits
// before the password is checked, so parallel attempts cannot slip past them, and only
// as many passwords are checked at once as there are cores. An unknown account costs
// the same work as a known one.
func (s *server) login(w http.ResponseWriter, r *http.Request) {
	name, pw := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("password")
	if stored, err := auth.NormalizeName(name); err == nil {
		name = stored // as names are stored: "ａｄａ" is "ada"
	}
	view := templates.SignIn{Page: s.page(r, "Sign in"), Mode: "login", Action: "/login", Name: name, Next: r.PostFormValue("next")}
	refuse := func(status int, msg string) {
		view.Error = msg
		if n, err := s.store.CountUsers(r.Context()); err == nil && n == 0 {
			view.NoAccounts = true
		}
		s.render(w, r, status, templates.SignInPage(view))
	}
	addr := clientAddr(r)
	attempt, err := s.logins.Begin(name, addr, s.now())
	if err != nil {
		s.refuseLocked(w, r, view, err)
		return
	}
	u, err := s.store.UserByName(r.Context(), name)
	known := err == nil
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		attempt.Abandon()
		s.fail(w, r, err)
		return
	}
	hash := u.PasswordHash
	if !known || hash == "" {
		hash = s.dummyHash // same work whether or not the account exists
	}
	// A sign-in from an address known for the account, or a quiet one, goes ahead of a
	// flood of wrong passwords from failing addresses, and waits longer before it is
	// turned away.
	wait := hashWait
	if attempt.Priority != auth.Failing {
		wait = quietHashWait
	}
	release, ok := s.hashes.Enter(r.Context(), wait, attempt.Priority)
	if !ok {
		if err := r.Context().Err(); err != nil { // the client left before its check: none counted
			attempt.Abandon()
			s.fail(w, r, err)
			return
		}
		attempt.Busy(s.now())
		w.Header().Set("Retry-After", "2")
		refuse(http.StatusTooManyRequests, "The server is busy signing people in. Try again in a few seconds.")
		return
	}
	match, herr := auth.CheckPassword(hash, pw)
	release()
	// The password was checked: what follows is recorded whether or not the client is
	// still there (a sign-in whose client left mid-check used to count as a failure yet
	// go unaudited).
	ctx := context.WithoutCancel(r.Context())
	if herr != nil || !known || !match || u.Disabled {
		f := attempt.Failed(s.now())
		detail := map[string]any{"address": addr}
		if f.Next != nil {
			detail["locked"] = string(f.Next.Scope)
		}
		if err := s.store.Audit(ctx, name, "login.failed", "user", detail); err != nil {
			s.fail(w, r, err)
			return
		}
		for _, lk := range f.Started {
			if err := s.store.Audit(ctx, name, "login.lock", "user", lockDetail(lk)); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		msg := "Wrong name or password."
		if f.Next != nil {
			msg += " " + lockedMessage(f.Next)
		}
		refuse(http.StatusUnauthorized, msg)
		return
	}
	attempt.Succeeded()
	sess, token := newSession(r, u)
	if err := s.store.Login(ctx, u, sess, addr); err != nil {
		s.fail(w, r, err)
		return
	}
	s.setSessionCookie(w, r, token, 0)
	http.Redirect(w, r, safeNext(view.Next), http.StatusSeeOther)
}

// refuseLocked answers a sign-in the limits refuse: 429, with when to try again.
func (s *server) refuseLocked(w http.ResponseWriter, r *http.Request, view templates.SignIn, err error) {
	var le *auth.LockedError
	if !errors.As(err, &le) {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(le.Wait.Seconds()))))
	view.Error = lockedMessage(le)
	s.render(w, r, http.StatusTooManyRequests, templates.SignInPage(view))
}

// lockDetail is a lock's audit detail: which limit, on what, until when.
func lockDetail(lk auth.Lockout) map[string]any {
	d := map[string]any{"scope": string(lk.Scope), "until": lk.Until.UTC().Format(time.RFC3339)}
	if lk.Address != "" {
		d["address"] = lk.Address
	}
	if lk.Scope == auth.ScopeAccount {
		d["slowed"] = "sign-ins from failing addresses"
	}
	return d
}

// lockedMessage says which limit holds and when the person may try again.
func lockedMessage(le *auth.LockedError) string {
	when := fmt.Sprintf("Try again in %s (at %s).", le.Wait.Round(time.Second), le.Until.UTC().Format("15:04:05 UTC"))
	switch le.Scope {
	case auth.ScopeAccount:
		return "Too many failed sign-ins for this account, from several addresses: sign-ins from addresses that failed are slowed. " + when +
			" From an address with no failed sign-in, the right password works at once."
	case auth.ScopeAddress:
		return "Too many failed sign-ins from your address. " + when
	default:
		return "Too many failed sign-ins for this account from your address. " + when
	}
}

func (s *server) logout(w http.ResponseWriter, r *http.Request) {
	if hash := sessionHash(r); hash != nil {
		var who db.User
		if u := userOf(r); u != nil {
			who = *u
		}
		if err := s.store.Logout(r.Context(), hash, who); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	s.setSessionCookie(w, r, "", -1)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
