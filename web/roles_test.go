package web

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
)

var (
	hrefRE = regexp.MustCompile(`href="([^"]*)"`)
	formRE = regexp.MustCompile(`<form method="post" action="([^"]*)"`)
	numRE  = regexp.MustCompile(`/\d+(/|$|\?)`)
	hexRE  = regexp.MustCompile(`/invites/[0-9a-f]+/`)
)

// permOf finds the permission a POST to path needs in the role x route matrix.
func permOf(path string) (auth.Permission, bool) {
	p, _, _ := strings.Cut(path, "?")
	p = numRE.ReplaceAllString(p, "/1$1")
	p = numRE.ReplaceAllString(p, "/1$1") // adjacent ids
	p = hexRE.ReplaceAllString(p, "/invites/00ff/")
	for _, rt := range routeMatrix {
		if rt.method == "POST" && strings.SplitN(rt.path, "?", 2)[0] == p {
			return rt.perm, true
		}
	}
	return "", false
}

// Issue 8 item 1: every role sees only the links and buttons it can use. Signed in as
// each role, the test follows every link of every page it reaches from the start page
// (and a pair page) and fails on one that answers 403; every form it finds posts to a
// route the role may use.
func TestEveryLinkAndFormFitsTheRole(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	// A disagreement (for the adjudication links), a pending invite, a dataset without a
	// campaign (for the start button), an import job.
	ann := f.signIn("annotator")
	f.label(ann, "/campaigns/1/pairs/1", url.Values{"category": {"different"}})
	f.do("POST", "/admin/invites", f.admin, url.Values{"role": {"annotator"}})
	f.waitJob(f.upload("/datasets", "fresh.jsonl", `{"id":"q","text":"a b c"}`+"\n"+`{"id":"r","text":"a b d"}`+"\n", nil).Header().Get("Location"))
	for _, role := range auth.Roles {
		t.Run(string(role), func(t *testing.T) {
			c := f.signIn(string(role))
			seen := map[string]bool{}
			queue := []string{"/", "/campaigns/1/pairs/1", "/campaigns/1"}
			forms := 0
			for len(queue) > 0 && len(seen) < 80 {
				page := queue[0]
				queue = queue[1:]
				if seen[page] {
					continue
				}
				seen[page] = true
				res, body := get(t, f.h, page, c)
				for res.StatusCode == http.StatusSeeOther {
					page = res.Header.Get("Location")
					if strings.HasPrefix(page, "/login") {
						break
					}
					res, body = get(t, f.h, page, c)
				}
				if res.StatusCode == http.StatusForbidden {
					t.Errorf("%s: GET %s answers 403; the page that links it should not", role, page)
					continue
				}
				if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
					continue
				}
				for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
					link, _, _ := strings.Cut(m[1], "#")
					link = strings.ReplaceAll(link, "&amp;", "&")
					if link == "" || !strings.HasPrefix(link, "/") || strings.HasPrefix(link, "//") || strings.HasPrefix(link, "/static/") {
						continue
					}
					if !seen[link] {
						queue = append(queue, link)
					}
				}
				for _, m := range formRE.FindAllStringSubmatch(body, -1) {
					action := strings.ReplaceAll(m[1], "&amp;", "&")
					if action == "/logout" {
						continue
					}
					perm, ok := permOf(action)
					if !ok {
						t.Errorf("%s: %s has a form posting to %s, which is not in the route matrix", role, page, action)
						continue
					}
					forms++
					if !role.Can(perm) {
						t.Errorf("%s: %s shows a form posting to %s, which needs %s", role, page, action, perm)
					}
				}
			}
			if len(seen) < 5 {
				t.Errorf("%s: reached only %d pages", role, len(seen))
			}
			t.Logf("%s: %d pages, %d forms", role, len(seen), forms)
		})
	}
}

// Where a role lacks a step, the page says who can take it; a fresh dataset's empty
// state tells what to do next in the browser, and the first admin can start labeling.
func TestPagesSayWhoCan(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	// An empty database: admins upload from the browser; others are told who can.
	if _, body := get(t, f.h, "/", f.admin); !strings.Contains(body, `href="/datasets/new" data-testid="upload-first"`) {
		t.Error("an admin's empty start page has no Upload button")
	}
	if _, body := get(t, f.h, "/", f.signIn("reviewer")); !strings.Contains(body, `data-testid="who-imports">Your role does not import documents: admins do.`) {
		t.Error("a reviewer's empty start page does not say who imports")
	}
	f.withCampaignDocsOnly() // a dataset without labels or campaign
	for _, tc := range []struct {
		role, path string
		want       []string
		not        []string
	}{
		{"admin", "/", []string{`data-testid="start-campaign-d"`, "Start labeling: the campaign page draws pairs"}, []string{"go run ./cmd/server import-labels"}},
		{"annotator", "/", []string{`data-testid="who-starts">Reviewers and admins start labeling campaigns`}, []string{`start-campaign-d`, `/datasets/new`, `/labels/new`}},
		{"reviewer", "/", []string{`data-testid="start-campaign-d"`, `href="/labels/new"`}, []string{`/datasets/new`}},
	} {
		_, body := get(t, f.h, tc.path, f.signIn(tc.role))
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s on %s: page lacks %q", tc.role, tc.path, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(body, w) {
				t.Errorf("%s on %s: page has %q", tc.role, tc.path, w)
			}
		}
	}
	// The first admin starts labeling and is then offered the queue.
	list, _ := f.store.Datasets(context.Background())
	rec := f.do("POST", "/datasets/"+itoa64(list[0].ID)+"/campaigns", f.admin, url.Values{})
	if _, body := f.follow(rec, f.admin); !strings.Contains(body, `data-testid="start-labeling"`) || !strings.Contains(body, `data-testid="sample-form"`) {
		t.Error("the admin's new campaign page offers no labeling or drawing")
	}
	for _, tc := range []struct {
		role string
		want []string
		not  []string
	}{
		{"annotator", []string{`data-testid="who-draws">Your role does not draw pairs or change the campaign's settings: reviewers and admins do.`,
			`data-testid="adjudication-blind"`, `data-testid="start-labeling"`}, []string{"labels.csv", `data-testid="sample-form"`}},
		{"approver", []string{`data-testid="who-labels">Your role does not label pairs: annotators, reviewers and admins do.`, "labels.csv"},
			[]string{`data-testid="start-labeling"`, `data-testid="sample-form"`}},
		{"admin", []string{`data-testid="start-labeling"`, `data-testid="sample-form"`, "labels.csv"}, []string{"who-labels", "who-draws"}},
	} {
		_, body := get(t, f.h, "/campaigns/1", f.signIn(tc.role))
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s on the campaign page: lacks %q", tc.role, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(body, w) {
				t.Errorf("%s on the campaign page: has %q", tc.role, w)
			}
		}
	}
	// The admin labels: the queue serves them (it answered 403 before).
	if rec := f.do("GET", "/campaigns/1/next", f.admin, nil); rec.Code == http.StatusForbidden {
		t.Error("the admin's queue answers 403")
	}
}
