package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Post/Redirect/Get. Every form a signed-in person sends is answered with 303 See Other
// to a page they can reload; what the POST has to say (what it did, what was wrong with
// the input and the input itself, an invite link shown once) travels as a notice: kept
// in memory for a few minutes under a random id that the redirect names (?notice=),
// readable once, and only by the person it was made for.
//
// The sign-in forms (login, setup, invite) answer in place instead: the URL they post
// to is the page's own, and a password is never kept for a redirect.

// noticeTTL is how long a notice waits for its page.
const noticeTTL = 10 * time.Minute

// maxNotices bounds the notices kept; the oldest go first when it is reached.
const maxNotices = 10_000

// notice is what a POST leaves for the page it redirects to.
type notice struct {
	templates.Notice
	Form url.Values // after an error: what the person sent, to fill the form again
	// APIToken and APITokenName: a search API token just made, which the Team page shows
	// once inside its Search API section, where the redirect lands.
	APIToken, APITokenName string
}

type storedNotice struct {
	notice
	user    int64
	expires time.Time
}

// notices holds the notices waiting for their pages.
type notices struct {
	mu    sync.Mutex
	m     map[string]storedNotice
	order []string // ids, oldest first
}

// put keeps n for user and returns its id.
func (ns *notices) put(user int64, n notice, now time.Time) string {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.m == nil {
		ns.m = map[string]storedNotice{}
	}
	// Drop expired and taken notices from the front, and the oldest beyond the bound.
	for len(ns.order) > 0 {
		first, ok := ns.m[ns.order[0]]
		if ok && now.Before(first.expires) && len(ns.order) < maxNotices {
			break
		}
		delete(ns.m, ns.order[0])
		ns.order = ns.order[1:]
	}
	id := randomToken(12)
	ns.m[id] = storedNotice{notice: n, user: user, expires: now.Add(noticeTTL)}
	ns.order = append(ns.order, id)
	return id
}

// take returns the notice id for user, once.
func (ns *notices) take(user int64, id string, now time.Time) (notice, bool) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	n, ok := ns.m[id]
	if !ok || n.user != user || !now.Before(n.expires) {
		return notice{}, false
	}
	delete(ns.m, id) // its id stays in order until put passes it
	return n.notice, true
}

type keyNotice struct{}

// takeNotices puts the notice a GET request's URL names, if it is the signed-in
// person's, in the request context for the page (and the form's values) to show.
func (s *server) takeNotices(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("notice")
		if u := userOf(r); u != nil && id != "" && r.Method == http.MethodGet {
			if n, ok := s.notices.take(u.ID, id, s.now()); ok {
				r = r.WithContext(context.WithValue(r.Context(), keyNotice{}, &n))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// noticeOf returns the request's notice; the zero notice when there is none.
func noticeOf(r *http.Request) notice {
	if n, ok := r.Context().Value(keyNotice{}).(*notice); ok {
		return *n
	}
	return notice{}
}

// redirect answers a POST with 303 See Other to path, leaving n (when not nil) for
// the signed-in person's next view of it.
func (s *server) redirect(w http.ResponseWriter, r *http.Request, path string, n *notice) {
	if u := userOf(r); u != nil && n != nil {
		var fragment string
		path, fragment, _ = strings.Cut(path, "#")
		path = withParam(path, "notice", s.notices.put(u.ID, *n, s.now()))
		if fragment != "" {
			path += "#" + fragment
		}
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// done is a notice saying what a POST did.
func done(text string) *notice { return &notice{Notice: templates.Notice{Text: text}} }

// refused is a notice saying what was wrong, keeping the form's values (an upload's
// small fields are in r.Form only).
func refused(r *http.Request, msg string) *notice {
	form := r.PostForm
	if form == nil {
		form = r.Form
	}
	return &notice{Notice: templates.Notice{Text: msg, Error: true}, Form: form}
}

// formValue is the value the person sent for name with the form that failed, or def.
func formValue(r *http.Request, name, def string) string {
	if f := noticeOf(r).Form; f != nil && f.Has(name) {
		return f.Get(name)
	}
	return def
}
