package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// Label imports (migration 0011) go in two phases, each in short transactions so that
// labelers' writes never wait long behind a large file:
//
//  1. staging: the checked rows go into label_import_rows, invisible to every reader.
//     A failure or a cancel discards them (DiscardLabelImport); so does the janitor
//     (CleanStaleImports) for an import whose process died.
//  2. publishing: once every row is staged, the import is committed: its rows move
//     into label_events batch by batch, in file order. This phase cannot fail on the
//     file any more (every row was checked); if the process dies halfway, the janitor
//     finishes it. While it runs (about five minutes for 300k rows on a busy 2-core
//     machine), readers see part of it.
//
// Each batch aims at deleteBatchTime (its work inside the transaction: neither waiting
// behind other writers nor a commit that happens to checkpoint shrinks it) and then
// leaves the write lock free for deletePause, the rhythm of discarding a failed dataset
// import.

// NewLabelImport is an import about to be staged.
type NewLabelImport struct {
	CampaignID int64
	UserID     int64  // the importing account; 0 for the command line and the demo loader
	ImportedBy string // the importer's name as pages show it
	File       string // the file's name as uploaded or given
}

// LabelImport is a recorded import.
type LabelImport struct {
	ID         int64
	CampaignID int64
	UserID     int64
	ImportedBy string
	File       string
	State      string // staging, publishing, done
	Rows       int
	Published  int
}

// BeginLabelImport records a new import in state staging.
func (d *DB) BeginLabelImport(ctx context.Context, li NewLabelImport) (int64, error) {
	var id int64
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		now := d.stamp()
		res, err := tx.ExecContext(ctx, `INSERT INTO label_imports (campaign_id, user_id, imported_by, file, state, created_at, heartbeat_at)
			VALUES (?, ?, ?, ?, 'staging', ?, ?)`, li.CampaignID, nullID(li.UserID), li.ImportedBy, li.File, now, now)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("begin label import into campaign %d: %w", li.CampaignID, err)
	}
	return id, nil
}

// LabelImportByID returns a recorded import.
func (d *DB) LabelImportByID(ctx context.Context, id int64) (LabelImport, error) {
	var li LabelImport
	var user sql.NullInt64
	err := d.r.QueryRowContext(ctx, `SELECT id, campaign_id, user_id, imported_by, file, state, rows, published FROM label_imports WHERE id = ?`, id).
		Scan(&li.ID, &li.CampaignID, &user, &li.ImportedBy, &li.File, &li.State, &li.Rows, &li.Published)
	if err != nil {
		return LabelImport{}, fmt.Errorf("label import %d: %w", id, notFound(err))
	}
	li.UserID = user.Int64
	return li, nil
}

