package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/db"
)

// clippedJS lists what a person cannot reach or read on the page as it is laid out: the
// page scrolling sideways, a scroller that does not say it scrolls (at a phone's width,
// one that scrolls shows its "The table scrolls sideways." hint too), and every control
// (button, field, select, summary, a link in a form, an action cell or styled as a
// button) cut horizontally by the window or by a box that clips it, or whose own words
// are cut (a button's label, a placeholder, the chosen option). Every <details> is opened
// first, so what they hold is checked too. At a phone's width (narrow) a control inside a
// scroller that says it scrolls (data-scroll and an aria-label) may lie past its edge:
// scrolling reaches it. Each problem is reported once per kind of control.
const clippedJS = `((narrow) => {
	document.querySelectorAll("details").forEach(d => d.open = true);
	const W = innerWidth, out = [], seen = new Set();
	const say = (el, what) => {
		const id = el.dataset.testid ? el.dataset.testid.replace(/-[^-]*$/, "-*") : "";
		const key = el.tagName + id + (el.name || "") + what.replace(/[0-9]+/g, "");
		if (seen.has(key)) return;
		seen.add(key);
		const words = (el.innerText || el.value || el.placeholder || "").trim().replace(/\s+/g, " ").slice(0, 40);
		out.push(el.tagName.toLowerCase() + (el.dataset.testid ? "[" + el.dataset.testid + "]" : "") + (el.name ? "[name=" + el.name + "]" : "") + ' "' + words + '" ' + what);
	};
	if (document.documentElement.scrollWidth > W + 1) out.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " px in a " + W + " px window");
	for (const el of document.body.querySelectorAll("*")) {
		const ox = getComputedStyle(el).overflowX;
		if ((ox === "auto" || ox === "scroll") && el.scrollWidth > el.clientWidth + 1 && !(el.hasAttribute("data-scroll") && el.getAttribute("aria-label"))) {
			out.push("a sideways scroller that does not say so: " + el.tagName.toLowerCase() + "." + el.className);
		} else if (narrow && (ox === "auto" || ox === "scroll") && el.scrollWidth > el.clientWidth + 1) {
			const hint = el.querySelector(":scope > .scroll-hint");
			if (!hint || !hint.getClientRects().length) out.push("a sideways scroller shows no hint that it scrolls: " + el.tagName.toLowerCase() + "[" + el.getAttribute("aria-label") + "]");
		}
	}
	const ctx = document.createElement("canvas").getContext("2d");
	const textWidth = (el, text) => { const cs = getComputedStyle(el); ctx.font = cs.fontStyle + " " + cs.fontWeight + " " + cs.fontSize + " " + cs.fontFamily; return ctx.measureText(text).width; };
	const controls = 'button, input:not([type="hidden"]), select, textarea, summary, form a, td.row-actions a, .actions a, a.button';
	for (const el of document.body.querySelectorAll(controls)) {
		if (!el.getClientRects().length || el.closest("dialog:not([open])")) continue;
		const r = el.getBoundingClientRect();
		if (r.width === 0 && r.height === 0) continue;
		const region = narrow ? el.closest("[data-scroll][aria-label]") : null;
		if (!region && (r.left < -1 || r.right > W + 1)) { say(el, "lies outside the window (" + Math.round(r.left) + "-" + Math.round(r.right) + " px)"); continue; }
		let cut = null;
		for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
			if (a === region) break;
			if (getComputedStyle(a).overflowX === "visible") continue;
			const ar = a.getBoundingClientRect();
			if (r.left < ar.left - 1 || r.right > ar.right + 1) { cut = a; break; }
		}
		if (cut) { say(el, "is cut by " + cut.tagName.toLowerCase() + "." + cut.className + " (" + Math.round(r.left) + "-" + Math.round(r.right) + " px in " + Math.round(cut.getBoundingClientRect().left) + "-" + Math.round(cut.getBoundingClientRect().right) + ")"); continue; }
		const cs = getComputedStyle(el);
		const inner = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
		if (/^(BUTTON|SUMMARY|A)$/.test(el.tagName) && el.scrollWidth > el.clientWidth + 1) say(el, "has its words cut (" + el.scrollWidth + " px in " + el.clientWidth + ")");
		if (el.tagName === "INPUT" && /^(text|search|email|url|password|number)$/.test(el.type) && !el.value && el.placeholder && textWidth(el, el.placeholder) > inner + 1) say(el, "has its placeholder cut");
		if (el.tagName === "SELECT" && el.selectedIndex >= 0 && textWidth(el, el.options[el.selectedIndex].text) > inner - 18) say(el, "shows its choice cut");
	}
	return out;
})`

