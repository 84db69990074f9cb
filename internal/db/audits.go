package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// A manifest's own audit (migration 0021, review's "The manifest's own audit"): the
// frame of (removed, keeper) pairs it was drawn from, the drawn pairs as label pairs of
// the campaign (origin "audit"), served first by the queue to anyone but the people whose
// labels would not count, and what their labels say.

// AuditOrigin is the origin of the label pairs an audit adds to a campaign.
const AuditOrigin = "audit"

// AuditStratum is the stratum an audit's pairs record: the manifest's uncertain
// removals, whose count is their frame size.
const AuditStratum = "uncertain"

// Audit is a manifest's audit as stored.
type Audit struct {
	ID, ManifestID, CampaignID int64
	Design                     string
	// Removals and Certain describe the frame: the manifest's removals when the audit was
	// requested, and how many of them were identical texts.
	Removals, Certain int
	RequestedBy       int64
	Requester         string
	RequestedAt       time.Time
	Superseded        bool
	Draws             []AuditDraw // the request, then each top-up
	Size              int         // pairs drawn in all
}

// AuditDraw is one draw of an audit's pairs: the request or a top-up.
type AuditDraw struct {
	Draw int
	Size int // the audit's pairs after it
	Seed uint64
	By   string
	At   time.Time
}

// Seeds returns the seed of every draw, in order.
func (a Audit) Seeds() []uint64 {
	out := make([]uint64, len(a.Draws))
	for i, d := range a.Draws {
		out[i] = d.Seed
	}
	return out
}

// FramePair is a (removed, keeper) pair of an audit's frame.
type FramePair struct {
	Doc, Keeper int64
	Certain     bool // identical normalized texts (reason exact)
}

// AuditPick is a drawn pair: its frame pair and the manifest item it was drawn from.
type AuditPick struct {
	Doc, Keeper, Item int64
}

// NewAudit is an audit to store.
type NewAudit struct {
	ManifestID int64
	// Hash is the manifest's content hash when the frame was read: if the manifest
	// changed since, nothing is stored and the error is ErrStale.
	Hash       string
	CampaignID int64
	Frame      []FramePair
	Picks      []AuditPick // in the order the queue serves them
	Seed       uint64
	// Supersede is the open audit this one replaces (0: none). If the manifest's open
	// audit is another one (someone else requested meanwhile), the error is ErrStale.
	Supersede int64
}

// MaxSeed bounds audit seeds: they are stored as SQLite integers and written to JSON,
// where integers above 2^53 lose digits.
const MaxSeed = 1<<53 - 1

