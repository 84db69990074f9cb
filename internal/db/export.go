package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// datasetSnapshot hashes the live documents of a dataset (review.DatasetHasher): every
// document but those under a standing tombstone of a manifest other than except.
func datasetSnapshot(ctx context.Context, q querier, datasetID, except int64) (string, error) {
	rows, err := q.QueryContext(ctx, `SELECT d.ext_id, d.content_hash FROM documents d WHERE d.dataset_id = ?
		AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.document_id = d.id AND t.restored_at IS NULL AND t.manifest_id != ?)
		ORDER BY d.id`, datasetID, except)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	h := review.NewDatasetHasher()
	for rows.Next() {
		var ext, hash string
		if err := rows.Scan(&ext, &hash); err != nil {
			return "", err
		}
		h.Add(ext, hash)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	return h.Sum(), nil
}

// DatasetSnapshot returns the snapshot hash of a dataset's live documents, leaving out
// the tombstones of manifest except (0 for none).
func (d *DB) DatasetSnapshot(ctx context.Context, datasetID, except int64) (string, error) {
	s, err := datasetSnapshot(ctx, d.r, datasetID, except)
	if err != nil {
		return "", fmt.Errorf("snapshot of dataset %d: %w", datasetID, err)
	}
	return s, nil
}

// currentSignOff reads the standing sign-off of a manifest inside tx.
func currentSignOff(ctx context.Context, q querier, manifestID int64) (SignOff, error) {
	return scanSignOff(q.QueryRowContext(ctx, signOffQuery+` AND s.superseded_at IS NULL AND s.revoked_at IS NULL ORDER BY s.id DESC LIMIT 1`, manifestID))
}

// verifyAgainst recomputes, inside q's view, the manifest's content hash from its rows
// and the dataset snapshot, and compares both with the sign-off: a difference is a
// *review.StaleError. It returns the rows.
func verifyAgainst(ctx context.Context, q querier, m Manifest, so SignOff) ([]review.Row, error) {
	rows, err := collect(ctx, q, rowsQuery, scanRow, m.ID)
	if err != nil {
		return nil, err
	}
	if now := review.ManifestHash(m.Dataset, m.Params, rows); now != so.ManifestHash {
		return nil, &review.StaleError{What: "manifest", Signed: so.ManifestHash, Current: now}
	}
	snap, err := datasetSnapshot(ctx, q, m.DatasetID, m.ID)
	if err != nil {
		return nil, err
	}
	if snap != so.DatasetHash {
		return nil, &review.StaleError{What: "dataset", Signed: so.DatasetHash, Current: snap}
	}
	return rows, nil
}

// Export applies a signed-off manifest, as by, in one transaction: it refuses when the
// dataset's live documents changed since the run (*review.OutdatedError, naming the
// changes and the manifests that made them), when an approved removal's document or
// keeper is tombstoned already (*review.ConflictError, naming each with the manifest
// that tombstoned it and when), or when the content hash recomputed from the stored rows
// or the snapshot recomputed from the stored documents differs from the sign-off
// (*review.StaleError); otherwise it tombstones every approved removal, logs the change
// of the live documents and marks the manifest exported. A refusal writes nothing.
// Nothing is deleted. It returns the rows.
func (d *DB) Export(ctx context.Context, by User, manifestID int64) ([]review.Row, error) {
	var rows []review.Row
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		m, err := loadManifest(ctx, tx, manifestID)
		if err != nil {
			return err
		}
		if err := review.CanExport(m.State); err != nil {
			return err
		}
		so, err := currentSignOff(ctx, tx, manifestID)
		if err != nil {
			return fmt.Errorf("no standing sign-off: %w", err)
		}
		st, err := staleness(ctx, tx, m)
		if err != nil {
			return err
		}
		if st.Dataset() {
			st.LabelEvents = 0 // labels after the sign-off mark its record, they do not stop the export
			return &review.OutdatedError{Action: "export", Staleness: st}
		}
		conflicts, total, err := exportConflicts(ctx, tx, manifestID)
		if err != nil {
			return err
		}
		if total > 0 {
			return &review.ConflictError{Conflicts: conflicts, Total: total}
		}
		if rows, err = verifyAgainst(ctx, tx, m, so); err != nil {
			return err
		}
		stamp := d.stamp()
		n := 0
		for _, r := range review.ApprovedRows(rows) {
			res, err := tx.ExecContext(ctx, `INSERT INTO tombstones (document_id, manifest_id, removed_at) VALUES (?, ?, ?)
				ON CONFLICT (document_id) DO UPDATE SET manifest_id = excluded.manifest_id, removed_at = excluded.removed_at,
				restored_at = NULL, restored_by = NULL WHERE tombstones.restored_at IS NOT NULL`, r.Doc, manifestID, stamp)
			if err != nil {
				return err
			}
			if err := oneRow(res); err != nil {
				return fmt.Errorf("document %s is already removed by another manifest: %w", r.ExtID, ErrConflict)
			}
			n++
		}
		if err := d.logChange(ctx, tx, by, m.DatasetID, manifestID, review.ChangeExport, n, 0); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE manifests SET state = 'applied', updated_at = ? WHERE id = ?`, stamp, manifestID); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, by, "manifest.export", manifestSubject(manifestID), map[string]any{
			"removals": n, "manifest_hash": so.ManifestHash, "dataset_hash": so.DatasetHash})
	})
	if err != nil {
		return nil, fmt.Errorf("export manifest %d: %w", manifestID, err)
	}
	return rows, nil
}

// ExportedRows returns the rows of an exported manifest after checking, as Export does,
// that neither the manifest nor the dataset changed since the sign-off (downloads of an
// export stay bound to what was signed).
func (d *DB) ExportedRows(ctx context.Context, manifestID int64) ([]review.Row, SignOff, error) {
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, SignOff{}, fmt.Errorf("rows of manifest %d: %w", manifestID, err)
	}
	defer tx.Rollback()
	m, err := loadManifest(ctx, tx, manifestID)
	if err != nil {
		return nil, SignOff{}, fmt.Errorf("rows of manifest %d: %w", manifestID, err)
	}
	if m.State != review.Exported {
		return nil, SignOff{}, &review.RefusedError{Msg: "downloads are made when the manifest is exported; this one is " + m.State.Label()}
	}
	so, err := currentSignOff(ctx, tx, manifestID)
	if err != nil {
		return nil, SignOff{}, fmt.Errorf("rows of manifest %d: no standing sign-off: %w", manifestID, err)
	}
	rows, err := verifyAgainst(ctx, tx, m, so)
	if err != nil {
		return nil, SignOff{}, fmt.Errorf("rows of manifest %d: %w", manifestID, err)
	}
	return rows, so, nil
}

// Revoke ends a signed-off or exported manifest, as by, for reason: its sign-off is
// revoked and every tombstone it made is restored, in one transaction.
func (d *DB) Revoke(ctx context.Context, by User, manifestID int64, reason string) (restored int, err error) {
	err = d.inTx(ctx, func(tx *sql.Tx) error {
		m, err := loadManifest(ctx, tx, manifestID)
		if err != nil {
			return err
		}
		if err := review.CanRevoke(m.State); err != nil {
			return err
		}
		stamp := d.stamp()
		res, err := tx.ExecContext(ctx, `UPDATE tombstones SET restored_at = ?, restored_by = ? WHERE manifest_id = ? AND restored_at IS NULL`,
			stamp, by.ID, manifestID)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		restored = int(n)
		if restored > 0 {
			if err := d.logChange(ctx, tx, by, m.DatasetID, manifestID, review.ChangeRevoke, restored, 0); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE signoffs SET revoked_at = ?, revoked_by = ?, revoke_reason = ?
			WHERE manifest_id = ? AND revoked_at IS NULL AND superseded_at IS NULL`, stamp, by.ID, reason, manifestID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE manifests SET state = 'reverted', updated_at = ? WHERE id = ?`, stamp, manifestID); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, by, "manifest.revoke", manifestSubject(manifestID), map[string]any{
			"reason": reason, "restored": restored, "state": map[string]string{"before": m.State.Label(), "after": review.Revoked.Label()}})
	})
	if err != nil {
		return 0, fmt.Errorf("revoke manifest %d: %w", manifestID, err)
	}
	return restored, nil
}

// RestoreTombstone brings one document removed by a manifest back, as by, and logs the
// change of the live documents.
func (d *DB) RestoreTombstone(ctx context.Context, by User, manifestID, docID int64) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		m, err := loadManifest(ctx, tx, manifestID)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE tombstones SET restored_at = ?, restored_by = ? WHERE document_id = ? AND manifest_id = ?
			AND restored_at IS NULL`, d.stamp(), by.ID, docID, manifestID)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return restoredAlready(ctx, tx, manifestID, docID, err)
		}
		if err := d.logChange(ctx, tx, by, m.DatasetID, manifestID, review.ChangeRestore, 1, docID); err != nil {
			return err
		}
		var ext string
		if err := tx.QueryRowContext(ctx, `SELECT ext_id FROM documents WHERE id = ?`, docID).Scan(&ext); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, by, "manifest.restore", manifestSubject(manifestID), map[string]any{"document": ext})
	})
	if err != nil {
		return fmt.Errorf("restore document %d of manifest %d: %w", docID, manifestID, err)
	}
	return nil
}

