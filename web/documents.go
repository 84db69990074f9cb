package web

import (
	"net/http"
	"strings"
)

// rawDocument serves a document's text as a plain-text download, never as HTML.
func (s *server) rawDocument(w http.ResponseWriter, r *http.Request) {
	d, err := loadByID(r, "doc", "document", s.store.Document)
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
