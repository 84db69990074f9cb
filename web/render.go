package web

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/a-h/templ"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

func (s *server) page(r *http.Request, title string) templates.Page {
	p := templates.Page{Title: title, Nonce: nonceOf(r), Version: s.version, Static: staticVersion, Notice: noticeOf(r).Notice}
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
	s.writeBuffered(w, r, status, c.Render)
}

// renderFragment writes only the named fragments of c (templ.RenderFragments), for a
// page that swaps part of itself in place, buffered like render.
func (s *server) renderFragment(w http.ResponseWriter, r *http.Request, status int, c templ.Component, names ...any) {
	s.writeBuffered(w, r, status, func(ctx context.Context, buf io.Writer) error {
		return templ.RenderFragments(ctx, buf, c, names...)
	})
}

// writeBuffered runs render into a buffer, then sets the status and writes the HTML; a
// failure is logged and answered 500 with the request id, nothing of the page sent.
func (s *server) writeBuffered(w http.ResponseWriter, r *http.Request, status int, render func(context.Context, io.Writer) error) {
	var buf bytes.Buffer
	if err := render(context.WithoutCancel(r.Context()), &buf); err != nil {
		id := requestIDOf(r)
		s.log.Error("render", "err", err, "path", r.URL.Path, "request_id", id)
		http.Error(w, internalMessage(id), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
