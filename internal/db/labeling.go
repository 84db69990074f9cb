package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrStale is an edit made against a state that has changed since it was shown (another
// tab, another request): nothing is written, the person looks again.
var ErrStale = errors.New("changed since it was shown")

// Campaign returns a campaign by id, in a ready dataset.
func (d *DB) Campaign(ctx context.Context, id int64) (Campaign, error) {
	return scanCampaign(d.r.QueryRowContext(ctx, `SELECT `+prefixed("c", campaignColumns)+` FROM campaigns c
		JOIN datasets ds ON ds.id = c.dataset_id AND ds.state = 'ready' WHERE c.id = ?`, id))
}

func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ", ")
	for i, p := range parts {
		parts[i] = alias + "." + p
	}
	return strings.Join(parts, ", ")
}

// Campaigns lists the campaigns of ready datasets, newest first.
func (d *DB) Campaigns(ctx context.Context) ([]Campaign, error) {
	return queryAll(ctx, d, `SELECT `+prefixed("c", campaignColumns)+` FROM campaigns c
		JOIN datasets ds ON ds.id = c.dataset_id AND ds.state = 'ready' ORDER BY c.id DESC`, scanCampaign)
}

// UpdateCampaign changes a campaign's settings.
func (d *DB) UpdateCampaign(ctx context.Context, actor string, c Campaign) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE campaigns SET spec = ?, threshold = ?, overlap = ?, double_share = ?, categories = ? WHERE id = ?`,
			c.Spec, c.Threshold, c.Overlap, c.DoubleShare, string(c.Categories), c.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		// More labels per pair applies to the pairs there are, too.
		if _, err := tx.ExecContext(ctx, `UPDATE label_pairs SET wanted = max(wanted, ?) WHERE campaign_id = ?`, c.Overlap, c.ID); err != nil {
			return err
		}
		return d.audit(ctx, tx, actor, "campaign.update", fmt.Sprintf("campaign:%d", c.ID), map[string]any{
			"spec": c.Spec, "threshold": c.Threshold, "overlap": c.Overlap, "double_share": c.DoubleShare, "categories": string(c.Categories)})
	})
}

// DocText is a document's id and text, for computing over a dataset.
type DocText struct {
	ID    int64
	ExtID string
	Text  string
}

// DatasetTexts returns every document of a dataset, by id.
func (d *DB) DatasetTexts(ctx context.Context, datasetID int64) ([]DocText, error) {
	return queryAll(ctx, d, `SELECT id, ext_id, text FROM documents WHERE dataset_id = ? ORDER BY id`,
		func(sc scanner) (DocText, error) {
			var t DocText
			return t, sc.Scan(&t.ID, &t.ExtID, &t.Text)
		}, datasetID)
}

// Document is one stored document.
type Document struct {
	ID        int64
	DatasetID int64
	ExtID     string
	Text      string
	Source    string
	Domain    string
	Lang      string
	Meta      string
}

// Document returns a document of a ready dataset.
func (d *DB) Document(ctx context.Context, id int64) (Document, error) {
	var doc Document
	err := d.r.QueryRowContext(ctx, `SELECT d.id, d.dataset_id, d.ext_id, d.text, d.source, d.domain, d.lang, d.meta FROM documents d
		JOIN datasets ds ON ds.id = d.dataset_id AND ds.state = 'ready' WHERE d.id = ?`, id).
		Scan(&doc.ID, &doc.DatasetID, &doc.ExtID, &doc.Text, &doc.Source, &doc.Domain, &doc.Lang, &doc.Meta)
	if errors.Is(err, sql.ErrNoRows) {
		return doc, ErrNotFound
	}
	return doc, err
}

// NewPair is a pair to put in a campaign's queue.
type NewPair struct {
	DocA, DocB int64
	Origin     string
	Scored     bool // Similarity and Estimate are computed; else they are stored as unknown
	Similarity float64
	Estimate   float64
	Wanted     int
}

// AddPairs adds pairs to a campaign, skipping those it has; it returns how many were new.
func (d *DB) AddPairs(ctx context.Context, campaignID int64, pairs []NewPair, actor string) (int, error) {
	added := 0
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO label_pairs (campaign_id, doc_a, doc_b, origin, similarity, estimate, wanted, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (campaign_id, doc_a, doc_b) DO NOTHING`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		now := d.stamp()
		for _, p := range pairs {
			a, b := min(p.DocA, p.DocB), max(p.DocA, p.DocB)
			if a == b {
				continue
			}
			var sim, est any
			if p.Scored {
				sim, est = p.Similarity, p.Estimate
			}
			res, err := stmt.ExecContext(ctx, campaignID, a, b, p.Origin, sim, est, max(1, p.Wanted), now)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			added += int(n)
		}
		return d.audit(ctx, tx, actor, "pairs.sample", fmt.Sprintf("campaign:%d", campaignID), map[string]any{"added": added})
	})
	return added, err
}

