package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// The Team page's search API section: admins make search indexes from signed-off
// manifests, and make and revoke the API tokens that open the search endpoint.

// searchAPIView is the section's view model.
func (s *server) searchAPIView(r *http.Request) (templates.SearchAPI, error) {
	ctx := r.Context()
	n := noticeOf(r)
	v := templates.SearchAPI{TokenName: formValue(r, "token_name", ""), IndexName: formValue(r, "index_name", ""),
		NewToken: n.APIToken, NewTokenName: n.APITokenName}
	tokens, err := s.store.APITokens(ctx)
	if err != nil {
		return v, err
	}
	for _, t := range tokens {
		row := templates.APITokenRow{ID: t.ID, Name: t.Name, By: t.CreatedBy, Created: t.CreatedAt.UTC().Format("2006-01-02 15:04"), LastUsed: "never"}
		if !t.LastUsed.IsZero() {
			row.LastUsed = t.LastUsed.UTC().Format("2006-01-02 15:04")
		}
		if t.Revoked {
			row.Revoked = fmt.Sprintf("revoked %s by %s", t.RevokedAt.UTC().Format("2006-01-02 15:04"), t.RevokedBy)
		}
		v.Tokens = append(v.Tokens, row)
	}
	indexes, err := s.store.SearchIndexes(ctx)
	if err != nil {
		return v, err
	}
	for _, x := range indexes {
		p := x.Params
		v.Indexes = append(v.Indexes, templates.SearchIndexRow{ID: x.ID, Name: x.Name, Manifest: x.ManifestID, Docs: x.Docs,
			Config:   fmt.Sprintf("%s, %s, threshold %g, %s verification", p.Spec.String(), p.Shape, p.Threshold, p.Verification),
			Endpoint: fmt.Sprintf("/api/v1/indexes/%d/search", x.ID), Revoked: x.ManifestState == review.Revoked})
	}
	list, err := s.store.Manifests(ctx, 0)
	if err != nil {
		return v, err
	}
	for _, m := range list {
		if m.State == review.SignedOff || m.State == review.Exported {
			v.Manifests = append(v.Manifests, templates.Option{Value: strconv.FormatInt(m.ID, 10),
				Label: fmt.Sprintf("%d: %s v%d, %s, t=%g", m.ID, m.Dataset.Name, m.Dataset.Version, m.Params.Shape, m.Params.Threshold)})
		}
	}
	return v, nil
}

// createAPIToken makes a search API token and shows it, once, on the Team page: only its
// hash is stored.
func (s *server) createAPIToken(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.PostFormValue("token_name"))
	if name == "" || len(name) > 100 {
		s.failOnUsers(w, r, &formError{field: "Token name", msg: "give the token a name of 1 to 100 characters (say which pipeline uses it)"})
		return
	}
	token, hash := auth.NewAPIToken()
	t, err := s.store.CreateAPIToken(r.Context(), *userOf(r), name, hash)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The token shows inside the Search API section, where the page lands: a notice at
	// the top of the page would be scrolled out of sight.
	n := done(fmt.Sprintf("Made API token %q: copy it from the Search API section below, where it is shown once.", t.Name))
	n.APIToken, n.APITokenName = token, t.Name
	s.redirect(w, r, "/admin/users#new-api-token", n)
}

// revokeAPIToken revokes a token: the next request with it is refused.
func (s *server) revokeAPIToken(w http.ResponseWriter, r *http.Request) {
	id, ok := idParam(r, "apiToken")
	if !ok {
		s.fail(w, r, notFound("API token"))
		return
	}
	t, err := s.store.RevokeAPIToken(r.Context(), *userOf(r), id)
	s.tokens.forget()
	if errors.Is(err, db.ErrNotFound) {
		err = &pageError{http.StatusNotFound, "No such API token, or it was revoked already."}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.redirect(w, r, "/admin/users#search-api", done(fmt.Sprintf("Revoked API token %q: requests with it are refused from now on.", t.Name)))
}

// createSearchIndex makes an empty search index under a signed-off manifest's
// configuration.
func (s *server) createSearchIndex(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.PostFormValue("index_name"))
	mid, ok := parseID(r.PostFormValue("manifest"))
	var err error
	switch {
	case !ok:
		err = &formError{field: "Manifest", msg: "choose a signed-off manifest"}
	case name == "" || len(name) > 100:
		err = &formError{field: "Index name", msg: "give the index a name of 1 to 100 characters"}
	}
	if err != nil {
		s.failOnUsers(w, r, err)
		return
	}
	x, err := s.store.CreateSearchIndex(r.Context(), *userOf(r), name, mid)
	if errors.Is(err, db.ErrNotFound) {
		err = &formError{field: "Manifest", msg: fmt.Sprintf("there is no manifest %d", mid)}
	}
	if err != nil {
		s.failOnUsers(w, r, err)
		return
	}
	s.redirect(w, r, "/admin/users#search-api", done(fmt.Sprintf("Made search index %d, %q, under manifest %d's signed-off configuration: POST /api/v1/indexes/%d/search.", x.ID, x.Name, mid, x.ID)))
}
