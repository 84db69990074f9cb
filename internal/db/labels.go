package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Campaign is a labeling campaign over one dataset.
type Campaign struct {
	ID          int64
	DatasetID   int64
	Name        string
	Categories  []byte // JSON array of labels.Category
	Overlap     int
	Threshold   float64
	Spec        string // lsh.Spec text; empty means the default
	DoubleShare float64
}

const campaignColumns = `id, dataset_id, name, categories, overlap, threshold, spec, double_share`

func scanCampaign(sc scanner) (Campaign, error) {
	var c Campaign
	err := sc.Scan(&c.ID, &c.DatasetID, &c.Name, &c.Categories, &c.Overlap, &c.Threshold, &c.Spec, &c.DoubleShare)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	return c, err
}

// EnsureCampaign returns the dataset's campaign of that name, creating it with the given
// categories (JSON) when it does not exist.
func (d *DB) EnsureCampaign(ctx context.Context, datasetID int64, name string, categories []byte) (Campaign, error) {
	var c Campaign
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO campaigns (dataset_id, name, categories, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (dataset_id, name) DO NOTHING`, datasetID, name, string(categories), d.stamp())
		if err != nil {
			return err
		}
		var err2 error
		c, err2 = scanCampaign(tx.QueryRowContext(ctx, `SELECT `+campaignColumns+` FROM campaigns WHERE dataset_id = ? AND name = ?`, datasetID, name))
		return err2
	})
	return c, err
}

// DocumentIDs maps external ids of a dataset to internal ids; unknown ids are absent.
func (d *DB) DocumentIDs(ctx context.Context, datasetID int64, extIDs []string) (map[string]int64, error) {
	out := make(map[string]int64, len(extIDs))
	const chunk = 500
	for lo := 0; lo < len(extIDs); lo += chunk {
		part := extIDs[lo:min(lo+chunk, len(extIDs))]
		args := make([]any, 0, len(part)+1)
		args = append(args, datasetID)
		for _, id := range part {
			args = append(args, id)
		}
		q := `SELECT ext_id, id FROM documents WHERE dataset_id = ? AND ext_id IN (?` + strings.Repeat(",?", len(part)-1) + `)`
		rows, err := d.r.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var ext string
			var id int64
			if err := rows.Scan(&ext, &id); err != nil {
				rows.Close()
				return nil, err
			}
			out[ext] = id
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NewLabel is a label event to record.
type NewLabel struct {
	DocA, DocB int64 // internal ids, any order
	Origin     string
	Annotator  string
	UserID     int64
	Kind       string // label (default), adjudication, skip, flag
	Category   string
	Duplicate  bool
	Note       string
}

// AddLabels records label events in one transaction, creating their pairs as needed.
// Each event names the annotator's previous event on the pair, so edits append history.
func (d *DB) AddLabels(ctx context.Context, campaignID int64, labels []NewLabel, actor string) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		for i, l := range labels {
			a, b := l.DocA, l.DocB
			if a == b {
				return fmt.Errorf("label %d: a pair needs two different documents", i+1)
			}
			if a > b {
				a, b = b, a
			}
			now := d.stamp()
			if _, err := tx.ExecContext(ctx, `INSERT INTO label_pairs (campaign_id, doc_a, doc_b, origin, created_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (campaign_id, doc_a, doc_b) DO NOTHING`, campaignID, a, b, l.Origin, now); err != nil {
				return err
			}
			var pairID int64
			if err := tx.QueryRowContext(ctx, `SELECT id FROM label_pairs WHERE campaign_id = ? AND doc_a = ? AND doc_b = ?`, campaignID, a, b).Scan(&pairID); err != nil {
				return err
			}
			var prev sql.NullInt64
			err := tx.QueryRowContext(ctx, `SELECT max(id) FROM label_events WHERE pair_id = ? AND annotator = ?`, pairID, l.Annotator).Scan(&prev)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			kind := l.Kind
			if kind == "" {
				kind = "label"
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO label_events (pair_id, annotator, user_id, kind, category, duplicate, note, previous_id, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, pairID, l.Annotator, nullID(l.UserID), kind, l.Category, l.Duplicate, l.Note, prev, now); err != nil {
				return err
			}
		}
		return d.audit(ctx, tx, actor, "labels.add", fmt.Sprintf("campaign:%d", campaignID), map[string]any{"events": len(labels)})
	})
}

// Count is a key and how many.
type Count struct {
	Key string
	N   int
}

// Overview is what the start page shows about a dataset.
type Overview struct {
	Dataset
	Sources    []Count
	Langs      []Count
	Categories []Count // current labels (newest per pair and annotator) by category
	Pairs      int
	Annotators int
}

func (d *DB) counts(ctx context.Context, q string, args ...any) ([]Count, error) {
	return queryAll(ctx, d, q, func(sc scanner) (Count, error) {
		var c Count
		return c, sc.Scan(&c.Key, &c.N)
	}, args...)
}

// DatasetOverview summarizes a ready dataset: documents by source and language, labels
// by category.
func (d *DB) DatasetOverview(ctx context.Context, id int64) (Overview, error) {
	ds, err := d.Dataset(ctx, id)
	if err != nil {
		return Overview{}, err
	}
	o := Overview{Dataset: ds}
	if o.Sources, err = d.counts(ctx, `SELECT source, count(*) FROM documents WHERE dataset_id = ? GROUP BY source ORDER BY 2 DESC, 1`, id); err != nil {
		return o, err
	}
	if o.Langs, err = d.counts(ctx, `SELECT lang, count(*) FROM documents WHERE dataset_id = ? GROUP BY lang ORDER BY 2 DESC, 1`, id); err != nil {
		return o, err
	}
	if o.Categories, err = d.counts(ctx, `WITH current AS (
			SELECT e.category, row_number() OVER (PARTITION BY e.pair_id, e.annotator ORDER BY e.id DESC) AS rn, e.kind
			FROM label_events e JOIN label_pairs p ON p.id = e.pair_id JOIN campaigns c ON c.id = p.campaign_id
			WHERE c.dataset_id = ?)
		SELECT category, count(*) FROM current WHERE rn = 1 AND kind IN ('label', 'adjudication') GROUP BY category ORDER BY 2 DESC, 1`, id); err != nil {
		return o, err
	}
	err = d.r.QueryRowContext(ctx, `SELECT count(DISTINCT p.id), count(DISTINCT e.annotator) FROM label_pairs p
		JOIN campaigns c ON c.id = p.campaign_id LEFT JOIN label_events e ON e.pair_id = p.id WHERE c.dataset_id = ?`, id).Scan(&o.Pairs, &o.Annotators)
	return o, err
}
