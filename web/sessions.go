package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
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
		if hash == nil || s.store == nil {
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
		if s.now().Sub(sess.LastSeen) > time.Minute {
			// A failed touch costs the session at most a minute of its idle time, and is
			// worth a page no more than a 500: log it and go on.
			if err := s.store.TouchSession(r.Context(), hash, sessionTTL); err != nil {
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
	s.render(w, r, http.StatusOK, templates.SignInPage(templates.SignIn{Page: s.page(r, "Sign in"), Mode: "login", Action: "/login", Next: r.URL.Query().Get("next")}))
}

// login checks a name and password, with rate limits per client address and per
// account, and spends the same work on unknown accounts as on known ones.
func (s *server) login(w http.ResponseWriter, r *http.Request) {
	name, pw := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("password")
	view := templates.SignIn{Page: s.page(r, "Sign in"), Mode: "login", Action: "/login", Name: name, Next: r.PostFormValue("next")}
	refuse := func(status int, msg string) {
		view.Error = msg
		s.render(w, r, status, templates.SignInPage(view))
	}
	now := s.now()
	addr := clientAddr(r)
	accountKey := strings.ToLower(name)
	if ok, wait := s.addrLimit.Allowed(addr, now); !ok {
		refuse(http.StatusTooManyRequests, fmt.Sprintf("Too many failed sign-ins from your address. Try again in %s.", wait.Round(time.Second)))
		return
	}
	if ok, wait := s.accountLimit.Allowed(accountKey, now); !ok {
		refuse(http.StatusTooManyRequests, fmt.Sprintf("Too many failed sign-ins for this account. Try again in %s.", wait.Round(time.Second)))
		return
	}
	u, err := s.store.UserByName(r.Context(), name)
	known := err == nil
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		s.fail(w, r, err)
		return
	}
	hash := u.PasswordHash
	if !known || hash == "" {
		hash = s.dummyHash // same work whether or not the account exists
	}
	match, herr := auth.CheckPassword(hash, pw)
	if herr != nil || !known || !match || u.Disabled {
		s.addrLimit.Fail(addr, now)
		s.accountLimit.Fail(accountKey, now)
		if err := s.store.Audit(r.Context(), name, "login.failed", "user", map[string]any{"address": addr}); err != nil {
			s.fail(w, r, err)
			return
		}
		refuse(http.StatusUnauthorized, "Wrong name or password.")
		return
	}
	s.accountLimit.Reset(accountKey)
	sess, token := newSession(r, u)
	if err := s.store.Login(r.Context(), u, sess, addr); err != nil {
		s.fail(w, r, err)
		return
	}
	s.setSessionCookie(w, r, token, 0)
	http.Redirect(w, r, safeNext(view.Next), http.StatusSeeOther)
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
