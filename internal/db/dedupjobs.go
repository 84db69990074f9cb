package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// DedupJob is a whole-corpus run started from the web UI (migration 0018): the dedup
// pipeline over a corpus file on the server, whose record survives a restart.
type DedupJob struct {
	ID               int64
	Source           string // where the settings came from: "manifest 3", "sweep 2, configuration 5"
	SourceManifestID int64  // 0 when the settings came from a sweep
	Settings         string // settings.json
	Corpus           string // relative to the corpus root
	State            string // running, done, failed, cancelled, interrupted
	Error            string
	Summary          string // summary.json once done, "{}" before
	ManifestID       int64  // the draft manifest the removals became; 0 for none yet
	ImportNote       string // why there is no manifest yet
	StartedBy        int64
	StartedName      string
	CreatedAt        time.Time
	StartedAt        time.Time
	FinishedAt       time.Time // zero while running or interrupted
}

const dedupJobCols = `id, source, COALESCE(source_manifest_id, 0), settings, corpus, state, error, summary,
	COALESCE(manifest_id, 0), import_note, COALESCE(started_by, 0), started_name, created_at, started_at, COALESCE(finished_at, '')`

func scanDedupJob(sc scanner) (DedupJob, error) {
	var j DedupJob
	var created, started, finished string
	if err := sc.Scan(&j.ID, &j.Source, &j.SourceManifestID, &j.Settings, &j.Corpus, &j.State, &j.Error, &j.Summary,
		&j.ManifestID, &j.ImportNote, &j.StartedBy, &j.StartedName, &created, &started, &finished); err != nil {
		return j, notFound(err)
	}
	var err error
	if j.CreatedAt, err = parseTime("created_at", created); err != nil {
		return j, err
	}
	if j.StartedAt, err = parseTime("started_at", started); err != nil {
		return j, err
	}
	if j.FinishedAt, err = parseOptTime("finished_at", finished); err != nil {
		return j, err
	}
	return j, nil
}

// CreateDedupJob stores a new whole-corpus run, running, and returns its id; the audit
// log records who started it.
func (d *DB) CreateDedupJob(ctx context.Context, j DedupJob, by User) (int64, error) {
	var id int64
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		now := d.stamp()
		res, err := tx.ExecContext(ctx, `INSERT INTO dedup_jobs (source, source_manifest_id, settings, corpus, state, started_by, started_name, created_at, started_at)
			VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?)`, j.Source, nullID(j.SourceManifestID), j.Settings, j.Corpus, nullID(by.ID), by.Name, now, now)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, by, "dedup-job.start", fmt.Sprintf("dedup-job:%d", id), map[string]any{"source": j.Source, "corpus": j.Corpus})
	})
	if err != nil {
		return 0, fmt.Errorf("store whole-corpus run: %w", err)
	}
	return id, nil
}

// DedupJob returns a stored whole-corpus run, or ErrNotFound.
func (d *DB) DedupJob(ctx context.Context, id int64) (DedupJob, error) {
	j, err := scanDedupJob(d.r.QueryRowContext(ctx, `SELECT `+dedupJobCols+` FROM dedup_jobs WHERE id = ?`, id))
	if err != nil {
		return j, fmt.Errorf("whole-corpus run %d: %w", id, err)
	}
	return j, nil
}

// DedupJobs returns the whole-corpus runs, newest first.
func (d *DB) DedupJobs(ctx context.Context) ([]DedupJob, error) {
	list, err := queryAll(ctx, d, `SELECT `+dedupJobCols+` FROM dedup_jobs ORDER BY id DESC`, scanDedupJob)
	if err != nil {
		return nil, fmt.Errorf("whole-corpus runs: %w", err)
	}
	return list, nil
}

// ResumeDedupJob sets a run that stopped (cancelled, interrupted, failed) running again,
// by actor. It returns ErrStale when the run is running or done.
func (d *DB) ResumeDedupJob(ctx context.Context, id int64, by User) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE dedup_jobs SET state = 'running', error = '', started_at = ?, finished_at = NULL
			WHERE id = ? AND state IN ('cancelled', 'interrupted', 'failed')`, d.stamp(), id)
		if err != nil {
			return err
		}
		if err := rowOr(res, ErrStale); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, by, "dedup-job.resume", fmt.Sprintf("dedup-job:%d", id), nil)
	})
	if err != nil {
		return fmt.Errorf("resume whole-corpus run %d: %w", id, err)
	}
	return nil
}

// FinishDedupJob records how a run ended: done (with its summary), failed or cancelled.
func (d *DB) FinishDedupJob(ctx context.Context, id int64, state, errText, summary string) error {
	if summary == "" {
		summary = "{}"
	}
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE dedup_jobs SET state = ?, error = ?, finished_at = ?, summary = ? WHERE id = ?`,
			state, errText, d.stamp(), summary, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("finish whole-corpus run %d: %w", id, err)
	}
	return nil
}

// SetDedupJobManifest records the manifest a run's removals were imported as (id > 0),
// or why there is none (note).
func (d *DB) SetDedupJobManifest(ctx context.Context, id, manifestID int64, note string) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE dedup_jobs SET manifest_id = ?, import_note = ? WHERE id = ?`, nullID(manifestID), note, id)
		if err != nil {
			return err
		}
		return oneRow(res)
	})
	if err != nil {
		return fmt.Errorf("manifest of whole-corpus run %d: %w", id, err)
	}
	return nil
}

// InterruptDedupJobs marks every running whole-corpus run as interrupted (the process
// that ran them died) and returns how many it marked. Call it before serving.
func (d *DB) InterruptDedupJobs(ctx context.Context) (int, error) {
	var n int64
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE dedup_jobs SET state = 'interrupted', error = 'the server stopped while it ran' WHERE state = 'running'`)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("mark interrupted whole-corpus runs: %w", err)
	}
	return int(n), nil
}
