package manifests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// The review verbs, like a code review's: approve or exclude one removal or a whole
// cluster, approve the low-risk clusters in bulk, change a cluster's keeper, cut a
// chain, comment, undo. Each is one transaction in the store with its audit event; any
// of them that changes the manifest dismisses the approvals given to it. A refusal is
// audited too (refusal).

// MaxComment is the longest comment or reason accepted, in bytes.
const MaxComment = 4000

// extIDs returns the external ids of documents, by id.
func extIDs(ctx context.Context, store *db.DB, ids []int64) (map[int64]string, error) {
	infos, err := store.DocInfos(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]string, len(infos))
	for id, di := range infos {
		out[id] = di.ExtID
	}
	return out, nil
}

// DecideItem gives one removal of cluster c a decision.
func DecideItem(ctx context.Context, store *db.DB, by db.User, m db.Manifest, c db.Cluster, itemID int64, d review.Decision) error {
	return refusal(ctx, store, by, m, ActDecide, decideItem(ctx, store, by, m, c, itemID, d))
}

// decideItem is the verb itself; its exported form audits a refusal.
func decideItem(ctx context.Context, store *db.DB, by db.User, m db.Manifest, c db.Cluster, itemID int64, d review.Decision) error {
	i := slices.IndexFunc(c.Items, func(it db.Item) bool { return it.ID == itemID })
	if i < 0 {
		return fmt.Errorf("item %d of cluster %d: %w", itemID, c.ID, db.ErrNotFound)
	}
	ext, err := extIDs(ctx, store, []int64{c.Items[i].Doc})
	if err != nil {
		return err
	}
	verb := map[review.Decision]string{review.Approved: "approved the removal of", review.Excluded: "excluded",
		review.Proposed: "reset to proposed:"}[d]
	summary := fmt.Sprintf("%s %s (cluster %d)", verb, ext[c.Items[i].Doc], c.ID)
	if d == review.Excluded {
		summary = fmt.Sprintf("excluded %s from removal (cluster %d)", ext[c.Items[i].Doc], c.ID)
	}
	_, err = store.Decide(ctx, by, m.ID, db.Decision{Items: []int64{itemID}, Decision: d, Action: "decide", Cluster: c.ID, Summary: summary})
	return err
}

// Scope says which removals of a cluster a whole-cluster approval takes.
type Scope struct {
	// Direct takes only the removals whose own similarity to the keeper passes the
	// manifest's threshold, leaving the chained ones undecided.
	Direct bool
	// Chained is how many undecided chained removals the reviewer was shown and chose to
	// approve with the rest: approving a chained cluster whole is refused unless it is
	// the number there is now.
	Chained int
}

// ChainedUndecided counts the removals of c still proposed whose own similarity to the
// keeper is under threshold t (chained: in the cluster only through others).
func ChainedUndecided(c db.Cluster, t float64) int {
	n := 0
	for _, it := range c.Items {
		if it.Decision == review.Proposed && it.Score < t {
			n++
		}
	}
	return n
}

// DecideCluster gives every removal of cluster c that is still a proposal (for an
// approval) or not yet excluded (for an exclusion) decision d; it returns how many
// changed. An approval of a cluster with chained removals still undecided takes only the
// direct ones (scope.Direct), or all when scope.Chained confirms how many chained ones
// there are; otherwise it is refused, saying so.
func DecideCluster(ctx context.Context, store *db.DB, by db.User, m db.Manifest, c db.Cluster, d review.Decision, scope Scope) (int, error) {
	n, err := decideCluster(ctx, store, by, m, c, d, scope)
	return n, refusal(ctx, store, by, m, ActDecideCluster, err)
}

