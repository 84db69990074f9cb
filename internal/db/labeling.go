package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// NewPair is a pair to put in a campaign's queue.
type NewPair struct {
	DocA, DocB int64
	Origin     string
	Scored     bool // Similarity and Estimate are computed; else they are stored as unknown
	Similarity float64
	Estimate   float64
	Wanted     int
	// Design, Stratum and FrameSize record the stratified draw that chose the pair, when
	// known (see label_pairs); "" and 0 otherwise.
	Design, Stratum string
	FrameSize       int
}

// AddPairs adds pairs to a campaign, skipping those it has; it returns how many were new.
func (d *DB) AddPairs(ctx context.Context, campaignID int64, pairs []NewPair, actor string) (int, error) {
	added := 0
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		added = 0
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO label_pairs (campaign_id, doc_a, doc_b, origin, similarity, estimate, wanted,
			design, stratum, frame_size, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (campaign_id, doc_a, doc_b) DO NOTHING`)
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
			res, err := stmt.ExecContext(ctx, campaignID, a, b, p.Origin, sim, est, max(1, p.Wanted), p.Design, p.Stratum, p.FrameSize, now)
			if err != nil {
				return fmt.Errorf("pair %d-%d: %w", a, b, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			added += int(n)
		}
		return d.audit(ctx, tx, actor, "pairs.sample", fmt.Sprintf("campaign:%d", campaignID), map[string]any{"added": added})
	})
	if err != nil {
		return 0, fmt.Errorf("add pairs to campaign %d: %w", campaignID, err)
	}
	return added, nil
}

// PairRef is a pair's documents, for computing similarities.
type PairRef struct {
	ID, DocA, DocB int64
}

func scanPairRef(sc scanner) (PairRef, error) {
	var p PairRef
	return p, sc.Scan(&p.ID, &p.DocA, &p.DocB)
}

// PairDocs lists a campaign's pairs by document ids.
func (d *DB) PairDocs(ctx context.Context, campaignID int64) ([]PairRef, error) {
	refs, err := queryAll(ctx, d, `SELECT id, doc_a, doc_b FROM label_pairs WHERE campaign_id = ? ORDER BY id`, scanPairRef, campaignID)
	if err != nil {
		return nil, fmt.Errorf("pairs of campaign %d: %w", campaignID, err)
	}
	return refs, nil
}

// PairsWithoutScores lists a campaign's pairs whose scores were never computed
// (imported ones).
func (d *DB) PairsWithoutScores(ctx context.Context, campaignID int64) ([]PairRef, error) {
	refs, err := queryAll(ctx, d, `SELECT id, doc_a, doc_b FROM label_pairs
		WHERE campaign_id = ? AND (similarity IS NULL OR estimate IS NULL) ORDER BY id`, scanPairRef, campaignID)
	if err != nil {
		return nil, fmt.Errorf("unscored pairs of campaign %d: %w", campaignID, err)
	}
	return refs, nil
}

// PairScore is a pair's computed similarity.
type PairScore struct {
	ID                   int64
	Similarity, Estimate float64
}

// SetPairScores stores similarities of a campaign's pairs computed under spec; they
// describe the pair under the campaign's representation and change only with it
// (UpdateCampaign). If the campaign's representation is not spec (any more), the
// remaining scores are not written and the error is ErrStale.
func (d *DB) SetPairScores(ctx context.Context, campaignID int64, spec lsh.Spec, scores []PairScore) error {
	// In chunks of their own transactions, so a large import's new pairs do not hold
	// the write lock for seconds; a chunk that finds the representation changed is
	// refused, and the change (UpdateCampaign) rescored every pair already.
	for lo := 0; lo < len(scores); lo += writeChunk {
		err := d.inTx(ctx, func(tx *sql.Tx) error {
			stored, err := campaignSpec(ctx, tx, campaignID)
			if err != nil {
				return err
			}
			if stored != spec {
				return fmt.Errorf("representation: %w", ErrStale)
			}
			return setPairScores(ctx, tx, campaignID, scores[lo:min(lo+writeChunk, len(scores))])
		})
		if err != nil {
			return fmt.Errorf("set pair scores of campaign %d: %w", campaignID, err)
		}
	}
	return nil
}

// writeChunk is how many rows a bulk update (scores, queue ranks) writes per
// transaction: a few tens of milliseconds here.
const writeChunk = 500

func setPairScores(ctx context.Context, tx *sql.Tx, campaignID int64, scores []PairScore) error {
	stmt, err := tx.PrepareContext(ctx, `UPDATE label_pairs SET similarity = ?, estimate = ? WHERE id = ? AND campaign_id = ?`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, s := range scores {
		if _, err := stmt.ExecContext(ctx, s.Similarity, s.Estimate, s.ID, campaignID); err != nil {
			return fmt.Errorf("pair %d: %w", s.ID, err)
		}
	}
	return nil
}

// Pair is a pair of a campaign with its documents.
type Pair struct {
	ID         int64
	CampaignID int64
	A, B       Document
	Origin     string
	Similarity sql.NullFloat64 // exact Jaccard under the campaign's representation
	Estimate   sql.NullFloat64 // its MinHash estimate
	Wanted     int
}

// Pair returns a campaign's pair; a pair of another campaign is ErrNotFound.
func (d *DB) Pair(ctx context.Context, campaignID, pairID int64) (Pair, error) {
	var p Pair
	err := d.r.QueryRowContext(ctx, `SELECT id, campaign_id, doc_a, doc_b, origin, similarity, estimate, wanted FROM label_pairs
		WHERE id = ? AND campaign_id = ?`, pairID, campaignID).Scan(&p.ID, &p.CampaignID, &p.A.ID, &p.B.ID, &p.Origin, &p.Similarity, &p.Estimate, &p.Wanted)
	if err == nil {
		p.A, err = d.Document(ctx, p.A.ID)
	}
	if err == nil {
		p.B, err = d.Document(ctx, p.B.ID)
	}
	if err != nil {
		return Pair{}, fmt.Errorf("pair %d of campaign %d: %w", pairID, campaignID, notFound(err))
	}
	return p, nil
}

// currentKinds are the events that set (or withdraw) an annotator's label on a pair:
// the kinds whose SetsLabel is true.
const currentKinds = `('label', 'adjudication', 'retract')`

// QueueFilter narrows the pairs NextPair may pick.
type QueueFilter struct {
	After    int64 // a pair to leave out (the one just decided); 0 for none
	Skipped  bool  // also pairs the annotator skipped (else they are left out)
	NotExact bool  // leave out exact copies: Jaccard 1, or identical content hashes
}

// where appends to a next-pair query (its pair named p) the conditions that leave out
// what f leaves out for annotator: the pairs they skipped (unless f.Skipped) and exact
// copies (f.NotExact).
func (f QueueFilter) where(q string, args []any, annotator string) (string, []any) {
	if !f.Skipped {
		q += ` AND NOT EXISTS (SELECT 1 FROM label_events se WHERE se.pair_id = p.id AND se.annotator = ? AND se.kind = 'skip')`
		args = append(args, annotator)
	}
	if f.NotExact {
		q += ` AND NOT ` + exactPair
	}
	return q, args
}

// NextPair picks the next pair for an annotator: first the pairs of the campaign's open
// audits that no label counts for yet, audit by audit in drawn order, unless the
// annotator's label would not count for them (the manifest's author, whoever decided
// that removal: those are never served such a pair, here or below); then pairs still
// short of their wanted number of labels, not adjudicated, that the annotator has no
// standing label on; those already started by someone else first (to complete double
// labels), then in queue rank order (campaign.Rank). It returns ErrNotFound when there
// is none.
//
// The walk follows the index label_pairs_queue (campaign, stage, rank, labelers) and
// stops at the first pair that fits, so it costs the pairs it passes over, not the size
// of the campaign or its history; the annotator's own (waiting for other people's
// labels) it passes over in the index alone.
func (d *DB) NextPair(ctx context.Context, campaignID int64, annotator string, f QueueFilter) (int64, error) {
	// The pairs of manifests' audits come first, to those whose labels count for them
	// (a campaign without an audit asks one small question more).
	var audited bool
	if err := d.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM audits WHERE campaign_id = ? AND superseded_at IS NULL)`,
		campaignID).Scan(&audited); err != nil {
		return 0, fmt.Errorf("audits of campaign %d: %w", campaignID, err)
	}
	if audited {
		switch id, err := d.nextAuditPair(ctx, campaignID, annotator, f); {
		case err == nil:
			return id, nil
		case !errors.Is(err, ErrNotFound):
			return 0, fmt.Errorf("next audit pair of campaign %d for %s: %w", campaignID, annotator, err)
		}
	}
	q := `SELECT p.id FROM label_pairs p INDEXED BY label_pairs_queue
		WHERE p.campaign_id = ? AND p.queue_stage < 2 AND p.id != ? AND instr(p.labelers, ?) = 0`
	args := []any{campaignID, f.After, labelerMark(annotator)}
	if audited {
		q += notAuditedFor
		args = append(args, annotator, annotator)
	}
	q, args = f.where(q, args, annotator)
	q += ` ORDER BY p.queue_stage, p.queue_rank LIMIT 1`
	var id int64
	if err := d.r.QueryRowContext(ctx, q, args...).Scan(&id); err != nil {
		return 0, fmt.Errorf("next pair of campaign %d for %s: %w", campaignID, annotator, notFound(err))
	}
	return id, nil
}

