// Package web is Dedup Studio's HTTP face: chi routes, handlers that parse input, call the
// domain packages and render templ views, middleware, and the embedded static files.
package web

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// Deps is what the handlers need from the outside world.
type Deps struct {
	Log     *slog.Logger
	Version string
	Now     func() time.Time // defaults to time.Now
}

type server struct {
	log     *slog.Logger
	version string
	now     func() time.Time
}

// New returns the application's handler.
func New(d Deps) http.Handler {
	s := &server{log: d.Log, version: d.Version, now: d.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s.routes()
}

func (s *server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.requestID, s.logRequests, s.recoverPanics, securityHeaders)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.renderError(w, r, http.StatusNotFound, "There is no page at "+r.URL.Path+".")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.renderError(w, r, http.StatusMethodNotAllowed, "This page does not take "+r.Method+" requests.")
	})

	r.Handle("/static/*", staticHandler())
	r.Get("/healthz", s.health)

	r.Get("/", s.showHome)
	r.Get("/shape.svg", s.shapeSVG)
	r.Get("/shape.csv", s.shapeCSV)
	return r
}

func (s *server) health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}
