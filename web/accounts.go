package web

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Accounts come to be in two ways: the one-time setup link makes the first admin, and
// an invite link makes anyone else with the role it offers.

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
	s.createAccount(w, r, view, func(name, hash string) (db.User, error) {
		u, err := s.store.CreateFirstAdmin(r.Context(), name, hash)
		if errors.Is(err, db.ErrConflict) {
			s.setup.clear()
			return u, &pageError{http.StatusConflict, "Setup is done already. Sign in instead."}
		}
		if err == nil {
			s.setup.clear()
		}
		return u, err
	})
}

// invite looks up the {token} of the URL: a used, expired or unknown link is a 404.
func (s *server) invite(r *http.Request) (string, db.Invite, error) {
	token := chi.URLParam(r, "token")
	inv, err := s.store.InviteByToken(r.Context(), auth.HashToken(token))
	if errors.Is(err, db.ErrNotFound) {
		return "", inv, &pageError{http.StatusNotFound, "This invite link is not valid: it may have been used or have expired. Ask for a new one."}
	}
	return token, inv, err
}

func (s *server) inviteView(r *http.Request, token string, inv db.Invite) templates.SignIn {
	return templates.SignIn{Page: s.page(r, "Join"), Mode: "invite", Action: "/invite/" + token, Role: string(inv.Role), By: inv.CreatedBy}
}

func (s *server) showInvite(w http.ResponseWriter, r *http.Request) {
	token, inv, err := s.invite(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.SignInPage(s.inviteView(r, token, inv)))
}

func (s *server) acceptInvite(w http.ResponseWriter, r *http.Request) {
	token, inv, err := s.invite(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.createAccount(w, r, s.inviteView(r, token, inv), func(name, hash string) (db.User, error) {
		u, err := s.store.AcceptInvite(r.Context(), auth.HashToken(token), name, hash)
		switch {
		case errors.Is(err, db.ErrConflict):
			return u, &pageError{http.StatusConflict, "That name is taken; choose another."}
		case errors.Is(err, auth.ErrLookalikeName):
			return u, &pageError{http.StatusConflict, "That name looks like the name of an existing account (letters that look alike count as the same); choose another."}
		case errors.Is(err, db.ErrNotFound):
			return u, &pageError{http.StatusNotFound, "This invite link was used a moment ago."}
		}
		return u, err
	})
}

// createAccount reads and checks the name and password of an account being made (setup
// or invite), hashes the password, has create store the account and signs the new
// user in. What the person can fix shows on the form in view.
func (s *server) createAccount(w http.ResponseWriter, r *http.Request, view templates.SignIn, create func(name, hash string) (db.User, error)) {
	name, pw := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("password")
	view.Name = name
	onForm := func(status int, msg string) {
		view.Error = msg
		s.render(w, r, status, templates.SignInPage(view))
	}
	// Names that rule-made and imported labels carry are no account's (issue 11); nor
	// are the program's actor names, invisible characters, or mixed alphabets (issue 25).
	if err := errors.Join(auth.CheckName(name), labels.CheckAccountName(name), auth.CheckNewPassword(name, pw)); err != nil {
		s.failOn(w, r, badInput(err), onForm)
		return
	}
	hash, err := auth.HashPassword(pw, s.kdf)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	u, err := create(name, hash)
	if err == nil {
		err = s.startSession(w, r, u)
	}
	if err != nil {
		s.failOn(w, r, err, onForm)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
