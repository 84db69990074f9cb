package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// A label upload runs as a job of its owner's: others cannot see it, admins can; when
// it has finished its page sends the owner to the campaign saying what it did. Labels it
// brought show as imported by the uploader from the file, under the source the file
// named, never as that person's own; an adjudication row becomes the uploader's.
func TestLabelUploadIsAJobAndNamesItsImporter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaignDocsOnly()
	admin, rev, other := f.admin, f.signIn("reviewer"), f.signInAs("reviewer2", auth.Reviewer)
	alice := f.signIn("annotator") // an account the file names, as "annotator"
	f.admin = rev                  // f.upload sends f.admin's cookie
	rec := f.upload("/labels", "team.csv", "a,b,category,duplicate,annotator,note,kind\n"+
		"a,b,minor,,annotator,from the file,\n"+
		"a,d,translation,,demo-rules,,\n"+
		"a,b,exact,,annotator,settled,adjudication\n", map[string]string{"dataset": "d", "create": "1"})
	f.admin = admin
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/label-imports/labels-") {
		t.Fatalf("label upload answered %d to %q; want 303 to its job's page", rec.Code, loc)
	}
	id := strings.TrimPrefix(loc, "/label-imports/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := f.jobs.Wait(ctx, id); err != nil {
		t.Fatal(err)
	}
	// Someone else's job is not there for them; an admin sees it.
	for _, tc := range []struct {
		who  string
		c    *http.Cookie
		want int
	}{{"another reviewer", other, http.StatusNotFound}, {"an admin", f.admin, http.StatusSeeOther}} {
		if res, _ := get(t, f.h, loc, tc.c); res.StatusCode != tc.want {
			t.Errorf("%s GET %s: %d; want %d", tc.who, loc, res.StatusCode, tc.want)
		}
	}
	if rec := f.do("POST", loc+"/cancel", other, url.Values{}); rec.Code != http.StatusNotFound {
		t.Errorf("another reviewer cancelling someone's import: %d; want 404", rec.Code)
	}
	res, _ := get(t, f.h, loc, rev)
	to := res.Header.Get("Location")
	_, page := get(t, f.h, to, rev)
	if !strings.HasPrefix(to, "/campaigns/1?") || !strings.Contains(page, "3 new, 0 unchanged, 0 rejected of 3 rows") {
		t.Errorf("the finished job sent its owner to %s:\n%s", to, page)
	}
	// The owner cancelling after the end is told there was nothing to cancel.
	if _, body := f.follow(f.do("POST", loc+"/cancel", rev, url.Values{}), rev); !strings.Contains(body, "nothing to cancel") {
		t.Errorf("cancelling a finished import does not say it had ended")
	}

	// The pair page (a reviewer sees everyone's labels once they decided; the history
	// shows every event).
	_, pair := get(t, f.h, "/campaigns/1/pairs/1", rev)
	for _, want := range []string{
		"imported by reviewer from file team.csv (source annotator)",
		"reviewer (imported from file team.csv)",
	} {
		if !strings.Contains(pair, want) {
			t.Errorf("the pair page lacks %q", want)
		}
	}
	if strings.Contains(pair, "> annotator label") || strings.Contains(pair, "<li>annotator:") {
		t.Errorf("the pair page shows the imported label as the annotator account's own:\n%s", pair)
	}
	// The annotator account's own view: the imported row is not theirs (no label of
	// theirs prefills the form).
	_, mine := get(t, f.h, "/campaigns/1/pairs/1", alice)
	if strings.Contains(mine, "from the file") {
		t.Errorf("the annotator sees the imported row as their own label")
	}
}

