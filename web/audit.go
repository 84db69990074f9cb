package web

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// The audit log, for admins: every event with names instead of ids and its details as
// text, and whether the hash chain still verifies (naming the first broken entry).
// Approvers see a manifest's own events on the manifest page.

// auditLimit is how many of the newest events the page shows.
const auditLimit = 500

// showAudit lists the newest audit events and verifies the chain, against a head kept
// elsewhere when the query gives one (?head=HASH&entries=N, as a sign-off record
// publishes it).
func (s *server) showAudit(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	kept, err := keptHead(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	check, err := s.store.VerifyAudit(ctx, kept)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	events, err := s.store.AuditLog(ctx, auditLimit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	names, err := s.store.UserNames(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := templates.AuditLog{Page: s.page(r, "Audit log"), DB: s.commandDB(), Checked: check.Rows, Intact: check.Intact(), BrokenAt: check.BrokenAt,
		Problem: check.Problem, Head: check.Head, Limit: auditLimit, KeptHash: kept.Hash, KeptAt: check.KeptAt}
	if kept.Entries != 0 {
		v.KeptEntries = strconv.Itoa(kept.Entries)
	}
	for _, e := range events {
		v.Rows = append(v.Rows, eventRow(e, names))
	}
	s.render(w, r, http.StatusOK, templates.AuditLogPage(v))
}

// keptHead reads the head a person checks the chain against: a SHA-256 in hex, and
// optionally the number of entries it was published with.
func keptHead(q url.Values) (review.AuditHead, error) {
	var h review.AuditHead
	h.Hash = strings.ToLower(strings.TrimSpace(q.Get("head")))
	if h.Hash == "" {
		return h, nil
	}
	if len(h.Hash) != 64 || strings.Trim(h.Hash, "0123456789abcdef") != "" {
		return h, &formError{field: "head", msg: "want the 64 hex digits of a chain head, as a sign-off record or this page shows it"}
	}
	if e := q.Get("entries"); e != "" {
		n, ok := parseWhole(e)
		if !ok || n < 1 {
			return h, &formError{field: "entries", msg: "want a whole number of entries of at least 1"}
		}
		h.Entries = n
	}
	return h, nil
}

// eventRow is an audit event as a person reads it: the actor's current name, the action
// in words, the subject named and linked, the details as text.
func eventRow(e db.AuditEvent, names map[int64]string) templates.EventRow {
	row := templates.EventRow{ID: e.ID, At: e.At.UTC().Format("2006-01-02 15:04:05"), Actor: e.Actor, Action: actionText(e.Action),
		Detail: detailText(e.Detail), Hash: e.Hash}
	// Some services record their actor as "user:ID" (a sweep's start): that is the
	// account, not an earlier name of it.
	if n, ok := names[e.UserID]; ok && n != e.Actor {
		row.Actor = n
		if e.Actor != fmt.Sprintf("user:%d", e.UserID) {
			row.Actor = fmt.Sprintf("%s (was %s)", n, e.Actor)
		}
	}
	if row.Actor == "" {
		row.Actor = "system"
	}
	row.Subject, row.SubjectURL = subjectText(e.Subject, names)
	return row
}

// actions names the recorded actions in words.
var actions = map[string]string{
	"login":                           "signed in",
	"login.failed":                    "failed to sign in",
	"login.lock":                      "met a sign-in limit",
	"logout":                          "signed out",
	"user.setup":                      "created the first admin account",
	"user.create":                     "created an account",
	"user.role":                       "changed a role",
	"user.disable":                    "disabled an account",
	"user.enable":                     "enabled an account",
	"invite.create":                   "invited someone",
	"invite.accept":                   "joined by invitation",
	"dataset.import":                  "imported a dataset",
	"campaign.update":                 "changed campaign settings",
	"pairs.sample":                    "drew pairs to label",
	"labels.add":                      "added labels",
	"manifest.prepare":                "prepared a manifest",
	"manifest.decide":                 "decided on a removal",
	"manifest.decide-cluster":         "decided on a cluster",
	"manifest.bulk-approve":           "approved low-risk clusters in bulk",
	"manifest.keeper":                 "changed a keeper",
	"manifest.cut":                    "cut a chain",
	"manifest.undo":                   "undid a decision",
	"manifest.request-signoff":        "requested sign-off",
	"manifest.settings":               "changed manifest settings",
	"manifest.review":                 "reviewed a manifest",
	"manifest.signoff":                "signed a manifest off",
	"manifest.export":                 "exported a manifest",
	"manifest.revoke":                 "revoked a manifest",
	"manifest.restore":                "restored a removed document",
	"manifest.refused":                "was refused on a manifest",
	"manifest.approve-outside-sample": "approved the clusters outside an audit's sample",
	"manifest.audit":                  "requested an audit",
	"manifest.audit-top-up":           "added pairs to an audit",
	"label.adjudicate":                "adjudicated a pair",
	"labels.import":                   "imported labels",
	"sweep.start":                     "started a sweep",
	"sweep.resume":                    "resumed a sweep",
	"dedup-job.start":                 "started a whole-corpus run",
	"dedup-job.resume":                "resumed a whole-corpus run",
	"invite.revoke":                   "revoked an invite",
	"user.unlock":                     "cleared a sign-in lockout",
	"team.settings":                   "changed the team's rules",
	"api_token.create":                "made an API token",
	"api_token.revoke":                "revoked an API token",
	"search_index.create":             "made a search index",
}

func actionText(a string) string { return cmp.Or(actions[a], a) }

// subjectText names what an event is about ("user:2" becomes the user's name) and
// links to it where there is a page.
func subjectText(subject string, names map[int64]string) (text, url string) {
	kind, idText, ok := strings.Cut(subject, ":")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil {
		return subject, ""
	}
	switch kind {
	case "user":
		if n, ok := names[id]; ok {
			return "user " + n, ""
		}
	case "manifest":
		return "manifest " + idText, "/manifests/" + idText
	case "campaign":
		return "campaign " + idText, "/campaigns/" + idText
	case "sweep":
		return "sweep " + idText, "/sweeps/" + idText
	case "dedup-job":
		return "whole-corpus run " + idText, "/dedup-jobs/" + idText
	case "dataset":
		return "dataset " + idText, ""
	}
	return kind + " " + idText, ""
}

// detailText writes an event's JSON details as text: "key: value" in key order, a
// {"before", "after"} pair as "before → after", lists comma-separated, numbers as they
// read best.
func detailText(detail string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(detail), &m); err != nil || len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// The summary reads first, when there is one.
	first := func(k string) int {
		if k == "summary" {
			return 0
		}
		return 1
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(first(a), first(b)), cmp.Compare(a, b)) })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if k == "summary" {
			parts = append(parts, valueText(m[k]))
			continue
		}
		parts = append(parts, strings.ReplaceAll(k, "_", " ")+": "+valueText(m[k]))
	}
	return strings.Join(parts, "; ")
}

// hashLike matches the content hashes details carry: manifest (m), dataset (d) or bare.
var hashLike = regexp.MustCompile(`^[md]?[0-9a-f]{64}$`)

func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case string:
		if hashLike.MatchString(x) {
			return review.Short(x) + "…" // the full hash is on the manifest and in the sign-off record
		}
		return x
	case bool:
		return yesNo(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', 4, 64)
	case []any:
		parts := make([]string, len(x))
		for i, y := range x {
			parts[i] = valueText(y)
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		if b, ok := x["before"]; ok && len(x) == 2 {
			if a, ok := x["after"]; ok {
				return valueText(b) + " → " + valueText(a)
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strings.ReplaceAll(k, "_", " ") + " " + valueText(x[k])
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprint(v)
}
