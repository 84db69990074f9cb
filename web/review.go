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
	"github.com/dedupstudio/dedupstudio/internal/dedup"
	"github.com/dedupstudio/dedupstudio/internal/review"
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

// clusterURL is a cluster's page with a row focused (0 for none).
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

// afterDecision sends the reviewer back to the cluster, on the next undecided row.
func (s *server) afterDecision(w http.ResponseWriter, r *http.Request, m db.Manifest, clusterID, doc int64, msg string) {
	c, err := s.store.Cluster(r.Context(), m.ID, clusterID)
	if err != nil {
		s.toManifest(w, r, m.ID, msg)
		return
	}
	next := nextUndecided(c.Items, doc)
	s.redirect(w, r, clusterURL(m.ID, c.ID, next.ID, next.Doc), done(msg))
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

func (s *server) decideItem(w http.ResponseWriter, r *http.Request) {
	m, err := s.loadManifest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	itemID, ok := idParam(r, "item")
	clusterID, err2 := strconv.ParseInt(r.PostFormValue("cluster"), 10, 64)
	if !ok || err2 != nil {
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
		err = dedup.DecideItem(r.Context(), s.store, *userOf(r), m, c, itemID, d)
	}
	if errors.Is(err, db.ErrNotFound) {
		err = notFound("removal in this cluster")
	}
	if err != nil {
		s.failOnCluster(w, r, m, c, err)
		return
	}
	i := slices.IndexFunc(c.Items, func(it db.Item) bool { return it.ID == itemID })
	s.afterDecision(w, r, m, c.ID, c.Items[i].Doc, "")
}

func (s *server) decideCluster(w http.ResponseWriter, r *http.Request) {
	m, c, err := s.loadCluster(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := review.ParseDecision(r.PostFormValue("decision"))
	n := 0
	if err == nil {
		n, err = dedup.DecideCluster(r.Context(), s.store, *userOf(r), m, c, d)
	}
	if err != nil {
		s.failOnCluster(w, r, m, c, err)
		return
	}
	verb := map[review.Decision]string{review.Approved: "Approved", review.Excluded: "Excluded", review.Proposed: "Reset"}[d]
	s.redirect(w, r, clusterURL(m.ID, c.ID, 0, 0), done(fmt.Sprintf("%s %d removal(s) of this cluster.", verb, n)))
}

func (s *server) makeKeeper(w http.ResponseWriter, r *http.Request) {
	m, c, err := s.loadCluster(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	doc, _ := strconv.ParseInt(r.PostFormValue("doc"), 10, 64) // none: 0, not a member
	out, err := dedup.MakeKeeper(r.Context(), s.store, *userOf(r), m, c, doc, r.PostFormValue("reason"))
	if err != nil {
		s.failOnCluster(w, r, m, c, err)
		return
	}
	msg := "Keeper changed; removals whose keeper changed are proposals again."
	if len(out) > 1 {
		msg = fmt.Sprintf("Keeper changed; %d cluster(s) split off (members that do not pass the new keeper).", len(out)-1)
	}
	s.afterDecision(w, r, m, c.ID, doc, msg)
}

func (s *server) cutCluster(w http.ResponseWriter, r *http.Request) {
	m, c, err := s.loadCluster(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	a, b, ok := parseLink(r.PostFormValue("link"))
	if !ok {
		s.failOnCluster(w, r, m, c, &formError{field: "link", msg: "choose a link of the cluster"})
		return
	}
	out, err := dedup.Cut(r.Context(), s.store, *userOf(r), m, c, a, b)
	if err != nil {
		s.failOnCluster(w, r, m, c, err)
		return
	}
	if len(out) == 0 || out[0].ID != c.ID {
		s.redirect(w, r, fmt.Sprintf("/manifests/%d/clusters", m.ID), done("Cut: the keeper is left alone, so the cluster is gone."))
		return
	}
	msg := fmt.Sprintf("Cut: %d member(s) stay with the keeper", out[0].Size)
	if len(out) > 1 {
		msg += fmt.Sprintf("; %d new cluster(s) split off", len(out)-1)
	}
	s.afterDecision(w, r, m, c.ID, 0, msg+".")
}

// parseLink reads "A-B" (two document ids).
func parseLink(s string) (a, b int64, ok bool) {
	x, y, found := strings.Cut(s, "-")
	a, errA := strconv.ParseInt(x, 10, 64)
	b, errB := strconv.ParseInt(y, 10, 64)
	return a, b, found && errA == nil && errB == nil
}

func (s *server) commentCluster(w http.ResponseWriter, r *http.Request) {
	m, c, err := s.loadCluster(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := dedup.Comment(r.Context(), s.store, *userOf(r), m, c.ID, r.PostFormValue("comment")); err != nil {
		s.failOnCluster(w, r, m, c, err)
		return
	}
	s.redirect(w, r, clusterURL(m.ID, c.ID, 0, 0), done("Comment added."))
}

func (s *server) bulkApprove(w http.ResponseWriter, r *http.Request) {
	m, err := s.loadManifest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	bar := formFloat(r, "bar")
	items, clusters, err := dedup.BulkApprove(r.Context(), s.store, *userOf(r), m, bar)
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	s.toManifest(w, r, m.ID, fmt.Sprintf("Approved %d removal(s) in %d low-risk cluster(s) at bar %g.", items, clusters, bar))
}

func (s *server) undoDecision(w http.ResponseWriter, r *http.Request) {
	m, err := s.loadManifest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	clusterID, ok, err := dedup.Undo(r.Context(), s.store, *userOf(r), m)
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	switch {
	case !ok:
		s.toManifest(w, r, m.ID, "Nothing of yours to undo in this manifest.")
	case clusterID != 0:
		if _, err := s.store.Cluster(r.Context(), m.ID, clusterID); err == nil {
			s.afterDecision(w, r, m, clusterID, 0, "Undone.")
			return
		}
		fallthrough
	default:
		s.toManifest(w, r, m.ID, "Undone.")
	}
}

func (s *server) requestSignOff(w http.ResponseWriter, r *http.Request) {
	m, err := s.loadManifest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := dedup.RequestSignOff(r.Context(), s.store, *userOf(r), m); err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	s.toManifest(w, r, m.ID, "Sign-off requested: approvers can now approve it.")
}

func (s *server) saveManifestSettings(w http.ResponseWriter, r *http.Request) {
	m, err := s.loadManifest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	n := formInt(r, "approvals")
	team, err := s.checkApprovals(r.Context(), "approvals required", n)
	if err == nil {
		err = dedup.SetApprovals(r.Context(), s.store, *userOf(r), m, n, team)
	}
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	msg := fmt.Sprintf("%d approval(s) now sign this manifest off.", n)
	if n < review.DefaultApprovals {
		msg += fmt.Sprintf(" That is fewer than the default %d: the lowering is recorded in the audit log and on the sign-off record.", review.DefaultApprovals)
	}
	s.toManifest(w, r, m.ID, msg)
}

func (s *server) reviewManifest(w http.ResponseWriter, r *http.Request) {
	m, err := s.loadManifest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := review.ParseVerdict(r.PostFormValue("verdict"))
	var res db.ReviewResult
	if err == nil {
		res, err = dedup.Review(r.Context(), s.store, *userOf(r), m, v, r.PostFormValue("comment"), r.PostFormValue("hash"), dedup.CodeVersion(s.version))
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
	}
	s.toManifest(w, r, m.ID, msg)
}

func (s *server) exportManifest(w http.ResponseWriter, r *http.Request) {
	m, err := s.loadManifest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	n, err := dedup.Export(r.Context(), s.store, *userOf(r), m, r.PostFormValue("hash"))
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	s.toManifest(w, r, m.ID, fmt.Sprintf("Exported: %d document(s) are tombstoned. Download the files below.", n))
}

func (s *server) revokeManifest(w http.ResponseWriter, r *http.Request) {
	m, err := s.loadManifest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	n, err := dedup.Revoke(r.Context(), s.store, *userOf(r), m, r.PostFormValue("reason"))
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	s.indexes.CloseManifest(m.ID) // a revoked configuration answers no more searches
	s.toManifest(w, r, m.ID, fmt.Sprintf("Revoked; %d removed document(s) restored.", n))
}

func (s *server) restoreDocument(w http.ResponseWriter, r *http.Request) {
	m, err := s.loadManifest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	doc, ok := idParam(r, "doc")
	if !ok {
		s.fail(w, r, notFound("removed document"))
		return
	}
	err = dedup.Restore(r.Context(), s.store, *userOf(r), m, doc)
	if errors.Is(err, db.ErrNotFound) {
		err = notFound("standing removal of this document by this manifest")
	}
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	s.toManifest(w, r, m.ID, "Restored: the document is back in the dataset.")
}
