package db

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// AddLabels records label events in one transaction, creating their pairs as needed.
// Each event names the annotator's previous event on the pair, so edits append history.
func (d *DB) AddLabels(ctx context.Context, campaignID int64, ls []NewLabel, actor string) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		for i, l := range ls {
			if err := d.addLabel(ctx, tx, campaignID, l); err != nil {
				return fmt.Errorf("label %d: %w", i+1, err)
			}
		}
		return d.audit(ctx, tx, actor, "labels.add", fmt.Sprintf("campaign:%d", campaignID), map[string]any{"events": len(ls)})
	})
	if err != nil {
		return fmt.Errorf("add labels to campaign %d: %w", campaignID, err)
	}
	return nil
}

func (d *DB) addLabel(ctx context.Context, tx *sql.Tx, campaignID int64, l NewLabel) error {
	a, b := min(l.DocA, l.DocB), max(l.DocA, l.DocB)
	if a == b {
		return fmt.Errorf("a pair needs two different documents")
	}
	if l.Kind == "" {
		l.Kind = labels.KindLabel
	}
	now := d.stamp()
	// A pair's design is set by the label that brings one; a label without leaves it.
	if _, err := tx.ExecContext(ctx, `INSERT INTO label_pairs (campaign_id, doc_a, doc_b, origin, design, stratum, frame_size, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (campaign_id, doc_a, doc_b) DO UPDATE SET design = excluded.design, stratum = excluded.stratum,
			frame_size = excluded.frame_size WHERE excluded.design != ''`,
		campaignID, a, b, l.Origin, l.Design, l.Stratum, l.FrameSize, now); err != nil {
		return err
	}
	var pairID int64
	if err := tx.QueryRowContext(ctx, `SELECT id FROM label_pairs WHERE campaign_id = ? AND doc_a = ? AND doc_b = ?`, campaignID, a, b).Scan(&pairID); err != nil {
		return err
	}
	var prev sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(id) FROM label_events WHERE pair_id = ? AND annotator = ?`, pairID, l.Annotator).Scan(&prev); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO label_events (pair_id, annotator, user_id, kind, category, duplicate, note, previous_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, pairID, l.Annotator, nullID(l.UserID), string(l.Kind), l.Category, l.Duplicate, l.Note, prev, now)
	return err
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

// DatasetOverview summarizes a ready dataset: documents by source and language, and
// standing labels (each annotator's newest label-setting event on a pair, unless
// withdrawn) by category, computed afresh from the label log: the start page reads the
// label counts from internal/campaign's tallies, which must agree with these.
func (d *DB) DatasetOverview(ctx context.Context, id int64) (Overview, error) {
	o, err := d.datasetOverview(ctx, id)
	if err != nil {
		return Overview{}, fmt.Errorf("overview of dataset %d: %w", id, err)
	}
	return o, nil
}

func (d *DB) datasetOverview(ctx context.Context, id int64) (Overview, error) {
	ds, err := d.Dataset(ctx, id)
	if err != nil {
		return Overview{}, err
	}
	o := Overview{Dataset: ds}
	if o.Sources, o.Langs, err = d.documentCounts(ctx, id); err != nil {
		return o, err
	}
	if o.Categories, err = d.counts(ctx, `WITH current AS (
			SELECT e.category, row_number() OVER (PARTITION BY e.pair_id, e.annotator ORDER BY e.id DESC) AS rn, e.kind
			FROM label_events e JOIN label_pairs p ON p.id = e.pair_id JOIN campaigns c ON c.id = p.campaign_id
			WHERE c.dataset_id = ? AND e.kind IN `+currentKinds+`)
		SELECT category, count(*) FROM current WHERE rn = 1 AND kind IN ('label', 'adjudication') GROUP BY category ORDER BY 2 DESC, 1`, id); err != nil {
		return o, fmt.Errorf("categories: %w", err)
	}
	if err := d.r.QueryRowContext(ctx, `SELECT count(DISTINCT p.id), count(DISTINCT e.annotator) FROM label_pairs p
		JOIN campaigns c ON c.id = p.campaign_id LEFT JOIN label_events e ON e.pair_id = p.id WHERE c.dataset_id = ?`, id).Scan(&o.Pairs, &o.Annotators); err != nil {
		return o, fmt.Errorf("pairs: %w", err)
	}
	return o, nil
}

// docCounts are a ready dataset's documents by source and by language.
type docCounts struct{ sources, langs []Count }

// DocumentCounts returns a ready dataset's documents by source and by language, most
// first. A ready dataset's documents never change, so each dataset is counted once per
// process; the slices are shared: do not modify them.
func (d *DB) DocumentCounts(ctx context.Context, id int64) (sources, langs []Count, err error) {
	if _, err := d.Dataset(ctx, id); err != nil {
		return nil, nil, fmt.Errorf("document counts: %w", err)
	}
	if sources, langs, err = d.documentCounts(ctx, id); err != nil {
		return nil, nil, fmt.Errorf("document counts of dataset %d: %w", id, err)
	}
	return sources, langs, nil
}

// documentCounts counts, or remembers, the documents of ready dataset id.
func (d *DB) documentCounts(ctx context.Context, id int64) (sources, langs []Count, err error) {
	if c, ok := d.docCounts.Load(id); ok {
		return c.(docCounts).sources, c.(docCounts).langs, nil
	}
	if sources, err = d.counts(ctx, `SELECT source, count(*) FROM documents WHERE dataset_id = ? GROUP BY source ORDER BY 2 DESC, 1`, id); err != nil {
		return nil, nil, fmt.Errorf("sources: %w", err)
	}
	if langs, err = d.counts(ctx, `SELECT lang, count(*) FROM documents WHERE dataset_id = ? GROUP BY lang ORDER BY 2 DESC, 1`, id); err != nil {
		return nil, nil, fmt.Errorf("languages: %w", err)
	}
	d.docCounts.Store(id, docCounts{sources, langs})
	return sources, langs, nil
}