// routePages lists, for every GET route of the router (chi's pattern), the pages a
// signed-in admin opens there in the walk below, or why the route is not a page (its
// answer is not HTML laid out for a person). The walk fails on a route missing here, so
// a new page is walked too.
func routePages(ids walkIDs) map[string][]string {
	notAPage := []string(nil)
	m, c := ids.manifest, ids.cluster
	return map[string][]string{
		"/":                                     {"/"},
		"/login":                                {"/login"}, // sends a signed-in person home
		"/setup":                                {"/setup"},
		"/invite/{token}":                       {"/invite/" + ids.invite},
		"/static/*":                             notAPage,
		"/healthz":                              notAPage,
		"/shape.svg":                            notAPage,
		"/shape.csv":                            notAPage,
		"/manifests":                            {"/manifests"},
		"/manifests/diff":                       {fmt.Sprintf("/manifests/diff?a=%d&b=%d", ids.exported, ids.inReview), "/manifests/diff?a=x&b=-2", "/manifests/diff?a=77777&b=88888"},
		"/manifests/{manifest}":                 {fmt.Sprintf("/manifests/%d", m), fmt.Sprintf("/manifests/%d?bulk=0.9", m), fmt.Sprintf("/manifests/%d", ids.inReview), fmt.Sprintf("/manifests/%d", ids.signed), fmt.Sprintf("/manifests/%d", ids.exported)},
		"/manifests/{manifest}/impact.{format}": notAPage,
		"/manifests/{manifest}/clusters":        {fmt.Sprintf("/manifests/%d/clusters", m)},
		"/manifests/{manifest}/clusters/{cluster}":                 {fmt.Sprintf("/manifests/%d/clusters/%d", m, c), fmt.Sprintf("/manifests/%d/clusters/%d?member=%d", m, c, ids.member), fmt.Sprintf("/manifests/%d/clusters/%d?member=%d&view=diff", m, c, ids.member)},
		"/manifests/{manifest}/clusters/{cluster}/matrix.{format}": notAPage,
		"/manifests/{manifest}/clusters/{cluster}/chain.{format}":  notAPage,
		"/manifests/{manifest}/signoff":                            {fmt.Sprintf("/manifests/%d/signoff", ids.exported)},
		"/manifests/{manifest}/signoff.json":                       notAPage,
		"/manifests/{manifest}/removals.csv":                       notAPage,
		"/manifests/{manifest}/removals.jsonl":                     notAPage,
		"/manifests/{manifest}/split.jsonl":                        notAPage,
		"/manifests/{manifest}/engines.zip":                        notAPage,
		"/manifests/{manifest}/settings.json":                      notAPage,
		"/datasets/{dataset}/runs/new":                             {"/datasets/1/runs/new"},
		"/runs/{job}":                                              {"/runs/" + ids.run},
		"/dedup-jobs":                                              {"/dedup-jobs"},
		"/dedup-jobs/from-sweep":                                   {fmt.Sprintf("/dedup-jobs/from-sweep?sweep=%d&config=0", ids.sweep)},
		"/dedup-jobs/{dedupJob}":                                   {fmt.Sprintf("/dedup-jobs/%d", ids.dedupJob)},
		"/dedup-jobs/{dedupJob}/files/{file}":                      notAPage,
		"/manifests/{manifest}/dedup-jobs/new":                     {fmt.Sprintf("/manifests/%d/dedup-jobs/new", m)},
		"/sweeps/{sweep}/dedup-jobs/new":                           {fmt.Sprintf("/sweeps/%d/dedup-jobs/new?config=0", ids.sweep)},
		"/campaigns/{campaign}/sweeps":                             {"/campaigns/1/sweeps"},
		"/sweeps/{sweep}":                                          {fmt.Sprintf("/sweeps/%d", ids.sweep)},
		"/sweeps/{sweep}/progress":                                 notAPage, // the dashboard's fragment
		"/sweeps/{sweep}/live":                                     notAPage, // the dashboard's fragment
		"/sweeps/{sweep}/results.csv":                              notAPage,
		"/sweeps/{sweep}/settings.json":                            notAPage,
		"/sweeps/{sweep}/charts/{chart}.{format}":                  notAPage,
		"/campaigns/{campaign}":                                    {"/campaigns/1"},
		"/campaigns/{campaign}/pairs/{pair}":                       {"/campaigns/1/pairs/1", "/campaigns/1/pairs/1?view=unified"},
		"/documents/{doc}/raw":                                     notAPage, // the text itself, text/plain
		"/campaigns/{campaign}/labels.csv":                         notAPage,
		"/campaigns/{campaign}/labels.jsonl":                       notAPage,
		"/campaigns/{campaign}/next":                               {"/campaigns/1/next"},
		"/campaigns/{campaign}/disagreements/next":                 {"/campaigns/1/disagreements/next"},
		"/datasets/new":                                            {"/datasets/new"},
		"/imports/{job}":                                           {"/imports/" + ids.importJob},
		"/labels/new":                                              {"/labels/new"},
		"/label-imports/{job}":                                     {"/label-imports/" + ids.labelImport},
		"/audit":                                                   {"/audit"},
		"/admin/users":                                             {"/admin/users"},
		"/admin/users/{id}/disable":                                {fmt.Sprintf("/admin/users/%d/disable", ids.user)},
	}
}

