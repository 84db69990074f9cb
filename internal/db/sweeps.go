package db

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
)

// Sweep is a stored sweep (internal/sweeprun reads and writes them). Grid, Summary and
// the label snapshot are JSON the sweeprun package owns.
type Sweep struct {
	ID           int64
	CampaignID   int64
	DatasetID    int64 // the campaign's
	Name, Notes  string
	Grid         string
	Seed         uint64
	State        string
	Error        string
	Done, Total  int
	LabelVersion string
	Summary      string // "" until the first run returned
	RerunOf      int64  // 0: not a re-run
	CreatedBy    int64  // 0: the system or the command line
	CreatedAt    time.Time
	StartedAt    time.Time // zero: never started
	FinishedAt   time.Time // zero: running or never finished
}

// NewSweep is a sweep to store.
type NewSweep struct {
	CampaignID   int64
	Name, Notes  string
	Grid         string
	Seed         uint64
	Total        int
	LabelVersion string
	Labels       string // the resolved labels it is scored on, JSON (stored in sweep_labels)
	RerunOf      int64
	CreatedBy    int64
	// Token is the one-time token of the form that started it ("" for none): a second
	// CreateSweep with the same token returns the first sweep (ErrReplayed).
	Token string
	// LeftOut are the dataset's documents under a standing tombstone when it starts: the
	// sweep scores the others (the live documents), now and when resumed.
	LeftOut []int64
}

// ErrReplayed is returned with the id of the sweep a form's token already started: the
// form was posted twice.
var ErrReplayed = errkind.New(errkind.Conflict, "this form was already sent")

const sweepCols = `s.id, s.campaign_id, c.dataset_id, s.name, s.notes, s.grid, s.seed, s.state, s.error, s.configs_done,
	s.configs_total, s.label_version, coalesce(s.summary, ''), coalesce(s.rerun_of, 0), coalesce(s.created_by, 0), s.created_at,
	coalesce(s.started_at, ''), coalesce(s.finished_at, '')`

func scanSweep(sc scanner) (Sweep, error) {
	var s Sweep
	var seed int64
	var created, started, finished string
	if err := sc.Scan(&s.ID, &s.CampaignID, &s.DatasetID, &s.Name, &s.Notes, &s.Grid, &seed, &s.State, &s.Error, &s.Done,
		&s.Total, &s.LabelVersion, &s.Summary, &s.RerunOf, &s.CreatedBy, &created, &started, &finished); err != nil {
		return s, err
	}
	s.Seed = uint64(seed)
	var err error
	if s.CreatedAt, err = parseTime("created_at", created); err != nil {
		return s, err
	}
	if s.StartedAt, err = parseOptTime("started_at", started); err != nil {
		return s, err
	}
	if s.FinishedAt, err = parseOptTime("finished_at", finished); err != nil {
		return s, err
	}
	return s, nil
}

// CreateSweep stores a new sweep in state queued (its job starts next and runs it when
// its turn comes: StartSweep), audited as sweep.start by actor.
//
// A sweep whose Token an earlier sweep holds is not created: CreateSweep returns that
// sweep's id with ErrReplayed.
func (d *DB) CreateSweep(ctx context.Context, s NewSweep, actor string) (int64, error) {
	var id int64
	var token any
	if s.Token != "" {
		token = s.Token
	}
	replayed := false
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		if token != nil {
			// The write transaction is immediate: no other post can slip in between.
			err := tx.QueryRowContext(ctx, `SELECT id FROM sweeps WHERE request_token = ?`, token).Scan(&id)
			if err == nil {
				replayed = true
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		now := d.stamp()
		leftOut, err := json.Marshal(append([]int64{}, s.LeftOut...))
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO sweeps (campaign_id, name, notes, grid, seed, state, configs_total, label_version,
			rerun_of, created_by, created_at, request_token, left_out) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)`,
			s.CampaignID, s.Name, s.Notes, s.Grid, int64(s.Seed), s.Total, s.LabelVersion, nullID(s.RerunOf),
			nullID(s.CreatedBy), now, token, string(leftOut))
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		// The snapshot in a table of its own (migration 0022): a row of sweeps stays small,
		// and reading one does not walk megabytes of labels.
		if _, err := tx.ExecContext(ctx, `INSERT INTO sweep_labels (sweep_id, labels) VALUES (?, ?)`, id, s.Labels); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, User{ID: s.CreatedBy, Name: actor}, "sweep.start", fmt.Sprintf("sweep:%d", id),
			map[string]any{"campaign": s.CampaignID, "configs": s.Total, "labels": s.LabelVersion, "rerun_of": s.RerunOf})
	})
	if err != nil {
		return 0, fmt.Errorf("create sweep on campaign %d: %w", s.CampaignID, err)
	}
	if replayed {
		return id, ErrReplayed
	}
	return id, nil
}

// ClaimFormToken records the first use of a form's one-time token of kind ("run"). When
// the token was used before it returns false and where that first post led (target; ""
// while it is still starting).
func (d *DB) ClaimFormToken(ctx context.Context, token, kind string) (claimed bool, target string, err error) {
	err = d.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT target FROM form_tokens WHERE token = ?`, token).Scan(&target)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		claimed = true
		_, err = tx.ExecContext(ctx, `INSERT INTO form_tokens (token, kind, created_at) VALUES (?, ?, ?)`, token, kind, d.stamp())
		return err
	})
	if err != nil {
		return false, "", fmt.Errorf("form token: %w", err)
	}
	return claimed, target, nil
}

