package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

const (
	cookieName       = "dedup_session"
	secureCookieName = "__Host-dedup_session"
	sessionTTL       = 12 * time.Hour // idle time before a session ends
	inviteTTL        = 7 * 24 * time.Hour
)

type keyUser struct{}

// userOf returns the signed-in user, or nil.
func userOf(r *http.Request) *db.User { return userOfCtx(r.Context()) }

func userOfCtx(ctx context.Context) *db.User {
	u, _ := ctx.Value(keyUser{}).(*db.User)
	return u
}

// setup holds the one-time first-admin token, in memory.
type setup struct {
	mu   sync.Mutex
	hash []byte
}

func (s *setup) matches(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hash != nil && subtle.ConstantTimeCompare(s.hash, auth.HashToken(token)) == 1
}

func (s *setup) clear() {
	s.mu.Lock()
	s.hash = nil
	s.mu.Unlock()
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

func (s *server) sessionToken(r *http.Request) string {
	for _, name := range []string{secureCookieName, cookieName} {
		if c, err := r.Cookie(name); err == nil && c.Value != "" {
			return c.Value
		}
	}
	return ""
}

func (s *server) setSessionCookie(w http.ResponseWriter, r *http.Request, token string, maxAge int) {
	c := &http.Cookie{Name: cookieName, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: maxAge}
	if s.secure(r) {
		c.Name, c.Secure = secureCookieName, true
	}
	http.SetCookie(w, c)
}

// authenticate puts the session's user, if any, in the request context.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := s.sessionToken(r)
		if token == "" || s.store == nil {
			next.ServeHTTP(w, r)
			return
		}
		hash := auth.HashToken(token)
		sess, err := s.store.SessionByToken(r.Context(), hash)
		if errors.Is(err, db.ErrNotFound) {
			s.setSessionCookie(w, r, "", -1) // a dead cookie: drop it
			next.ServeHTTP(w, r)
			return
		}
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		if s.now().Sub(sess.LastSeen) > time.Minute {
			if err := s.store.TouchSession(r.Context(), hash, sessionTTL); err != nil {
				s.log.Warn("touch session", "err", err)
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
			if !auth.Role(u.Role).Can(perm) {
				s.renderError(w, r, http.StatusForbidden, fmt.Sprintf("Your role (%s) does not allow this.", u.Role))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// safeNext keeps a post-login redirect on this site.
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

// startSession signs u in: a fresh token (rotated at every login), the old one revoked.
func (s *server) startSession(w http.ResponseWriter, r *http.Request, u db.User) error {
	if old := s.sessionToken(r); old != "" {
		s.store.DeleteSession(r.Context(), auth.HashToken(old))
	}
	token, hash := auth.NewToken()
	if err := s.store.CreateSession(r.Context(), u.ID, hash, sessionTTL); err != nil {
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

func (s *server) login(w http.ResponseWriter, r *http.Request) {
	name, pw := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("password")
	view := templates.SignIn{Page: s.page(r, "Sign in"), Mode: "login", Action: "/login", Name: name, Next: r.PostFormValue("next")}
	now := s.now()
	addr := clientAddr(r)
	accountKey := strings.ToLower(name)
	if ok, wait := s.addrLimit.Allowed(addr, now); !ok {
		view.Error = fmt.Sprintf("Too many failed sign-ins from your address. Try again in %s.", wait.Round(time.Second))
		s.render(w, r, http.StatusTooManyRequests, templates.SignInPage(view))
		return
	}
	if ok, wait := s.accountLimit.Allowed(accountKey, now); !ok {
		view.Error = fmt.Sprintf("Too many failed sign-ins for this account. Try again in %s.", wait.Round(time.Second))
		s.render(w, r, http.StatusTooManyRequests, templates.SignInPage(view))
		return
	}
	u, err := s.store.UserByName(r.Context(), name)
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		s.internalError(w, r, err)
		return
	}
	hash := u.PasswordHash
	if err != nil || hash == "" {
		hash = s.dummyHash // same work whether or not the account exists
	}
	match, herr := auth.CheckPassword(hash, pw)
	if herr != nil || err != nil || !match || u.Disabled {
		s.addrLimit.Fail(addr, now)
		s.accountLimit.Fail(accountKey, now)
		s.store.Audit(r.Context(), name, "login.failed", "user", map[string]any{"address": addr})
		view.Error = "Wrong name or password."
		s.render(w, r, http.StatusUnauthorized, templates.SignInPage(view))
		return
	}
	s.accountLimit.Reset(accountKey)
	if err := s.startSession(w, r, u); err != nil {
		s.internalError(w, r, err)
		return
	}
	s.store.Audit(r.Context(), u.Name, "login", fmt.Sprintf("user:%d", u.ID), map[string]any{"address": addr})
	http.Redirect(w, r, safeNext(view.Next), http.StatusSeeOther)
}

func (s *server) logout(w http.ResponseWriter, r *http.Request) {
	if token := s.sessionToken(r); token != "" {
		if err := s.store.DeleteSession(r.Context(), auth.HashToken(token)); err != nil {
			s.internalError(w, r, err)
			return
		}
	}
	if u := userOf(r); u != nil {
		s.store.Audit(r.Context(), u.Name, "logout", fmt.Sprintf("user:%d", u.ID), nil)
	}
	s.setSessionCookie(w, r, "", -1)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func (s *server) showSetup(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	if !s.setup.matches(token) {
		s.renderError(w, r, http.StatusNotFound, "This setup link is not valid (it works once, and only until the first account exists). Sign in instead.")
		return
	}
	s.render(w, r, http.StatusOK, templates.SignInPage(templates.SignIn{Page: s.page(r, "Set up"), Mode: "setup", Action: "/setup?token=" + url.QueryEscape(token)}))
}

func (s *server) completeSetup(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	if !s.setup.matches(token) {
		s.renderError(w, r, http.StatusNotFound, "This setup link is not valid any more.")
		return
	}
	view := templates.SignIn{Page: s.page(r, "Set up"), Mode: "setup", Action: "/setup?token=" + url.QueryEscape(token)}
	name, hash, ok := s.newAccount(w, r, &view)
	if !ok {
		return
	}
	u, err := s.store.CreateFirstAdmin(r.Context(), name, hash)
	if errors.Is(err, db.ErrConflict) {
		s.setup.clear()
		s.renderError(w, r, http.StatusConflict, "Setup is done already. Sign in instead.")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.setup.clear()
	if err := s.startSession(w, r, u); err != nil {
		s.internalError(w, r, err)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// invite looks up the {token} of the URL; it answers 404 itself for a used, expired
// or unknown link and returns false.
func (s *server) invite(w http.ResponseWriter, r *http.Request) (string, db.Invite, bool) {
	token := chi.URLParam(r, "token")
	inv, err := s.store.InviteByToken(r.Context(), auth.HashToken(token))
	if errors.Is(err, db.ErrNotFound) {
		s.renderError(w, r, http.StatusNotFound, "This invite link is not valid: it may have been used or have expired. Ask for a new one.")
		return "", inv, false
	}
	if err != nil {
		s.internalError(w, r, err)
		return "", inv, false
	}
	return token, inv, true
}

// newAccount reads and checks the name and password of an account being created (setup
// or invite) and hashes the password. On a bad form it shows view again with the
// reason and returns false.
func (s *server) newAccount(w http.ResponseWriter, r *http.Request, view *templates.SignIn) (name, hash string, ok bool) {
	name, pw := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("password")
	view.Name = name
	if err := errors.Join(auth.CheckName(name), auth.CheckNewPassword(name, pw)); err != nil {
		view.Error = err.Error()
		s.render(w, r, http.StatusUnprocessableEntity, templates.SignInPage(*view))
		return "", "", false
	}
	hash, err := auth.HashPassword(pw, s.kdf)
	if err != nil {
		s.internalError(w, r, err)
		return "", "", false
	}
	return name, hash, true
}

func (s *server) showInvite(w http.ResponseWriter, r *http.Request) {
	token, inv, ok := s.invite(w, r)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, templates.SignInPage(templates.SignIn{Page: s.page(r, "Join"), Mode: "invite",
		Action: "/invite/" + token, Role: inv.Role, By: inv.CreatedBy}))
}

func (s *server) acceptInvite(w http.ResponseWriter, r *http.Request) {
	token, inv, ok := s.invite(w, r)
	if !ok {
		return
	}
	view := templates.SignIn{Page: s.page(r, "Join"), Mode: "invite", Action: "/invite/" + token, Role: inv.Role, By: inv.CreatedBy}
	name, hash, ok := s.newAccount(w, r, &view)
	if !ok {
		return
	}
	u, err := s.store.AcceptInvite(r.Context(), auth.HashToken(token), name, hash)
	switch {
	case errors.Is(err, db.ErrConflict):
		view.Error = "That name is taken; choose another."
		s.render(w, r, http.StatusConflict, templates.SignInPage(view))
		return
	case errors.Is(err, db.ErrNotFound):
		s.renderError(w, r, http.StatusNotFound, "This invite link was used a moment ago.")
		return
	case err != nil:
		s.internalError(w, r, err)
		return
	}
	if err := s.startSession(w, r, u); err != nil {
		s.internalError(w, r, err)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *server) usersView(r *http.Request) (templates.Users, error) {
	users, err := s.store.Users(r.Context())
	if err != nil {
		return templates.Users{}, err
	}
	me := userOf(r)
	v := templates.Users{Page: s.page(r, "Team")}
	for _, role := range auth.Roles {
		v.Roles = append(v.Roles, string(role))
	}
	for _, u := range users {
		v.Users = append(v.Users, templates.UserRow{ID: u.ID, Name: u.Name, Role: u.Role, Disabled: u.Disabled,
			Created: u.CreatedAt.Format("2006-01-02"), IsSelf: me != nil && me.ID == u.ID})
	}
	return v, nil
}

func (s *server) showUsers(w http.ResponseWriter, r *http.Request) {
	v, err := s.usersView(r)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.UsersPage(v))
}

func (s *server) usersError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	v, err := s.usersView(r)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	v.Error = msg
	s.render(w, r, status, templates.UsersPage(v))
}

func (s *server) createInvite(w http.ResponseWriter, r *http.Request) {
	role, err := auth.ParseRole(r.PostFormValue("role"))
	if err != nil {
		s.usersError(w, r, http.StatusUnprocessableEntity, err.Error())
		return
	}
	token, hash := auth.NewToken()
	if err := s.store.CreateInvite(r.Context(), *userOf(r), hash, string(role), r.PostFormValue("note"), inviteTTL); err != nil {
		s.internalError(w, r, err)
		return
	}
	v, err := s.usersView(r)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	scheme := "http"
	if s.secure(r) {
		scheme = "https"
	}
	v.InviteLink, v.InviteRole = fmt.Sprintf("%s://%s/invite/%s", scheme, r.Host, token), string(role)
	s.render(w, r, http.StatusOK, templates.UsersPage(v))
}

func userIDParam(r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	return id, err == nil
}

func (s *server) setUserRole(w http.ResponseWriter, r *http.Request) {
	id, ok := userIDParam(r)
	role, err := auth.ParseRole(r.PostFormValue("role"))
	if !ok || err != nil {
		s.usersError(w, r, http.StatusUnprocessableEntity, "Choose a user and a role.")
		return
	}
	s.userChange(w, r, s.store.SetRole(r.Context(), *userOf(r), id, string(role)))
}

func (s *server) setUserDisabled(disabled bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := userIDParam(r)
		if !ok {
			s.renderError(w, r, http.StatusNotFound, "No such user.")
			return
		}
		if me := userOf(r); me.ID == id && disabled {
			s.usersError(w, r, http.StatusUnprocessableEntity, "You cannot disable yourself.")
			return
		}
		s.userChange(w, r, s.store.SetDisabled(r.Context(), *userOf(r), id, disabled))
	}
}

func (s *server) userChange(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, db.ErrNotFound):
		s.renderError(w, r, http.StatusNotFound, "No such user.")
	case errors.Is(err, db.ErrLastAdmin):
		s.usersError(w, r, http.StatusConflict, "The last enabled admin cannot lose the admin role or be disabled.")
	case err != nil:
		s.internalError(w, r, err)
	default:
		http.Redirect(w, r, "/admin/users", http.StatusSeeOther)
	}
}

func (s *server) showAudit(w http.ResponseWriter, r *http.Request) {
	events, err := s.store.AuditLog(r.Context(), 500)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	rows := make([]templates.AuditRow, len(events))
	for i, e := range events {
		rows[i] = templates.AuditRow{At: e.At.UTC().Format("2006-01-02 15:04:05"), Actor: e.Actor, Action: e.Action, Subject: e.Subject, Detail: e.Detail}
	}
	s.render(w, r, http.StatusOK, templates.AuditPage(s.page(r, "Audit log"), rows))
}