// walkIDs are the things of a demo-loaded store the walk opens.
type walkIDs struct {
	manifest, cluster, member           int64 // a draft on the demo, its riskiest cluster, a member of it
	inReview, signed, exported          int64
	sweep, dedupJob, user               int64
	run, importJob, labelImport, invite string
}

// walkStore loads the demo and makes one of everything a page shows: a draft manifest
// on the demo, manifests of the chain sample in review, signed off and exported, a
// sweep, a whole-corpus run, an import, a label import, an invite.
func walkStore(f *fixture) walkIDs {
	f.t.Helper()
	ctx := context.Background()
	f.withDemo()
	var ids walkIDs
	run := url.Values{"spec": {"level=word size=5 k=128"}, "bands": {"32"}, "rows": {"4"}, "threshold": {"0.5"},
		"verification": {"exact"}, "policy": {"components"}, "keeper": {"earliest"}, "approvals": {"1"}}
	rec := f.do("POST", "/datasets/1/runs", f.signIn("reviewer"), run)
	ids.run = strings.TrimPrefix(rec.Header().Get("Location"), "/runs/")
	m := f.manifestOfRun(rec.Header().Get("Location"), f.signIn("reviewer"))
	ids.manifest = m.ID
	rows, _ := f.store.Clusters(ctx, m.ID, db.ClusterFilter{Chained: true})
	c, _ := f.store.Cluster(ctx, m.ID, rows[0].ID)
	ids.cluster, ids.member = c.ID, reviewOrder(c.Items)[0].Doc

	exported := f.signedOff(f.withRun(chainRun))
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/export", exported.ID), f.signIn("approver"),
		url.Values{"hash": {exported.ContentHash}, "count": {fmt.Sprint(f.approvedCount(exported))}}); rec.Code != http.StatusSeeOther {
		f.t.Fatalf("export: %d", rec.Code)
	}
	ids.exported = exported.ID
	signed := f.signedOff(f.runOn(exported.DatasetID, chainRun, "reviewer"))
	ids.signed = signed.ID
	review := f.runOn(exported.DatasetID, chainRun, "reviewer")
	f.decideAll(review)
	f.do("POST", fmt.Sprintf("/manifests/%d/submit", review.ID), f.signIn("reviewer"), url.Values{})
	ids.inReview = review.ID

	ids.sweep = f.startSweep(1, smallGridForm("walk"))
	f.corpusFile("chain.jsonl", chainDocs(f.t))
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/dedup-jobs", exported.ID), f.signIn("reviewer"), url.Values{"corpus": {"chain.jsonl"}}); rec.Code != http.StatusSeeOther {
		f.t.Fatalf("whole-corpus run: %d", rec.Code)
	}
	jobs, _ := f.store.DedupJobs(ctx)
	ids.dedupJob = jobs[0].ID
	f.waitDedupRow(ids.dedupJob)

	loc := f.upload("/datasets", "small.jsonl", `{"id":"x1","text":"one two three four"}`+"\n"+`{"id":"x2","text":"one two three five"}`+"\n", nil).Header().Get("Location")
	f.waitJob(loc)
	ids.importJob = strings.TrimPrefix(loc, "/imports/")
	lrec := f.upload("/labels", "l.csv", "a,b,category,annotator\nx1,x2,minor,walker\n", map[string]string{"dataset": "small", "create": "1"})
	ids.labelImport = strings.TrimPrefix(lrec.Header().Get("Location"), "/label-imports/")
	if ids.labelImport == "" || strings.Contains(ids.labelImport, "?") {
		f.t.Fatalf("label import: %d %s", lrec.Code, lrec.Header().Get("Location"))
	}
	_, body := f.follow(f.do("POST", "/admin/invites", f.admin, url.Values{"role": {"approver"}}), f.admin)
	inv := regexp.MustCompile(`/invite/([A-Za-z0-9_-]+)`).FindStringSubmatch(body)
	if inv == nil {
		f.t.Fatal("no invite link on the Team page")
	}
	ids.invite = inv[1]
	u, _ := f.store.UserByName(ctx, "annotator")
	if u.ID == 0 {
		u, _ = f.store.UserByName(ctx, "reviewer")
	}
	ids.user = u.ID
	return ids
}