// decideCluster is the verb itself; its exported form audits a refusal.
func decideCluster(ctx context.Context, store *db.DB, by db.User, m db.Manifest, c db.Cluster, d review.Decision, scope Scope) (int, error) {
	t := m.Params.Threshold
	if chained := ChainedUndecided(c, t); d == review.Approved && chained > 0 && !scope.Direct && scope.Chained != chained {
		return 0, &review.RefusedError{Msg: fmt.Sprintf("cluster %d is chained: %d of its undecided removals are under %.2f to the keeper and joined it only through others; "+
			"approve the direct ones only, read the chained ones one by one, or confirm approving all of them", c.ID, chained, t)}
	}
	var ids []int64
	for _, it := range c.Items {
		if d == review.Approved && scope.Direct && it.Score < t {
			continue
		}
		if d == review.Approved && it.Decision == review.Proposed || d == review.Excluded && it.Decision != review.Excluded {
			ids = append(ids, it.ID)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	verb := map[review.Decision]string{review.Approved: "approved", review.Excluded: "excluded"}[d]
	what := review.Quantity(len(ids), "removal", "removals")
	if d == review.Approved && scope.Direct {
		what = review.Quantity(len(ids), "direct removal", "direct removals")
	}
	return store.Decide(ctx, by, m.ID, db.Decision{Items: ids, Decision: d, Action: "decide-cluster", Cluster: c.ID,
		Summary: fmt.Sprintf("%s %s of cluster %d", verb, what, c.ID)})
}

// BulkApprove approves every undecided removal of the clusters that are not chained and
// whose every removal has an exact similarity to the keeper of at least bar. A bar under
// the manifest's threshold is refused (review.CheckBulkBar); expect, when not negative, is
// the number of removals the reviewer was shown: a different number now is refused.
func BulkApprove(ctx context.Context, store *db.DB, by db.User, m db.Manifest, bar float64, expect int) (items, clusters int, err error) {
	items, clusters, err = bulkApprove(ctx, store, by, m, bar, expect)
	return items, clusters, refusal(ctx, store, by, m, ActBulkApproval, err)
}

// bulkApprove is the verb itself; its exported form audits a refusal.
func bulkApprove(ctx context.Context, store *db.DB, by db.User, m db.Manifest, bar float64, expect int) (items, clusters int, err error) {
	if err := review.CheckBulkBar(bar, m.Params.Threshold); err != nil {
		return 0, 0, err
	}
	return store.BulkApprove(ctx, by, m.ID, bar, expect)
}

// BulkPreview counts what BulkApprove at bar would approve now, without approving it.
func BulkPreview(ctx context.Context, store *db.DB, m db.Manifest, bar float64) (items, clusters int, err error) {
	// A manifest that no longer changes first: no bar would do there.
	if err := review.CanChange(m.State); err != nil {
		return 0, 0, err
	}
	if err := review.CheckBulkBar(bar, m.Params.Threshold); err != nil {
		return 0, 0, err
	}
	return store.BulkCandidates(ctx, m.ID, bar)
}

// MakeKeeper makes doc the keeper of cluster c for reason, re-deriving the cluster under
// the manifest's policy (cluster.Graph.Override): removals whose keeper changes become
// proposals again; under keeper-star, members that do not pass the new keeper split off.
func MakeKeeper(ctx context.Context, store *db.DB, by db.User, m db.Manifest, c db.Cluster, doc int64, reason string) ([]db.Cluster, error) {
	out, err := makeKeeper(ctx, store, by, m, c, doc, reason)
	return out, refusal(ctx, store, by, m, ActMakeKeeper, err)
}

// makeKeeper is the verb itself; its exported form audits a refusal.
func makeKeeper(ctx context.Context, store *db.DB, by db.User, m db.Manifest, c db.Cluster, doc int64, reason string) ([]db.Cluster, error) {
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return nil, &review.InputError{Field: "reason", Msg: "say why this document is kept instead"}
	case len(reason) > MaxComment:
		return nil, &review.InputError{Field: "reason", Msg: fmt.Sprintf("at most %d bytes", MaxComment)}
	case doc == c.Keeper:
		return nil, &review.InputError{Field: "keeper", Msg: "that document is the keeper already"}
	}
	var ext map[int64]string
	now, err := rederive(ctx, store, m, c, func(g *cluster.Graph, cfg cluster.Config, cc cluster.Cluster, loc func(int64) int) ([]cluster.Cluster, error) {
		k := loc(doc)
		if k < 0 {
			return nil, &review.InputError{Field: "keeper", Msg: fmt.Sprintf("document %d is not in cluster %d", doc, c.ID)}
		}
		return g.Override(cfg, cc, k, reason)
	}, &ext)
	if err != nil {
		return nil, err
	}
	summary := fmt.Sprintf("made %s the keeper of cluster %d instead of %s: %s", ext[doc], c.ID, ext[c.Keeper], reason)
	return store.ReplaceCluster(ctx, by, m.ID, c, now, "keeper", summary, map[string]any{
		"keeper": map[string]string{"before": ext[c.Keeper], "after": ext[doc]}, "reason": reason, "clusters_after": len(now)})
}

// Cut removes the links (pairs of document ids) from cluster c and re-derives what is
// left (cluster.Graph.Cut): the members no longer linked to the keeper form clusters of
// their own (or stay, when alone); removals whose keeper changes become proposals again.
func Cut(ctx context.Context, store *db.DB, by db.User, m db.Manifest, c db.Cluster, links ...[2]int64) ([]db.Cluster, error) {
	out, err := cut(ctx, store, by, m, c, links)
	return out, refusal(ctx, store, by, m, ActCut, err)
}

// cut is the verb itself; its exported form audits a refusal.
func cut(ctx context.Context, store *db.DB, by db.User, m db.Manifest, c db.Cluster, links [][2]int64) ([]db.Cluster, error) {
	if len(links) == 0 {
		return nil, &review.InputError{Field: "link", Msg: "choose a link of the cluster"}
	}
	var ext map[int64]string
	now, err := rederive(ctx, store, m, c, func(g *cluster.Graph, cfg cluster.Config, cc cluster.Cluster, loc func(int64) int) ([]cluster.Cluster, error) {
		es := make([]cluster.Edge, len(links))
		for i, l := range links {
			la, lb := loc(l[0]), loc(l[1])
			if la < 0 || lb < 0 {
				return nil, &review.InputError{Field: "link", Msg: fmt.Sprintf("%d~%d is not a link of cluster %d", l[0], l[1], c.ID)}
			}
			es[i] = cluster.Edge{A: la, B: lb}
		}
		out, err := g.Cut(cfg, cc, es...)
		var ie *cluster.InputError
		if errors.As(err, &ie) {
			return nil, &review.InputError{Field: "link", Msg: ie.Msg}
		}
		return out, err
	}, &ext)
	if err != nil {
		return nil, err
	}
	kept := 0
	for _, x := range now {
		kept += x.Size
	}
	names := make([]string, len(links))
	pairs := make([][]string, len(links))
	for i, l := range links {
		names[i] = ext[l[0]] + "~" + ext[l[1]]
		pairs[i] = []string{ext[l[0]], ext[l[1]]}
	}
	summary := fmt.Sprintf("cut cluster %d at %s: %s, %s left alone", c.ID, strings.Join(names, ", "),
		review.Quantity(len(now), "cluster", "clusters"), review.Quantity(c.Size-kept, "document", "documents"))
	detail := map[string]any{"clusters_after": len(now), "size": map[string]int{"before": c.Size, "after": sizeOf(now)}}
	if len(links) == 1 {
		detail["link"] = pairs[0]
	} else {
		detail["links"] = pairs
	}
	return store.ReplaceCluster(ctx, by, m.ID, c, now, "cut", summary, detail)
}

// maxCutLinks is the most links a suggested cut may have: more is not a cut a reviewer
// checks link by link (excluding the chained members, or choosing another keeper, is).
const maxCutLinks = 12

// CutPlan is the cut the cluster page suggests, in documents: the links to remove so that
// no chained member stays linked to the keeper.
type CutPlan struct {
	Links              []db.Link
	Chained, Unchained int // members the cut separates from the keeper
	// OK is false when the cluster is chained but no cut of at most MaxLinks links
	// separates every chained member.
	OK       bool
	MaxLinks int
}

// SuggestCut plans the cut of a chained cluster under threshold t (cluster.SeparatingCut
// over its links): the fewest links, weakest first, after which no member under t to the
// keeper is linked to it. Links of similarity 1 (exact duplicates) are never cut.
func SuggestCut(c db.Cluster, t float64) CutPlan {
	plan := CutPlan{MaxLinks: maxCutLinks, OK: true}
	if !c.Chained {
		return plan
	}
	ids := c.Members()
	slices.Sort(ids)
	loc := func(id int64) int { i, _ := slices.BinarySearch(ids, id); return i }
	var chained []int
	for _, it := range c.Items {
		if it.Score < t {
			chained = append(chained, loc(it.Doc))
		}
	}
	links := make([]cluster.Edge, len(c.Links))
	for i, l := range c.Links {
		links[i] = cluster.Edge{A: loc(l.A), B: loc(l.B), Sim: l.Sim}
	}
	one := map[[2]int]bool{}
	for _, l := range links {
		if l.Sim >= 1 {
			one[[2]int{min(l.A, l.B), max(l.A, l.B)}] = true
		}
	}
	cp := cluster.SeparatingCut(loc(c.Keeper), chained, links, func(a, b int) bool { return one[[2]int{min(a, b), max(a, b)}] }, maxCutLinks)
	plan.OK, plan.Chained, plan.Unchained = cp.OK, cp.Chained, cp.Unchained
	for _, l := range cp.Links {
		plan.Links = append(plan.Links, db.Link{A: ids[l.A], B: ids[l.B], Sim: l.Sim})
	}
	return plan
}

func sizeOf(cs []db.Cluster) int {
	if len(cs) == 0 {
		return 0
	}
	return cs[0].Size
}

// rederive rebuilds cluster c as a graph of its members alone (their texts, the keeper
// rule's facts, exact groups, similarity by the manifest's verification), runs op on it
// and returns the clusters it yields as the store keeps them. A removal keeps its
// decision when its keeper stays the same. ext receives the members' external ids.
func rederive(ctx context.Context, store *db.DB, m db.Manifest, c db.Cluster,
	op func(g *cluster.Graph, cfg cluster.Config, cc cluster.Cluster, loc func(int64) int) ([]cluster.Cluster, error),
	ext *map[int64]string) ([]db.Cluster, error) {
	p := m.Params
	members := slices.Sorted(slices.Values(c.Members()))
	texts, err := store.DocumentTexts(ctx, members)
	if err != nil {
		return nil, err
	}
	infos, err := store.DocInfos(ctx, members)
	if err != nil {
		return nil, err
	}
	*ext = map[int64]string{}
	docs := make([]cluster.Doc, len(members))
	for i, id := range members {
		docs[i] = docOf(infos[id])
		(*ext)[id] = infos[id].ExtID
	}
	sigs, err := p.Spec.Signatures(texts)
	if err != nil {
		return nil, err
	}
	h, err := lsh.NewHasher(p.Spec)
	if err != nil {
		return nil, err
	}
	sets := make([][]uint64, len(members))
	for i, t := range texts {
		sets[i] = h.ShingleSet(t)
	}
	sim := func(a, b int) float64 { return lsh.Estimate(sigs[a], sigs[b]) }
	if p.Verification == review.Exact {
		sim = func(a, b int) float64 { return lsh.ExactJaccard(sets[a], sets[b]) }
	}
	g, err := cluster.NewGraph(cluster.Input{Docs: docs, Exact: cluster.ExactGroups(texts, p.Spec.Norm), Sim: sim})
	if err != nil {
		return nil, err
	}
	loc := func(id int64) int {
		if i, ok := slices.BinarySearch(members, id); ok {
			return i
		}
		return -1
	}
	cc := cluster.Cluster{Keeper: loc(c.Keeper), Override: c.Override, Members: make([]int, len(members))}
	for i := range members {
		cc.Members[i] = i
	}
	for _, l := range c.Links {
		a, b := loc(l.A), loc(l.B)
		if a < 0 || b < 0 {
			return nil, fmt.Errorf("cluster %d: link %d~%d leaves the cluster", c.ID, l.A, l.B)
		}
		cc.Links = append(cc.Links, cluster.Edge{A: min(a, b), B: max(a, b), Sim: l.Sim})
	}
	out, err := op(g, p.Config(), cc, loc)
	if err != nil {
		return nil, err
	}
	old := map[int64]db.Item{}
	for _, it := range c.Items {
		old[it.Doc] = it
	}
	id := func(i int) int64 { return members[i] }
	now := make([]db.Cluster, 0, len(out))
	for _, oc := range out {
		dc := storedCluster(oc, p, id)
		// What a cluster of a review sample becomes stays in the sample, so the review of
		// the sample can finish; the engine's weakest link stays with the cluster it was
		// measured on.
		dc.SampleStratum = c.SampleStratum
		if len(now) == 0 && oc.Keeper == loc(c.Keeper) {
			dc.EngineWeakest = c.EngineWeakest
		}
		for _, rm := range oc.Removed {
			it := db.Item{Doc: id(rm.Doc), Keeper: id(oc.Keeper), Score: rm.Sim, Reason: rm.Reason, Decision: review.Proposed,
				Estimate: lsh.Estimate(sigs[rm.Doc], sigs[oc.Keeper]), Exact: lsh.ExactJaccard(sets[rm.Doc], sets[oc.Keeper])}
			if was, ok := old[it.Doc]; ok && was.Keeper == it.Keeper {
				it.Decision, it.DecidedBy, it.DecidedAt, it.BulkBar = was.Decision, was.DecidedBy, was.DecidedAt, was.BulkBar
			}
			dc.Items = append(dc.Items, it)
		}
		now = append(now, dc)
	}
	return now, nil
}

// Comment adds a comment on a manifest, or on one of its clusters (cluster not 0).
func Comment(ctx context.Context, store *db.DB, by db.User, m db.Manifest, clusterID int64, text string) error {
	return refusal(ctx, store, by, m, ActComment, comment(ctx, store, by, m, clusterID, text))
}

// comment is the verb itself; its exported form audits a refusal.
func comment(ctx context.Context, store *db.DB, by db.User, m db.Manifest, clusterID int64, text string) error {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return &review.InputError{Field: "comment", Msg: "empty"}
	case len(text) > MaxComment:
		return &review.InputError{Field: "comment", Msg: fmt.Sprintf("at most %d bytes", MaxComment)}
	}
	_, err := store.AddReview(ctx, by, m.ID, db.NewReview{Verdict: review.Comment, Comment: text, Cluster: clusterID}, nil)
	return err
}

// Similarities returns the exact Jaccard similarity under spec of every pair of the
// documents ids (1 on the diagonal), for a cluster's similarity matrix.
func Similarities(ctx context.Context, store *db.DB, spec lsh.Spec, ids []int64) ([][]float64, error) {
	texts, err := store.DocumentTexts(ctx, ids)
	if err != nil {
		return nil, err
	}
	h, err := lsh.NewHasher(spec)
	if err != nil {
		return nil, err
	}
	sets := make([][]uint64, len(texts))
	for i, t := range texts {
		sets[i] = h.ShingleSet(t)
	}
	out := make([][]float64, len(ids))
	for i := range out {
		out[i] = make([]float64, len(ids))
		out[i][i] = 1
		for j := range i {
			s := lsh.ExactJaccard(sets[i], sets[j])
			out[i][j], out[j][i] = s, s
		}
	}
	return out, nil
}
