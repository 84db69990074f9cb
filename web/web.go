// Package web is Dedup Studio's HTTP face: chi routes, handlers that parse input, call the
// domain packages and render templ views, middleware, and the embedded static files.
package web

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
)

// Deps is what the handlers need from the outside world.
type Deps struct {
	Log     *slog.Logger
	Version string
	Store   *db.DB
	Jobs    *jobs.Registry
	Now     func() time.Time // defaults to time.Now
	// MaxUpload caps an uploaded sample, in bytes; default 512 MB.
	MaxUpload int64
}

// maxBody caps every other request body.
const maxBody = 1 << 20

type server struct {
	log       *slog.Logger
	version   string
	store     *db.DB
	jobs      *jobs.Registry
	now       func() time.Time
	maxUpload int64
	tmpDir    string
}

// New returns the application's handler.
func New(d Deps) http.Handler {
	s := &server{log: d.Log, version: d.Version, store: d.Store, jobs: d.Jobs, now: d.Now, maxUpload: d.MaxUpload}
	if s.maxUpload <= 0 {
		s.maxUpload = 512 << 20
	}
	if s.jobs == nil {
		s.jobs = jobs.NewRegistry()
	}
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
	r.Use(s.requestID, s.logRequests, s.recoverPanics, securityHeaders, crossOriginProtection, limitBodies)
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

	r.Get("/datasets/new", s.showUpload)
	r.Post("/datasets", s.uploadDataset)
	r.Post("/labels", s.uploadLabels)
	r.Get("/imports/{job}", s.showImport)
	r.Post("/imports/{job}/cancel", s.cancelImport)
	return r
}

func (s *server) health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}