// restoredAlready is the error of a restore that changed no tombstone: a
// *review.RestoredError when the manifest's tombstone of the document stands restored
// (a restore that came first: parallel restores of one document leave one winner), else
// none (ErrNotFound: the manifest never removed it).
func restoredAlready(ctx context.Context, tx *sql.Tx, manifestID, docID int64, none error) error {
	var e review.RestoredError
	var at string
	err := tx.QueryRowContext(ctx, `SELECT d.ext_id, coalesce(u.name, ''), t.restored_at FROM tombstones t JOIN documents d ON d.id = t.document_id
		LEFT JOIN users u ON u.id = t.restored_by WHERE t.document_id = ? AND t.manifest_id = ? AND t.restored_at IS NOT NULL`,
		docID, manifestID).Scan(&e.Doc, &e.By, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return none
	}
	if err != nil {
		return err
	}
	if e.At, err = parseTime("restored_at", at); err != nil {
		return err
	}
	return &e
}

// Tombstone is a document a manifest removed.
type Tombstone struct {
	Doc        int64
	ExtID      string
	RemovedAt  time.Time
	Restored   bool
	RestoredBy string
}

// Tombstones lists the documents a manifest removed, restored ones too, by document.
func (d *DB) Tombstones(ctx context.Context, manifestID int64) ([]Tombstone, error) {
	list, err := queryAll(ctx, d, `SELECT t.document_id, d.ext_id, t.removed_at, t.restored_at IS NOT NULL, coalesce(u.name, '')
		FROM tombstones t JOIN documents d ON d.id = t.document_id LEFT JOIN users u ON u.id = t.restored_by
		WHERE t.manifest_id = ? ORDER BY t.document_id`,
		func(sc scanner) (Tombstone, error) {
			var t Tombstone
			var at string
			if err := sc.Scan(&t.Doc, &t.ExtID, &at, &t.Restored, &t.RestoredBy); err != nil {
				return t, err
			}
			var err error
			t.RemovedAt, err = parseTime("removed_at", at)
			return t, err
		}, manifestID)
	if err != nil {
		return nil, fmt.Errorf("tombstones of manifest %d: %w", manifestID, err)
	}
	return list, nil
}

