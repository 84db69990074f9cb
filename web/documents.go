package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/db"
)

// rawDocument serves a document's text as a plain-text download, never as HTML.
func (s *server) rawDocument(w http.ResponseWriter, r *http.Request) {
	id, ok := idParam(r, "doc")
	if !ok {
		s.fail(w, r, notFound("document"))
		return
	}
	d, err := s.store.Document(r.Context(), id)
	if errors.Is(err, db.ErrNotFound) {
		err = notFound("document")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	safe := strings.Map(func(r rune) rune {
		if r < 0x20 || r == '"' || r == '\\' || r == '/' || r > 0x7e {
			return '_'
		}
		return r
	}, d.ExtID)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+safe+`.txt"`)
	w.Write([]byte(d.Text))
}
