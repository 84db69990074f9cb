package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// ErrNoDatabase is a database file that does not exist, refused by OpenExisting.
var ErrNoDatabase = errkind.New(errkind.NotFound, "no database file there")

// OpenExisting opens the database at path like Open, but refuses a missing file instead
// of creating an empty one: commands that read what an earlier import or the server put
// there (import-labels, manifest export, audit verify) would otherwise make an empty
// dedupstudio.db wherever they were run and then fail with a puzzling "no dataset".
func OpenExisting(ctx context.Context, path string) (*DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open %s: %w (give the server's database with -db)", path, ErrNoDatabase)
	} else if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return Open(ctx, path)
}

// DatasetVersion returns version v of the named dataset, ready.
func (d *DB) DatasetVersion(ctx context.Context, name string, v int) (Dataset, error) {
	ds, err := scanDataset(d.r.QueryRowContext(ctx, `SELECT `+datasetColumns+` FROM datasets
		WHERE name = ? AND version = ? AND state = 'ready'`, name, v))
	if err != nil {
		return ds, fmt.Errorf("dataset %q version %d: %w", name, v, err)
	}
	return ds, nil
}

// SameContent returns the newest ready version of the named dataset whose content hash
// is hash (the same documents, ids and texts), or ErrNotFound.
func (d *DB) SameContent(ctx context.Context, name, hash string) (Dataset, error) {
	ds, err := scanDataset(d.r.QueryRowContext(ctx, `SELECT `+datasetColumns+` FROM datasets
		WHERE name = ? AND content_hash = ? AND state = 'ready' ORDER BY version DESC LIMIT 1`, name, hash))
	if err != nil {
		return ds, fmt.Errorf("dataset %q with content %.12s: %w", name, hash, err)
	}
	return ds, nil
}

// CampaignNamed returns the dataset's campaign of that name, or ErrNotFound.
func (d *DB) CampaignNamed(ctx context.Context, datasetID int64, name string) (Campaign, error) {
	c, err := scanCampaign(d.r.QueryRowContext(ctx, `SELECT `+campaignColumns+` FROM campaigns WHERE dataset_id = ? AND name = ?`, datasetID, name))
	if err != nil {
		return c, fmt.Errorf("campaign %q of dataset %d: %w", name, datasetID, err)
	}
	return c, nil
}

// CampaignNames lists the names of a dataset's campaigns, oldest first.
func (d *DB) CampaignNames(ctx context.Context, datasetID int64) ([]string, error) {
	names, err := queryAll(ctx, d, `SELECT name FROM campaigns WHERE dataset_id = ? ORDER BY id`, scanValue[string], datasetID)
	if err != nil {
		return nil, fmt.Errorf("campaigns of dataset %d: %w", datasetID, err)
	}
	return names, nil
}

// ImportLabels records imported label events in one transaction, like AddLabels, except
// that a label the annotator's standing label on the pair already says (same kind,
// category, duplicate answer and note) is not appended again: importing a file twice
// adds nothing the second time. It returns how many events it appended.
func (d *DB) ImportLabels(ctx context.Context, campaignID int64, ls []NewLabel, actor string) (added int, err error) {
	err = d.inTx(ctx, func(tx *sql.Tx) error {
		added = 0
		for i, l := range ls {
			same, err := sameAsNewest(ctx, tx, campaignID, l)
			if err != nil {
				return fmt.Errorf("label %d: %w", i+1, err)
			}
			if same {
				continue
			}
			if err := d.addLabel(ctx, tx, campaignID, l); err != nil {
				return fmt.Errorf("label %d: %w", i+1, err)
			}
			added++
		}
		if added == 0 {
			return nil
		}
		return d.audit(ctx, tx, actor, "labels.add", fmt.Sprintf("campaign:%d", campaignID), map[string]any{"events": added, "unchanged": len(ls) - added})
	})
	if err != nil {
		return 0, fmt.Errorf("import labels into campaign %d: %w", campaignID, err)
	}
	return added, nil
}

// sameAsNewest reports whether the standing label of l's annotator on l's pair says what l says.
func sameAsNewest(ctx context.Context, tx *sql.Tx, campaignID int64, l NewLabel) (bool, error) {
	kind := l.Kind
	if kind == "" {
		kind = labels.KindLabel
	}
	var k, category, note string
	var dup bool
	err := tx.QueryRowContext(ctx, `SELECT s.kind, s.category, s.duplicate, e.note FROM label_pairs p
		JOIN standing_labels s ON s.pair_id = p.id AND s.annotator = ?
		JOIN label_events e ON e.id = s.event_id
		WHERE p.campaign_id = ? AND p.doc_a = ? AND p.doc_b = ?`,
		l.Annotator, campaignID, min(l.DocA, l.DocB), max(l.DocA, l.DocB)).Scan(&k, &category, &dup, &note)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return k == string(kind) && category == l.Category && dup == l.Duplicate && note == l.Note, nil
}

// Answer counts the standing labels of one category with one duplicate answer.
type Answer struct {
	Category  string
	Duplicate bool
	N         int
}

// Answers counts a campaign's standing labels (each annotator's newest on each pair) by
// category and duplicate answer: the campaign page finds there the labels whose answer
// overrides what their category says.
func (d *DB) Answers(ctx context.Context, campaignID int64) ([]Answer, error) {
	list, err := queryAll(ctx, d, `SELECT s.category, s.duplicate, count(*) FROM standing_labels s
		JOIN label_pairs p ON p.id = s.pair_id WHERE p.campaign_id = ? GROUP BY s.category, s.duplicate ORDER BY s.category, s.duplicate`,
		func(sc scanner) (Answer, error) {
			var a Answer
			return a, sc.Scan(&a.Category, &a.Duplicate, &a.N)
		}, campaignID)
	if err != nil {
		return nil, fmt.Errorf("answers of campaign %d: %w", campaignID, err)
	}
	return list, nil
}
