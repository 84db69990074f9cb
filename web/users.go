package web

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// The Team page: admins invite people (and revoke invites not used yet), set roles,
// disable accounts (after a confirmation page) and enable them again.

const inviteTTL = 7 * 24 * time.Hour

func (s *server) usersView(r *http.Request) (templates.Users, error) {
	users, err := s.store.Users(r.Context())
	if err != nil {
		return templates.Users{}, err
	}
	invites, err := s.store.PendingInvites(r.Context())
	if err != nil {
		return templates.Users{}, err
	}
	me := userOf(r)
	v := templates.Users{Page: s.page(r, "Team"), InviteRole: formValue(r, "role", r.URL.Query().Get("role")), InviteNote: formValue(r, "note", "")}
	for _, role := range auth.Roles {
		v.Roles = append(v.Roles, string(role))
	}
	now := s.now()
	for _, u := range users {
		row := templates.UserRow{ID: u.ID, Name: u.Name, Role: string(u.Role), Disabled: u.Disabled,
			Created: u.CreatedAt.Format("2006-01-02"), IsSelf: me != nil && me.ID == u.ID}
		if lk, locked := s.logins.Locked(u.Name, now); locked {
			row.Locked = lockText(lk)
		}
		v.Users = append(v.Users, row)
	}
	for _, inv := range invites {
		v.Invites = append(v.Invites, templates.InviteRow{ID: hex.EncodeToString(inv.TokenHash), Role: string(inv.Role), Note: inv.Note,
			By: inv.CreatedBy, Created: inv.CreatedAt.Format("2006-01-02 15:04"), Expires: inv.ExpiresAt.Format("2006-01-02 15:04")})
	}
	if v.API, err = s.searchAPIView(r); err != nil {
		return templates.Users{}, err
	}
	if v.Gate, err = s.auditGateForm(r.Context()); err != nil {
		return templates.Users{}, err
	}
	return v, nil
}

func (s *server) showUsers(w http.ResponseWriter, r *http.Request) {
	v, err := s.usersView(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.UsersPage(v))
}

// failOnUsers shows err on the Team page when an admin can fix it there.
func (s *server) failOnUsers(w http.ResponseWriter, r *http.Request, err error) {
	s.failOn(w, r, err, func(_ int, msg string) { s.redirect(w, r, "/admin/users", refused(r, msg)) })
}

// createInvite makes a one-time invite link and shows it, once, on the Team page: the
// link itself is stored only as a hash.
func (s *server) createInvite(w http.ResponseWriter, r *http.Request) {
	role, err := auth.ParseRole(r.PostFormValue("role"))
	if err != nil {
		s.failOnUsers(w, r, badInput(err))
		return
	}
	token, hash := auth.NewToken()
	if err := s.store.CreateInvite(r.Context(), *userOf(r), hash, role, r.PostFormValue("note"), inviteTTL); err != nil {
		s.fail(w, r, err)
		return
	}
	scheme := "http"
	if s.secure(r) {
		scheme = "https"
	}
	n := done(fmt.Sprintf("Invite link for a new %s. Send it to the person: it works once, for 7 days, and is not shown again "+
		"(revoke it below and make another if it gets lost).", role))
	n.Secret = fmt.Sprintf("%s://%s/invite/%s", scheme, r.Host, token)
	s.redirect(w, r, "/admin/users", n)
}