// EachDocument calls fn with every document of a dataset, text included, in import
// order, one at a time (a dataset is read as a stream, never held whole).
func (d *DB) EachDocument(ctx context.Context, datasetID int64, fn func(Document) error) error {
	rows, err := d.r.QueryContext(ctx, `SELECT id, dataset_id, ext_id, text, source, domain, lang, meta FROM documents
		WHERE dataset_id = ? ORDER BY id`, datasetID)
	if err != nil {
		return fmt.Errorf("documents of dataset %d: %w", datasetID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var doc Document
		if err := rows.Scan(&doc.ID, &doc.DatasetID, &doc.ExtID, &doc.Text, &doc.Source, &doc.Domain, &doc.Lang, &doc.Meta); err != nil {
			return fmt.Errorf("documents of dataset %d: %w", datasetID, err)
		}
		if err := fn(doc); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("documents of dataset %d: %w", datasetID, err)
	}
	return nil
}

// GroupBy names a grouping of documents for the impact tables: "source", "domain",
// "lang", or "meta:KEY" for a key of the metadata.
type GroupBy string

// expr returns the SQL expression of the grouping over documents d.
func (g GroupBy) expr() (string, []any, error) {
	switch g {
	case "source", "domain", "lang":
		return "d." + string(g), nil, nil
	}
	key, ok := strings.CutPrefix(string(g), "meta:")
	if !ok || key == "" || strings.ContainsAny(key, "\"\\") {
		return "", nil, &review.InputError{Field: "group", Msg: fmt.Sprintf("%q is not source, domain, lang or meta:KEY", string(g))}
	}
	return `coalesce(CAST(json_extract(d.meta, ?) AS TEXT), '')`, []any{`$."` + key + `"`}, nil
}

// ImpactCounts counts a dataset's documents and those a manifest removes (proposed or
// approved, not excluded) by group, largest group first.
func (d *DB) ImpactCounts(ctx context.Context, m Manifest, g GroupBy) ([]review.GroupCount, error) {
	expr, args, err := g.expr()
	if err != nil {
		return nil, err
	}
	args = append(args, m.ID, m.DatasetID)
	list, err := queryAll(ctx, d, `SELECT g, count(*), sum(removed) FROM (SELECT `+expr+` AS g,
		EXISTS (SELECT 1 FROM manifest_items i WHERE i.manifest_id = ? AND i.document_id = d.id AND i.decision = 'remove') AS removed
		FROM documents d WHERE d.dataset_id = ?) GROUP BY g ORDER BY count(*) DESC, g`,
		func(sc scanner) (review.GroupCount, error) {
			var c review.GroupCount
			return c, sc.Scan(&c.Key, &c.Docs, &c.Removed)
		}, args...)
	if err != nil {
		return nil, fmt.Errorf("impact of manifest %d by %s: %w", m.ID, g, err)
	}
	return list, nil
}

// RemovalCounts counts a manifest's removals (not excluded) by reason and by the size of
// their cluster.
func (d *DB) RemovalCounts(ctx context.Context, manifestID int64) (byReason map[cluster.Reason]int, bySize map[int]int, err error) {
	type rc struct {
		reason string
		size   int
		n      int
	}
	list, err := queryAll(ctx, d, `SELECT i.reason, coalesce(c.size, 0), count(*) FROM manifest_items i LEFT JOIN clusters c ON c.id = i.cluster_id
		WHERE i.manifest_id = ? AND i.decision = 'remove' GROUP BY i.reason, c.size`,
		func(sc scanner) (rc, error) {
			var x rc
			return x, sc.Scan(&x.reason, &x.size, &x.n)
		}, manifestID)
	if err != nil {
		return nil, nil, fmt.Errorf("removal counts of manifest %d: %w", manifestID, err)
	}
	byReason, bySize = map[cluster.Reason]int{}, map[int]int{}
	for _, x := range list {
		byReason[cluster.Reason(x.reason)] += x.n
		bySize[x.size] += x.n
	}
	return byReason, bySize, nil
}

// MetaKeys returns the metadata keys a dataset's documents use (up to 50), by name.
func (d *DB) MetaKeys(ctx context.Context, datasetID int64) ([]string, error) {
	keys, err := queryAll(ctx, d, `SELECT DISTINCT j.key FROM documents d, json_each(d.meta) j WHERE d.dataset_id = ? ORDER BY 1 LIMIT 50`,
		scanValue[string], datasetID)
	if err != nil {
		return nil, fmt.Errorf("metadata keys of dataset %d: %w", datasetID, err)
	}
	return keys, nil
}

// PairLabels is a labeled pair with its standing labels.
type PairLabels struct {
	PairID     int64
	CampaignID int64
	A, B       int64
	Labels     []StandingLabel
}

// StandingLabel is an annotator's standing label on a pair; ByAccount tells a label
// given by a person signed in from one imported or made by a rule.
type StandingLabel struct {
	CurrentLabel
	ByAccount bool
}

// LabelsAmong returns the labeled pairs whose two documents are both among docs (any
// campaign), with every standing label (retracted ones left out).
func (d *DB) LabelsAmong(ctx context.Context, docs []int64) ([]PairLabels, error) {
	if len(docs) == 0 || len(docs) > maxParams/2 {
		return nil, nil
	}
	in := "(?" + strings.Repeat(",?", len(docs)-1) + ")"
	args := make([]any, 0, 2*len(docs))
	for range 2 {
		for _, id := range docs {
			args = append(args, id)
		}
	}
	list, err := pairLabels(ctx, d, `SELECT id, campaign_id, doc_a, doc_b FROM label_pairs WHERE doc_a IN `+in+` AND doc_b IN `+in, args...)
	if err != nil {
		return nil, fmt.Errorf("labels among %d documents: %w", len(docs), err)
	}
	return list, nil
}

// CampaignLabels returns every pair of a campaign that has a standing label, with its
// labels, by pair.
func (d *DB) CampaignLabels(ctx context.Context, campaignID int64) ([]PairLabels, error) {
	list, err := pairLabels(ctx, d, `SELECT id, campaign_id, doc_a, doc_b FROM label_pairs WHERE campaign_id = ?`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("labels of campaign %d: %w", campaignID, err)
	}
	return list, nil
}

// pairLabels reads the standing labels of the pairs the query pairs selects (id,
// campaign_id, doc_a, doc_b), grouped by pair.
func pairLabels(ctx context.Context, d *DB, pairs string, args ...any) ([]PairLabels, error) {
	type row struct {
		pair, campaign, a, b int64
		l                    StandingLabel
	}
	list, err := queryAll(ctx, d, `WITH p AS (`+pairs+`),
		cur AS (SELECT e.*, row_number() OVER (PARTITION BY e.pair_id, e.annotator ORDER BY e.id DESC) AS rn
			FROM label_events e JOIN p ON p.id = e.pair_id WHERE e.kind IN `+currentKinds+`)
		SELECT p.id, p.campaign_id, p.doc_a, p.doc_b, c.annotator, c.kind, c.category, c.duplicate, c.note, c.created_at, c.user_id IS NOT NULL
		FROM p JOIN cur c ON c.pair_id = p.id WHERE c.rn = 1 AND c.kind != 'retract' ORDER BY p.id, c.id`,
		func(sc scanner) (row, error) {
			var r row
			var kind, at string
			if err := sc.Scan(&r.pair, &r.campaign, &r.a, &r.b, &r.l.Annotator, &kind, &r.l.Category, &r.l.Duplicate, &r.l.Note, &at,
				&r.l.ByAccount); err != nil {
				return r, err
			}
			var err error
			if r.l.Kind, err = labels.ParseKind(kind); err != nil {
				return r, err
			}
			r.l.PairID = r.pair
			r.l.At, err = parseTime("created_at", at)
			return r, err
		}, args...)
	if err != nil {
		return nil, err
	}
	var out []PairLabels
	for _, r := range list {
		if len(out) == 0 || out[len(out)-1].PairID != r.pair {
			out = append(out, PairLabels{PairID: r.pair, CampaignID: r.campaign, A: r.a, B: r.b})
		}
		last := &out[len(out)-1]
		last.Labels = append(last.Labels, r.l)
	}
	return out, nil
}

// BulkApprovals lists the bulk approvals standing in a manifest: who approved how many
// removals at which bar.
func (d *DB) BulkApprovals(ctx context.Context, manifestID int64) ([]review.Bulk, error) {
	list, err := queryAll(ctx, d, `SELECT coalesce(u.name, ''), i.bulk_bar, min(i.decided_at), count(*) FROM manifest_items i
		LEFT JOIN users u ON u.id = i.decided_by WHERE i.manifest_id = ? AND i.bulk_bar IS NOT NULL AND i.decision = 'remove' AND i.reviewed = 1
		GROUP BY i.decided_by, i.bulk_bar ORDER BY 3`,
		func(sc scanner) (review.Bulk, error) {
			var b review.Bulk
			var at string
			if err := sc.Scan(&b.Name, &b.Bar, &at, &b.Items); err != nil {
				return b, err
			}
			if b.Bar == OutsideSampleBar {
				b.Bar, b.OutsideSample = 0, true
			}
			var err error
			b.At, err = parseTime("decided_at", at)
			return b, err
		}, manifestID)
	if err != nil {
		return nil, fmt.Errorf("bulk approvals of manifest %d: %w", manifestID, err)
	}
	return list, nil
}
