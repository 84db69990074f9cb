package db

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// What the campaign and start pages count (internal/campaign keeps the tallies in
// memory) is read from here: once in full, then only what changed. Label events are
// only ever appended, with growing ids, so "what changed" is the events after the last
// one read; a campaign's pairs change in place, and pair_revisions (bumped by triggers
// on label_pairs) says when to read them again.

// LabelMark is where a campaign's pairs and the label log stand.
type LabelMark struct {
	PairsRevision int64 // bumped by every change to the campaign's pairs
	LastEvent     int64 // the newest label event's id, of any campaign
}

// EventRef is what the tallies need of a label event.
type EventRef struct {
	ID        int64
	PairID    int64
	Annotator string
	Kind      labels.Kind
	Category  string
	Duplicate bool
}

const markQuery = `SELECT coalesce((SELECT revision FROM pair_revisions WHERE campaign_id = ?), 0),
	coalesce((SELECT max(id) FROM label_events), 0)`

// LabelMark returns where campaignID's pairs and the label log stand.
func (d *DB) LabelMark(ctx context.Context, campaignID int64) (LabelMark, error) {
	var m LabelMark
	if err := d.r.QueryRowContext(ctx, markQuery, campaignID).Scan(&m.PairsRevision, &m.LastEvent); err != nil {
		return m, fmt.Errorf("label mark of campaign %d: %w", campaignID, err)
	}
	return m, nil
}

// LabelRead says what ReadLabels reads and where it hands it.
type LabelRead struct {
	// Pairs, when set, receives every pair of the campaign, by id, when their revision
	// is not Revision (-1: always).
	Revision int64
	Pairs    func(PairStat) error
	// After is the last event already read (0 for none). Event receives the events
	// after it up to the mark, in id order; a first read (After 0) gets, rather than
	// the whole log, each annotator's newest label-setting event on each pair (a
	// retraction included), and Annotator gets everyone with an event on the
	// campaign's pairs.
	After     int64
	Event     func(EventRef) error
	Annotator func(string) error
}

// ReadLabels reads a campaign's pairs and label events as LabelRead asks, in one read
// transaction, and returns the mark that read saw: every event up to mark.LastEvent is
// read, and an event committed later has a larger id.
func (d *DB) ReadLabels(ctx context.Context, campaignID int64, rd LabelRead) (LabelMark, error) {
	m, err := d.readLabels(ctx, campaignID, rd)
	if err != nil {
		return m, fmt.Errorf("read labels of campaign %d: %w", campaignID, err)
	}
	return m, nil
}

func (d *DB) readLabels(ctx context.Context, campaignID int64, rd LabelRead) (LabelMark, error) {
	var m LabelMark
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return m, err
	}
	defer tx.Rollback() // read only: nothing to commit
	if err := tx.QueryRowContext(ctx, markQuery, campaignID).Scan(&m.PairsRevision, &m.LastEvent); err != nil {
		return m, err
	}
	if rd.Pairs != nil && (rd.Revision < 0 || rd.Revision != m.PairsRevision) {
		if err := eachRow(ctx, tx, `SELECT id, similarity, estimate, wanted, origin FROM label_pairs WHERE campaign_id = ? ORDER BY id`,
			func(sc scanner) error {
				var p PairStat
				if err := sc.Scan(&p.ID, &p.Similarity, &p.Estimate, &p.Wanted, &p.Origin); err != nil {
					return err
				}
				return rd.Pairs(p)
			}, campaignID); err != nil {
			return m, fmt.Errorf("pairs: %w", err)
		}
	}
	if rd.Event == nil || m.LastEvent <= rd.After {
		return m, nil
	}
	scanEvent := func(sc scanner) error {
		var e EventRef
		var kind string
		if err := sc.Scan(&e.ID, &e.PairID, &e.Annotator, &kind, &e.Category, &e.Duplicate); err != nil {
			return err
		}
		var err error
		if e.Kind, err = labels.ParseKind(kind); err != nil {
			return fmt.Errorf("label event %d: %w", e.ID, err)
		}
		return rd.Event(e)
	}
	if rd.After > 0 {
		// What is new: the log from After on (CROSS JOIN keeps SQLite from starting at
		// the campaign's pairs instead).
		err := eachRow(ctx, tx, `SELECT e.id, e.pair_id, e.annotator, e.kind, e.category, e.duplicate
			FROM label_events e CROSS JOIN label_pairs p ON p.id = e.pair_id
			WHERE e.id > ? AND e.id <= ? AND p.campaign_id = ? ORDER BY e.id`, scanEvent, rd.After, m.LastEvent, campaignID)
		if err != nil {
			return m, fmt.Errorf("events: %w", err)
		}
		return m, nil
	}
	// A first read leaves the log to SQLite: the newest label-setting event of each
	// pair and annotator, found in one pass over the table in id order (random lookups
	// through an index cost several times as much at a million events) grouped in a
	// temporary b-tree; with max(), SQLite takes the other columns from the row that has
	// the maximum.
	err = eachRow(ctx, tx, `SELECT max(e.id), e.pair_id, e.annotator, e.kind, e.category, e.duplicate
		FROM label_events AS e NOT INDEXED CROSS JOIN label_pairs p ON p.id = e.pair_id
		WHERE e.id <= ? AND e.kind IN `+currentKinds+` AND p.campaign_id = ?
		GROUP BY e.pair_id, e.annotator`, scanEvent, m.LastEvent, campaignID)
	if err != nil {
		return m, fmt.Errorf("standing labels: %w", err)
	}
	if rd.Annotator == nil {
		return m, nil
	}
	// Annotators: each name in the log (by the (annotator, id) index) that has an event
	// on one of the campaign's pairs.
	err = eachRow(ctx, tx, `SELECT a.annotator FROM (SELECT DISTINCT annotator FROM label_events) a
		WHERE EXISTS (SELECT 1 FROM label_events e CROSS JOIN label_pairs p ON p.id = e.pair_id
			WHERE e.annotator = a.annotator AND e.id <= ? AND p.campaign_id = ?)`, func(sc scanner) error {
		var a string
		if err := sc.Scan(&a); err != nil {
			return err
		}
		return rd.Annotator(a)
	}, m.LastEvent, campaignID)
	if err != nil {
		return m, fmt.Errorf("annotators: %w", err)
	}
	return m, nil
}

// eachRow runs a query in tx and calls fn for every row.
func eachRow(ctx context.Context, tx *sql.Tx, query string, fn func(scanner) error, args ...any) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