// SetFormToken records where a claimed token's post led; "" releases the token (the
// post failed, and the form may be sent again).
func (d *DB) SetFormToken(ctx context.Context, token, target string) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if target == "" {
			_, err = tx.ExecContext(ctx, `DELETE FROM form_tokens WHERE token = ?`, token)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE form_tokens SET target = ? WHERE token = ?`, target, token)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("form token: %w", err)
	}
	return nil
}

// Sweep returns a stored sweep, or ErrNotFound.
func (d *DB) Sweep(ctx context.Context, id int64) (Sweep, error) {
	s, err := scanSweep(d.r.QueryRowContext(ctx, `SELECT `+sweepCols+` FROM sweeps s JOIN campaigns c ON c.id = s.campaign_id
		WHERE s.id = ?`, id))
	if err != nil {
		return Sweep{}, fmt.Errorf("sweep %d: %w", id, notFound(err))
	}
	return s, nil
}

// Sweeps returns the sweeps of a campaign (0: of every campaign), newest first.
func (d *DB) Sweeps(ctx context.Context, campaignID int64) ([]Sweep, error) {
	list, err := queryAll(ctx, d, `SELECT `+sweepCols+` FROM sweeps s JOIN campaigns c ON c.id = s.campaign_id
		WHERE ? = 0 OR s.campaign_id = ? ORDER BY s.id DESC`, scanSweep, campaignID, campaignID)
	if err != nil {
		return nil, fmt.Errorf("sweeps of campaign %d: %w", campaignID, err)
	}
	return list, nil
}

// SweepLabels returns the label snapshot a sweep is scored on (JSON). It is megabytes at
// a million labeled pairs: read it only to score the sweep or to compare it with the
// campaign's labels.
func (d *DB) SweepLabels(ctx context.Context, id int64) (string, error) {
	var s string
	if err := d.r.QueryRowContext(ctx, `SELECT labels FROM sweep_labels WHERE sweep_id = ?`, id).Scan(&s); err != nil {
		return "", fmt.Errorf("labels of sweep %d: %w", id, notFound(err))
	}
	return s, nil
}

// SweepLeftOut returns the documents a sweep leaves out: those under a standing
// tombstone when it started.
func (d *DB) SweepLeftOut(ctx context.Context, id int64) ([]int64, error) {
	var text string
	if err := d.r.QueryRowContext(ctx, `SELECT left_out FROM sweeps WHERE id = ?`, id).Scan(&text); err != nil {
		return nil, fmt.Errorf("documents left out of sweep %d: %w", id, notFound(err))
	}
	var ids []int64
	if err := json.Unmarshal([]byte(text), &ids); err != nil {
		return nil, fmt.Errorf("documents left out of sweep %d: %w", id, err)
	}
	return ids, nil
}

// ResumeSweep queues a cancelled, interrupted or failed sweep again (a resume), by
// actor. It returns ErrStale when the sweep is queued, running or done.
func (d *DB) ResumeSweep(ctx context.Context, id int64, by int64, actor string) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sweeps SET state = 'queued', error = '', finished_at = NULL
			WHERE id = ? AND state IN ('cancelled', 'interrupted', 'failed')`, id)
		if err != nil {
			return err
		}
		if err := rowOr(res, ErrStale); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, User{ID: by, Name: actor}, "sweep.resume", fmt.Sprintf("sweep:%d", id), nil)
	})
	if err != nil {
		return fmt.Errorf("resume sweep %d: %w", id, err)
	}
	return nil
}

