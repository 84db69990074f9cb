package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Live documents: a dataset's documents under no standing tombstone. Runs read them
// (LiveState), every change of them is logged (live_changes), and a manifest's
// staleness, its conflicts with other manifests and its deciders are read here (the
// rules are internal/review's).

// RemovedBy counts the documents of a dataset one manifest's standing tombstones hold.
type RemovedBy struct {
	Manifest  int64
	Documents int
	At        time.Time // the first of them
}

// LiveState is what a run reads of a dataset before it starts, in one read
// transaction: the live documents (without text, import order), what the others are
// removed by, the snapshot hash of the live documents and the marks of the newest live
// change and label event.
type LiveState struct {
	Docs      []DocInfo
	Removed   []RemovedBy
	Snapshot  string
	LiveMark  int64
	LabelMark int64
}

// LiveState reads a dataset's live documents, the tombstones that hold the others, the
// snapshot of the live documents and the marks, all from one view of the store.
func (d *DB) LiveState(ctx context.Context, datasetID int64) (LiveState, error) {
	var ls LiveState
	err := d.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		if ls.Docs, err = collect(ctx, tx, `SELECT `+docInfoColumns+` FROM documents d WHERE dataset_id = ?
			AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.document_id = d.id AND t.restored_at IS NULL) ORDER BY id`,
			scanDocInfo, datasetID); err != nil {
			return err
		}
		if ls.Removed, err = removedBy(ctx, tx, datasetID); err != nil {
			return err
		}
		if ls.Snapshot, err = datasetSnapshot(ctx, tx, datasetID, 0); err != nil {
			return err
		}
		if ls.LiveMark, err = liveMark(ctx, tx, datasetID); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM label_events`).Scan(&ls.LabelMark)
	})
	if err != nil {
		return ls, fmt.Errorf("live documents of dataset %d: %w", datasetID, err)
	}
	return ls, nil
}

// RemovedDocuments counts a dataset's documents under standing tombstones, by the
// manifest that holds them (the run form's "removed by" links).
func (d *DB) RemovedDocuments(ctx context.Context, datasetID int64) ([]RemovedBy, error) {
	list, err := removedBy(ctx, d.r, datasetID)
	if err != nil {
		return nil, fmt.Errorf("removed documents of dataset %d: %w", datasetID, err)
	}
	return list, nil
}

func removedBy(ctx context.Context, q querier, datasetID int64) ([]RemovedBy, error) {
	return collect(ctx, q, `SELECT t.manifest_id, count(*), min(t.removed_at) FROM tombstones t JOIN documents d ON d.id = t.document_id
		WHERE d.dataset_id = ? AND t.restored_at IS NULL GROUP BY t.manifest_id ORDER BY t.manifest_id`,
		func(sc scanner) (RemovedBy, error) {
			var r RemovedBy
			var at string
			if err := sc.Scan(&r.Manifest, &r.Documents, &at); err != nil {
				return r, err
			}
			var err error
			r.At, err = parseTime("removed_at", at)
			return r, err
		}, datasetID)
}

// Tombstoned returns the documents of a dataset under a standing tombstone, each with the
// manifest that holds it.
func (d *DB) Tombstoned(ctx context.Context, datasetID int64) (map[int64]int64, error) {
	type pair struct{ doc, manifest int64 }
	list, err := queryAll(ctx, d, `SELECT t.document_id, t.manifest_id FROM tombstones t JOIN documents d ON d.id = t.document_id
		WHERE d.dataset_id = ? AND t.restored_at IS NULL`, func(sc scanner) (pair, error) {
		var p pair
		return p, sc.Scan(&p.doc, &p.manifest)
	}, datasetID)
	if err != nil {
		return nil, fmt.Errorf("tombstoned documents of dataset %d: %w", datasetID, err)
	}
	out := make(map[int64]int64, len(list))
	for _, p := range list {
		out[p.doc] = p.manifest
	}
	return out, nil
}

// readTx runs fn in a read-only transaction: one consistent view of the store.
func (d *DB) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

func liveMark(ctx context.Context, q querier, datasetID int64) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM live_changes WHERE dataset_id = ?`, datasetID).Scan(&n)
	return n, err
}

