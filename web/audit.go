package web

import (
	"net/http"

	"github.com/dedupstudio/dedupstudio/web/templates"
)

// showAudit lists the newest audit events: sign-ins, invites, role changes, imports,
// campaign changes.
func (s *server) showAudit(w http.ResponseWriter, r *http.Request) {
	events, err := s.store.AuditLog(r.Context(), 500)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rows := make([]templates.AuditRow, len(events))
	for i, e := range events {
		rows[i] = templates.AuditRow{At: e.At.UTC().Format("2006-01-02 15:04:05"), Actor: e.Actor, Action: e.Action, Subject: e.Subject, Detail: e.Detail}
	}
	s.render(w, r, http.StatusOK, templates.AuditPage(s.page(r, "Audit log"), rows))
}