// A label upload that is refused (here: a campaign that is not there) sends its owner
// back to the form with the reason and what they chose, once the job has read the file.
func TestRefusedLabelUploadReturnsToTheForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaignDocsOnly()
	rev := f.signIn("reviewer")
	f.admin = rev // f.upload sends f.admin's cookie
	rec := f.upload("/labels", "l.csv", "a,b,category\na,b,minor\n", map[string]string{"dataset": "d", "campaign": "gold"})
	loc, body := f.follow(rec, rev)
	if !strings.HasPrefix(loc, "/labels/new?") || !strings.Contains(body, "no such campaign &#34;gold&#34;") || !strings.Contains(body, `value="gold"`) {
		t.Errorf("refused label upload went to %s:\n%s", loc, body)
	}
}

// The demo's rule labels are named labels.RuleAnnotator, which no account can take, on
// the setup page or through an invite, nor any name an imported label carries.
func TestReservedNamesRefusedForAccounts(t *testing.T) {
	t.Parallel()
	if demo.Annotator != labels.RuleAnnotator {
		t.Fatalf("demo.Annotator = %q; labels.RuleAnnotator = %q: the reserved name must be the demo's", demo.Annotator, labels.RuleAnnotator)
	}
	f := newFixture(t, 1<<20)
	rec := f.do("POST", "/admin/invites", f.admin, url.Values{"role": {"annotator"}})
	_, body := f.follow(rec, f.admin)
	m := secretRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no invite link")
	}
	link := m[1][strings.Index(m[1], "/invite/"):]
	for _, name := range []string{"demo-rules", "Demo-Rules", "import:alice"} {
		rec := f.do("POST", link, nil, url.Values{"name": {name}, "password": {"a long enough password"}})
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "reserved") {
			t.Errorf("accepting an invite as %q: %d; want 422 saying the name is reserved", name, rec.Code)
		}
	}
	if rec := f.do("POST", link, nil, url.Values{"name": {"kim"}, "password": {"a long enough password"}}); rec.Code != http.StatusSeeOther {
		t.Errorf("accepting the invite as kim: %d; want 303", rec.Code)
	}
}

// An invite cannot be accepted under a name that passes for the command line's actor,
// hides invisible characters, mixes look-alike alphabets or reads as an existing
// account's name; a full-width name is stored as it reads, and signs in either way.
func TestLookalikeNamesRefusedOnInvite(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	invite := func() string {
		rec := f.do("POST", "/admin/invites", f.admin, url.Values{"role": {"annotator"}})
		_, body := f.follow(rec, f.admin)
		m := secretRE.FindStringSubmatch(body)
		if m == nil {
			t.Fatal("no invite link")
		}
		return m[1][strings.Index(m[1], "/invite/"):]
	}
	link := invite()
	for _, tc := range []struct {
		name   string
		status int
		says   string
	}{
		{"cli:root", http.StatusUnprocessableEntity, "cannot contain a colon"},
		{"ad\u200bmin", http.StatusUnprocessableEntity, "invisible characters"},
		{"аdmin", http.StatusUnprocessableEntity, "mixes alphabets"}, // a Cyrillic а
		{"adm1n", http.StatusConflict, "looks like the name of an existing account"},
		{"ADMIN", http.StatusConflict, "That name is taken"},
	} {
		rec := f.do("POST", link, nil, url.Values{"name": {tc.name}, "password": {"a long enough password"}})
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.says) {
			t.Errorf("accepting an invite as %q: %d; want %d saying %q", tc.name, rec.Code, tc.status, tc.says)
		}
	}
	if rec := f.do("POST", link, nil, url.Values{"name": {"ｋｉｍ"}, "password": {"a long enough password"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("accepting the invite as ｋｉｍ (full width): %d; want 303", rec.Code)
	}
	if u, err := f.store.UserByName(context.Background(), "kim"); err != nil || u.Name != "kim" {
		t.Errorf("the account: %+v, %v; want it stored as kim", u, err)
	}
	for _, name := range []string{"kim", "ｋｉｍ"} {
		if rec := f.tryLogin(name, "a long enough password", "192.0.2.9"); rec.Code != http.StatusSeeOther {
			t.Errorf("signing in as %q: %d; want 303", name, rec.Code)
		}
	}
}