// labelerMark is how an annotator's name appears in label_pairs.labelers (migration 0008).
func labelerMark(annotator string) string { return "\x1f" + annotator + "\x1f" }

// exactPair is true of a pair p whose documents are exact copies: Jaccard 1 under the
// campaign's representation, or identical content hashes (documents stored without one
// compare by their Jaccard only).
const exactPair = `coalesce(p.similarity >= 1 OR
	(SELECT nullif(da.content_hash, '') FROM documents da WHERE da.id = p.doc_a) = (SELECT db.content_hash FROM documents db WHERE db.id = p.doc_b), 0)`

// PairExact reports whether a campaign's pair is an exact copy (see exactPair).
func (d *DB) PairExact(ctx context.Context, campaignID, pairID int64) (bool, error) {
	var exact bool
	err := d.r.QueryRowContext(ctx, `SELECT `+exactPair+` FROM label_pairs p WHERE p.id = ? AND p.campaign_id = ?`, pairID, campaignID).Scan(&exact)
	if err != nil {
		return false, fmt.Errorf("pair %d of campaign %d: %w", pairID, campaignID, notFound(err))
	}
	return exact, nil
}

// LastServed returns the pair of an annotator's newest event in a campaign (a label,
// skip, flag or undo), or ErrNotFound.
func (d *DB) LastServed(ctx context.Context, campaignID int64, annotator string) (int64, error) {
	var id int64
	err := d.r.QueryRowContext(ctx, `SELECT e.pair_id FROM label_events e INDEXED BY label_events_annotator
		JOIN label_pairs p ON p.id = e.pair_id
		WHERE e.annotator = ? AND p.campaign_id = ? ORDER BY e.id DESC LIMIT 1`, annotator, campaignID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("last pair of %s in campaign %d: %w", annotator, campaignID, notFound(err))
	}
	return id, nil
}