// StartSweep moves a queued sweep to running (its turn came) and stamps started_at. It
// returns ErrStale when the sweep is not queued.
func (d *DB) StartSweep(ctx context.Context, id int64) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sweeps SET state = 'running', started_at = ? WHERE id = ? AND state = 'queued'`, d.stamp(), id)
		if err != nil {
			return err
		}
		return rowOr(res, ErrStale)
	})
	if err != nil {
		return fmt.Errorf("start sweep %d: %w", id, err)
	}
	return nil
}

// FinishSweep records how a sweep's run ended: state done, failed or cancelled, the
// error of a failure, and the summary (JSON; "" keeps the one stored).
func (d *DB) FinishSweep(ctx context.Context, id int64, state, errText, summary string) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE sweeps SET state = ?, error = ?, finished_at = ?,
			summary = CASE WHEN ? = '' THEN summary ELSE ? END WHERE id = ?`, state, errText, d.stamp(), summary, summary, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("finish sweep %d: %w", id, err)
	}
	return nil
}

// SetSweepSummary stores a sweep's summary (JSON) while it runs.
func (d *DB) SetSweepSummary(ctx context.Context, id int64, summary string) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE sweeps SET summary = ? WHERE id = ?`, summary, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("summary of sweep %d: %w", id, err)
	}
	return nil
}

// SetSweepNotes replaces a sweep's name and notes.
func (d *DB) SetSweepNotes(ctx context.Context, id int64, name, notes string) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sweeps SET name = ?, notes = ? WHERE id = ?`, name, notes, id)
		if err != nil {
			return err
		}
		return oneRow(res)
	})
	if err != nil {
		return fmt.Errorf("notes of sweep %d: %w", id, err)
	}
	return nil
}

