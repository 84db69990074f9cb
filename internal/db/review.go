package db

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// changeSet is what a review action changed, stored before and after it for undo:
// items whose decision changed, or whole clusters (with their items) that were
// re-derived.
type changeSet struct {
	Items    []Item    `json:"items,omitempty"`
	Clusters []Cluster `json:"clusters,omitempty"`
}

// buckets returns the hash buckets of every row a change set holds.
func (cs changeSet) buckets(into map[int]bool) {
	for _, it := range cs.Items {
		into[review.Bucket(it.Doc)] = true
	}
	for _, c := range cs.Clusters {
		for _, it := range c.Items {
			into[review.Bucket(it.Doc)] = true
		}
	}
}

// buckets returns the hash buckets a change touched: those of its rows before and after.
func (ch change) buckets() map[int]bool {
	out := map[int]bool{}
	ch.before.buckets(out)
	ch.after.buckets(out)
	return out
}

// change is one review action inside its transaction.
type change struct {
	action  string
	cluster int64
	summary string
	before  changeSet
	after   changeSet
	detail  map[string]any
}

// commit finishes a change to manifest m inside tx: it refreshes the content hash; if
// the hash moved while the manifest was in review or signed off, it dismisses the
// standing approvals and rejections (and a signed-off manifest goes back to review, its
// sign-off superseded); it records the change for undo and writes its audit event.
func (d *DB) commit(ctx context.Context, tx *sql.Tx, by User, m Manifest, ch change) error {
	old := m.ContentHash
	now, err := refreshHash(ctx, tx, m, ch.buckets())
	if err != nil {
		return err
	}
	stamp := d.stamp()
	dismissed := int64(0)
	if now != old && (m.State == review.InReview || m.State == review.SignedOff) {
		res, err := tx.ExecContext(ctx, `UPDATE reviews SET dismissed_at = ? WHERE manifest_id = ? AND dismissed_at IS NULL AND verdict != 'comment'`,
			stamp, m.ID)
		if err != nil {
			return err
		}
		if dismissed, err = res.RowsAffected(); err != nil {
			return err
		}
		if m.State == review.SignedOff {
			if _, err := tx.ExecContext(ctx, `UPDATE manifests SET state = 'in_review' WHERE id = ?`, m.ID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE signoffs SET superseded_at = ? WHERE manifest_id = ? AND superseded_at IS NULL AND revoked_at IS NULL`,
				stamp, m.ID); err != nil {
				return err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE manifests SET updated_at = ? WHERE id = ?`, stamp, m.ID); err != nil {
		return err
	}
	before, err := json.Marshal(ch.before)
	if err != nil {
		return err
	}
	after, err := json.Marshal(ch.after)
	if err != nil {
		return err
	}
	var cl any
	if ch.cluster != 0 {
		cl = ch.cluster
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO manifest_actions (manifest_id, user_id, action, cluster_id, summary, before, after, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, m.ID, by.ID, ch.action, cl, ch.summary, string(before), string(after), stamp); err != nil {
		return err
	}
	detail := map[string]any{"summary": ch.summary, "manifest_hash": now, "previous_hash": old}
	if ch.cluster != 0 {
		detail["cluster"] = ch.cluster
	}
	if dismissed > 0 {
		detail["dismissed_reviews"] = dismissed
	}
	for k, v := range ch.detail {
		detail[k] = v
	}
	return d.auditBy(ctx, tx, by, "manifest."+ch.action, manifestSubject(m.ID), detail)
}

// inReviewTx runs fn in a write transaction with manifest id as it stands inside it,
// refusing a manifest that no longer changes (review.CanChange): how every change of a
// review starts.
func (d *DB) inReviewTx(ctx context.Context, id int64, fn func(tx *sql.Tx, m Manifest) error) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		m, err := loadManifest(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := review.CanChange(m.State); err != nil {
			return err
		}
		return fn(tx, m)
	})
}

// Decision is a change of some items' decision.
type Decision struct {
	Items    []int64 // item ids of the manifest
	Decision review.Decision
	Action   string // "decide", "decide-cluster"
	Cluster  int64  // the cluster the items are in (for the record), 0 when several
	Summary  string
}

// Decide sets the decision of d.Items (items of another manifest are ErrNotFound), as
// by. Items that have that decision already are left as they are; when none changes,
// nothing is written and it returns 0.
func (d *DB) Decide(ctx context.Context, by User, manifestID int64, dec Decision) (int, error) {
	changed := 0
	err := d.inReviewTx(ctx, manifestID, func(tx *sql.Tx, m Manifest) error {
		items, err := loadItems(ctx, tx, manifestID, dec.Items)
		if err != nil {
			return err
		}
		ch := change{action: dec.Action, cluster: dec.Cluster, summary: dec.Summary,
			detail: map[string]any{"decision": dec.Decision}}
		changed, err = d.decideAll(ctx, tx, by, m, items, dec.Decision, 0, ch)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("decide on %s of manifest %d: %w", review.Quantity(len(dec.Items), "item", "items"), manifestID, err)
	}
	return changed, nil
}

// BulkApprove approves, as by, every undecided removal in the clusters of a manifest
// that are not chained and whose every removal has an exact similarity to its keeper of
// at least bar, recording the bar with each. It returns how many removals it approved
// and in how many clusters.
func (d *DB) BulkApprove(ctx context.Context, by User, manifestID int64, bar float64, expect int) (items, clusters int, err error) {
	err = d.inReviewTx(ctx, manifestID, func(tx *sql.Tx, m Manifest) error {
		list, err := collect(ctx, tx, `SELECT `+itemColumns+` FROM manifest_items i JOIN clusters c ON c.id = i.cluster_id WHERE `+bulkWhere+`
			ORDER BY i.document_id`, scanItem, manifestID, bar)
		if err != nil {
			return err
		}
		clusters = clusterCount(list)
		if expect >= 0 && len(list) != expect {
			return &review.RefusedError{Msg: fmt.Sprintf("the low-risk clusters changed since you looked: %s in %s now, not %s; nothing was approved, look again",
				review.Quantity(len(list), "removal", "removals"), review.Quantity(clusters, "cluster", "clusters"), review.Thousands(expect))}
		}
		summary := fmt.Sprintf("bulk-approved %s in %s at bar %g", review.Quantity(len(list), "removal", "removals"),
			review.Quantity(clusters, "low-risk cluster", "low-risk clusters"), bar)
		ch := change{action: "bulk-approve", summary: summary, detail: map[string]any{"bar": bar, "clusters": clusters}}
		items, err = d.decideAll(ctx, tx, by, m, list, review.Approved, bar, ch)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("bulk approval in manifest %d at %g: %w", manifestID, bar, err)
	}
	return items, clusters, nil
}

// bulkWhere selects a manifest's (first argument) undecided removals in clusters that are
// not chained and whose every removal is at least the bar (second argument) exactly.
const bulkWhere = `i.manifest_id = ? AND i.decision = 'remove' AND i.reviewed = 0 AND c.chained = 0
			  AND NOT EXISTS (SELECT 1 FROM manifest_items x WHERE x.cluster_id = c.id AND coalesce(x.exact, 0) < ?)`

// BulkCandidates counts what BulkApprove at bar would approve now: undecided removals and
// their clusters.
func (d *DB) BulkCandidates(ctx context.Context, manifestID int64, bar float64) (items, clusters int, err error) {
	err = d.r.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT i.cluster_id) FROM manifest_items i JOIN clusters c ON c.id = i.cluster_id WHERE `+bulkWhere,
		manifestID, bar).Scan(&items, &clusters)
	if err != nil {
		return 0, 0, fmt.Errorf("bulk candidates in manifest %d at %g: %w", manifestID, bar, err)
	}
	return items, clusters, nil
}

// loadItems reads items of a manifest by id inside tx; any id not of the manifest is
// ErrNotFound.
func loadItems(ctx context.Context, tx *sql.Tx, manifestID int64, ids []int64) ([]Item, error) {
	var out []Item
	for marks, args := range inLists(ids, manifestID) {
		list, err := collect(ctx, tx, `SELECT `+itemColumns+` FROM manifest_items i WHERE i.manifest_id = ? AND i.id IN (`+marks+`)`,
			scanItem, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	slices.SortFunc(out, func(a, b Item) int { return int(a.ID - b.ID) })
	out = slices.CompactFunc(out, func(a, b Item) bool { return a.ID == b.ID })
	want := slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(out) != len(want) {
		return nil, fmt.Errorf("item of another manifest: %w", ErrNotFound)
	}
	return out, nil
}

// decideAll gives items decision as by (bar for a bulk approval) and commits that as the
// one change ch of m, counting the items in its detail. It returns how many changed; when
// none does, nothing is written.
func (d *DB) decideAll(ctx context.Context, tx *sql.Tx, by User, m Manifest, items []Item, decision review.Decision, bar float64, ch change) (int, error) {
	n, err := d.setDecisions(ctx, tx, by, items, decision, bar, &ch)
	if err != nil || n == 0 {
		return n, err
	}
	ch.detail["items"] = n
	return n, d.commit(ctx, tx, by, m, ch)
}

// clusterCount is how many clusters the items are in.
func clusterCount(items []Item) int {
	seen := map[int64]bool{}
	for _, it := range items {
		seen[it.Cluster] = true
	}
	return len(seen)
}

// setDecisions gives items decision as by (bar for a bulk approval), recording each
// changed item before and after in ch, and rehashing it. It returns how many changed.
func (d *DB) setDecisions(ctx context.Context, tx *sql.Tx, by User, items []Item, decision review.Decision, bar float64, ch *change) (int, error) {
	stamp := d.stamp()
	docs := docCache{}
	for _, it := range items {
		if it.Decision == decision {
			continue
		}
		ch.before.Items = append(ch.before.Items, it)
		it.Decision, it.DecidedBy, it.DecidedAt, it.BulkBar = decision, by.ID, stamp, bar
		if decision == review.Proposed {
			it.DecidedBy, it.DecidedAt, it.BulkBar = 0, "", 0
		}
		if err := updateItem(ctx, tx, it, docs); err != nil {
			return 0, err
		}
		ch.after.Items = append(ch.after.Items, it)
	}
	return len(ch.after.Items), nil
}

// updateItem writes an item's decision fields and its row hash.
func updateItem(ctx context.Context, tx *sql.Tx, it Item, docs docCache) error {
	row, err := itemRow(ctx, tx, it, docs)
	if err != nil {
		return err
	}
	decision, reviewed := storeDecision(it.Decision)
	var decidedAt, bulk any
	if it.DecidedAt != "" {
		decidedAt = it.DecidedAt
	}
	if it.BulkBar != 0 {
		bulk = it.BulkBar
	}
	_, err = tx.ExecContext(ctx, `UPDATE manifest_items SET decision = ?, reviewed = ?, decided_by = ?, decided_at = ?, bulk_bar = ?,
		row_hash = ? WHERE id = ?`, decision, reviewed, nullID(it.DecidedBy), decidedAt, bulk, row.Hash(), it.ID)
	return err
}

// ReplaceCluster re-derives a cluster as by: was is the cluster as the caller read it
// (if it has changed since, nothing is written and the error is ErrStale), now the
// clusters it becomes, the first keeping was's id, the others new. Items keep their ids
// where their document stays in the first cluster. It returns the stored clusters.
func (d *DB) ReplaceCluster(ctx context.Context, by User, manifestID int64, was Cluster, now []Cluster, action, summary string, detail map[string]any) ([]Cluster, error) {
	var stored []Cluster
	err := d.inReviewTx(ctx, manifestID, func(tx *sql.Tx, m Manifest) error {
		cur, err := loadCluster(ctx, tx, manifestID, was.ID)
		if err != nil {
			return err
		}
		if !sameClusters([]Cluster{cur}, []Cluster{was}) {
			return ErrStale
		}
		put := slices.Clone(now)
		for i := range put {
			put[i].ID = 0
			put[i].Items = slices.Clone(put[i].Items)
		}
		if len(put) > 0 {
			put[0].ID = was.ID
			oldID := map[int64]int64{}
			for _, it := range was.Items {
				oldID[it.Doc] = it.ID
			}
			for j := range put[0].Items {
				put[0].Items[j].ID = oldID[put[0].Items[j].Doc]
			}
		}
		if stored, err = applyClusters(ctx, tx, manifestID, []int64{was.ID}, put); err != nil {
			return err
		}
		return d.commit(ctx, tx, by, m, change{action: action, cluster: was.ID, summary: summary, detail: detail,
			before: changeSet{Clusters: []Cluster{cur}}, after: changeSet{Clusters: stored}})
	})
	if err != nil {
		return nil, fmt.Errorf("%s in cluster %d of manifest %d: %w", action, was.ID, manifestID, err)
	}
	return stored, nil
}

// sameClusters compares two lists of clusters as stored.
func sameClusters(a, b []Cluster) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// applyClusters removes the clusters remove (and their items) and stores put: a cluster
// of put whose id is in remove is updated in place (comments on it stay), one with
// another id is inserted with it (undo re-creating a cluster), one with id 0 is new.
// It returns put as stored, each cluster read back.
func applyClusters(ctx context.Context, tx *sql.Tx, manifestID int64, remove []int64, put []Cluster) ([]Cluster, error) {
	keep := map[int64]bool{}
	for _, c := range put {
		if slices.Contains(remove, c.ID) {
			keep[c.ID] = true
		}
	}
	for _, id := range remove {
		if _, err := tx.ExecContext(ctx, `DELETE FROM manifest_items WHERE cluster_id = ? AND manifest_id = ?`, id, manifestID); err != nil {
			return nil, err
		}
		if !keep[id] {
			if _, err := tx.ExecContext(ctx, `DELETE FROM clusters WHERE id = ? AND manifest_id = ?`, id, manifestID); err != nil {
				return nil, err
			}
		}
	}
	docs := docCache{}
	alloc := &idAlloc{}
	var ids []int64
	for _, c := range put {
		if !keep[c.ID] {
			id, err := insertCluster(ctx, tx, alloc, manifestID, c, docs)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
			continue
		}
		links, chain, cut, err := clusterJSON(c)
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE clusters SET keeper_id = ?, keeper_rule = ?, chained = ?, weakest_link = ?, override = ?,
			size = ?, chained_members = ?, weakest_id = ?, links = ?, chain = ?, cut = ? WHERE id = ?`,
			c.Keeper, c.KeeperRule, c.Chained, c.WeakestLink, c.Override, c.Size, c.ChainedMembers, nullID(c.Weakest),
			links, chain, cut, c.ID); err != nil {
			return nil, err
		}
		for _, it := range c.Items {
			it.Cluster = c.ID
			if err := insertItem(ctx, tx, alloc, manifestID, it, docs); err != nil {
				return nil, fmt.Errorf("item of document %d: %w", it.Doc, err)
			}
		}
		ids = append(ids, c.ID)
	}
	out := make([]Cluster, len(ids))
	for i, id := range ids {
		c, err := loadCluster(ctx, tx, manifestID, id)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// Undo withdraws by's latest change to a manifest that is not undone yet, restoring what
// it changed; if someone changed the same items or cluster since, nothing is written and
// the error is ErrStale. It returns the cluster the change was in (0 for none) and false
// when there is nothing to undo.
func (d *DB) Undo(ctx context.Context, by User, manifestID int64) (clusterID int64, ok bool, err error) {
	err = d.inReviewTx(ctx, manifestID, func(tx *sql.Tx, m Manifest) error {
		var id int64
		var action, summary, beforeText, afterText string
		var cl sql.NullInt64
		err = tx.QueryRowContext(ctx, `SELECT id, action, cluster_id, summary, before, after FROM manifest_actions
			WHERE manifest_id = ? AND user_id = ? AND undone_at IS NULL AND action != 'undo' ORDER BY id DESC LIMIT 1`,
			manifestID, by.ID).Scan(&id, &action, &cl, &summary, &beforeText, &afterText)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		var before, after changeSet
		if err := json.Unmarshal([]byte(beforeText), &before); err != nil {
			return fmt.Errorf("action %d: %w", id, err)
		}
		if err := json.Unmarshal([]byte(afterText), &after); err != nil {
			return fmt.Errorf("action %d: %w", id, err)
		}
		if err := restore(ctx, tx, manifestID, before, after); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE manifest_actions SET undone_at = ? WHERE id = ?`, d.stamp(), id); err != nil {
			return err
		}
		ok, clusterID = true, cl.Int64
		return d.commit(ctx, tx, by, m, change{action: "undo", cluster: cl.Int64, summary: "undid: " + summary,
			before: after, after: before, detail: map[string]any{"undid": action, "action_id": id}})
	})
	if err != nil {
		return 0, false, fmt.Errorf("undo in manifest %d: %w", manifestID, err)
	}
	return clusterID, ok, nil
}

// restore puts back what a change had before it, if what it left is still there.
func restore(ctx context.Context, tx *sql.Tx, manifestID int64, before, after changeSet) error {
	if len(after.Items) > 0 {
		ids := make([]int64, len(after.Items))
		for i, it := range after.Items {
			ids[i] = it.ID
		}
		cur, err := loadItems(ctx, tx, manifestID, ids)
		if errors.Is(err, ErrNotFound) {
			return ErrStale // an item re-derived away since
		}
		if err != nil {
			return err
		}
		byID := map[int64]Item{}
		for _, it := range cur {
			byID[it.ID] = it
		}
		docs := docCache{}
		for i, want := range after.Items {
			if byID[want.ID] != want {
				return ErrStale
			}
			if err := updateItem(ctx, tx, before.Items[i], docs); err != nil {
				return err
			}
		}
	}
	if len(after.Clusters) > 0 || len(before.Clusters) > 0 {
		var ids []int64
		var cur []Cluster
		for _, c := range after.Clusters {
			x, err := loadCluster(ctx, tx, manifestID, c.ID)
			if errors.Is(err, ErrNotFound) {
				return ErrStale
			}
			if err != nil {
				return err
			}
			cur = append(cur, x)
			ids = append(ids, c.ID)
		}
		if !sameClusters(cur, after.Clusters) {
			return ErrStale
		}
		if _, err := applyClusters(ctx, tx, manifestID, ids, before.Clusters); err != nil {
			return err
		}
	}
	return nil
}

// Action is one of a person's recent changes to a manifest.
type Action struct {
	ID      int64
	Action  string
	Cluster int64
	Summary string
	Undone  bool
	At      time.Time
}

// RecentActions returns a user's latest changes to a manifest, newest first.
func (d *DB) RecentActions(ctx context.Context, manifestID, userID int64, limit int) ([]Action, error) {
	list, err := queryAll(ctx, d, `SELECT id, action, coalesce(cluster_id, 0), summary, undone_at IS NOT NULL, created_at
		FROM manifest_actions WHERE manifest_id = ? AND user_id = ? ORDER BY id DESC LIMIT ?`,
		func(sc scanner) (Action, error) {
			var a Action
			var at string
			if err := sc.Scan(&a.ID, &a.Action, &a.Cluster, &a.Summary, &a.Undone, &at); err != nil {
				return a, err
			}
			var err error
			a.At, err = parseTime("created_at", at)
			return a, err
		}, manifestID, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("recent actions in manifest %d: %w", manifestID, err)
	}
	return list, nil
}

// undecidedRemovals counts the removals of a manifest that have no decision yet.
func undecidedRemovals(ctx context.Context, tx *sql.Tx, manifestID int64) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM manifest_items WHERE manifest_id = ? AND decision = 'remove' AND reviewed = 0`,
		manifestID).Scan(&n)
	return n, err
}

// RequestSignOff sends a draft to review, as by, when every removal has a decision and
// nothing changed under it since its run (a *review.OutdatedError names what did).
func (d *DB) RequestSignOff(ctx context.Context, by User, manifestID int64) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		m, err := loadManifest(ctx, tx, manifestID)
		if err != nil {
			return err
		}
		undecided, err := undecidedRemovals(ctx, tx, manifestID)
		if err != nil {
			return err
		}
		if err := review.CanRequestSignOff(m.State, undecided); err != nil {
			return err
		}
		st, err := staleness(ctx, tx, m)
		if err != nil {
			return err
		}
		if st.Stale() {
			return &review.OutdatedError{Action: "request sign-off", Staleness: st}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE manifests SET state = 'in_review', updated_at = ? WHERE id = ?`, d.stamp(), manifestID); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, by, "manifest.request-signoff", manifestSubject(manifestID), map[string]any{
			"manifest_hash": m.ContentHash, "approvals_required": m.ApprovalsRequired})
	})
	if err != nil {
		return fmt.Errorf("request sign-off of manifest %d: %w", manifestID, err)
	}
	return nil
}

// SetApprovalsRequired changes how many approvals sign a draft off. Fewer than
// review.DefaultApprovals is recorded as a lowering (team says why: how many may
// approve), on the manifest, in the audit log and, at sign-off, in the record.
func (d *DB) SetApprovalsRequired(ctx context.Context, by User, manifestID int64, n int, team string) error {
	if err := review.CheckApprovals(n); err != nil {
		return fmt.Errorf("set approvals of manifest %d: %w", manifestID, err)
	}
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		m, err := loadManifest(ctx, tx, manifestID)
		if err != nil {
			return err
		}
		if m.State != review.Draft {
			return &review.RefusedError{Msg: "the number of approvals is set while the manifest is a draft; this one is " + m.State.Label()}
		}
		lowered, lowering := "", review.Lowered(n, by.Name, d.now(), team)
		if lowering != nil {
			b, err := json.Marshal(lowering)
			if err != nil {
				return err
			}
			lowered = string(b)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE manifests SET approvals_required = ?, approvals_lowered = ?, updated_at = ? WHERE id = ?`,
			n, lowered, d.stamp(), manifestID); err != nil {
			return err
		}
		detail := map[string]any{"approvals_required": map[string]int{"before": m.ApprovalsRequired, "after": n}}
		if lowering != nil {
			detail["approvals_lowered"] = lowering
		}
		return d.auditBy(ctx, tx, by, "manifest.settings", manifestSubject(manifestID), detail)
	})
	if err != nil {
		return fmt.Errorf("set approvals of manifest %d: %w", manifestID, err)
	}
	return nil
}