// PairRef is a pair's documents, for computing similarities.
type PairRef struct {
	ID, DocA, DocB int64
}

// PairsWithoutSimilarity lists a campaign's pairs whose similarity was never computed
// (imported ones).
func (d *DB) PairsWithoutSimilarity(ctx context.Context, campaignID int64) ([]PairRef, error) {
	return d.pairRefs(ctx, `SELECT id, doc_a, doc_b FROM label_pairs WHERE campaign_id = ? AND (similarity IS NULL OR estimate IS NULL) ORDER BY id`, campaignID)
}

func (d *DB) pairRefs(ctx context.Context, query string, args ...any) ([]PairRef, error) {
	return queryAll(ctx, d, query, func(sc scanner) (PairRef, error) {
		var p PairRef
		return p, sc.Scan(&p.ID, &p.DocA, &p.DocB)
	}, args...)
}

// PairScore is a pair's computed similarity.
type PairScore struct {
	ID                   int64
	Similarity, Estimate float64
}

// SetPairScores stores computed similarities; they describe the pair under the
// campaign's representation and change only with it.
func (d *DB) SetPairScores(ctx context.Context, scores []PairScore) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		for _, s := range scores {
			if _, err := tx.ExecContext(ctx, `UPDATE label_pairs SET similarity = ?, estimate = ? WHERE id = ?`, s.Similarity, s.Estimate, s.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// ClearPairScores forgets every pair's similarity (after the campaign's spec changed).
func (d *DB) ClearPairScores(ctx context.Context, campaignID int64) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE label_pairs SET similarity = NULL, estimate = NULL WHERE campaign_id = ?`, campaignID)
		return err
	})
}

// Pair is a pair of a campaign with its documents.
type Pair struct {
	ID         int64
	CampaignID int64
	A, B       Document
	Origin     string
	Similarity sql.NullFloat64
	Estimate   sql.NullFloat64
	Wanted     int
}

// Pair returns a campaign's pair; a pair of another campaign is ErrNotFound.
func (d *DB) Pair(ctx context.Context, campaignID, pairID int64) (Pair, error) {
	var p Pair
	err := d.r.QueryRowContext(ctx, `SELECT id, campaign_id, doc_a, doc_b, origin, similarity, estimate, wanted FROM label_pairs
		WHERE id = ? AND campaign_id = ?`, pairID, campaignID).Scan(&p.ID, &p.CampaignID, &p.A.ID, &p.B.ID, &p.Origin, &p.Similarity, &p.Estimate, &p.Wanted)
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrNotFound
	}
	if err != nil {
		return p, err
	}
	if p.A, err = d.Document(ctx, p.A.ID); err != nil {
		return p, err
	}
	p.B, err = d.Document(ctx, p.B.ID)
	return p, err
}

// currentKinds are the events that set (or withdraw) an annotator's label on a pair.
const currentKinds = `('label', 'adjudication', 'retract')`

// NextPair picks the next pair for an annotator: pairs still short of their wanted
// number of labels that this annotator has never labeled, those already started by
// someone else first (to complete double labels), then in sampling order; pairs the
// annotator skipped come last. It returns ErrNotFound when the queue is empty.
func (d *DB) NextPair(ctx context.Context, campaignID int64, annotator string, after int64) (int64, error) {
	var id int64
	err := d.r.QueryRowContext(ctx, `WITH cur AS (
			SELECT e.pair_id, e.annotator, e.kind, row_number() OVER (PARTITION BY e.pair_id, e.annotator ORDER BY e.id DESC) AS rn
			FROM label_events e JOIN label_pairs p ON p.id = e.pair_id
			WHERE p.campaign_id = ? AND e.kind IN `+currentKinds+`),
		labeled AS (SELECT pair_id, count(*) AS n, max(kind = 'adjudication') AS adjudicated FROM cur WHERE rn = 1 AND kind != 'retract' GROUP BY pair_id),
		mine AS (SELECT pair_id FROM cur WHERE annotator = ? AND rn = 1 AND kind != 'retract'),
		skipped AS (SELECT DISTINCT pair_id FROM label_events WHERE annotator = ? AND kind = 'skip')
		SELECT p.id FROM label_pairs p
		LEFT JOIN labeled l ON l.pair_id = p.id
		WHERE p.campaign_id = ? AND p.id != ?
		  AND coalesce(l.n, 0) < p.wanted AND coalesce(l.adjudicated, 0) = 0
		  AND p.id NOT IN (SELECT pair_id FROM mine)
		ORDER BY p.id IN (SELECT pair_id FROM skipped), coalesce(l.n, 0) = 0, p.id
		LIMIT 1`, campaignID, annotator, annotator, campaignID, after).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	return id, err
}

// LabelEvent is one recorded event.
type LabelEvent struct {
	ID         int64
	PairID     int64
	Annotator  string
	Kind       string
	Category   string
	Duplicate  bool
	Note       string
	PreviousID sql.NullInt64
	At         time.Time
}

func scanEvents(rows *sql.Rows) ([]LabelEvent, error) {
	defer rows.Close()
	var out []LabelEvent
	for rows.Next() {
		var e LabelEvent
		var at string
		if err := rows.Scan(&e.ID, &e.PairID, &e.Annotator, &e.Kind, &e.Category, &e.Duplicate, &e.Note, &e.PreviousID, &at); err != nil {
			return nil, err
		}
		e.At, _ = time.Parse(time.RFC3339Nano, at)
		out = append(out, e)
	}
	return out, rows.Err()
}

const eventColumns = `e.id, e.pair_id, e.annotator, e.kind, e.category, e.duplicate, e.note, e.previous_id, e.created_at`

// PairHistory returns every event of a pair, oldest first.
func (d *DB) PairHistory(ctx context.Context, pairID int64) ([]LabelEvent, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+eventColumns+` FROM label_events e WHERE e.pair_id = ? ORDER BY e.id`, pairID)
	if err != nil {
		return nil, err
	}
	return scanEvents(rows)
}

// LatestEvent returns an annotator's newest label-setting event on a pair (label,
// adjudication or retract), or ErrNotFound.
func (d *DB) LatestEvent(ctx context.Context, pairID int64, annotator string) (LabelEvent, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+eventColumns+` FROM label_events e
		WHERE e.pair_id = ? AND e.annotator = ? AND e.kind IN `+currentKinds+` ORDER BY e.id DESC LIMIT 1`, pairID, annotator)
	if err != nil {
		return LabelEvent{}, err
	}
	evs, err := scanEvents(rows)
	if err != nil {
		return LabelEvent{}, err
	}
	if len(evs) == 0 {
		return LabelEvent{}, ErrNotFound
	}
	return evs[0], nil
}

// RecordEvent appends an event for an annotator on a pair. expectPrevious is the id of
// the annotator's latest label-setting event as the person saw it (0 for none): if it has
// changed since, nothing is written and ErrStale is returned. Skips and flags do not
// check it.
func (d *DB) RecordEvent(ctx context.Context, campaignID, pairID int64, l NewLabel, expectPrevious int64) (LabelEvent, error) {
	var ev LabelEvent
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		var ok int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM label_pairs WHERE id = ? AND campaign_id = ?`, pairID, campaignID).Scan(&ok); err != nil {
			return err
		}
		if ok == 0 {
			return ErrNotFound
		}
		var prev sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(id) FROM label_events WHERE pair_id = ? AND annotator = ? AND kind IN `+currentKinds,
			pairID, l.Annotator).Scan(&prev); err != nil {
			return err
		}
		kind := l.Kind
		if kind == "" {
			kind = "label"
		}
		setsLabel := kind == "label" || kind == "adjudication" || kind == "retract"
		if setsLabel && prev.Int64 != expectPrevious {
			// The same decision sent twice (a double submit) is not a conflict.
			var same int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM label_events WHERE id = ? AND kind = ? AND category = ? AND duplicate = ? AND note = ?`,
				prev.Int64, kind, l.Category, l.Duplicate, l.Note).Scan(&same); err != nil {
				return err
			}
			if same == 1 {
				ev = LabelEvent{ID: prev.Int64, PairID: pairID, Annotator: l.Annotator, Kind: kind, Category: l.Category, Duplicate: l.Duplicate, Note: l.Note}
				return nil
			}
			return ErrStale
		}
		if !setsLabel {
			prev = sql.NullInt64{}
		}
		now := d.stamp()
		res, err := tx.ExecContext(ctx, `INSERT INTO label_events (pair_id, annotator, user_id, kind, category, duplicate, note, previous_id, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, pairID, l.Annotator, nullID(l.UserID), kind, l.Category, l.Duplicate, l.Note, prev, now)
		if err != nil {
			return err
		}
		id, _ := res.LastInsertId()
		ev = LabelEvent{ID: id, PairID: pairID, Annotator: l.Annotator, Kind: kind, Category: l.Category, Duplicate: l.Duplicate, Note: l.Note, PreviousID: prev}
		ev.At, _ = time.Parse(time.RFC3339Nano, now)
		return nil
	})
	return ev, err
}

// RecentDecisions returns an annotator's latest label-setting events in a campaign, one
// per pair, newest first.
func (d *DB) RecentDecisions(ctx context.Context, campaignID int64, annotator string, limit int) ([]LabelEvent, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+eventColumns+` FROM label_events e JOIN label_pairs p ON p.id = e.pair_id
		WHERE p.campaign_id = ? AND e.annotator = ? AND e.kind IN `+currentKinds+`
		  AND e.id = (SELECT max(id) FROM label_events x WHERE x.pair_id = e.pair_id AND x.annotator = e.annotator AND x.kind IN `+currentKinds+`)
		ORDER BY e.id DESC LIMIT ?`, campaignID, annotator, limit)
	if err != nil {
		return nil, err
	}
	return scanEvents(rows)
}

// CurrentLabel is an annotator's standing label on a pair, with what the campaign page
// needs about the pair.
type CurrentLabel struct {
	PairID     int64
	ExtA, ExtB string
	Annotator  string
	Kind       string // label or adjudication
	Category   string
	Duplicate  bool
	Note       string
	At         time.Time
	Similarity sql.NullFloat64
}

// CurrentLabels returns every standing label of a campaign (retracted ones left out),
// by pair and annotator.
func (d *DB) CurrentLabels(ctx context.Context, campaignID int64) ([]CurrentLabel, error) {
	rows, err := d.r.QueryContext(ctx, `WITH cur AS (
			SELECT e.*, row_number() OVER (PARTITION BY e.pair_id, e.annotator ORDER BY e.id DESC) AS rn
			FROM label_events e JOIN label_pairs p ON p.id = e.pair_id
			WHERE p.campaign_id = ? AND e.kind IN `+currentKinds+`)
		SELECT c.pair_id, da.ext_id, db.ext_id, c.annotator, c.kind, c.category, c.duplicate, c.note, c.created_at, p.similarity
		FROM cur c JOIN label_pairs p ON p.id = c.pair_id
		JOIN documents da ON da.id = p.doc_a JOIN documents db ON db.id = p.doc_b
		WHERE c.rn = 1 AND c.kind != 'retract' ORDER BY c.pair_id, c.annotator`, campaignID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CurrentLabel
	for rows.Next() {
		var c CurrentLabel
		var at string
		if err := rows.Scan(&c.PairID, &c.ExtA, &c.ExtB, &c.Annotator, &c.Kind, &c.Category, &c.Duplicate, &c.Note, &at, &c.Similarity); err != nil {
			return nil, err
		}
		c.At, _ = time.Parse(time.RFC3339Nano, at)
		out = append(out, c)
	}
	return out, rows.Err()
}

// PairStat is a pair's place in the campaign's progress.
type PairStat struct {
	ID         int64
	Similarity sql.NullFloat64
	Estimate   sql.NullFloat64
	Wanted     int
	Origin     string
}

// PairStats lists a campaign's pairs.
func (d *DB) PairStats(ctx context.Context, campaignID int64) ([]PairStat, error) {
	return queryAll(ctx, d, `SELECT id, similarity, estimate, wanted, origin FROM label_pairs WHERE campaign_id = ? ORDER BY id`,
		func(sc scanner) (PairStat, error) {
			var p PairStat
			return p, sc.Scan(&p.ID, &p.Similarity, &p.Estimate, &p.Wanted, &p.Origin)
		}, campaignID)
}

// FlaggedPairs returns the pairs whose newest flag event is a flag (not an unflag).
func (d *DB) FlaggedPairs(ctx context.Context, campaignID int64) (map[int64]bool, error) {
	rows, err := d.r.QueryContext(ctx, `WITH f AS (
			SELECT e.pair_id, e.kind, row_number() OVER (PARTITION BY e.pair_id ORDER BY e.id DESC) AS rn
			FROM label_events e JOIN label_pairs p ON p.id = e.pair_id
			WHERE p.campaign_id = ? AND e.kind IN ('flag', 'unflag'))
		SELECT pair_id FROM f WHERE rn = 1 AND kind = 'flag'`, campaignID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// PairDocs lists a campaign's pairs by document ids.
func (d *DB) PairDocs(ctx context.Context, campaignID int64) ([]PairRef, error) {
	return d.pairRefs(ctx, `SELECT id, doc_a, doc_b FROM label_pairs WHERE campaign_id = ? ORDER BY id`, campaignID)
}

// EnsureRepresentation records a representation (an lsh.Spec's ID and text).
func (d *DB) EnsureRepresentation(ctx context.Context, id, spec string) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO representations (id, spec, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`, id, spec, d.stamp())
		return err
	})
}