// StageLabels appends checked rows to a staging import, in file order, in batches; it
// calls progress (if not nil) after each batch with the rows staged so far, outside any
// transaction. Each row's Annotator is the name it will be stored under; an
// adjudication becomes the importing account's (Kind adjudication needs the import's
// user). Nothing is visible to readers.
func (d *DB) StageLabels(ctx context.Context, importID int64, rows []NewLabel, progress func(staged int)) error {
	batch := 256
	for done := 0; done < len(rows); {
		var took time.Duration // from when the batch got the write lock: waiting for it is not its cost
		n := min(batch, len(rows)-done)
		err := d.inTx(ctx, func(tx *sql.Tx) error {
			start := time.Now()
			defer func() { took = time.Since(start) }()
			var state string
			var seq int
			if err := tx.QueryRowContext(ctx, `SELECT state, rows FROM label_imports WHERE id = ?`, importID).Scan(&state, &seq); err != nil {
				return notFound(err)
			}
			if state != "staging" {
				return fmt.Errorf("it is %s: rows are staged only while staging", state)
			}
			stmt, err := tx.PrepareContext(ctx, `INSERT INTO label_import_rows (import_id, seq, doc_a, doc_b, annotator, kind, category, duplicate, note,
				design, stratum, frame_size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			defer stmt.Close()
			for i, l := range rows[done : done+n] {
				a, b := min(l.DocA, l.DocB), max(l.DocA, l.DocB)
				if a == b {
					return fmt.Errorf("row %d: a pair needs two different documents", done+i+1)
				}
				kind := l.Kind
				if kind == "" {
					kind = labels.KindLabel
				}
				if _, err := stmt.ExecContext(ctx, importID, seq+i+1, a, b, l.Annotator, string(kind), l.Category, l.Duplicate, l.Note,
					l.Design, l.Stratum, l.FrameSize); err != nil {
					return fmt.Errorf("row %d: %w", done+i+1, err)
				}
			}
			_, err = tx.ExecContext(ctx, `UPDATE label_imports SET rows = rows + ?, heartbeat_at = ? WHERE id = ?`, n, d.stamp(), importID)
			return err
		})
		if err != nil {
			return fmt.Errorf("stage labels of import %d: %w", importID, err)
		}
		done += n
		if progress != nil {
			progress(done)
		}
		batch = nextBatch(batch, took)
		if err := pause(ctx); err != nil && done < len(rows) {
			return fmt.Errorf("stage labels of import %d: %w", importID, err)
		}
	}
	return nil
}

// nextBatch adapts a batch size to aim at deleteBatchTime.
func nextBatch(batch int, took time.Duration) int {
	switch {
	case took < deleteBatchTime/2 && batch < 16384:
		return batch * 2
	case took > deleteBatchTime && batch > 1:
		return batch / 2
	}
	return batch
}

// pause leaves the write lock free between batches.
func pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(deletePause):
		return nil
	}
}

// PublishLabelImport commits a staged import and moves its rows into the label log in
// batches, calling progress (if not nil) with the rows published so far and the total,
// and returns how many events it appended: a row whose label the annotator's standing
// label on the pair already says (kind, category, duplicate answer and note) is not
// appended again, so importing a file twice adds nothing the second time.
// Once it has begun, the import is finished by whoever comes next if this call stops
// (a cancelled ctx, a killed process): see CleanStaleImports. The audit log's entry,
// written with the last batch, names the importer.
func (d *DB) PublishLabelImport(ctx context.Context, importID int64, progress func(published, total int)) (added int, err error) {
	err = d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE label_imports SET state = 'publishing', heartbeat_at = ? WHERE id = ? AND state IN ('staging', 'publishing')`,
			d.stamp(), importID)
		if err != nil {
			return err
		}
		return oneRow(res)
	})
	if err == nil {
		added, err = d.publishLabels(ctx, importID, progress)
	}
	if err != nil {
		return 0, fmt.Errorf("publish label import %d: %w", importID, err)
	}
	return added, nil
}

// publishLabels runs the batches of a publishing import until it is done, and returns
// how many events the whole import appended.
func (d *DB) publishLabels(ctx context.Context, importID int64, progress func(published, total int)) (int, error) {
	batch := 256
	for {
		var took time.Duration
		var b published
		err := d.inTx(ctx, func(tx *sql.Tx) error {
			start := time.Now()
			var err error
			b, err = d.publishBatch(ctx, tx, importID, batch)
			took = time.Since(start)
			return err
		})
		if err != nil {
			return 0, err
		}
		if progress != nil {
			progress(b.rows, b.total)
		}
		if b.finished {
			return b.added, nil
		}
		batch = nextBatch(batch, took)
		if err := pause(ctx); err != nil {
			return 0, err
		}
	}
}

// published is where a publishing import stands after a batch.
type published struct {
	rows, total, added int
	finished           bool
}

// publishBatch moves the next batch of staged rows into label_events (and out of the
// staging table), creating pairs as needed; each event names the annotator's previous
// event on the pair, as AddLabels does. With the last rows it marks the import done.
func (d *DB) publishBatch(ctx context.Context, tx *sql.Tx, importID int64, batch int) (published, error) {
	var li LabelImport
	var user sql.NullInt64
	var added int
	if err := tx.QueryRowContext(ctx, `SELECT campaign_id, user_id, imported_by, file, state, rows, published, added FROM label_imports WHERE id = ?`, importID).
		Scan(&li.CampaignID, &user, &li.ImportedBy, &li.File, &li.State, &li.Rows, &li.Published, &added); err != nil {
		return published{}, notFound(err)
	}
	if li.State == "done" {
		return published{rows: li.Rows, total: li.Rows, added: added, finished: true}, nil
	}
	if li.State != "publishing" {
		return published{}, fmt.Errorf("it is %s, not publishing", li.State)
	}
	type row struct {
		seq, a, b, frame                                 int
		annotator, kind, category, note, design, stratum string
		dup                                              bool
	}
	list, err := collect(ctx, tx, `SELECT seq, doc_a, doc_b, annotator, kind, category, duplicate, note, design, stratum, frame_size FROM label_import_rows
		WHERE import_id = ? AND seq > ? ORDER BY seq LIMIT ?`, func(sc scanner) (row, error) {
		var r row
		return r, sc.Scan(&r.seq, &r.a, &r.b, &r.annotator, &r.kind, &r.category, &r.dup, &r.note, &r.design, &r.stratum, &r.frame)
	}, importID, li.Published, batch)
	if err != nil {
		return published{}, err
	}
	now := d.stamp()
	// A pair's design is set by the row that brings one; a row without leaves it (as
	// AddLabels does).
	pairStmt, err := tx.PrepareContext(ctx, `INSERT INTO label_pairs (campaign_id, doc_a, doc_b, origin, design, stratum, frame_size, created_at)
		VALUES (?, ?, ?, 'import', ?, ?, ?, ?)
		ON CONFLICT (campaign_id, doc_a, doc_b) DO UPDATE SET design = excluded.design, stratum = excluded.stratum,
			frame_size = excluded.frame_size WHERE excluded.design != ''`)
	if err != nil {
		return published{}, err
	}
	defer pairStmt.Close()
	eventStmt, err := tx.PrepareContext(ctx, `INSERT INTO label_events (pair_id, annotator, user_id, kind, category, duplicate, note, previous_id, created_at, import_id)
		SELECT p.id, ?, ?, ?, ?, ?, ?, (SELECT max(x.id) FROM label_events x WHERE x.pair_id = p.id AND x.annotator = ?), ?, ?
		FROM label_pairs p WHERE p.campaign_id = ? AND p.doc_a = ? AND p.doc_b = ?`)
	if err != nil {
		return published{}, err
	}
	defer eventStmt.Close()
	// What the annotator's standing label on the pair says (sameAsNewest, prepared once).
	sameStmt, err := tx.PrepareContext(ctx, `SELECT s.kind, s.category, s.duplicate, e.note FROM label_pairs p
		JOIN standing_labels s ON s.pair_id = p.id AND s.annotator = ?
		JOIN label_events e ON e.id = s.event_id
		WHERE p.campaign_id = ? AND p.doc_a = ? AND p.doc_b = ?`)
	if err != nil {
		return published{}, err
	}
	defer sameStmt.Close()
	for _, r := range list {
		if _, err := pairStmt.ExecContext(ctx, li.CampaignID, r.a, r.b, r.design, r.stratum, r.frame, now); err != nil {
			return published{}, fmt.Errorf("row %d: %w", r.seq, err)
		}
		var kind, category, note string
		var dup bool
		err := sameStmt.QueryRowContext(ctx, r.annotator, li.CampaignID, r.a, r.b).Scan(&kind, &category, &dup, &note)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return published{}, fmt.Errorf("row %d: %w", r.seq, err)
		}
		li.Published = r.seq
		if err == nil && kind == r.kind && category == r.category && dup == r.dup && note == r.note {
			continue // the annotator's standing label says this already
		}
		var by any // a label is the source's; an adjudication the importer's own
		if r.kind == string(labels.KindAdjudication) {
			if !user.Valid {
				return published{}, fmt.Errorf("row %d: an adjudication needs an importing account", r.seq)
			}
			by = user.Int64
		}
		res, err := eventStmt.ExecContext(ctx, r.annotator, by, r.kind, r.category, r.dup, r.note, r.annotator, now, importID, li.CampaignID, r.a, r.b)
		if err == nil {
			err = oneRow(res)
		}
		if err != nil {
			return published{}, fmt.Errorf("row %d: %w", r.seq, err)
		}
		added++
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM label_import_rows WHERE import_id = ? AND seq <= ?`, importID, li.Published); err != nil {
		return published{}, err
	}
	if li.Published < li.Rows {
		_, err := tx.ExecContext(ctx, `UPDATE label_imports SET published = ?, added = ?, heartbeat_at = ? WHERE id = ?`, li.Published, added, now, importID)
		return published{rows: li.Published, total: li.Rows, added: added}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE label_imports SET state = 'done', published = rows, added = ?, heartbeat_at = ?, finished_at = ? WHERE id = ?`,
		added, now, now, importID); err != nil {
		return published{}, err
	}
	var adjudications int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM label_events WHERE import_id = ? AND kind = 'adjudication'`, importID).Scan(&adjudications); err != nil {
		return published{}, err
	}
	err = d.auditBy(ctx, tx, User{ID: user.Int64, Name: li.ImportedBy}, "labels.import", fmt.Sprintf("campaign:%d", li.CampaignID), map[string]any{
		"import": importID, "events": added, "unchanged": li.Rows - added, "adjudications": adjudications, "file": li.File,
		"imported_by": li.ImportedBy, "user_id": user.Int64})
	return published{rows: li.Rows, total: li.Rows, added: added, finished: true}, err
}

// DiscardLabelImport removes a staging import and its rows, in batches; an import that
// is publishing or done is not touched (ErrConflict). Staged rows were never visible, so
// nothing anyone saw changes.
func (d *DB) DiscardLabelImport(ctx context.Context, importID int64) error {
	if err := d.discardLabelImport(ctx, importID); err != nil {
		return fmt.Errorf("discard label import %d: %w", importID, err)
	}
	return nil
}

func (d *DB) discardLabelImport(ctx context.Context, importID int64) error {
	batch := 1024
	for {
		var took time.Duration
		var n int64
		err := d.inTx(ctx, func(tx *sql.Tx) error {
			start := time.Now()
			defer func() { took = time.Since(start) }()
			var state string
			if err := tx.QueryRowContext(ctx, `SELECT state FROM label_imports WHERE id = ?`, importID).Scan(&state); err != nil {
				return notFound(err)
			}
			if state != "staging" {
				return fmt.Errorf("it is %s: %w", state, ErrConflict)
			}
			// Marked stale first, so the janitor finishes a discard cut short.
			if _, err := tx.ExecContext(ctx, `UPDATE label_imports SET heartbeat_at = '' WHERE id = ?`, importID); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM label_import_rows WHERE import_id = ? AND seq IN
				(SELECT seq FROM label_import_rows WHERE import_id = ? ORDER BY seq LIMIT ?)`, importID, importID, batch)
			if err != nil {
				return err
			}
			if n, err = res.RowsAffected(); err != nil {
				return err
			}
			if n == 0 {
				_, err = tx.ExecContext(ctx, `DELETE FROM label_imports WHERE id = ?`, importID)
			}
			return err
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		batch = nextBatch(batch, took)
		if err := pause(ctx); err != nil {
			return err
		}
	}
}