const reviewColumns = `r.id, r.user_id, u.name, r.role, r.verdict, r.manifest_hash, r.comment, coalesce(r.cluster_id, 0), r.created_at,
	r.dismissed_at IS NOT NULL`

func scanReview(sc scanner) (review.Review, error) {
	var r review.Review
	var verdict, at string
	if err := sc.Scan(&r.ID, &r.UserID, &r.Name, &r.Role, &verdict, &r.Hash, &r.Comment, &r.Cluster, &at, &r.Dismissed); err != nil {
		return r, err
	}
	r.Verdict = review.Verdict(verdict)
	var err error
	r.At, err = parseTime("created_at", at)
	return r, err
}

// Reviews returns every verdict and comment on a manifest, oldest first.
func (d *DB) Reviews(ctx context.Context, manifestID int64) ([]review.Review, error) {
	list, err := collect(ctx, d.r, `SELECT `+reviewColumns+` FROM reviews r JOIN users u ON u.id = r.user_id WHERE r.manifest_id = ? ORDER BY r.id`,
		scanReview, manifestID)
	if err != nil {
		return nil, fmt.Errorf("reviews of manifest %d: %w", manifestID, err)
	}
	return list, nil
}

// Seal builds the sign-off record inside the transaction that signs a manifest off, from
// what that transaction read. It must not use the store.
type Seal func(s Sealing) (review.Record, error)