// logChange records a change of a dataset's live documents inside the transaction that
// makes it (after it), with the snapshot of the live documents it leaves.
func (d *DB) logChange(ctx context.Context, tx *sql.Tx, by User, datasetID, manifestID int64, kind string, n int, doc int64) error {
	snap, err := datasetSnapshot(ctx, tx, datasetID, 0)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO live_changes (dataset_id, manifest_id, kind, documents, document_id, user_id, actor, at, snapshot)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, datasetID, manifestID, kind, n, nullID(doc), nullID(by.ID), by.Name, d.stamp(), snap)
	return err
}

// maxExamples is how many documents a change or conflict names.
const maxExamples = 5

// Staleness returns what changed under a manifest since its run read the dataset:
// changes of the live documents made by other manifests, and label events of its
// campaign, those on the pairs of manifests' audits aside (an audit's labels are its
// own, live figure; were they to make manifests stale, an audit would stale the very
// manifest it checks, and two audits in one campaign each other). Changes that left the live documents as they were (an export revoked since)
// do not count: the snapshot of the live documents is the run's. Only a manifest that
// may still be exported (review.Open) goes stale.
func (d *DB) Staleness(ctx context.Context, m Manifest) (review.Staleness, error) {
	s, err := staleness(ctx, d.r, m)
	if err != nil {
		return s, fmt.Errorf("staleness of manifest %d: %w", m.ID, err)
	}
	return s, nil
}

// StalenessOf is Staleness for several manifests, reading each dataset's snapshot once.
func (d *DB) StalenessOf(ctx context.Context, ms []Manifest) (map[int64]review.Staleness, error) {
	snaps := map[int64]string{}
	out := make(map[int64]review.Staleness, len(ms))
	for _, m := range ms {
		s, err := stalenessWith(ctx, d.r, m, snaps)
		if err != nil {
			return nil, fmt.Errorf("staleness of manifest %d: %w", m.ID, err)
		}
		out[m.ID] = s
	}
	return out, nil
}

func staleness(ctx context.Context, q querier, m Manifest) (review.Staleness, error) {
	return stalenessWith(ctx, q, m, map[int64]string{})
}

// stalenessWith is staleness, with the snapshots of the datasets read so far (an open
// manifest holds no tombstone of its own, so its dataset's snapshot is every open
// manifest's).
func stalenessWith(ctx context.Context, q querier, m Manifest, snaps map[int64]string) (review.Staleness, error) {
	var s review.Staleness
	if !review.Open(m.State) {
		return s, nil
	}
	type row struct {
		c     review.LiveChange
		docID int64
	}
	rows, err := collect(ctx, q, `SELECT c.id, c.manifest_id, c.kind, c.documents, coalesce(c.document_id, 0), coalesce(d.ext_id, ''),
		coalesce(u.name, c.actor), c.at FROM live_changes c LEFT JOIN users u ON u.id = c.user_id LEFT JOIN documents d ON d.id = c.document_id
		WHERE c.dataset_id = ? AND c.id > ? AND c.manifest_id != ? ORDER BY c.id`,
		func(sc scanner) (row, error) {
			var r row
			var at string
			if err := sc.Scan(&r.c.ID, &r.c.Manifest, &r.c.Kind, &r.c.Documents, &r.docID, &r.c.Document, &r.c.By, &at); err != nil {
				return r, err
			}
			var err error
			r.c.At, err = parseTime("at", at)
			return r, err
		}, m.DatasetID, m.LiveMark, m.ID)
	if err != nil {
		return s, err
	}
	for _, r := range rows {
		c := r.c
		// The documents of this manifest (removals and keepers) the change took away or
		// brought back.
		docs := `SELECT t.document_id FROM tombstones t WHERE t.manifest_id = ?`
		args := []any{c.Manifest}
		if c.Kind == review.ChangeRestore {
			docs, args = `SELECT ?`, []any{r.docID}
		}
		touched, err := collect(ctx, q, `WITH x(id) AS (`+docs+`)
			SELECT d.ext_id FROM x JOIN documents d ON d.id = x.id
			WHERE EXISTS (SELECT 1 FROM manifest_items i WHERE i.document_id = x.id AND i.manifest_id = ?)
			   OR EXISTS (SELECT 1 FROM clusters k WHERE k.keeper_id = x.id AND k.manifest_id = ?) ORDER BY d.id`,
			scanValue[string], append(args, m.ID, m.ID)...)
		if err != nil {
			return s, err
		}
		c.Touched = len(touched)
		c.Examples = touched[:min(len(touched), maxExamples)]
		s.Changes = append(s.Changes, c)
	}
	if len(s.Changes) > 0 {
		// The snapshot the newest change left (every change after the run is another
		// manifest's: an open manifest makes none); hashed again only for changes logged
		// before snapshots were.
		snap, ok := snaps[m.DatasetID]
		if !ok {
			if err := q.QueryRowContext(ctx, `SELECT snapshot FROM live_changes WHERE dataset_id = ? ORDER BY id DESC LIMIT 1`,
				m.DatasetID).Scan(&snap); err != nil {
				return s, err
			}
			if snap == "" {
				if snap, err = datasetSnapshot(ctx, q, m.DatasetID, m.ID); err != nil {
					return s, err
				}
			}
			snaps[m.DatasetID] = snap
		}
		if snap == m.DatasetHash {
			s.Changes = nil // undone since: the live documents are the run's
		}
	}
	if m.LabelMark >= 0 && m.CampaignID != 0 {
		var last string
		if err := q.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT e.pair_id), coalesce(max(e.created_at), ''), coalesce((SELECT name FROM campaigns WHERE id = ?), '')
			FROM label_events e JOIN label_pairs p ON p.id = e.pair_id WHERE e.id > ? AND p.campaign_id = ?
			  AND NOT EXISTS (SELECT 1 FROM audit_pairs ap WHERE ap.pair_id = e.pair_id)`, m.CampaignID, m.LabelMark, m.CampaignID).
			Scan(&s.LabelEvents, &s.LabelPairs, &last, &s.Campaign); err != nil {
			return s, err
		}
		if s.LabelsAt, err = parseOptTime("created_at", last); err != nil {
			return s, err
		}
	}
	return s, nil
}

// LabelsSince counts the label events of a campaign after mark (the sign-off record's
// LabelMark): how many, on how many pairs, the last when.
func (d *DB) LabelsSince(ctx context.Context, campaignID, mark int64) (events, pairs int, last time.Time, err error) {
	var at string
	err = d.r.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT e.pair_id), coalesce(max(e.created_at), '')
		FROM label_events e JOIN label_pairs p ON p.id = e.pair_id WHERE e.id > ? AND p.campaign_id = ?`, mark, campaignID).Scan(&events, &pairs, &at)
	if err == nil {
		last, err = parseOptTime("created_at", at)
	}
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("labels of campaign %d since event %d: %w", campaignID, mark, err)
	}
	return events, pairs, last, nil
}

