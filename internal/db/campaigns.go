package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Campaign is a labeling campaign over one dataset, with its settings parsed.
type Campaign struct {
	ID          int64
	DatasetID   int64
	Name        string
	Categories  []labels.Category // never empty: DefaultCategories unless the campaign has its own
	Overlap     int               // labels wanted per pair
	Threshold   float64           // the decision boundary pairs are drawn around
	Spec        lsh.Spec          // the representation pairs are scored under
	DoubleShare float64           // with Overlap 1, the share of new pairs wanted twice
}

const campaignColumns = `id, dataset_id, name, categories, overlap, threshold, spec, double_share`

func scanCampaign(sc scanner) (Campaign, error) {
	var c Campaign
	var cats, spec string
	if err := sc.Scan(&c.ID, &c.DatasetID, &c.Name, &cats, &c.Overlap, &c.Threshold, &spec, &c.DoubleShare); err != nil {
		return c, notFound(err)
	}
	var err error
	if c.Categories, err = decodeCategories(cats); err != nil {
		return c, fmt.Errorf("campaign %d: %w", c.ID, err)
	}
	if c.Spec, err = decodeSpec(spec); err != nil {
		return c, fmt.Errorf("campaign %d: %w", c.ID, err)
	}
	return c, nil
}

// decodeCategories reads the stored JSON list. An empty list (campaigns made before
// they had lists of their own) means the default categories.
func decodeCategories(text string) ([]labels.Category, error) {
	var cats []labels.Category
	if err := json.Unmarshal([]byte(text), &cats); err != nil {
		return nil, fmt.Errorf("column categories: %w", err)
	}
	if len(cats) == 0 {
		return labels.DefaultCategories, nil
	}
	return cats, nil
}

func encodeCategories(cats []labels.Category) (string, error) {
	if len(cats) == 0 {
		cats = labels.DefaultCategories
	}
	b, err := json.Marshal(cats)
	if err != nil {
		return "", fmt.Errorf("categories: %w", err)
	}
	return string(b), nil
}

// decodeSpec reads the stored representation; empty means lsh.DefaultSpec.
func decodeSpec(text string) (lsh.Spec, error) {
	if text == "" {
		return lsh.DefaultSpec(), nil
	}
	spec, err := lsh.ParseSpec(text)
	if err != nil {
		return spec, fmt.Errorf("column spec: %w", err)
	}
	return spec, nil
}

// campaignSpec reads a campaign's representation inside tx.
func campaignSpec(ctx context.Context, tx *sql.Tx, campaignID int64) (lsh.Spec, error) {
	var text string
	if err := tx.QueryRowContext(ctx, `SELECT spec FROM campaigns WHERE id = ?`, campaignID).Scan(&text); err != nil {
		return lsh.Spec{}, notFound(err)
	}
	return decodeSpec(text)
}

func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ", ")
	for i, p := range parts {
		parts[i] = alias + "." + p
	}
	return strings.Join(parts, ", ")
}

// EnsureCampaign returns the dataset's campaign of that name, creating it with cats
// (nil for the default categories) when it does not exist.
func (d *DB) EnsureCampaign(ctx context.Context, datasetID int64, name string, cats []labels.Category) (Campaign, error) {
	var c Campaign
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		text, err := encodeCategories(cats)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO campaigns (dataset_id, name, categories, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (dataset_id, name) DO NOTHING`, datasetID, name, text, d.stamp()); err != nil {
			return err
		}
		c, err = scanCampaign(tx.QueryRowContext(ctx, `SELECT `+campaignColumns+` FROM campaigns WHERE dataset_id = ? AND name = ?`, datasetID, name))
		return err
	})
	if err != nil {
		return Campaign{}, fmt.Errorf("ensure campaign %q of dataset %d: %w", name, datasetID, err)
	}
	return c, nil
}

// Campaign returns a campaign by id, in a ready dataset.
func (d *DB) Campaign(ctx context.Context, id int64) (Campaign, error) {
	c, err := scanCampaign(d.r.QueryRowContext(ctx, `SELECT `+prefixed("c", campaignColumns)+` FROM campaigns c
		JOIN datasets ds ON ds.id = c.dataset_id AND ds.state = 'ready' WHERE c.id = ?`, id))
	if err != nil {
		return c, fmt.Errorf("campaign %d: %w", id, err)
	}
	return c, nil
}

// Campaigns lists the campaigns of ready datasets, newest first.
func (d *DB) Campaigns(ctx context.Context) ([]Campaign, error) {
	list, err := queryAll(ctx, d, `SELECT `+prefixed("c", campaignColumns)+` FROM campaigns c
		JOIN datasets ds ON ds.id = c.dataset_id AND ds.state = 'ready' ORDER BY c.id DESC`, scanCampaign)
	if err != nil {
		return nil, fmt.Errorf("list campaigns: %w", err)
	}
	return list, nil
}

// UpdateCampaign stores c's settings and records actor in the audit log. from is the
// representation the change was prepared against: if the stored one differs, someone
// changed it meanwhile and nothing is written (ErrStale). When c.Spec differs from from,
// the pairs' scores change with it in the same transaction: every pair's scores become
// those in rescored (computed under c.Spec), and a pair missing there (drawn meanwhile)
// becomes unscored. A larger overlap applies to the pairs there are, too.
func (d *DB) UpdateCampaign(ctx context.Context, actor string, from lsh.Spec, c Campaign, rescored []PairScore) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		was, err := campaignSpec(ctx, tx, c.ID)
		if err != nil {
			return err
		}
		if was != from {
			return fmt.Errorf("representation: %w", ErrStale)
		}
		cats, err := encodeCategories(c.Categories)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET spec = ?, threshold = ?, overlap = ?, double_share = ?, categories = ? WHERE id = ?`,
			c.Spec.String(), c.Threshold, c.Overlap, c.DoubleShare, cats, c.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE label_pairs SET wanted = max(wanted, ?) WHERE campaign_id = ?`, c.Overlap, c.ID); err != nil {
			return err
		}
		if c.Spec != from {
			if _, err := tx.ExecContext(ctx, `UPDATE label_pairs SET similarity = NULL, estimate = NULL WHERE campaign_id = ?`, c.ID); err != nil {
				return err
			}
			if err := setPairScores(ctx, tx, c.ID, rescored); err != nil {
				return err
			}
		}
		return d.audit(ctx, tx, actor, "campaign.update", fmt.Sprintf("campaign:%d", c.ID), map[string]any{
			"spec": c.Spec.String(), "threshold": c.Threshold, "overlap": c.Overlap, "double_share": c.DoubleShare, "categories": c.Categories})
	})
	if err != nil {
		return fmt.Errorf("update campaign %d: %w", c.ID, err)
	}
	return nil
}