// Sealing is what the signing transaction read.
type Sealing struct {
	Manifest    Manifest
	Reviews     []review.Review
	Tally       review.Tally
	DatasetHash string
	Deciders    []string
	At          time.Time
	// AuditHead is the audit chain's head with the approval that signs off as its last
	// entry, for the record to publish.
	AuditHead review.AuditHead
	// Audit is the manifest's open audit as it stands (nil: none), Gate the team's rule
	// on audits: the seal refuses the sign-off when the rule is not met.
	Audit *AuditState
	Gate  review.AuditGate
}

// NewReview is an approver's verdict or a comment.
type NewReview struct {
	Verdict review.Verdict
	Comment string
	Cluster int64 // a comment about one cluster
	// Hash is the manifest content hash the person saw; an approval or rejection of a
	// manifest that changed since is ErrStale.
	Hash string
}

// ReviewResult is what AddReview did.
type ReviewResult struct {
	// Signed: the approval completed the tally and signed the manifest off.
	Signed bool
	// Repeated: the person's standing verdict on this content hash was this one
	// already (a double click, a replayed post): nothing was stored.
	Repeated bool
	// Waiting names the deciders when the approvals are enough in number but all of
	// them are deciders': an approver who made none of its decisions must approve too.
	Waiting *review.SeparationError
}