// exportConflicts lists the approved removals of a manifest that another manifest's
// standing tombstone makes impossible: the document is tombstoned already, or the
// document kept in its place is. It returns the first review.MaxConflicts and how many
// there are.
func exportConflicts(ctx context.Context, q querier, manifestID int64) ([]review.Conflict, int, error) {
	list, err := collect(ctx, q, `SELECT d.ext_id, k.ext_id, x.role, x.manifest_id, x.removed_at FROM (
			SELECT i.document_id AS doc, i.keeper_id AS keeper, 'document' AS role, t.manifest_id, t.removed_at
			FROM manifest_items i JOIN tombstones t ON t.document_id = i.document_id AND t.restored_at IS NULL AND t.manifest_id != i.manifest_id
			WHERE i.manifest_id = ? AND i.decision = 'remove' AND i.reviewed = 1
			UNION ALL
			SELECT i.document_id, i.keeper_id, 'keeper', t.manifest_id, t.removed_at
			FROM manifest_items i JOIN tombstones t ON t.document_id = i.keeper_id AND t.restored_at IS NULL
			WHERE i.manifest_id = ? AND i.decision = 'remove' AND i.reviewed = 1
		) x JOIN documents d ON d.id = x.doc JOIN documents k ON k.id = x.keeper ORDER BY x.doc, x.role`,
		func(sc scanner) (review.Conflict, error) {
			var c review.Conflict
			var at string
			if err := sc.Scan(&c.Doc, &c.Keeper, &c.Role, &c.Manifest, &at); err != nil {
				return c, err
			}
			var err error
			c.At, err = parseTime("removed_at", at)
			return c, err
		}, manifestID, manifestID)
	if err != nil {
		return nil, 0, err
	}
	return list[:min(len(list), review.MaxConflicts)], len(list), nil
}

// maxCrossConflicts bounds the conflicts a page lists.
const maxCrossConflicts = 200

// CrossConflicts lists the documents a manifest keeps that another open manifest
// (review.Open) proposes to remove, and the documents it removes that another open
// manifest keeps (the first maxCrossConflicts), by document; and how many there are.
func (d *DB) CrossConflicts(ctx context.Context, m Manifest) ([]review.CrossConflict, int, error) {
	return d.crossConflicts(ctx, m, 0)
}