// Issue 27: no control is cut off and no page scrolls sideways, at 1280 px (a laptop)
// and 390 px (a phone), on every page a signed-in admin opens: the router's GET routes
// (every one must be listed in routePages), over a demo-loaded store with one of each
// thing. At 1280 px nothing may be cut, in a scroller or not (the cluster page's action
// column clipped "Approve remova"); at 390 px a control may lie past the edge of a
// scroller that says it scrolls.
func TestEveryPageFitsInBrowser(t *testing.T) {
	f := newFixture(t, 1<<20)
	ids := walkStore(f)
	pages := routePages(ids)
	var paths []string
	chi.Walk(f.h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if method != http.MethodGet {
			return nil
		}
		list, ok := pages[route]
		if !ok {
			t.Errorf("GET %s is not in routePages: list the pages it shows, or say why it is not a page", route)
		}
		paths = append(paths, list...)
		return nil
	})
	slices.Sort(paths)
	p, base := f.browse(1280, 900, "admin")
	for _, width := range []int{1280, 390} {
		p.do(chromedp.EmulateViewport(int64(width), 900))
		for _, path := range paths {
			p.do(chromedp.Navigate(base + path))
			p.waitFor(`document.readyState === "complete"`)
			if ct := evalJS[string](p, `document.contentType`); ct != "text/html" {
				t.Errorf("%s is listed as a page but answers %s", path, ct)
				continue
			}
			problems := evalJS[[]string](p, fmt.Sprintf("%s(%v)", clippedJS, width < 700))
			if path == "/campaigns/1/sweeps" && width == 1280 {
				// The sweep form's fields were stretched by their fieldsets: thresholds 75 px
				// tall, Shapes 89, the verification checkboxes 200 px apart.
				problems = append(problems, evalJS[[]string](p, `(() => {
					const out = [], h = s => document.querySelector(s).getBoundingClientRect();
					for (const id of ["sweep-from", "sweep-to", "sweep-step", "sweep-shapes", "sweep-word"]) {
						const r = h('[data-testid="' + id + '"]');
						if (r.height > 40) out.push(id + " is " + Math.round(r.height) + " px tall");
					}
					const gap = h('[data-testid="sweep-verification-exact"]').top - h('[data-testid="sweep-verification-estimate"]').top;
					if (gap > 60) out.push("the verification checkboxes are " + Math.round(gap) + " px apart");
					return out;
				})()`)...)
			}
			for _, pr := range problems {
				t.Errorf("%s at %d px: %s", path, width, pr)
			}
			if len(problems) > 0 {
				p.screenshot(fmt.Sprintf("walk-%d%s", width, strings.NewReplacer("/", "-", "?", "-", "=", "-", "&", "-").Replace(path)))
			}
		}
	}
	t.Logf("walked %d pages at 1280 and 390 px", len(paths))
}
