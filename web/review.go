package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// The review verbs and the manifest's steps: every POST here answers with a redirect
// (303) to the page that shows its outcome, or with the page it came from and the
// reason it was refused.

// loadCluster loads the {manifest} and the {cluster} of the URL.
func (s *server) loadCluster(r *http.Request) (db.Manifest, db.Cluster, error) {
	m, err := s.loadManifest(r)
	if err != nil {
		return m, db.Cluster{}, err
	}
	c, err := loadByID(r, "cluster", "cluster in this manifest", func(ctx context.Context, id int64) (db.Cluster, error) {
		return s.store.Cluster(ctx, m.ID, id)
	})
	return m, c, err
}

// clusterURL is a cluster's page with a row focused (0 for none) and, when member is
// not 0, that member's text against the keeper's open under its row.
func clusterURL(manifestID, clusterID, focusItem, member int64) string {
	q := url.Values{}
	if focusItem != 0 {
		q.Set("focus", strconv.FormatInt(focusItem, 10))
	}
	if member != 0 {
		q.Set("member", strconv.FormatInt(member, 10))
	}
	u := fmt.Sprintf("/manifests/%d/clusters/%d", manifestID, clusterID)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	if member != 0 {
		u += fmt.Sprintf("#row-%d", member)
	}
	return u
}

// reviewOrder is the order the cluster page lists removals in: least similar to the
// keeper first (the riskiest), then by document.
func reviewOrder(items []db.Item) []db.Item {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b db.Item) int { return cmp.Or(cmp.Compare(a.Score, b.Score), cmp.Compare(a.Doc, b.Doc)) })
	return out
}

// nextUndecided returns the first undecided removal after the one of doc in review
// order (wrapping around), or the zero Item when none is left.
func nextUndecided(items []db.Item, doc int64) db.Item {
	order := reviewOrder(items)
	at := slices.IndexFunc(order, func(it db.Item) bool { return it.Doc == doc })
	for k := 1; k <= len(order); k++ {
		if it := order[(at+k+len(order))%len(order)]; it.Decision == review.Proposed {
			return it
		}
	}
	return db.Item{}
}

// afterDecision sends the reviewer back to the cluster, on the next undecided row after
// doc's (doc's own when none is left).
func (s *server) afterDecision(w http.ResponseWriter, r *http.Request, m db.Manifest, clusterID, doc int64, msg string) {
	c, err := s.store.Cluster(r.Context(), m.ID, clusterID)
	if err != nil {
		s.toManifest(w, r, m.ID, msg)
		return
	}
	if next := nextUndecided(c.Items, doc); next.ID != 0 {
		doc = next.Doc
	}
	s.backToCluster(w, r, m, c, doc, msg)
}

// backToCluster sends the reviewer back to cluster c with doc's row focused (the first
// undecided when doc is not a removal of it), saying msg and how many removals are left
// undecided. When the form came from a page reading members against the keeper
// (open=1), the focused row's text opens too.
func (s *server) backToCluster(w http.ResponseWriter, r *http.Request, m db.Manifest, c db.Cluster, doc int64, msg string) {
	undecided := 0
	for _, it := range c.Items {
		if it.Decision == review.Proposed {
			undecided++
		}
	}
	var focus db.Item
	if i := slices.IndexFunc(c.Items, func(it db.Item) bool { return it.Doc == doc }); i >= 0 {
		focus = c.Items[i]
	} else {
		focus = nextUndecided(c.Items, 0)
	}
	left := "Every removal of this cluster has a decision: Enter goes to the next cluster."
	if undecided > 0 {
		left = fmt.Sprintf("%d undecided in this cluster.", undecided)
	}
	msg = strings.TrimSpace(msg + " " + left)
	var member int64
	if r.PostFormValue("open") == "1" {
		member = focus.Doc
	}
	s.redirect(w, r, clusterURL(m.ID, c.ID, focus.ID, member), done(msg))
}

// failOnCluster shows err on the cluster's page (the manifest's once the cluster is
// gone) when the person can act on it there, with a redirect (303) as every form does.
func (s *server) failOnCluster(w http.ResponseWriter, r *http.Request, m db.Manifest, c db.Cluster, err error) {
	s.failOn(w, r, err, func(_ int, msg string) {
		s.recordRefusal(r, m, msg, err)
		if _, err := s.store.Cluster(r.Context(), m.ID, c.ID); err == nil {
			s.redirect(w, r, clusterURL(m.ID, c.ID, 0, 0), refused(r, msg))
			return
		}
		s.redirect(w, r, manifestURL(m.ID), refused(r, msg))
	})
}