// CrossConflictsIn is CrossConflicts for one cluster of the manifest.
func (d *DB) CrossConflictsIn(ctx context.Context, m Manifest, clusterID int64) ([]review.CrossConflict, error) {
	list, _, err := d.crossConflicts(ctx, m, clusterID)
	return list, err
}

func (d *DB) crossConflicts(ctx context.Context, m Manifest, clusterID int64) ([]review.CrossConflict, int, error) {
	if !review.Open(m.State) {
		return nil, 0, nil
	}
	list, err := queryAll(ctx, d, `SELECT x.doc, d.ext_id, x.here, x.other, x.other_cluster, x.kept_here, o.state FROM (
			SELECT c.keeper_id AS doc, c.id AS here, i.manifest_id AS other, coalesce(i.cluster_id, 0) AS other_cluster, 1 AS kept_here
			FROM clusters c JOIN manifest_items i ON i.document_id = c.keeper_id AND i.decision = 'remove' AND i.manifest_id != c.manifest_id
			WHERE c.manifest_id = ? AND (? = 0 OR c.id = ?)
			UNION ALL
			SELECT i.document_id, coalesce(i.cluster_id, 0), c.manifest_id, c.id, 0
			FROM manifest_items i JOIN clusters c ON c.keeper_id = i.document_id AND c.manifest_id != i.manifest_id
			WHERE i.manifest_id = ? AND i.decision = 'remove' AND (? = 0 OR i.cluster_id = ?)
		) x JOIN manifests o ON o.id = x.other JOIN documents d ON d.id = x.doc
		WHERE o.state IN ('draft', 'in_review', 'signed') ORDER BY x.doc, x.other`,
		func(sc scanner) (review.CrossConflict, error) {
			var c review.CrossConflict
			var state string
			if err := sc.Scan(&c.Doc, &c.ExtID, &c.Cluster, &c.Other, &c.OtherCl, &c.KeptHere, &state); err != nil {
				return c, err
			}
			var err error
			c.State, err = review.ParseState(state)
			return c, err
		}, m.ID, clusterID, clusterID, m.ID, clusterID, clusterID)
	if err != nil {
		return nil, 0, fmt.Errorf("conflicts of manifest %d with other manifests: %w", m.ID, err)
	}
	return list[:min(len(list), maxCrossConflicts)], len(list), nil
}

// deciders returns the people who made a manifest's review decisions: whoever decided
// one of its removals as they stand (carried-over decisions keep their decider) and
// whoever changed it (manifest_actions: decisions, bulk approvals, keepers, cuts,
// undos), by id, with their names in order.
func deciders(ctx context.Context, q querier, manifestID int64) (map[int64]bool, []string, error) {
	type who struct {
		id   int64
		name string
	}
	list, err := collect(ctx, q, `SELECT u.id, u.name FROM users u WHERE u.id IN (
			SELECT decided_by FROM manifest_items WHERE manifest_id = ? AND decided_by IS NOT NULL
			UNION SELECT user_id FROM manifest_actions WHERE manifest_id = ?) ORDER BY u.name`,
		func(sc scanner) (who, error) {
			var w who
			return w, sc.Scan(&w.id, &w.name)
		}, manifestID, manifestID)
	if err != nil {
		return nil, nil, err
	}
	ids := make(map[int64]bool, len(list))
	names := make([]string, len(list))
	for i, w := range list {
		ids[w.id], names[i] = true, strings.TrimSpace(w.name)
	}
	return ids, names, nil
}

// Deciders returns the names of the people who made a manifest's review decisions, and
// their ids.
func (d *DB) Deciders(ctx context.Context, manifestID int64) (map[int64]bool, []string, error) {
	ids, names, err := deciders(ctx, d.r, manifestID)
	if err != nil {
		return nil, nil, fmt.Errorf("deciders of manifest %d: %w", manifestID, err)
	}
	return ids, names, nil
}

// PreparedAgain returns the manifests prepared again from a manifest, newest first.
func (d *DB) PreparedAgain(ctx context.Context, manifestID int64) ([]int64, error) {
	list, err := queryAll(ctx, d, `SELECT id FROM manifests WHERE carried_from = ? ORDER BY id DESC`, scanValue[int64], manifestID)
	if err != nil {
		return nil, fmt.Errorf("manifests prepared again from %d: %w", manifestID, err)
	}
	return list, nil
}
