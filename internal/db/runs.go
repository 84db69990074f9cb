package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Runs over a dataset are background jobs (internal/jobs, in memory); their records here
// outlive the process. A run killed while it worked is found 'running' by the next
// start and marked interrupted, so its page says what happened instead of vanishing.

// Run states as stored.
const (
	RunRunning     = "running"
	RunDone        = "done"
	RunFailed      = "failed"
	RunCancelled   = "cancelled"
	RunInterrupted = "interrupted"
)

// RunRecord is the stored record of a run.
type RunRecord struct {
	ID          int64
	JobID       string
	DatasetID   int64
	Title       string
	Form        string // the run form's query, to run it again
	CarriedFrom int64  // the manifest it prepares again; 0 for none
	State       string
	Phase       string // the last phase it reported
	Error       string
	ManifestID  int64
	StartedBy   int64
	CreatedAt   time.Time
	FinishedAt  time.Time
}

// NewRun is a run about to start.
type NewRun struct {
	JobID       string
	DatasetID   int64
	Title       string
	Form        string
	CarriedFrom int64
}

// StartRun records a run that starts now as by, and returns its record's id.
func (d *DB) StartRun(ctx context.Context, by User, nr NewRun) (int64, error) {
	var id int64
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO runs (job_id, dataset_id, title, form, carried_from, state, started_by, created_at)
			VALUES (?, ?, ?, ?, ?, 'running', ?, ?)`, nr.JobID, nr.DatasetID, nr.Title, nr.Form, nullID(nr.CarriedFrom), nullID(by.ID), d.stamp())
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("record run of dataset %d: %w", nr.DatasetID, err)
	}
	return id, nil
}

// SetRunJob names the job that runs a recorded run (known once the job started).
func (d *DB) SetRunJob(ctx context.Context, id int64, jobID string) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET job_id = ? WHERE id = ?`, jobID, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("record job of run %d: %w", id, err)
	}
	return nil
}

// SetRunPhase records the phase a running run reached.
func (d *DB) SetRunPhase(ctx context.Context, id int64, phase string) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET phase = ? WHERE id = ? AND state = 'running'`, phase, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("record phase of run %d: %w", id, err)
	}
	return nil
}

// FinishRun records how a run ended (a run that made its manifest was marked done by
// CreateManifest, in the same transaction). A run no longer running is left as it is.
func (d *DB) FinishRun(ctx context.Context, id int64, state, errText string) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error { return finishRun(ctx, tx, id, state, errText, 0, d.stamp()) })
	if err != nil {
		return fmt.Errorf("finish run %d: %w", id, err)
	}
	return nil
}

func finishRun(ctx context.Context, tx *sql.Tx, id int64, state, errText string, manifestID int64, at string) error {
	_, err := tx.ExecContext(ctx, `UPDATE runs SET state = ?, error = ?, manifest_id = coalesce(?, manifest_id), finished_at = ?
		WHERE id = ? AND state = 'running'`, state, errText, nullID(manifestID), at, id)
	return err
}

// MarkRunsInterrupted marks every run recorded as running as interrupted: at start, no
// job of this process runs them, so a process that stopped left them. It returns how
// many it marked.
func (d *DB) MarkRunsInterrupted(ctx context.Context) (int, error) {
	var n int64
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET state = 'interrupted', finished_at = ? WHERE state = 'running'`, d.stamp())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("mark interrupted runs: %w", err)
	}
	return int(n), nil
}

const runColumns = `id, job_id, dataset_id, title, form, coalesce(carried_from, 0), state, phase, error, coalesce(manifest_id, 0),
	coalesce(started_by, 0), created_at, coalesce(finished_at, '')`

func scanRun(sc scanner) (RunRecord, error) {
	var r RunRecord
	var created, finished string
	if err := sc.Scan(&r.ID, &r.JobID, &r.DatasetID, &r.Title, &r.Form, &r.CarriedFrom, &r.State, &r.Phase, &r.Error, &r.ManifestID,
		&r.StartedBy, &created, &finished); err != nil {
		return r, notFound(err)
	}
	var err error
	if r.CreatedAt, err = parseTime("created_at", created); err != nil {
		return r, err
	}
	r.FinishedAt, err = parseOptTime("finished_at", finished)
	return r, err
}

// RunByJob returns the newest run record of a job id.
func (d *DB) RunByJob(ctx context.Context, jobID string) (RunRecord, error) {
	r, err := scanRun(d.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE job_id = ? ORDER BY id DESC LIMIT 1`, jobID))
	if err != nil {
		return r, fmt.Errorf("run of job %s: %w", jobID, err)
	}
	return r, nil
}

// Run returns a run record by id.
func (d *DB) Run(ctx context.Context, id int64) (RunRecord, error) {
	r, err := scanRun(d.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if err != nil {
		return r, fmt.Errorf("run %d: %w", id, err)
	}
	return r, nil
}