// InterruptSweeps marks every running or queued sweep but those in except as interrupted
// (a process that ran or queued them died) and returns how many it marked.
func (d *DB) InterruptSweeps(ctx context.Context, except []int64) (int, error) {
	var n int64
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		ids, err := collect(ctx, tx, `SELECT id FROM sweeps WHERE state IN ('running', 'queued')`, scanValue[int64])
		if err != nil {
			return err
		}
		n = 0
		for _, id := range ids {
			skip := false
			for _, e := range except {
				skip = skip || e == id
			}
			if skip {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE sweeps SET state = 'interrupted', finished_at = NULL WHERE id = ?`, id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("mark interrupted sweeps: %w", err)
	}
	return int(n), nil
}

// SweepResult is one stored configuration of a sweep; Metrics is the sweep.Result as
// JSON, the axes are columns too.
type SweepResult struct {
	ID           int64
	SweepID      int64
	Ordinal      int
	Spec         string
	Bands, Rows  int
	Threshold    float64
	Verification string
	Policy       string
	Metrics      string
}

// AddSweepResults stores results of a sweep in one transaction (one already stored at
// its ordinal is kept) and brings its count of configurations done up to date. Each
// result stored gets its row's ID in rs (0 for one kept from before).
func (d *DB) AddSweepResults(ctx context.Context, sweepID int64, rs []SweepResult) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO sweep_results (sweep_id, ordinal, spec, bands, rows, threshold, verification,
			policy, metrics, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sweep_id, ordinal) DO NOTHING RETURNING id`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		now := d.stamp()
		added := 0
		for i := range rs {
			r := &rs[i]
			r.ID = 0
			err := stmt.QueryRowContext(ctx, sweepID, r.Ordinal, r.Spec, r.Bands, r.Rows, r.Threshold, r.Verification, r.Policy,
				r.Metrics, now).Scan(&r.ID)
			switch {
			case err == nil:
				added++
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("result %d: %w", r.Ordinal, err)
			}
		}
		// Counted as added, not recounted: results are only ever added (a sweep's go with
		// it), and a count of them all per transaction made storing a grid quadratic.
		_, err = tx.ExecContext(ctx, `UPDATE sweeps SET configs_done = configs_done + ? WHERE id = ?`, added, sweepID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store results of sweep %d: %w", sweepID, err)
	}
	return nil
}

const sweepResultCols = `id, sweep_id, ordinal, spec, bands, rows, threshold, verification, policy, metrics`

func scanSweepResult(sc scanner) (SweepResult, error) {
	var r SweepResult
	return r, sc.Scan(&r.ID, &r.SweepID, &r.Ordinal, &r.Spec, &r.Bands, &r.Rows, &r.Threshold, &r.Verification, &r.Policy, &r.Metrics)
}

// SweepResults returns a sweep's stored results by ordinal.
func (d *DB) SweepResults(ctx context.Context, sweepID int64) ([]SweepResult, error) {
	list, err := queryAll(ctx, d, `SELECT `+sweepResultCols+` FROM sweep_results WHERE sweep_id = ? ORDER BY ordinal`,
		scanSweepResult, sweepID)
	if err != nil {
		return nil, fmt.Errorf("results of sweep %d: %w", sweepID, err)
	}
	return list, nil
}

// SweepResultsAfter returns a sweep's results stored after the result with id after (0:
// all), in the order they were stored: what a page polling a running sweep has not seen.
func (d *DB) SweepResultsAfter(ctx context.Context, sweepID, after int64) ([]SweepResult, error) {
	list, err := queryAll(ctx, d, `SELECT `+sweepResultCols+` FROM sweep_results WHERE sweep_id = ? AND id > ? ORDER BY id`,
		scanSweepResult, sweepID, after)
	if err != nil {
		return nil, fmt.Errorf("results of sweep %d: %w", sweepID, err)
	}
	return list, nil
}

// SweepResultByID returns one stored result, or ErrNotFound.
func (d *DB) SweepResultByID(ctx context.Context, id int64) (SweepResult, error) {
	r, err := scanSweepResult(d.r.QueryRowContext(ctx, `SELECT `+sweepResultCols+` FROM sweep_results WHERE id = ?`, id))
	if err != nil {
		return SweepResult{}, fmt.Errorf("sweep result %d: %w", id, notFound(err))
	}
	return r, nil
}

// SweepOrdinals returns the ordinals of a sweep's stored results, ascending.
func (d *DB) SweepOrdinals(ctx context.Context, sweepID int64) ([]int, error) {
	list, err := queryAll(ctx, d, `SELECT ordinal FROM sweep_results WHERE sweep_id = ? ORDER BY ordinal`,
		scanValue[int], sweepID)
	if err != nil {
		return nil, fmt.Errorf("results of sweep %d: %w", sweepID, err)
	}
	return list, nil
}

// SweepDocs are a dataset's documents as a sweep reads them, by id ascending (the order
// of the signature cache's sets).
type SweepDocs struct {
	IDs []int64
	// Hashes are the first 8 bytes of each text's SHA-256 (documents.content_hash): the
	// exact-hash baseline.
	Hashes []uint64
	Texts  []string
	// Keep is what keeper rules read of each document: length, source, language and
	// the metadata's date.
	Keep []cluster.Doc
}

// SweepDocuments reads every document of a dataset with its text and content hash. It
// holds every text in memory (the sweep computes exact Jaccard from them).
func (d *DB) SweepDocuments(ctx context.Context, datasetID int64) (SweepDocs, error) {
	var out SweepDocs
	rows, err := d.r.QueryContext(ctx, `SELECT id, content_hash, text, source, lang, meta FROM documents WHERE dataset_id = ? ORDER BY id`, datasetID)
	if err != nil {
		return out, fmt.Errorf("documents of dataset %d: %w", datasetID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var hash, text, source, lang, meta string
		if err := rows.Scan(&id, &hash, &text, &source, &lang, &meta); err != nil {
			return out, fmt.Errorf("documents of dataset %d: %w", datasetID, err)
		}
		b, err := hex.DecodeString(hash)
		if err != nil || len(b) < 8 {
			return out, fmt.Errorf("documents of dataset %d: document %d: content hash %q is not a hex SHA-256", datasetID, id, hash)
		}
		out.IDs = append(out.IDs, id)
		out.Hashes = append(out.Hashes, binary.BigEndian.Uint64(b))
		out.Texts = append(out.Texts, text)
		out.Keep = append(out.Keep, cluster.DocOf(len(text), source, lang, meta))
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("documents of dataset %d: %w", datasetID, err)
	}
	return out, nil
}

// SweepPair is a pair of a campaign as a sweep reads it: documents, standing labels,
// flagged and skipped state and the design that drew it.
type SweepPair struct {
	ID, A, B int64
	Labels   []StandingLabel
	Flagged  bool
	// Skipped: someone skipped it and nobody has a standing label on it.
	Skipped         bool
	Design, Stratum string
	FrameSize       int
	// Origin says how the pair came into the campaign (label_pairs.origin).
	Origin string
}

// SweepPairs returns every pair of a campaign, by id, with what a sweep needs.
func (d *DB) SweepPairs(ctx context.Context, campaignID int64) ([]SweepPair, error) {
	return d.sweepPairs(ctx, campaignID, -1)
}

// SweepPairsChanged returns, by id, the pairs of a campaign with a label event after
// event id after (a label, a skip, a flag; whatever changes what SweepPairs says of a
// pair), as SweepPairs would: what a reader that has read them up to LabelMark's
// LastEvent = after reads to catch up, when PairsRevision has not moved.
func (d *DB) SweepPairsChanged(ctx context.Context, campaignID, after int64) ([]SweepPair, error) {
	return d.sweepPairs(ctx, campaignID, after)
}

// sweepPairs reads the pairs of a campaign with an event after event id after (-1:
// every pair).
func (d *DB) sweepPairs(ctx context.Context, campaignID, after int64) ([]SweepPair, error) {
	which, args := `p.campaign_id = ?`, []any{campaignID}
	if after >= 0 {
		which += ` AND p.id IN (SELECT e.pair_id FROM label_events e WHERE e.id > ?)`
		args = append(args, after)
	}
	pairs, err := queryAll(ctx, d, `SELECT p.id, p.doc_a, p.doc_b, p.design, p.stratum, p.frame_size, p.origin,
			p.labels_n = 0 AND EXISTS (SELECT 1 FROM label_events e WHERE e.pair_id = p.id AND e.kind = 'skip')
		FROM label_pairs p WHERE `+which+` ORDER BY p.id`,
		func(sc scanner) (SweepPair, error) {
			var p SweepPair
			return p, sc.Scan(&p.ID, &p.A, &p.B, &p.Design, &p.Stratum, &p.FrameSize, &p.Origin, &p.Skipped)
		}, args...)
	if err != nil {
		return nil, fmt.Errorf("pairs of campaign %d: %w", campaignID, err)
	}
	if len(pairs) == 0 {
		return pairs, nil
	}
	labeled, err := pairLabels(ctx, d, `SELECT p.id, p.campaign_id, p.doc_a, p.doc_b FROM label_pairs p WHERE `+which, args...)
	if err != nil {
		return nil, fmt.Errorf("labels of campaign %d: %w", campaignID, err)
	}
	flaggedIDs, err := queryAll(ctx, d, `WITH f AS (
			SELECT e.pair_id, e.kind, row_number() OVER (PARTITION BY e.pair_id ORDER BY e.id DESC) AS rn
			FROM label_events e JOIN label_pairs p ON p.id = e.pair_id
			WHERE `+which+` AND e.kind IN ('flag', 'unflag'))
		SELECT pair_id FROM f WHERE rn = 1 AND kind = 'flag'`,
		scanValue[int64], args...)
	if err != nil {
		return nil, fmt.Errorf("flagged pairs of campaign %d: %w", campaignID, err)
	}
	flagged := make(map[int64]bool, len(flaggedIDs))
	for _, id := range flaggedIDs {
		flagged[id] = true
	}
	byID := make(map[int64][]StandingLabel, len(labeled))
	for _, pl := range labeled {
		byID[pl.PairID] = pl.Labels
	}
	for i := range pairs {
		pairs[i].Labels = byID[pairs[i].ID]
		pairs[i].Flagged = flagged[pairs[i].ID]
	}
	return pairs, nil
}

// DatasetDocumentIDs returns the ids of a dataset's documents, ascending.
func (d *DB) DatasetDocumentIDs(ctx context.Context, datasetID int64) ([]int64, error) {
	ids, err := queryAll(ctx, d, `SELECT id FROM documents WHERE dataset_id = ? ORDER BY id`,
		scanValue[int64], datasetID)
	if err != nil {
		return nil, fmt.Errorf("documents of dataset %d: %w", datasetID, err)
	}
	return ids, nil
}
