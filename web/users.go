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
	for _, u := range users {
		v.Users = append(v.Users, templates.UserRow{ID: u.ID, Name: u.Name, Role: string(u.Role), Disabled: u.Disabled,
			Created: u.CreatedAt.Format("2006-01-02"), IsSelf: me != nil && me.ID == u.ID})
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