// CachedSignatures returns the stored signatures of a dataset's documents under a
// representation, by document id (little-endian uint32 values, as lsh.Signature.Bytes).
func (d *DB) CachedSignatures(ctx context.Context, representationID string, datasetID int64) (map[int64][]byte, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT s.document_id, s.signature FROM signatures s JOIN documents d ON d.id = s.document_id
		WHERE s.representation_id = ? AND d.dataset_id = ?`, representationID, datasetID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][]byte{}
	for rows.Next() {
		var id int64
		var sig []byte
		if err := rows.Scan(&id, &sig); err != nil {
			return nil, err
		}
		out[id] = sig
	}
	return out, rows.Err()
}

// StoreSignatures caches signatures under a representation (recorded first with
// EnsureRepresentation).
func (d *DB) StoreSignatures(ctx context.Context, representationID string, sigs map[int64][]byte) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO signatures (representation_id, document_id, signature) VALUES (?, ?, ?)
			ON CONFLICT (representation_id, document_id) DO UPDATE SET signature = excluded.signature`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for id, sig := range sigs {
			if _, err := stmt.ExecContext(ctx, representationID, id, sig); err != nil {
				return err
			}
		}
		return nil
	})
}

// AskSecondLabels wants a second label on every n-th pair of a campaign (by id), the
// ones not wanted twice already: a deterministic share for measuring agreement.
func (d *DB) AskSecondLabels(ctx context.Context, campaignID int64, n int) (int, error) {
	var changed int64
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE label_pairs SET wanted = 2 WHERE campaign_id = ? AND wanted < 2 AND id % ? = 0`, campaignID, n)
		if err != nil {
			return err
		}
		changed, _ = res.RowsAffected()
		return nil
	})
	return int(changed), err
}