// QueuePair is what ordering a pair in the queue looks at.
type QueuePair struct {
	ID         int64
	Similarity sql.NullFloat64
	Exact      bool // see exactPair
}

// QueuePairs lists a campaign's pairs for ranking, by id.
func (d *DB) QueuePairs(ctx context.Context, campaignID int64) ([]QueuePair, error) {
	ps, err := queryAll(ctx, d, `SELECT p.id, p.similarity, `+exactPair+` FROM label_pairs p WHERE p.campaign_id = ? ORDER BY p.id`,
		func(sc scanner) (QueuePair, error) {
			var p QueuePair
			return p, sc.Scan(&p.ID, &p.Similarity, &p.Exact)
		}, campaignID)
	if err != nil {
		return nil, fmt.Errorf("queue of campaign %d: %w", campaignID, err)
	}
	return ps, nil
}

// SetQueueRanks stores the queue order of a campaign's pairs: ids[i] gets rank i. Pairs
// not listed keep theirs.
func (d *DB) SetQueueRanks(ctx context.Context, campaignID int64, ids []int64) error {
	// In chunks of their own transactions (see writeChunk): meanwhile the queue is
	// partly in the new order, which serves pairs just as well.
	for lo := 0; lo < len(ids); lo += writeChunk {
		err := d.inTx(ctx, func(tx *sql.Tx) error {
			stmt, err := tx.PrepareContext(ctx, `UPDATE label_pairs SET queue_rank = ? WHERE id = ? AND campaign_id = ? AND queue_rank IS NOT ?`)
			if err != nil {
				return err
			}
			defer stmt.Close()
			for i, id := range ids[lo:min(lo+writeChunk, len(ids))] {
				rank := lo + i
				if _, err := stmt.ExecContext(ctx, rank, id, campaignID, rank); err != nil {
					return fmt.Errorf("pair %d: %w", id, err)
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("rank the queue of campaign %d: %w", campaignID, err)
		}
	}
	return nil
}

// UnrankedCampaigns lists the campaigns that have pairs not ranked since they were
// added (ranks at or above 1<<40, the placeholder migration 0008 gives new pairs).
func (d *DB) UnrankedCampaigns(ctx context.Context) ([]int64, error) {
	ids, err := queryAll(ctx, d, `SELECT DISTINCT campaign_id FROM label_pairs WHERE queue_rank >= 1099511627776 ORDER BY campaign_id`,
		scanValue[int64])
	if err != nil {
		return nil, fmt.Errorf("unranked campaigns: %w", err)
	}
	return ids, nil
}

// NewLabel is a label event to record.
type NewLabel struct {
	DocA, DocB int64 // internal ids, any order (AddLabels)
	Origin     string
	Annotator  string
	UserID     int64
	Kind       labels.Kind // KindLabel when empty
	Category   string
	Duplicate  bool
	Note       string
	// ByParty marks an adjudication by someone with a label of their own on the pair,
	// allowed only when no other adjudicator could: RecordEvent's audit entry says so.
	ByParty bool
	// Design, Stratum and FrameSize record the stratified draw that chose the pair
	// (AddLabels stores them on the pair when Design is set; see label_pairs).
	Design, Stratum string
	FrameSize       int
}

// LabelEvent is one recorded event.
type LabelEvent struct {
	ID         int64
	PairID     int64
	Annotator  string
	Kind       labels.Kind
	Category   string
	Duplicate  bool
	Note       string
	PreviousID sql.NullInt64
	At         time.Time
	Import     ImportSource // set when the event came from a label import
}

// ImportSource says which label import an event came from: pages show an imported label
// as imported by someone from a file, never as the named annotator's own.
type ImportSource struct {
	ID         int64 // 0: not imported
	ImportedBy string
	File       string
}

const eventColumns = `e.id, e.pair_id, e.annotator, e.kind, e.category, e.duplicate, e.note, e.previous_id, e.created_at`

// sourcedEventColumns are eventColumns and the event's import, for scanSourcedEvent.
const sourcedEventColumns = eventColumns + `, coalesce(e.import_id, 0),
	coalesce((SELECT i.imported_by FROM label_imports i WHERE i.id = e.import_id), ''),
	coalesce((SELECT i.file FROM label_imports i WHERE i.id = e.import_id), '')`

func scanEvent(sc scanner) (LabelEvent, error) {
	var e LabelEvent
	err := scanEventInto(sc, &e)
	return e, err
}

// scanSourcedEvent reads sourcedEventColumns.
func scanSourcedEvent(sc scanner) (LabelEvent, error) {
	var e LabelEvent
	err := scanEventInto(sc, &e, &e.Import.ID, &e.Import.ImportedBy, &e.Import.File)
	return e, err
}

func scanEventInto(sc scanner, e *LabelEvent, more ...any) error {
	var kind, at string
	if err := sc.Scan(append([]any{&e.ID, &e.PairID, &e.Annotator, &kind, &e.Category, &e.Duplicate, &e.Note, &e.PreviousID, &at}, more...)...); err != nil {
		return err
	}
	var err error
	if e.Kind, err = labels.ParseKind(kind); err != nil {
		return fmt.Errorf("label event %d: %w", e.ID, err)
	}
	if e.At, err = parseTime("created_at", at); err != nil {
		return fmt.Errorf("label event %d: %w", e.ID, err)
	}
	return nil
}

// PairHistory returns every event of a pair, oldest first, with the import each came
// from.
func (d *DB) PairHistory(ctx context.Context, pairID int64) ([]LabelEvent, error) {
	evs, err := queryAll(ctx, d, `SELECT `+sourcedEventColumns+` FROM label_events e WHERE e.pair_id = ? ORDER BY e.id`, scanSourcedEvent, pairID)
	if err != nil {
		return nil, fmt.Errorf("history of pair %d: %w", pairID, err)
	}
	return evs, nil
}

// LatestEvent returns an annotator's newest label-setting event on a pair (label,
// adjudication or retract), or ErrNotFound.
func (d *DB) LatestEvent(ctx context.Context, pairID int64, annotator string) (LabelEvent, error) {
	e, err := scanEvent(d.r.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM label_events e
		WHERE e.pair_id = ? AND e.annotator = ? AND e.kind IN `+currentKinds+` ORDER BY e.id DESC LIMIT 1`, pairID, annotator))
	if err != nil {
		return LabelEvent{}, fmt.Errorf("latest event of %s on pair %d: %w", annotator, pairID, notFound(err))
	}
	return e, nil
}

// RecordEvent appends an event for an annotator on a pair of a campaign (ErrNotFound
// for a pair of another). expectPrevious is the id of the annotator's latest
// label-setting event as the person saw it (0 for none): if it has changed since,
// nothing is written and ErrStale is returned, unless the newest event is this very
// decision (a double submit). Skips and flags do not check it.
func (d *DB) RecordEvent(ctx context.Context, campaignID, pairID int64, l NewLabel, expectPrevious int64) (LabelEvent, error) {
	if l.Kind == "" {
		l.Kind = labels.KindLabel
	}
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
		if l.Kind.SetsLabel() && prev.Int64 != expectPrevious {
			same, err := scanEvent(tx.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM label_events e
				WHERE e.id = ? AND e.kind = ? AND e.category = ? AND e.duplicate = ? AND e.note = ?`,
				prev.Int64, string(l.Kind), l.Category, l.Duplicate, l.Note))
			if errors.Is(err, sql.ErrNoRows) {
				return ErrStale
			}
			if err != nil {
				return err
			}
			ev = same
			return nil
		}
		if !l.Kind.SetsLabel() {
			prev = sql.NullInt64{}
		}
		now := d.now()
		res, err := tx.ExecContext(ctx, `INSERT INTO label_events (pair_id, annotator, user_id, kind, category, duplicate, note, previous_id, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, pairID, l.Annotator, nullID(l.UserID), string(l.Kind), l.Category, l.Duplicate, l.Note, prev, formatTime(now))
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		ev = LabelEvent{ID: id, PairID: pairID, Annotator: l.Annotator, Kind: l.Kind, Category: l.Category, Duplicate: l.Duplicate,
			Note: l.Note, PreviousID: prev, At: now.UTC()}
		if l.Kind != labels.KindAdjudication {
			return nil
		}
		// Adjudications settle what others labeled: the audit log keeps who, and whether
		// they had a label of their own on the pair.
		return d.auditBy(ctx, tx, User{ID: l.UserID, Name: l.Annotator}, "label.adjudicate", fmt.Sprintf("pair:%d", pairID),
			map[string]any{"campaign": campaignID, "category": l.Category, "duplicate": l.Duplicate, "by_party": l.ByParty})
	})
	if err != nil {
		return LabelEvent{}, fmt.Errorf("record %s by %s on pair %d: %w", l.Kind, l.Annotator, pairID, err)
	}
	return ev, nil
}

// RecentDecisions returns an annotator's latest label-setting events in a campaign, one
// per pair, newest first.
func (d *DB) RecentDecisions(ctx context.Context, campaignID int64, annotator string, limit int) ([]LabelEvent, error) {
	evs, err := queryAll(ctx, d, `SELECT `+eventColumns+` FROM label_events e JOIN label_pairs p ON p.id = e.pair_id
		WHERE p.campaign_id = ? AND e.annotator = ? AND e.kind IN `+currentKinds+`
		  AND e.id = (SELECT max(id) FROM label_events x WHERE x.pair_id = e.pair_id AND x.annotator = e.annotator AND x.kind IN `+currentKinds+`)
		ORDER BY e.id DESC LIMIT ?`, scanEvent, campaignID, annotator, limit)
	if err != nil {
		return nil, fmt.Errorf("recent decisions of %s in campaign %d: %w", annotator, campaignID, err)
	}
	return evs, nil
}

// CurrentLabel is an annotator's standing label on a pair, with what the campaign page
// needs about the pair.
type CurrentLabel struct {
	PairID     int64
	ExtA, ExtB string
	Annotator  string
	Kind       labels.Kind // KindLabel or KindAdjudication
	Category   string
	Duplicate  bool
	Note       string
	At         time.Time
	Similarity sql.NullFloat64
}

// CurrentLabels returns every standing label of a campaign (retracted ones left out),
// by pair and annotator.
func (d *DB) CurrentLabels(ctx context.Context, campaignID int64) ([]CurrentLabel, error) {
	cur, err := queryAll(ctx, d, `WITH cur AS (
			SELECT e.*, row_number() OVER (PARTITION BY e.pair_id, e.annotator ORDER BY e.id DESC) AS rn
			FROM label_events e JOIN label_pairs p ON p.id = e.pair_id
			WHERE p.campaign_id = ? AND e.kind IN `+currentKinds+`)
		SELECT c.pair_id, da.ext_id, db.ext_id, c.annotator, c.kind, c.category, c.duplicate, c.note, c.created_at, p.similarity
		FROM cur c JOIN label_pairs p ON p.id = c.pair_id
		JOIN documents da ON da.id = p.doc_a JOIN documents db ON db.id = p.doc_b
		WHERE c.rn = 1 AND c.kind != 'retract' ORDER BY c.pair_id, c.annotator`,
		func(sc scanner) (CurrentLabel, error) {
			var c CurrentLabel
			var kind, at string
			if err := sc.Scan(&c.PairID, &c.ExtA, &c.ExtB, &c.Annotator, &kind, &c.Category, &c.Duplicate, &c.Note, &at, &c.Similarity); err != nil {
				return c, err
			}
			var err error
			if c.Kind, err = labels.ParseKind(kind); err != nil {
				return c, fmt.Errorf("label on pair %d: %w", c.PairID, err)
			}
			if c.At, err = parseTime("created_at", at); err != nil {
				return c, fmt.Errorf("label on pair %d: %w", c.PairID, err)
			}
			return c, nil
		}, campaignID)
	if err != nil {
		return nil, fmt.Errorf("current labels of campaign %d: %w", campaignID, err)
	}
	return cur, nil
}

// ContestedLabel is a standing label (kind label) on a pair whose standing labels give
// two or more distinct answers and no adjudication: what the adjudication queue is made
// of.
type ContestedLabel struct {
	PairID     int64
	Similarity sql.NullFloat64
	Annotator  string
	Category   string
	Duplicate  bool
}

// ContestedLabels returns the standing labels of a campaign's pairs in dispute (two or
// more distinct answers, no adjudication), by pair and annotator: the disputed pairs
// from one index (label_pairs_disputed), then each one's standing labels, stored
// together (standing_labels); CROSS JOIN keeps that order whatever the planner's
// statistics say.
func (d *DB) ContestedLabels(ctx context.Context, campaignID int64) ([]ContestedLabel, error) {
	out, err := queryAll(ctx, d, `SELECT p.id, p.similarity, s.annotator, s.category, s.duplicate
		FROM label_pairs p INDEXED BY label_pairs_disputed CROSS JOIN standing_labels s ON s.pair_id = p.id
		WHERE p.campaign_id = ? AND p.answers >= 2 AND p.adjudicated = 0 AND s.kind = 'label'
		ORDER BY p.id, s.annotator`,
		func(sc scanner) (ContestedLabel, error) {
			var c ContestedLabel
			return c, sc.Scan(&c.PairID, &c.Similarity, &c.Annotator, &c.Category, &c.Duplicate)
		}, campaignID)
	if err != nil {
		return nil, fmt.Errorf("contested labels of campaign %d: %w", campaignID, err)
	}
	return out, nil
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
	stats, err := queryAll(ctx, d, `SELECT id, similarity, estimate, wanted, origin FROM label_pairs WHERE campaign_id = ? ORDER BY id`,
		func(sc scanner) (PairStat, error) {
			var p PairStat
			return p, sc.Scan(&p.ID, &p.Similarity, &p.Estimate, &p.Wanted, &p.Origin)
		}, campaignID)
	if err != nil {
		return nil, fmt.Errorf("pair stats of campaign %d: %w", campaignID, err)
	}
	return stats, nil
}

// FlaggedPairs returns the pairs whose newest flag event is a flag (not an unflag).
func (d *DB) FlaggedPairs(ctx context.Context, campaignID int64) (map[int64]bool, error) {
	ids, err := queryAll(ctx, d, `WITH f AS (
			SELECT e.pair_id, e.kind, row_number() OVER (PARTITION BY e.pair_id ORDER BY e.id DESC) AS rn
			FROM label_events e JOIN label_pairs p ON p.id = e.pair_id
			WHERE p.campaign_id = ? AND e.kind IN ('flag', 'unflag'))
		SELECT pair_id FROM f WHERE rn = 1 AND kind = 'flag'`,
		scanValue[int64], campaignID)
	if err != nil {
		return nil, fmt.Errorf("flagged pairs of campaign %d: %w", campaignID, err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
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
		changed, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("ask second labels in campaign %d: %w", campaignID, err)
	}
	return int(changed), nil
}
