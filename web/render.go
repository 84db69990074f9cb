package web

import (
	"bytes"
	"context"
	"net/http"

	"github.com/a-h/templ"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

func (s *server) page(r *http.Request, title string) templates.Page {
	p := templates.Page{Title: title, Nonce: nonceOf(r), Version: s.version, Notice: noticeOf(r).Notice}
	if u := userOf(r); u != nil {
		p.User, p.Role, p.Admin = u.Name, string(u.Role), u.Role.Can(auth.ManageUsers)
		switch {
		case u.Role.Can(auth.ImportData):
			p.Import = "/datasets/new"
		case u.Role.Can(auth.ImportLabels):
			p.Import = "/labels/new"
		}
	}
	return p
}

// render writes c with status, buffering first so a rendering failure becomes a clean 500.
// It renders whether or not the client is still there (a page is rendered in memory:
// a client gone is no rendering failure).
func (s *server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(context.WithoutCancel(r.Context()), &buf); err != nil {
		id := requestIDOf(r)
		s.log.Error("render", "err", err, "path", r.URL.Path, "request_id", id)
		http.Error(w, internalMessage(id), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