func (s *server) decideItem(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	itemID, ok := idParam(r, "item")
	clusterID, ok2 := parseID(r.PostFormValue("cluster"))
	if !ok || !ok2 {
		s.fail(w, r, notFound("removal in this manifest"))
		return
	}
	c, err := s.store.Cluster(r.Context(), m.ID, clusterID)
	if errors.Is(err, db.ErrNotFound) {
		err = notFound("cluster in this manifest")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := review.ParseDecision(r.PostFormValue("decision"))
	if err == nil {
		err = manifests.DecideItem(r.Context(), s.store, *userOf(r), m, c, itemID, d)
	}
	if errors.Is(err, db.ErrNotFound) {
		err = notFound("removal in this cluster")
	}
	if err != nil {
		s.failOnCluster(w, r, m, c, err)
		return
	}
	i := slices.IndexFunc(c.Items, func(it db.Item) bool { return it.ID == itemID })
	doc := c.Items[i].Doc
	infos, err := s.store.DocInfos(r.Context(), []int64{doc})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ext := infos[doc].ExtID
	msg := map[review.Decision]string{review.Approved: "Approved the removal of " + ext + ".",
		review.Excluded: "Excluded " + ext + " from removal: it stays.", review.Proposed: ext + " is a proposal again."}[d]
	s.afterDecision(w, r, m, c.ID, doc, msg)
}

func (s *server) decideCluster(w http.ResponseWriter, r *http.Request, m db.Manifest, c db.Cluster) {
	d, err := review.ParseDecision(r.PostFormValue("decision"))
	scope := manifests.Scope{Direct: r.PostFormValue("scope") == "direct"}
	if chained := r.PostFormValue("chained"); chained != "" {
		scope.Chained = formInt(r, "chained")
	}
	n := 0
	if err == nil {
		n, err = manifests.DecideCluster(r.Context(), s.store, *userOf(r), m, c, d, scope)
	}
	if err != nil {
		s.failOnCluster(w, r, m, c, err)
		return
	}
	verb := map[review.Decision]string{review.Approved: "Approved", review.Excluded: "Excluded", review.Proposed: "Reset"}[d]
	what := templates.Plural(n, "removal", "removals") + " of this cluster"
	if scope.Direct && d == review.Approved {
		what = templates.Plural(n, "direct removal", "direct removals") + " of this cluster; the chained ones wait for you to read them"
	}
	s.afterDecision(w, r, m, c.ID, 0, fmt.Sprintf("%s %s.", verb, what))
}

func (s *server) makeKeeper(w http.ResponseWriter, r *http.Request, m db.Manifest, c db.Cluster) {
	doc, _ := parseID(r.PostFormValue("doc")) // none: 0, not a member
	out, err := manifests.MakeKeeper(r.Context(), s.store, *userOf(r), m, c, doc, r.PostFormValue("reason"))
	if err != nil {
		s.failOnCluster(w, r, m, c, err)
		return
	}
	msg := "Keeper changed; removals whose keeper changed are proposals again."
	if len(out) > 1 {
		msg = fmt.Sprintf("Keeper changed; %s split off (members that do not pass the new keeper).", templates.Plural(len(out)-1, "cluster", "clusters"))
	}
	s.afterDecision(w, r, m, c.ID, doc, msg)
}

func (s *server) cutCluster(w http.ResponseWriter, r *http.Request, m db.Manifest, c db.Cluster) {
	var links [][2]int64
	r.ParseForm() // a body that does not parse leaves no link, refused below
	for _, v := range r.PostForm["link"] {
		a, b, ok := parseLink(v)
		if !ok {
			s.failOnCluster(w, r, m, c, &formError{field: "link", msg: "choose a link of the cluster"})
			return
		}
		links = append(links, [2]int64{a, b})
	}
	if len(links) == 0 {
		s.failOnCluster(w, r, m, c, &formError{field: "link", msg: "choose a link of the cluster"})
		return
	}
	out, err := manifests.Cut(r.Context(), s.store, *userOf(r), m, c, links...)
	if err != nil {
		s.failOnCluster(w, r, m, c, err)
		return
	}
	if len(out) == 0 || out[0].ID != c.ID {
		s.redirect(w, r, fmt.Sprintf("/manifests/%d/clusters", m.ID), done("Cut: the keeper is left alone, so the cluster is gone."))
		return
	}
	msg := "Cut: " + templates.Plural(out[0].Size, "member stays", "members stay") + " with the keeper"
	if len(out) > 1 {
		msg += "; " + templates.Plural(len(out)-1, "new cluster", "new clusters") + " split off"
	}
	if out[0].Chained {
		msg += "; " + templates.Plural(out[0].ChainedMembers, "member is", "members are") + " still chained"
	} else {
		msg += "; none is chained now"
	}
	s.afterDecision(w, r, m, c.ID, 0, msg+".")
}

// parseLink reads "A-B" (two document ids).
func parseLink(s string) (a, b int64, ok bool) {
	x, y, found := strings.Cut(s, "-")
	a, okA := parseID(x)
	b, okB := parseID(y)
	return a, b, found && okA && okB
}

func (s *server) commentCluster(w http.ResponseWriter, r *http.Request, m db.Manifest, c db.Cluster) {
	if err := manifests.Comment(r.Context(), s.store, *userOf(r), m, c.ID, r.PostFormValue("comment")); err != nil {
		s.failOnCluster(w, r, m, c, err)
		return
	}
	s.redirect(w, r, clusterURL(m.ID, c.ID, 0, 0), done("Comment added."))
}

// bulkApprove approves the low-risk clusters at the bar the manifest page showed with
// its count (expect): a form without the count is sent back to the page to show it.
func (s *server) bulkApprove(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	bar := formFloat(r, "bar")
	if r.PostFormValue("expect") == "" {
		if _, _, err := manifests.BulkPreview(r.Context(), s.store, m, bar); err != nil {
			s.failOnManifest(w, r, m, err)
			return
		}
		s.redirect(w, r, fmt.Sprintf("/manifests/%d?bulk=%s#bulk-form", m.ID, url.QueryEscape(strings.TrimSpace(r.PostFormValue("bar")))), nil)
		return
	}
	expect := formInt(r, "expect")
	if expect < 0 {
		s.failOnManifest(w, r, m, &formError{field: "expect", msg: "want the number of removals shown"})
		return
	}
	items, clusters, err := manifests.BulkApprove(r.Context(), s.store, *userOf(r), m, bar, expect)
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	s.toManifest(w, r, m.ID, fmt.Sprintf("Approved %s in %s at bar %g.", templates.Plural(items, "removal", "removals"), templates.Plural(clusters, "low-risk cluster", "low-risk clusters"), bar))
}

func (s *server) undoDecision(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	me := *userOf(r)
	from, _ := parseID(r.PostFormValue("cluster")) // the cluster page's form says which; 0 from elsewhere
	var before db.Cluster
	if from != 0 {
		before, _ = s.store.Cluster(r.Context(), m.ID, from) // none: nothing to compare with
	}
	clusterID, ok, err := manifests.Undo(r.Context(), s.store, me, m)
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	msg := "Undone."
	if ok {
		if acts, err := s.store.RecentActions(r.Context(), m.ID, me.ID, 1); err == nil && len(acts) == 1 {
			if what, found := strings.CutPrefix(acts[0].Summary, "undid: "); found {
				msg = "Undone: " + what + "."
			}
		}
	} else {
		msg, clusterID = "Nothing of yours to undo in this manifest.", from
	}
	if clusterID != 0 {
		if c, err := s.store.Cluster(r.Context(), m.ID, clusterID); err == nil {
			s.backToCluster(w, r, m, c, changedDoc(before, c), msg)
			return
		}
	}
	s.toManifest(w, r, m.ID, msg)
}

// changedDoc is the first document, in review order, whose decision differs between two
// readings of a cluster (what an undo put back); 0 when none does.
func changedDoc(before, after db.Cluster) int64 {
	was := map[int64]review.Decision{}
	for _, it := range before.Items {
		was[it.Doc] = it.Decision
	}
	for _, it := range reviewOrder(after.Items) {
		if d, ok := was[it.Doc]; ok && d != it.Decision {
			return it.Doc
		}
	}
	return 0
}

func (s *server) requestSignOff(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	if err := manifests.RequestSignOff(r.Context(), s.store, *userOf(r), m); err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	s.toManifest(w, r, m.ID, "Sign-off requested: approvers can now approve it.")
}

func (s *server) saveManifestSettings(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	n := formInt(r, "approvals")
	team, err := s.checkApprovals(r.Context(), "approvals required", n, m.PreparedBy)
	if err == nil {
		err = manifests.SetApprovals(r.Context(), s.store, *userOf(r), m, n, team)
	}
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	msg := templates.Plural(n, "approval now signs", "approvals now sign") + " this manifest off."
	if n < review.DefaultApprovals {
		msg += fmt.Sprintf(" That is fewer than the default %d: the lowering is recorded in the audit log and on the sign-off record.", review.DefaultApprovals)
	}
	if others, err := s.store.Approvers(r.Context(), m.PreparedBy); err == nil {
		if sf := shortfall(nil, n, others, false, preparerWord(userOf(r), m)); sf.Text != "" {
			msg += " It " + sf.Text + "."
		}
	}
	s.toManifest(w, r, m.ID, msg)
}

func (s *server) reviewManifest(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	v, err := review.ParseVerdict(r.PostFormValue("verdict"))
	var res db.ReviewResult
	if err == nil {
		res, err = manifests.Review(r.Context(), s.store, *userOf(r), m, v, r.PostFormValue("comment"), r.PostFormValue("hash"), manifests.CodeVersion(s.version))
	}
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	msg := map[review.Verdict]string{review.Approve: "Approved.", review.Reject: "Changes requested: sign-off waits until the manifest changes.",
		review.Comment: "Comment added."}[v]
	switch {
	case res.Repeated && v == review.Approve:
		msg = "You approved this content hash already: your approval counts once."
	case res.Repeated:
		msg = "You requested changes on this content hash already."
	case res.Signed:
		msg = "Approved: the manifest is signed off. It can be exported now."
	case res.Waiting != nil:
		msg = "Approved. " + sentence(res.Waiting.Error())
	case v == review.Approve:
		if reviews, err := s.store.Reviews(r.Context(), m.ID); err == nil {
			n := len(review.TallyOf(reviews, m.PreparedBy).Approvals)
			msg = fmt.Sprintf("Approved: %d of %s; %d more needed before it is signed off.", n, templates.Plural(m.ApprovalsRequired, "approval", "approvals"), max(0, m.ApprovalsRequired-n))
		}
	}
	s.toManifest(w, r, m.ID, msg)
}

// exportManifest tombstones a signed-off manifest's approved removals once the person
// confirmed how many (count) of which content hash (hash), as the page showed them.
func (s *server) exportManifest(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	counts, err := s.store.CountManifest(r.Context(), m.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	switch n := formInt(r, "count"); {
	case m.State != review.SignedOff:
		// Only a signed-off manifest exports: Export refuses with that reason, which a
		// count of 0 (a draft approves nothing yet) would otherwise hide.
	case r.PostFormValue("count") == "":
		err = &formError{field: "count", msg: "confirm the export: it tombstones " + templates.Plural(counts.Approved, "document", "documents")}
	case n != counts.Approved:
		err = &formError{field: "count", msg: fmt.Sprintf("the export tombstones %s, not %d: look at the manifest again", templates.Plural(counts.Approved, "document", "documents"), n)}
	}
	var n int
	if err == nil {
		n, err = manifests.Export(r.Context(), s.store, *userOf(r), m, r.PostFormValue("hash"))
	}
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	s.toManifest(w, r, m.ID, fmt.Sprintf("Exported content hash %s: %s now. Download the files below.", review.Short(m.ContentHash), templates.Plural(n, "document is a tombstone", "documents are tombstones")))
}

func (s *server) revokeManifest(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	n, err := manifests.Revoke(r.Context(), s.store, *userOf(r), m, r.PostFormValue("reason"))
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	s.indexes.CloseManifest(m.ID) // a revoked configuration answers no more searches
	s.toManifest(w, r, m.ID, fmt.Sprintf("Revoked; %s restored.", templates.Plural(n, "removed document", "removed documents")))
}

func (s *server) restoreDocument(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	doc, ok := idParam(r, "doc")
	if !ok {
		s.fail(w, r, notFound("removed document"))
		return
	}
	err := manifests.Restore(r.Context(), s.store, *userOf(r), m, doc)
	if errors.Is(err, db.ErrNotFound) {
		err = notFound("standing removal of this document by this manifest")
	}
	if re, ok := errors.AsType[*review.RestoredError](err); ok {
		// Another restore came first (ten parallel ones leave one winner): 409, on the
		// manifest's page, which shows the document back.
		s.renderManifest(w, r, m, http.StatusConflict, "", sentence(re.Error()))
		return
	}
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	s.toManifest(w, r, m.ID, "Restored: the document is back in the dataset.")
}