// AddReview records by's verdict on a manifest. An approval or rejection equal to the
// person's standing one on the same hash is not stored again. An approval of a stale
// manifest is refused (*review.OutdatedError). When it is the approval that makes the
// tally sign the manifest off (review.Tally.SignsOff, and at least one approval by
// someone who made none of its review decisions: review.Tally.Apart), the same
// transaction computes the dataset snapshot, reads the manifest's audit and the team's
// rule on audits, asks seal for the record (an error from seal, such as the audit rule
// refusing, refuses the approval: nothing is stored), stores the sign-off and moves the
// manifest to signed off.
func (d *DB) AddReview(ctx context.Context, by User, manifestID int64, nr NewReview, seal Seal) (ReviewResult, error) {
	var out ReviewResult
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		m, err := loadManifest(ctx, tx, manifestID)
		if err != nil {
			return err
		}
		if nr.Verdict != review.Comment {
			var last string
			err := tx.QueryRowContext(ctx, `SELECT verdict FROM reviews WHERE manifest_id = ? AND user_id = ? AND verdict != 'comment'
				AND dismissed_at IS NULL AND manifest_hash = ? ORDER BY id DESC LIMIT 1`, manifestID, by.ID, m.ContentHash).Scan(&last)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if last == string(nr.Verdict) && nr.Hash == m.ContentHash {
				if nr.Verdict == review.Approve && review.Open(m.State) {
					st, err := staleness(ctx, tx, m)
					if err != nil {
						return err
					}
					if st.Stale() {
						return &review.OutdatedError{Action: "approval", Staleness: st}
					}
				}
				out.Repeated = true
				return nil
			}
		}
		if err := review.CanReview(m.State, nr.Verdict, m.PreparedBy, by.ID); err != nil {
			return err
		}
		if nr.Verdict != review.Comment && nr.Hash != m.ContentHash {
			return fmt.Errorf("manifest hash %s shown, %s now: %w", review.Short(nr.Hash), review.Short(m.ContentHash), ErrStale)
		}
		if nr.Verdict == review.Approve {
			st, err := staleness(ctx, tx, m)
			if err != nil {
				return err
			}
			if st.Stale() {
				return &review.OutdatedError{Action: "approval", Staleness: st}
			}
		}
		var cl any
		if nr.Cluster != 0 {
			cl = nr.Cluster
		}
		stamp := d.now()
		if _, err := tx.ExecContext(ctx, `INSERT INTO reviews (manifest_id, user_id, verdict, manifest_hash, comment, role, cluster_id, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, manifestID, by.ID, string(nr.Verdict), m.ContentHash, nr.Comment, string(by.Role), cl,
			formatTime(stamp)); err != nil {
			return err
		}
		detail := map[string]any{"verdict": nr.Verdict, "manifest_hash": m.ContentHash}
		if nr.Comment != "" {
			detail["comment"] = nr.Comment
		}
		if nr.Cluster != 0 {
			detail["cluster"] = nr.Cluster
		}
		if err := d.auditBy(ctx, tx, by, "manifest.review", manifestSubject(manifestID), detail); err != nil {
			return err
		}
		if nr.Verdict != review.Approve {
			return nil
		}
		reviews, err := collect(ctx, tx, `SELECT `+reviewColumns+` FROM reviews r JOIN users u ON u.id = r.user_id WHERE r.manifest_id = ? ORDER BY r.id`,
			scanReview, manifestID)
		if err != nil {
			return err
		}
		undecided, err := undecidedRemovals(ctx, tx, manifestID)
		if err != nil {
			return err
		}
		tally := review.TallyOf(reviews, m.PreparedBy)
		if !tally.SignsOff(m.ApprovalsRequired, undecided) {
			return nil
		}
		decidedBy, names, err := deciders(ctx, tx, manifestID)
		if err != nil {
			return err
		}
		if !tally.Apart(decidedBy) {
			out.Waiting = &review.SeparationError{Deciders: names}
			return nil
		}
		snapshot, err := datasetSnapshot(ctx, tx, m.DatasetID, m.ID)
		if err != nil {
			return err
		}
		if snapshot != m.DatasetHash {
			return &review.StaleError{What: "dataset", Signed: m.DatasetHash, Current: snapshot, AtSignOff: true}
		}
		sealing := Sealing{Manifest: m, Reviews: reviews, Tally: tally, DatasetHash: snapshot, Deciders: names, At: stamp.UTC()}
		switch st, err := auditState(ctx, tx, m.ID); {
		case err == nil:
			sealing.Audit = &st
		case !errors.Is(err, ErrNotFound):
			return err
		}
		if sealing.Gate, err = auditGate(ctx, tx); err != nil {
			return err
		}
		if sealing.AuditHead, err = auditHead(ctx, tx); err != nil {
			return err
		}
		rec, err := seal(sealing)
		if err != nil {
			return err
		}
		text, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO signoffs (manifest_id, manifest_hash, dataset_hash, record, created_at) VALUES (?, ?, ?, ?, ?)`,
			manifestID, m.ContentHash, snapshot, string(text), formatTime(stamp)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE manifests SET state = 'signed', updated_at = ? WHERE id = ?`, formatTime(stamp), manifestID); err != nil {
			return err
		}
		out.Signed = true
		approvers := make([]string, len(tally.Approvals))
		for i, a := range tally.Approvals {
			approvers[i] = a.Name
		}
		detail = map[string]any{"manifest_hash": m.ContentHash, "dataset_hash": snapshot, "approvers": approvers, "deciders": names}
		if m.ApprovalsLowered != nil {
			detail["approvals_lowered"] = m.ApprovalsLowered
		}
		return d.auditBy(ctx, tx, by, "manifest.signoff", manifestSubject(manifestID), detail)
	})
	if err != nil {
		return ReviewResult{}, fmt.Errorf("review of manifest %d: %w", manifestID, err)
	}
	return out, nil
}

// SignOff is a stored sign-off.
type SignOff struct {
	ID           int64
	ManifestHash string
	DatasetHash  string
	Record       review.Record
	At           time.Time
	Superseded   bool // a later change to the manifest ended it
	Revoked      bool
	RevokedBy    string
	RevokedAt    time.Time
	RevokeReason string
}

// Current reports whether the sign-off still holds.
func (s SignOff) Current() bool { return !s.Superseded && !s.Revoked }

// SignOffs returns a manifest's sign-offs, newest first.
func (d *DB) SignOffs(ctx context.Context, manifestID int64) ([]SignOff, error) {
	list, err := collect(ctx, d.r, signOffQuery+` ORDER BY s.id DESC`, scanSignOff, manifestID)
	if err != nil {
		return nil, fmt.Errorf("sign-offs of manifest %d: %w", manifestID, err)
	}
	return list, nil
}

const signOffQuery = `SELECT s.id, s.manifest_hash, s.dataset_hash, s.record, s.created_at, s.superseded_at IS NOT NULL,
	s.revoked_at IS NOT NULL, coalesce(u.name, ''), coalesce(s.revoked_at, ''), s.revoke_reason
	FROM signoffs s LEFT JOIN users u ON u.id = s.revoked_by WHERE s.manifest_id = ?`

func scanSignOff(sc scanner) (SignOff, error) {
	var s SignOff
	var rec, at, revokedAt string
	if err := sc.Scan(&s.ID, &s.ManifestHash, &s.DatasetHash, &rec, &at, &s.Superseded, &s.Revoked, &s.RevokedBy, &revokedAt,
		&s.RevokeReason); err != nil {
		return s, notFound(err)
	}
	if err := json.Unmarshal([]byte(rec), &s.Record); err != nil {
		return s, fmt.Errorf("sign-off %d: column record: %w", s.ID, err)
	}
	var err error
	if s.At, err = parseTime("created_at", at); err != nil {
		return s, err
	}
	s.RevokedAt, err = parseOptTime("revoked_at", revokedAt)
	return s, err
}

// OutsideSampleBar is the bulk_bar of a removal approved by ApproveOutsideSample: not a
// similarity bar but the review of the sample it stands on.
const OutsideSampleBar = -1

// ErrSampleUndecided is ApproveOutsideSample before every removal of the sample has a
// decision.
var ErrSampleUndecided = errkind.New(errkind.Conflict, "the review sample still has undecided removals")

// ApproveOutsideSample approves, as by, every undecided removal of the clusters outside a
// manifest's review sample, once every removal in the sample has a decision: whoever
// reviewed the sample vouches for the rest of the run, in one recorded action (a bulk
// approval with OutsideSampleBar, listed in the sign-off record). It returns how many
// removals it approved and in how many clusters.
func (d *DB) ApproveOutsideSample(ctx context.Context, by User, manifestID int64) (items, clusters int, err error) {
	err = d.inReviewTx(ctx, manifestID, func(tx *sql.Tx, m Manifest) error {
		var sampled, undecided int
		if err := tx.QueryRowContext(ctx, `SELECT count(DISTINCT c.id), coalesce(sum(i.decision = 'remove' AND i.reviewed = 0), 0)
			FROM clusters c LEFT JOIN manifest_items i ON i.cluster_id = c.id
			WHERE c.manifest_id = ? AND c.sample_stratum IS NOT NULL`, manifestID).Scan(&sampled, &undecided); err != nil {
			return err
		}
		if sampled == 0 {
			return &review.InputError{Field: "sample", Msg: "this manifest has no review sample: every cluster is reviewed"}
		}
		if undecided > 0 {
			return fmt.Errorf("%s of the sample undecided: %w", review.Quantity(undecided, "removal", "removals"), ErrSampleUndecided)
		}
		list, err := collect(ctx, tx, `SELECT `+itemColumns+` FROM manifest_items i JOIN clusters c ON c.id = i.cluster_id
			WHERE i.manifest_id = ? AND i.decision = 'remove' AND i.reviewed = 0 AND c.sample_stratum IS NULL
			ORDER BY i.document_id`, scanItem, manifestID)
		if err != nil {
			return err
		}
		clusters = clusterCount(list)
		summary := fmt.Sprintf("approved %s in %s outside the review sample of %s", review.Quantity(len(list), "removal", "removals"),
			review.Quantity(clusters, "cluster", "clusters"), review.Quantity(sampled, "cluster", "clusters"))
		ch := change{action: "approve-outside-sample", summary: summary, detail: map[string]any{"clusters": clusters, "sampled_clusters": sampled}}
		items, err = d.decideAll(ctx, tx, by, m, list, review.Approved, OutsideSampleBar, ch)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("approve outside the sample of manifest %d: %w", manifestID, err)
	}
	return items, clusters, nil
}