// stalePublishing is how long a publishing label import may go without a batch before
// the cleanup finishes it.
const stalePublishing = time.Minute

// cleanStaleLabelImports discards the staging imports and finishes the publishing ones
// that have not moved for olderThan (their process died, or a discard was cut short),
// and returns how many it handled.
func (d *DB) cleanStaleLabelImports(ctx context.Context, olderThan time.Duration) (int, error) {
	// A publishing import writes a batch every few tenths of a second at most, and
	// readers see part of it until it is finished: it counts as stopped sooner.
	cutoff := formatTime(d.now().Add(-olderThan))
	publishingCutoff := formatTime(d.now().Add(-min(olderThan, stalePublishing)))
	type stale struct {
		id    int64
		state string
	}
	list, err := queryAll(ctx, d, `SELECT id, state FROM label_imports
		WHERE (state = 'staging' AND heartbeat_at <= ?) OR (state = 'publishing' AND heartbeat_at <= ?) ORDER BY id`,
		func(sc scanner) (stale, error) {
			var s stale
			return s, sc.Scan(&s.id, &s.state)
		}, cutoff, publishingCutoff)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range list {
		switch s.state {
		case "staging":
			err = d.discardLabelImport(ctx, s.id)
			if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
				continue // gone meanwhile, or its owner went on to publish it
			}
		case "publishing":
			_, err = d.publishLabels(ctx, s.id, nil)
		}
		if err != nil {
			return n, fmt.Errorf("label import %d: %w", s.id, err)
		}
		n++
	}
	return n, nil
}
