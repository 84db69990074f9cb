package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// The Team page: admins invite people, set roles, disable and enable accounts.

const inviteTTL = 7 * 24 * time.Hour

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
	now := s.now()
	for _, u := range users {
		row := templates.UserRow{ID: u.ID, Name: u.Name, Role: string(u.Role), Disabled: u.Disabled,
			Created: u.CreatedAt.Format("2006-01-02"), IsSelf: me != nil && me.ID == u.ID}
		if lk, locked := s.logins.Locked(u.Name, now); locked {
			row.Locked = lockText(lk)
		}
		v.Users = append(v.Users, row)
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
	s.failOn(w, r, err, func(status int, msg string) {
		v, err := s.usersView(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		v.Error = msg
		s.render(w, r, status, templates.UsersPage(v))
	})
}

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
	v, err := s.usersView(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	scheme := "http"
	if s.secure(r) {
		scheme = "https"
	}
	v.InviteLink, v.InviteRole = fmt.Sprintf("%s://%s/invite/%s", scheme, r.Host, token), string(role)
	s.render(w, r, http.StatusOK, templates.UsersPage(v))
}

// userParam reads the {id} of the URL.
func userParam(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		return 0, notFound("user")
	}
	return id, nil
}

func (s *server) setUserRole(w http.ResponseWriter, r *http.Request) {
	id, err := userParam(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	role, err := auth.ParseRole(r.PostFormValue("role"))
	if err != nil {
		s.failOnUsers(w, r, &formError{msg: "Choose a user and a role."})
		return
	}
	s.changedUser(w, r, s.store.SetRole(r.Context(), *userOf(r), id, role))
}

func (s *server) setUserDisabled(disabled bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := userParam(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if me := userOf(r); me.ID == id && disabled {
			s.failOnUsers(w, r, &formError{msg: "You cannot disable yourself."})
			return
		}
		s.changedUser(w, r, s.store.SetDisabled(r.Context(), *userOf(r), id, disabled))
	}
}

// lockText says how an account is locked out of signing in, for the Team page.
func lockText(lk auth.Lock) string {
	until := lk.Until.UTC().Format("15:04 UTC")
	switch {
	case lk.Account:
		return "sign-in locked from every address until " + until
	case lk.Addresses == 1:
		return "sign-in locked from 1 address until " + until
	default:
		return fmt.Sprintf("sign-in locked from %d addresses until %s", lk.Addresses, until)
	}
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
		s.changedUser(w, r, err)
		return
	}
	lk, locked := s.logins.Locked(u.Name, s.now())
	s.logins.Unlock(u.Name)
	detail := map[string]any{"was_locked": locked}
	if locked {
		detail["account"], detail["addresses"] = lk.Account, lk.Addresses
	}
	s.changedUser(w, r, s.store.AuditBy(r.Context(), *userOf(r), "user.unlock", fmt.Sprintf("user:%d", u.ID), detail))
}

// changedUser answers a change to an account: back to the Team page, or what went wrong.
func (s *server) changedUser(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, db.ErrNotFound):
		s.fail(w, r, notFound("user"))
	case err != nil:
		s.failOnUsers(w, r, err)
	default:
		http.Redirect(w, r, "/admin/users", http.StatusSeeOther)
	}
}