// CreateAudit stores an audit of a manifest, as by, in one transaction: the frame, the
// drawn pairs (added to the campaign as label pairs of origin "audit", design
// "audit-m<manifest>-<audit>", or taken as they are when the campaign has them), the
// draw, and an audit log event; it supersedes the audit it replaces. The manifest must
// be before sign-off (review.CanRequestAudit), unchanged since the frame was read, and
// not stale (*review.OutdatedError).
func (d *DB) CreateAudit(ctx context.Context, by User, na NewAudit) (Audit, error) {
	var out Audit
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		m, err := auditable(ctx, tx, na.ManifestID, na.Hash)
		if err != nil {
			return err
		}
		open, err := openAudit(ctx, tx, m.ID)
		switch {
		case errors.Is(err, ErrNotFound):
			if na.Supersede != 0 {
				return fmt.Errorf("audit %d to replace is no longer open: %w", na.Supersede, ErrStale)
			}
		case err != nil:
			return err
		case open.ID != na.Supersede:
			return fmt.Errorf("manifest %d has audit %d open: %w", m.ID, open.ID, ErrStale)
		default:
			if _, err := tx.ExecContext(ctx, `UPDATE audits SET superseded_at = ? WHERE id = ?`, d.stamp(), open.ID); err != nil {
				return err
			}
		}
		certain := 0
		for _, f := range na.Frame {
			if f.Certain {
				certain++
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO audits (manifest_id, campaign_id, design, removals, certain, requested_by, requester, requested_at)
			VALUES (?, ?, '', ?, ?, ?, ?, ?)`, m.ID, na.CampaignID, len(na.Frame), certain, nullID(by.ID), by.Name, d.stamp())
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		design := fmt.Sprintf("audit-m%d-%d", m.ID, id)
		if _, err := tx.ExecContext(ctx, `UPDATE audits SET design = ? WHERE id = ?`, design, id); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO audit_frame (audit_id, document_id, keeper_id, certain) VALUES (?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, f := range na.Frame {
			if _, err := stmt.ExecContext(ctx, id, f.Doc, f.Keeper, f.Certain); err != nil {
				return fmt.Errorf("frame pair %d-%d: %w", f.Doc, f.Keeper, err)
			}
		}
		a := Audit{ID: id, ManifestID: m.ID, CampaignID: na.CampaignID, Design: design, Removals: len(na.Frame), Certain: certain}
		if err := d.addPicks(ctx, tx, by, a, 1, 0, na.Picks, na.Seed); err != nil {
			return err
		}
		detail := map[string]any{"audit": id, "campaign": na.CampaignID, "design": design, "pairs": len(na.Picks), "seed": strconv.FormatUint(na.Seed, 10),
			"removals": len(na.Frame), "certain": certain, "uncertain": len(na.Frame) - certain, "manifest_hash": m.ContentHash}
		if na.Supersede != 0 {
			detail["replaces"] = na.Supersede
		}
		if err := d.auditBy(ctx, tx, by, "manifest.audit", manifestSubject(m.ID), detail); err != nil {
			return err
		}
		out, err = loadAudit(ctx, tx, id)
		return err
	})
	if err != nil {
		return Audit{}, fmt.Errorf("audit of manifest %d: %w", na.ManifestID, err)
	}
	return out, nil
}

// TopUpAudit adds picks to a manifest's open audit (drawn from the same frame with
// seed), after the pairs it has, as by. hash is the manifest's content hash when the
// caller checked the frame still covers it (changed since: ErrStale).
func (d *DB) TopUpAudit(ctx context.Context, by User, auditID int64, hash string, picks []AuditPick, seed uint64) (Audit, error) {
	var out Audit
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		a, err := loadAudit(ctx, tx, auditID)
		if err != nil {
			return err
		}
		if a.Superseded {
			return fmt.Errorf("audit %d was replaced: %w", auditID, ErrStale)
		}
		m, err := auditable(ctx, tx, a.ManifestID, hash)
		if err != nil {
			return err
		}
		if err := d.addPicks(ctx, tx, by, a, len(a.Draws)+1, a.Size, picks, seed); err != nil {
			return err
		}
		if err := d.auditBy(ctx, tx, by, "manifest.audit-top-up", manifestSubject(m.ID), map[string]any{
			"audit": a.ID, "pairs": len(picks), "size": a.Size + len(picks), "seed": strconv.FormatUint(seed, 10), "manifest_hash": m.ContentHash}); err != nil {
			return err
		}
		out, err = loadAudit(ctx, tx, auditID)
		return err
	})
	if err != nil {
		return Audit{}, fmt.Errorf("top up audit %d: %w", auditID, err)
	}
	return out, nil
}

// auditable loads a manifest that may be audited now: before sign-off, with the
// content hash the caller read, and not stale.
func auditable(ctx context.Context, tx *sql.Tx, manifestID int64, hash string) (Manifest, error) {
	m, err := loadManifest(ctx, tx, manifestID)
	if err != nil {
		return m, err
	}
	if err := review.CanRequestAudit(m.State); err != nil {
		return m, err
	}
	if m.ContentHash != hash {
		return m, fmt.Errorf("manifest hash %s read, %s now: %w", review.Short(hash), review.Short(m.ContentHash), ErrStale)
	}
	st, err := staleness(ctx, tx, m)
	if err != nil {
		return m, err
	}
	if st.Stale() {
		return m, &review.OutdatedError{Action: "request an audit", Staleness: st}
	}
	return m, nil
}

// addPicks stores picks as audit a's draw number draw, after its first after pairs: each
// as the campaign's label pair of (removed, keeper), added when the campaign does not
// have it.
func (d *DB) addPicks(ctx context.Context, tx *sql.Tx, by User, a Audit, draw, after int, picks []AuditPick, seed uint64) error {
	if seed > MaxSeed {
		return fmt.Errorf("seed %d over %d", seed, uint64(MaxSeed))
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO label_pairs (campaign_id, doc_a, doc_b, origin, wanted, design, stratum, frame_size, created_at)
		VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?) ON CONFLICT (campaign_id, doc_a, doc_b) DO NOTHING`)
	if err != nil {
		return err
	}
	defer ins.Close()
	link, err := tx.PrepareContext(ctx, `INSERT INTO audit_pairs (audit_id, position, draw, pair_id, document_id, keeper_id, item_id)
		SELECT ?, ?, ?, p.id, ?, ?, ? FROM label_pairs p WHERE p.campaign_id = ? AND p.doc_a = ? AND p.doc_b = ?`)
	if err != nil {
		return err
	}
	defer link.Close()
	now := d.stamp()
	frame := a.Removals - a.Certain
	for i, p := range picks {
		lo, hi := min(p.Doc, p.Keeper), max(p.Doc, p.Keeper)
		if _, err := ins.ExecContext(ctx, a.CampaignID, lo, hi, AuditOrigin, a.Design, AuditStratum, frame, now); err != nil {
			return fmt.Errorf("pair %d-%d: %w", lo, hi, err)
		}
		res, err := link.ExecContext(ctx, a.ID, after+i+1, draw, p.Doc, p.Keeper, p.Item, a.CampaignID, lo, hi)
		if err != nil {
			return fmt.Errorf("pair %d-%d: %w", lo, hi, err)
		}
		if err := oneRow(res); err != nil {
			return fmt.Errorf("pair %d-%d: %w", lo, hi, err)
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO audit_draws (audit_id, draw, size, seed, user_id, actor, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.ID, draw, after+len(picks), int64(seed), nullID(by.ID), by.Name, now)
	return err
}

const auditRowColumns = `a.id, a.manifest_id, a.campaign_id, a.design, a.removals, a.certain, coalesce(a.requested_by, 0), a.requester,
	a.requested_at, a.superseded_at IS NOT NULL, (SELECT count(*) FROM audit_pairs x WHERE x.audit_id = a.id)`

func scanAudit(sc scanner) (Audit, error) {
	var a Audit
	var at string
	if err := sc.Scan(&a.ID, &a.ManifestID, &a.CampaignID, &a.Design, &a.Removals, &a.Certain, &a.RequestedBy, &a.Requester, &at,
		&a.Superseded, &a.Size); err != nil {
		return a, notFound(err)
	}
	var err error
	a.RequestedAt, err = parseTime("requested_at", at)
	return a, err
}

// loadAudit reads an audit with its draws through q.
func loadAudit(ctx context.Context, q querier, id int64) (Audit, error) {
	a, err := scanAudit(q.QueryRowContext(ctx, `SELECT `+auditRowColumns+` FROM audits a WHERE a.id = ?`, id))
	if err != nil {
		return a, err
	}
	a.Draws, err = collect(ctx, q, `SELECT draw, size, seed, actor, at FROM audit_draws WHERE audit_id = ? ORDER BY draw`,
		func(sc scanner) (AuditDraw, error) {
			var dr AuditDraw
			var seed int64
			var at string
			if err := sc.Scan(&dr.Draw, &dr.Size, &seed, &dr.By, &at); err != nil {
				return dr, err
			}
			dr.Seed = uint64(seed)
			var err error
			dr.At, err = parseTime("at", at)
			return dr, err
		}, id)
	return a, err
}

// openAudit reads a manifest's audit that is not superseded, or ErrNotFound.
func openAudit(ctx context.Context, q querier, manifestID int64) (Audit, error) {
	var id int64
	if err := q.QueryRowContext(ctx, `SELECT id FROM audits WHERE manifest_id = ? AND superseded_at IS NULL`, manifestID).Scan(&id); err != nil {
		return Audit{}, notFound(err)
	}
	return loadAudit(ctx, q, id)
}

// OpenAudit returns a manifest's audit that is not superseded, or ErrNotFound.
func (d *DB) OpenAudit(ctx context.Context, manifestID int64) (Audit, error) {
	a, err := openAudit(ctx, d.r, manifestID)
	if err != nil {
		return a, fmt.Errorf("audit of manifest %d: %w", manifestID, err)
	}
	return a, nil
}

// AuditedManifests returns the manifests that have an audit not superseded.
func (d *DB) AuditedManifests(ctx context.Context) (map[int64]bool, error) {
	ids, err := queryAll(ctx, d, `SELECT manifest_id FROM audits WHERE superseded_at IS NULL`, scanValue[int64])
	if err != nil {
		return nil, fmt.Errorf("audited manifests: %w", err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// AuditFrame returns an audit's frame by document, and the documents it has drawn.
func (d *DB) AuditFrame(ctx context.Context, auditID int64) ([]FramePair, map[int64]bool, error) {
	frame, err := queryAll(ctx, d, `SELECT document_id, keeper_id, certain FROM audit_frame WHERE audit_id = ? ORDER BY document_id`,
		func(sc scanner) (FramePair, error) {
			var f FramePair
			return f, sc.Scan(&f.Doc, &f.Keeper, &f.Certain)
		}, auditID)
	if err != nil {
		return nil, nil, fmt.Errorf("frame of audit %d: %w", auditID, err)
	}
	docs, err := queryAll(ctx, d, `SELECT document_id FROM audit_pairs WHERE audit_id = ?`, scanValue[int64], auditID)
	if err != nil {
		return nil, nil, fmt.Errorf("pairs of audit %d: %w", auditID, err)
	}
	drawn := make(map[int64]bool, len(docs))
	for _, id := range docs {
		drawn[id] = true
	}
	return frame, drawn, nil
}

// auditExcluded is true when the user whose id is the SQL expression uid may not count
// on audit pair ap of audit a: they prepared the manifest, or decided that removal. A
// NULL uid is not excluded here (the labels that count have a user).
func auditExcluded(uid string) string {
	return `coalesce(` + uid + ` IN (SELECT xm.prepared_by FROM manifests xm WHERE xm.id = a.manifest_id AND xm.prepared_by IS NOT NULL)
		OR EXISTS (SELECT 1 FROM manifest_items xi WHERE xi.manifest_id = a.manifest_id AND xi.document_id = ap.document_id
			AND xi.decided_by = ` + uid + `), 0)`
}

// auditCounts is true of standing label s (its event e) on audit pair ap of audit a when
// it counts for the audit: given on a page by someone signed in (not imported, not a
// rule's), who neither prepared the manifest nor decided that removal.
var auditCounts = `(e.user_id IS NOT NULL AND e.import_id IS NULL AND NOT ` + auditExcluded("e.user_id") + `)`

// auditUnresolved is true of audit pair ap of audit a while the labels that count for it
// do not settle it under the label rule: no adjudication counts, and as many of the
// labels that count say duplicate as say not (none, or a tie). Another label that counts
// settles it (a majority), so the queue serves it.
var auditUnresolved = `(NOT EXISTS (SELECT 1 FROM standing_labels s JOIN label_events e ON e.id = s.event_id
		WHERE s.pair_id = ap.pair_id AND s.kind = 'adjudication' AND ` + auditCounts + `)
	AND (SELECT coalesce(sum(CASE WHEN s.duplicate = 1 THEN 1 ELSE -1 END), 0) FROM standing_labels s JOIN label_events e ON e.id = s.event_id
		WHERE s.pair_id = ap.pair_id AND s.kind = 'label' AND ` + auditCounts + `) = 0)`

// auditStatesServed are the manifest states whose audits the queue serves: before
// sign-off. auditStatesHeld are those whose audits it keeps from their authors: until
// the manifest is exported or revoked.
const (
	auditStatesServed = `('draft', 'in_review')`
	auditStatesHeld   = `('draft', 'in_review', 'signed')`
)

// nextAuditPair picks the first pair of the campaign's open audits (audit by audit, in
// drawn order) that the labels that count do not settle yet (none, or a tie) and that
// the annotator has no standing label on and may count on, for every open audit holding
// it; ErrNotFound when there is none.
func (d *DB) nextAuditPair(ctx context.Context, campaignID int64, annotator string, f QueueFilter) (int64, error) {
	q := `WITH me(id) AS (SELECT id FROM users WHERE name = ?)
		SELECT p.id FROM audits a INDEXED BY audits_campaign
		JOIN manifests m ON m.id = a.manifest_id
		JOIN audit_pairs ap ON ap.audit_id = a.id
		JOIN label_pairs p ON p.id = ap.pair_id
		WHERE a.campaign_id = ? AND a.superseded_at IS NULL AND m.state IN ` + auditStatesServed + `
		  AND p.id != ? AND instr(p.labelers, ?) = 0
		  AND NOT ` + auditExcluded("(SELECT id FROM me)") + `
		  AND ` + auditUnresolved + notAuditedFor
	args := []any{annotator, campaignID, f.After, labelerMark(annotator), annotator, annotator}
	q, args = f.where(q, args, annotator)
	q += ` ORDER BY a.id, ap.position LIMIT 1`
	var id int64
	if err := d.r.QueryRowContext(ctx, q, args...).Scan(&id); err != nil {
		return 0, notFound(err)
	}
	return id, nil
}

// notAuditedFor leaves out of the queue's walk a pair p in an audit (of a manifest not
// exported nor revoked) that the annotator may not count on: the author of the manifest,
// or whoever decided that removal, is never served it. It takes the annotator's name
// twice.
var notAuditedFor = ` AND NOT EXISTS (SELECT 1 FROM audit_pairs ap JOIN audits a ON a.id = ap.audit_id
	JOIN manifests m ON m.id = a.manifest_id
	WHERE ap.pair_id = p.id AND a.superseded_at IS NULL AND m.state IN ` + auditStatesHeld + `
	  AND ` + auditExcluded("(SELECT u.id FROM users u WHERE u.name = ?)") + `)`

// AuditLabel is a standing label on an audit's pair, and whether it counts for the audit.
type AuditLabel struct {
	Annotator string
	Kind      labels.Kind
	Category  string
	Duplicate bool
	Counts    bool
}

// AuditPairState is a drawn pair of an audit with its standing labels (oldest first).
type AuditPairState struct {
	Position            int
	PairID, Doc, Keeper int64
	// Removed is true while the manifest still removes Doc in favour of Keeper.
	Removed bool
	Labels  []AuditLabel
}

// AuditState is a manifest's open audit with what its pairs' labels say and the
// manifest's removals now.
type AuditState struct {
	Audit
	Pairs []AuditPairState
	// Removals and Certain are the manifest's removals now and the identical texts among
	// them; Uncovered counts its uncertain removals that are not in the frame.
	Removals, Certain, Uncovered int
}

// AuditState returns a manifest's open audit as it stands, or ErrNotFound.
func (d *DB) AuditState(ctx context.Context, manifestID int64) (AuditState, error) {
	st, err := auditState(ctx, d.r, manifestID)
	if err != nil {
		return st, fmt.Errorf("audit of manifest %d: %w", manifestID, err)
	}
	return st, nil
}

func auditState(ctx context.Context, q querier, manifestID int64) (AuditState, error) {
	a, err := openAudit(ctx, q, manifestID)
	if err != nil {
		return AuditState{}, err
	}
	st := AuditState{Audit: a}
	if err := q.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(i.reason = 'exact'), 0),
			coalesce(sum(i.reason != 'exact' AND NOT EXISTS (SELECT 1 FROM audit_frame f
				WHERE f.audit_id = ? AND f.document_id = i.document_id AND f.keeper_id = i.keeper_id AND f.certain = 0)), 0)
		FROM manifest_items i WHERE i.manifest_id = ? AND i.decision = 'remove'`, a.ID, manifestID).
		Scan(&st.Removals, &st.Certain, &st.Uncovered); err != nil {
		return st, err
	}
	type row struct {
		p AuditPairState
		l AuditLabel
		n sql.NullString
	}
	rows, err := collect(ctx, q, `SELECT ap.position, ap.pair_id, ap.document_id, ap.keeper_id,
			EXISTS (SELECT 1 FROM manifest_items i WHERE i.manifest_id = a.manifest_id AND i.document_id = ap.document_id
				AND i.keeper_id = ap.keeper_id AND i.decision = 'remove'),
			s.annotator, coalesce(s.kind, ''), coalesce(s.category, ''), coalesce(s.duplicate, 0), coalesce(`+auditCounts+`, 0)
		FROM audits a JOIN audit_pairs ap ON ap.audit_id = a.id
		LEFT JOIN standing_labels s ON s.pair_id = ap.pair_id
		LEFT JOIN label_events e ON e.id = s.event_id
		WHERE a.id = ? ORDER BY ap.position, s.event_id`,
		func(sc scanner) (row, error) {
			var r row
			var kind string
			if err := sc.Scan(&r.p.Position, &r.p.PairID, &r.p.Doc, &r.p.Keeper, &r.p.Removed, &r.n, &kind, &r.l.Category,
				&r.l.Duplicate, &r.l.Counts); err != nil {
				return r, err
			}
			if r.n.Valid {
				r.l.Annotator = r.n.String
				var err error
				if r.l.Kind, err = labels.ParseKind(kind); err != nil {
					return r, fmt.Errorf("label on pair %d: %w", r.p.PairID, err)
				}
			}
			return r, nil
		}, a.ID)
	if err != nil {
		return st, err
	}
	for _, r := range rows {
		if len(st.Pairs) == 0 || st.Pairs[len(st.Pairs)-1].Position != r.p.Position {
			st.Pairs = append(st.Pairs, r.p)
		}
		if r.n.Valid {
			last := &st.Pairs[len(st.Pairs)-1]
			last.Labels = append(last.Labels, r.l)
		}
	}
	return st, nil
}

// Team settings (team_settings): the audit gate.
const settingAuditGate = "audit_gate_target"

// AuditGate returns the team's rule on audits (Target 0: none).
func (d *DB) AuditGate(ctx context.Context) (review.AuditGate, error) {
	g, err := auditGate(ctx, d.r)
	if err != nil {
		return g, fmt.Errorf("audit gate: %w", err)
	}
	return g, nil
}

func auditGate(ctx context.Context, q querier) (review.AuditGate, error) {
	var g review.AuditGate
	var value, at string
	err := q.QueryRowContext(ctx, `SELECT value, coalesce(u.name, s.updater), s.updated_at FROM team_settings s
		LEFT JOIN users u ON u.id = s.updated_by WHERE s.key = ?`, settingAuditGate).Scan(&value, &g.By, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return review.AuditGate{}, nil
	}
	if err != nil {
		return g, err
	}
	if g.Target, err = strconv.ParseFloat(value, 64); err != nil {
		return g, fmt.Errorf("setting %s: %w", settingAuditGate, err)
	}
	g.At, err = parseTime("updated_at", at)
	return g, err
}

// SetAuditGate sets the team's rule on audits to target percent (0: no rule), as by,
// and writes the change to the audit log ("team.settings"); setting what is set already
// writes nothing.
func (d *DB) SetAuditGate(ctx context.Context, by User, target float64) error {
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		was, err := auditGate(ctx, tx)
		if err != nil {
			return err
		}
		if was.Target == target {
			return nil
		}
		if target == 0 {
			_, err = tx.ExecContext(ctx, `DELETE FROM team_settings WHERE key = ?`, settingAuditGate)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO team_settings (key, value, updated_by, updater, updated_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_by = excluded.updated_by, updater = excluded.updater,
				updated_at = excluded.updated_at`, settingAuditGate, strconv.FormatFloat(target, 'g', -1, 64), nullID(by.ID), by.Name, d.stamp())
		}
		if err != nil {
			return err
		}
		return d.auditBy(ctx, tx, by, "team.settings", "team", map[string]any{
			"setting": settingAuditGate, "before": was.Target, "after": target})
	})
	if err != nil {
		return fmt.Errorf("set the audit gate: %w", err)
	}
	return nil
}