// revokeInvite deletes an invite not used yet: its link stops working.
func (s *server) revokeInvite(w http.ResponseWriter, r *http.Request) {
	hash, err := hex.DecodeString(chi.URLParam(r, "invite"))
	if err != nil {
		s.fail(w, r, notFound("invite"))
		return
	}
	inv, err := s.store.RevokeInvite(r.Context(), *userOf(r), hash)
	if errors.Is(err, db.ErrNotFound) {
		err = &pageError{http.StatusNotFound, "No such invite: it may have been used, revoked or have expired."}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	what := "the invite for a new " + string(inv.Role)
	if inv.Note != "" {
		what += " (" + inv.Note + ")"
	}
	s.redirect(w, r, "/admin/users", done("Revoked "+what+": its link no longer works."))
}

// userParam reads the {id} of the URL.
func userParam(r *http.Request) (int64, error) {
	id, ok := idParam(r, "id")
	if !ok {
		return 0, notFound("user")
	}
	return id, nil
}

// loadUser loads the {id} of the URL.
func (s *server) loadUser(r *http.Request) (db.User, error) {
	id, err := userParam(r)
	if err != nil {
		return db.User{}, err
	}
	u, err := s.store.UserByID(r.Context(), id)
	if errors.Is(err, db.ErrNotFound) {
		return u, notFound("user")
	}
	return u, err
}

func (s *server) setUserRole(w http.ResponseWriter, r *http.Request, u db.User) {
	role, err := auth.ParseRole(r.PostFormValue("role"))
	if err != nil {
		s.failOnUsers(w, r, &formError{msg: "Choose a user and a role."})
		return
	}
	s.changedUser(w, r, s.store.SetRole(r.Context(), *userOf(r), u.ID, role), fmt.Sprintf("%s is now %s.", u.Name, withArticle(string(role))))
}

// withArticle puts "a" or "an" before a role name.
func withArticle(role string) string {
	if role != "" && (role[0] == 'a' || role[0] == 'e' || role[0] == 'i' || role[0] == 'o' || role[0] == 'u') {
		return "an " + role
	}
	return "a " + role
}

// confirmDisable asks before disabling an account, on a page of its own, so the step
// works without JavaScript.
func (s *server) confirmDisable(w http.ResponseWriter, r *http.Request, u db.User) {
	v := templates.ConfirmDisable{Page: s.page(r, "Disable "+u.Name), ID: u.ID, Name: u.Name, Role: string(u.Role),
		Disabled: u.Disabled, IsSelf: userOf(r).ID == u.ID}
	s.render(w, r, http.StatusOK, templates.ConfirmDisablePage(v))
}

func (s *server) setUserDisabled(disabled bool) func(http.ResponseWriter, *http.Request, db.User) {
	return func(w http.ResponseWriter, r *http.Request, u db.User) {
		if me := userOf(r); me.ID == u.ID && disabled {
			s.failOnUsers(w, r, &formError{msg: "You cannot disable yourself."})
			return
		}
		msg := fmt.Sprintf("Enabled %s: they can sign in again.", u.Name)
		if disabled {
			msg = fmt.Sprintf("Disabled %s: their sessions have ended and they cannot sign in.", u.Name)
		}
		s.changedUser(w, r, s.store.SetDisabled(r.Context(), *userOf(r), u.ID, disabled), msg)
	}
}

// lockText says how an account is locked out of signing in, for the Team page.
func lockText(lk auth.Lock) string {
	until := lk.Until.UTC().Format("15:04 UTC")
	var parts []string
	if lk.Slowed {
		parts = append(parts, fmt.Sprintf("under attack (%d failed sign-ins in the last hour): sign-ins from failing addresses slowed", lk.Failures))
	}
	switch {
	case lk.Addresses == 1:
		parts = append(parts, "locked from 1 address")
	case lk.Addresses > 1:
		parts = append(parts, fmt.Sprintf("locked from %d addresses", lk.Addresses))
	}
	return strings.Join(parts, "; ") + " until " + until
}

// unlockUser clears the sign-in lockouts of an account (the failures counted against
// it from every address), recorded in the audit log.
func (s *server) unlockUser(w http.ResponseWriter, r *http.Request) {
	id, err := userParam(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	u, err := s.store.UserByID(r.Context(), id)
	if err != nil {
		s.changedUser(w, r, err, "")
		return
	}
	lk, locked := s.logins.Locked(u.Name, s.now())
	s.logins.Unlock(u.Name)
	detail := map[string]any{"was_locked": locked}
	if locked {
		detail["slowed"], detail["addresses"] = lk.Slowed, lk.Addresses
	}
	s.changedUser(w, r, s.store.AuditBy(r.Context(), *userOf(r), "user.unlock", fmt.Sprintf("user:%d", u.ID), detail), "Cleared the sign-in lockout of "+u.Name+".")
}

// changedUser answers a change to an account: back to the Team page saying what was
// done, or what went wrong.
func (s *server) changedUser(w http.ResponseWriter, r *http.Request, err error, msg string) {
	switch {
	case errors.Is(err, db.ErrNotFound):
		s.fail(w, r, notFound("user"))
	case err != nil:
		s.failOnUsers(w, r, err)
	default:
		s.tokens.forget() // API tokens carry their creator's authority: read them again
		s.redirect(w, r, "/admin/users", done(msg))
	}
}
