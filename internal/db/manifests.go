package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Removal manifests: what a run proposes to remove (clusters, each with its keeper and
// its removals as items), kept with every parameter, its content hash and the dataset
// snapshot it was computed on. The rules are internal/review's; the life of a manifest
// (runs, verbs, sign-off, export) is internal/manifests'. Every change is one transaction
// that also refreshes the content hash, dismisses stale approvals, records the change for
// undo and writes one audit event.

// Manifest is a removal manifest with its settings parsed.
type Manifest struct {
	ID                int64
	DatasetID         int64
	CampaignID        int64 // the campaign whose labels scored it; 0 for none
	State             review.State
	Params            review.Params
	ContentHash       string
	DatasetHash       string // the dataset snapshot when it was computed
	PreparedBy        int64
	Preparer          string
	ApprovalsRequired int
	Comparison        []review.PolicyStats
	Estimates         *review.Estimates // nil when the dataset had no labels
	// Origin is where an imported manifest came from (internal/results); nil for a
	// manifest a run computed here.
	Origin    *review.Origin
	CreatedAt time.Time
	UpdatedAt time.Time
	Dataset   review.Dataset
	// LiveMark is the newest live change of the dataset (live_changes) when the run
	// read the documents; LabelMark the newest label event when it read the labels (-1
	// when it read none). Changes after them make the manifest stale (Staleness).
	LiveMark, LabelMark int64
	// CarriedFrom is the manifest this one was prepared again from (0 for none), and
	// CarriedOver what it took from it.
	CarriedFrom int64
	CarriedOver *review.CarriedOver
	// ApprovalsLowered is set when it asks for fewer than review.DefaultApprovals.
	ApprovalsLowered *review.Lowering
}

const manifestColumns = `m.id, m.dataset_id, coalesce(m.campaign_id, 0), m.state, m.params, m.content_hash, m.dataset_hash,
	coalesce(m.prepared_by, 0), coalesce(u.name, ''), m.approvals_required, m.comparison, m.estimates, m.created_at, m.updated_at,
	ds.name, ds.version, ds.content_hash, m.origin, coalesce(m.live_mark, 0), coalesce(m.label_mark, -1),
	coalesce(m.carried_from, 0), m.carried_over, m.approvals_lowered`

const manifestFrom = ` FROM manifests m JOIN datasets ds ON ds.id = m.dataset_id LEFT JOIN users u ON u.id = m.prepared_by`

func scanManifest(sc scanner) (Manifest, error) {
	var m Manifest
	var state, params, comparison, estimates, created, updated, origin, carried, lowered string
	if err := sc.Scan(&m.ID, &m.DatasetID, &m.CampaignID, &state, &params, &m.ContentHash, &m.DatasetHash, &m.PreparedBy,
		&m.Preparer, &m.ApprovalsRequired, &comparison, &estimates, &created, &updated,
		&m.Dataset.Name, &m.Dataset.Version, &m.Dataset.ContentHash, &origin, &m.LiveMark, &m.LabelMark,
		&m.CarriedFrom, &carried, &lowered); err != nil {
		return m, notFound(err)
	}
	if carried != "{}" && carried != "" {
		m.CarriedOver = new(review.CarriedOver)
		if err := json.Unmarshal([]byte(carried), m.CarriedOver); err != nil {
			return m, fmt.Errorf("manifest %d: column carried_over: %w", m.ID, err)
		}
	}
	if lowered != "" {
		m.ApprovalsLowered = new(review.Lowering)
		if err := json.Unmarshal([]byte(lowered), m.ApprovalsLowered); err != nil {
			return m, fmt.Errorf("manifest %d: column approvals_lowered: %w", m.ID, err)
		}
	}
	if origin != "{}" && origin != "" {
		m.Origin = new(review.Origin)
		if err := json.Unmarshal([]byte(origin), m.Origin); err != nil {
			return m, fmt.Errorf("manifest %d: column origin: %w", m.ID, err)
		}
	}
	m.Dataset.ID = m.DatasetID
	var err error
	if m.State, err = review.ParseState(state); err != nil {
		return m, fmt.Errorf("manifest %d: %w", m.ID, err)
	}
	if err := json.Unmarshal([]byte(params), &m.Params); err != nil {
		return m, fmt.Errorf("manifest %d: column params: %w", m.ID, err)
	}
	if err := json.Unmarshal([]byte(comparison), &m.Comparison); err != nil {
		return m, fmt.Errorf("manifest %d: column comparison: %w", m.ID, err)
	}
	if estimates != "{}" && estimates != "" {
		m.Estimates = new(review.Estimates)
		if err := json.Unmarshal([]byte(estimates), m.Estimates); err != nil {
			return m, fmt.Errorf("manifest %d: column estimates: %w", m.ID, err)
		}
	}
	if m.CreatedAt, err = parseTime("created_at", created); err != nil {
		return m, fmt.Errorf("manifest %d: %w", m.ID, err)
	}
	if m.UpdatedAt, err = parseOptTime("updated_at", updated); err != nil {
		return m, fmt.Errorf("manifest %d: %w", m.ID, err)
	}
	return m, nil
}

// Link is a pair of a cluster's documents known to pass the threshold.
type Link struct {
	A, B int64
	Sim  float64
}

// MarshalJSON writes a link as [a, b, sim].
func (l Link) MarshalJSON() ([]byte, error) { return json.Marshal([]any{l.A, l.B, l.Sim}) }

// UnmarshalJSON reads [a, b, sim].
func (l *Link) UnmarshalJSON(b []byte) error {
	var v [3]json.Number
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	a, err := v[0].Int64()
	if err != nil {
		return err
	}
	bb, err := v[1].Int64()
	if err != nil {
		return err
	}
	s, err := v[2].Float64()
	*l = Link{A: a, B: bb, Sim: s}
	return err
}

// Chain is the longest chain of links from a cluster's keeper (see cluster.Chain), by
// document id.
type Chain struct {
	Docs []int64   `json:"docs"`
	Sims []float64 `json:"sims"`
}

// Cut is the link suggested for cutting (see cluster.Suggestion); Chained is 0 when
// there is none.
type Cut struct {
	A         int64   `json:"a"`
	B         int64   `json:"b"`
	Sim       float64 `json:"sim"`
	Chained   int     `json:"chained"`
	Unchained int     `json:"unchained"`
}

// Cluster is one cluster of a manifest with its removals.
type Cluster struct {
	ID             int64   `json:"id"`
	Keeper         int64   `json:"keeper"`
	KeeperRule     string  `json:"keeper_rule"`
	Override       string  `json:"override"`
	Size           int     `json:"size"`
	Chained        bool    `json:"chained"`
	ChainedMembers int     `json:"chained_members"`
	WeakestLink    float64 `json:"weakest_link"`
	Weakest        int64   `json:"weakest"`
	Links          []Link  `json:"links"`
	Chain          Chain   `json:"chain"`
	Cut            Cut     `json:"cut"`
	Items          []Item  `json:"items"`
	// SampleStratum names the review sample's stratum the cluster was drawn in (an
	// imported manifest's); "" when it was not drawn or there is no sample.
	SampleStratum string `json:"sample_stratum,omitempty"`
	// EngineWeakest is the weakest link by the engine's own scores (an imported
	// manifest's); nil when there is none.
	EngineWeakest *float64 `json:"engine_weakest,omitempty"`
}

// Members returns the cluster's documents, the keeper first, then the items' documents.
func (c Cluster) Members() []int64 {
	out := []int64{c.Keeper}
	for _, it := range c.Items {
		out = append(out, it.Doc)
	}
	return out
}

// Item is one proposed removal.
type Item struct {
	ID        int64           `json:"id"`
	Cluster   int64           `json:"cluster"`
	Doc       int64           `json:"doc"`
	Keeper    int64           `json:"keeper"`
	Score     float64         `json:"score"` // the similarity the policy used (the verification's)
	Estimate  float64         `json:"estimate"`
	Exact     float64         `json:"exact"`
	Reason    cluster.Reason  `json:"reason"`
	Decision  review.Decision `json:"decision"`
	DecidedBy int64           `json:"decided_by,omitempty"`
	DecidedAt string          `json:"decided_at,omitempty"`
	BulkBar   float64         `json:"bulk_bar,omitempty"` // the bar of a bulk approval; 0 when decided one by one
}

// storeDecision maps a review decision to the decision and reviewed columns.
func storeDecision(d review.Decision) (string, int) {
	switch d {
	case review.Approved:
		return "remove", 1
	case review.Excluded:
		return "keep", 1
	}
	return "remove", 0
}

func loadDecision(decision string, reviewed bool) review.Decision {
	switch {
	case decision == "keep":
		return review.Excluded
	case reviewed:
		return review.Approved
	}
	return review.Proposed
}

// NewManifest is what a run hands over to be stored as a draft.
type NewManifest struct {
	DatasetID         int64
	CampaignID        int64
	Params            review.Params
	DatasetHash       string
	ApprovalsRequired int // 0 for review.DefaultApprovals; fewer is recorded as a lowering
	Comparison        []review.PolicyStats
	Estimates         *review.Estimates
	Origin            *review.Origin // an imported manifest's; nil for a run's
	Clusters          []Cluster      // IDs ignored; items' Cluster and ID ignored
	// LiveMark and LabelMark are what the run read (LiveState); LabelMark -1 when it
	// read no labels.
	LiveMark, LabelMark int64
	// CarriedOver is set for a manifest prepared again from another: the items carry
	// the decisions that still apply.
	CarriedOver *review.CarriedOver
	// Team is how many enabled accounts may approve, said with a lowering of the
	// approvals (ApprovalsRequired under review.DefaultApprovals).
	Team string
	// RunID is the run record (StartRun) this manifest finishes, in the same
	// transaction; 0 for none.
	RunID int64
}

// CreateManifest stores a run's manifest as a draft prepared by by, with its content
// hash, in one transaction.
func (d *DB) CreateManifest(ctx context.Context, by User, nm NewManifest) (Manifest, error) {
	var m Manifest
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		params, err := json.Marshal(nm.Params)
		if err != nil {
			return err
		}
		comparison, err := json.Marshal(nm.Comparison)
		if err != nil {
			return err
		}
		estimates := []byte("{}")
		if nm.Estimates != nil {
			if estimates, err = json.Marshal(nm.Estimates); err != nil {
				return err
			}
		}
		origin := []byte("{}")
		if nm.Origin != nil {
			if origin, err = json.Marshal(nm.Origin); err != nil {
				return err
			}
		}
		var campaign, labelMark, carriedFrom any
		if nm.CampaignID != 0 {
			campaign = nm.CampaignID
		}
		if nm.LabelMark >= 0 && nm.CampaignID != 0 {
			labelMark = nm.LabelMark
		}
		carried := []byte("{}")
		if nm.CarriedOver != nil {
			carriedFrom = nm.CarriedOver.From
			if carried, err = json.Marshal(nm.CarriedOver); err != nil {
				return err
			}
		}
		approvals := nm.ApprovalsRequired
		if approvals <= 0 {
			approvals = review.DefaultApprovals
		}
		lowered, lowering := "", review.Lowered(approvals, by.Name, d.now(), nm.Team)
		if lowering != nil {
			b, err := json.Marshal(lowering)
			if err != nil {
				return err
			}
			lowered = string(b)
		}
		now := d.stamp()
		res, err := tx.ExecContext(ctx, `INSERT INTO manifests (dataset_id, campaign_id, state, params, dataset_hash, prepared_by,
			approvals_required, comparison, estimates, origin, created_at, updated_at, live_mark, label_mark, carried_from, carried_over,
			approvals_lowered) VALUES (?, ?, 'draft', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			nm.DatasetID, campaign, string(params), nm.DatasetHash, nullID(by.ID), approvals,
			string(comparison), string(estimates), string(origin), now, now, nm.LiveMark, labelMark, carriedFrom, string(carried), lowered)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		docs := docCache{}
		removals := 0
		stmts := &stmtCache{tx: tx}
		defer stmts.close()
		ids := &idAlloc{}
		for i := range nm.Clusters {
			c := nm.Clusters[i]
			c.ID = 0
			c.Items = slices.Clone(c.Items)
			for j := range c.Items {
				c.Items[j].ID = 0
			}
			if _, err := insertCluster(ctx, stmts, ids, id, c, docs); err != nil {
				return fmt.Errorf("cluster %d: %w", i, err)
			}
			removals += len(c.Items)
		}
		if nm.RunID != 0 {
			if err := finishRun(ctx, tx, nm.RunID, RunDone, "", id, d.stamp()); err != nil {
				return err
			}
		}
		if m, err = loadManifest(ctx, tx, id); err != nil {
			return err
		}
		if m.ContentHash, err = refreshHash(ctx, tx, m, nil); err != nil {
			return err
		}
		detail := map[string]any{
			"dataset": m.Dataset.Name, "dataset_version": m.Dataset.Version, "clusters": len(nm.Clusters), "removals": removals,
			"manifest_hash": m.ContentHash, "dataset_hash": nm.DatasetHash, "parameters": nm.Params,
		}
		if nm.CarriedOver != nil {
			detail["carried_over"] = nm.CarriedOver
		}
		if lowering != nil {
			detail["approvals_lowered"] = lowering
		}
		if nm.Origin != nil {
			detail["imported_from"] = map[string]any{"format": nm.Origin.Format, "file": nm.Origin.File, "sha256": nm.Origin.SHA256,
				"skipped_unknown_ids": nm.Origin.Skipped, "sample": nm.Origin.Sample}
		}
		return d.auditBy(ctx, tx, by, "manifest.prepare", manifestSubject(id), detail)
	})
	if err != nil {
		return Manifest{}, fmt.Errorf("create manifest for dataset %d: %w", nm.DatasetID, err)
	}
	return m, nil
}

func manifestSubject(id int64) string { return fmt.Sprintf("manifest:%d", id) }

// docCache remembers documents' external ids and content hashes within a transaction.
type docCache map[int64][2]string

func (c docCache) get(ctx context.Context, tx txer, id int64) (ext, hash string, err error) {
	if v, ok := c[id]; ok {
		return v[0], v[1], nil
	}
	if err := tx.QueryRowContext(ctx, `SELECT ext_id, content_hash FROM documents WHERE id = ?`, id).Scan(&ext, &hash); err != nil {
		return "", "", fmt.Errorf("document %d: %w", id, notFound(err))
	}
	c[id] = [2]string{ext, hash}
	return ext, hash, nil
}

// idAlloc hands out the ids of new clusters and removals inside one transaction: above
// every id the table holds and every id it ever deleted (id_floors, raised by a trigger
// on delete), so an id is never handed out twice. A deleted row comes back only under
// its own id (an undo), and SQLite's own choice (the highest id plus one) would give a
// deleted highest id to a new row first.
type idAlloc struct {
	next map[string]int64
}

// take returns a fresh id for table tbl ("clusters" or "manifest_items").
func (a *idAlloc) take(ctx context.Context, tx txer, tbl string) (int64, error) {
	if a.next == nil {
		a.next = map[string]int64{}
	}
	n, ok := a.next[tbl]
	if !ok {
		if err := tx.QueryRowContext(ctx, `SELECT max(coalesce((SELECT floor FROM id_floors WHERE tbl = ?), 0),
			coalesce((SELECT max(id) FROM `+tbl+`), 0)) + 1`, tbl).Scan(&n); err != nil {
			return 0, fmt.Errorf("next id of %s: %w", tbl, err)
		}
	}
	a.next[tbl] = n + 1
	return n, nil
}

// insertCluster inserts c (with its ID when not 0, else a fresh one) and its items
// (likewise) into manifest m, and returns the cluster's id.
func insertCluster(ctx context.Context, tx txer, ids *idAlloc, manifestID int64, c Cluster, docs docCache) (int64, error) {
	links, chain, cut, err := clusterJSON(c)
	if err != nil {
		return 0, err
	}
	id := c.ID
	if id == 0 {
		if id, err = ids.take(ctx, tx, "clusters"); err != nil {
			return 0, err
		}
	}
	var stratum, engine any
	if c.SampleStratum != "" {
		stratum = c.SampleStratum
	}
	if c.EngineWeakest != nil {
		engine = *c.EngineWeakest
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO clusters (id, manifest_id, keeper_id, keeper_rule, chained, weakest_link, override,
		size, chained_members, weakest_id, links, chain, cut, sample_stratum, engine_weakest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, manifestID, c.Keeper, c.KeeperRule, c.Chained, c.WeakestLink, c.Override, c.Size, c.ChainedMembers,
		nullID(c.Weakest), links, chain, cut, stratum, engine)
	if err != nil {
		return 0, err
	}
	cid, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	for _, it := range c.Items {
		it.Cluster = cid
		if err := insertItem(ctx, tx, ids, manifestID, it, docs); err != nil {
			return 0, fmt.Errorf("item of document %d: %w", it.Doc, err)
		}
	}
	return cid, nil
}

func clusterJSON(c Cluster) (links, chain, cut string, err error) {
	if c.Links == nil {
		c.Links = []Link{}
	}
	b1, err := json.Marshal(c.Links)
	if err != nil {
		return
	}
	b2, err := json.Marshal(c.Chain)
	if err != nil {
		return
	}
	b3, err := json.Marshal(c.Cut)
	return string(b1), string(b2), string(b3), err
}

func insertItem(ctx context.Context, tx txer, ids *idAlloc, manifestID int64, it Item, docs docCache) error {
	row, err := itemRow(ctx, tx, it, docs)
	if err != nil {
		return err
	}
	decision, reviewed := storeDecision(it.Decision)
	var bulk, decidedAt any
	id := it.ID
	if id == 0 {
		if id, err = ids.take(ctx, tx, "manifest_items"); err != nil {
			return err
		}
	}
	if it.BulkBar != 0 {
		bulk = it.BulkBar
	}
	if it.DecidedAt != "" {
		decidedAt = it.DecidedAt
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO manifest_items (id, manifest_id, cluster_id, document_id, keeper_id, score, decision,
		reason, estimate, exact, reviewed, decided_by, decided_at, bulk_bar, row_hash, bucket) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, manifestID, it.Cluster, it.Doc, it.Keeper, it.Score, decision, string(it.Reason), it.Estimate, it.Exact, reviewed,
		nullID(it.DecidedBy), decidedAt, bulk, row.Hash(), review.Bucket(it.Doc))
	return err
}

// itemRow is an item as the content hash reads it.
func itemRow(ctx context.Context, tx txer, it Item, docs docCache) (review.Row, error) {
	ext, hash, err := docs.get(ctx, tx, it.Doc)
	if err != nil {
		return review.Row{}, err
	}
	kext, _, err := docs.get(ctx, tx, it.Keeper)
	if err != nil {
		return review.Row{}, err
	}
	return review.Row{Doc: it.Doc, Keeper: it.Keeper, ExtID: ext, KeeperExtID: kext, Cluster: it.Cluster, Reason: it.Reason,
		Estimate: it.Estimate, Exact: it.Exact, ContentHash: hash, Decision: it.Decision}, nil
}

// loadManifest reads a manifest inside tx.
func loadManifest(ctx context.Context, tx *sql.Tx, id int64) (Manifest, error) {
	return scanManifest(tx.QueryRowContext(ctx, `SELECT `+manifestColumns+manifestFrom+` WHERE m.id = ?`, id))
}

// refreshHash rehashes the buckets of a manifest (all of them when buckets is nil) from
// their items' stored row hashes, then the content hash from the bucket hashes; it stores
// both and returns the content hash.
func refreshHash(ctx context.Context, tx *sql.Tx, m Manifest, buckets map[int]bool) (string, error) {
	if buckets == nil {
		buckets = make(map[int]bool, review.HashBuckets)
		for b := range review.HashBuckets {
			buckets[b] = true
		}
	}
	for b := range buckets {
		rows, err := collect(ctx, tx, `SELECT row_hash FROM manifest_items WHERE manifest_id = ? AND bucket = ? ORDER BY document_id`,
			scanValue[string], m.ID, b)
		if err != nil {
			return "", err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO manifest_buckets (manifest_id, bucket, hash) VALUES (?, ?, ?)
			ON CONFLICT (manifest_id, bucket) DO UPDATE SET hash = excluded.hash`, m.ID, b, review.BucketHash(rows)); err != nil {
			return "", err
		}
	}
	var all [review.HashBuckets]string
	list, err := collect(ctx, tx, `SELECT bucket, hash FROM manifest_buckets WHERE manifest_id = ?`, func(sc scanner) ([2]any, error) {
		var b int
		var h string
		return [2]any{b, h}, sc.Scan(&b, &h)
	}, m.ID)
	if err != nil {
		return "", err
	}
	for _, x := range list {
		if b := x[0].(int); b >= 0 && b < review.HashBuckets {
			all[b] = x[1].(string)
		}
	}
	sum := review.ManifestHashOf(m.Dataset, m.Params, &all)
	if _, err := tx.ExecContext(ctx, `UPDATE manifests SET content_hash = ? WHERE id = ?`, sum, m.ID); err != nil {
		return "", err
	}
	return sum, nil
}

// Manifest returns a manifest by id.
func (d *DB) Manifest(ctx context.Context, id int64) (Manifest, error) {
	m, err := scanManifest(d.r.QueryRowContext(ctx, `SELECT `+manifestColumns+manifestFrom+` WHERE m.id = ? AND ds.state = 'ready'`, id))
	if err != nil {
		return m, fmt.Errorf("manifest %d: %w", id, err)
	}
	return m, nil
}

// ManifestSummary is a manifest in the list of manifests.
type ManifestSummary struct {
	Manifest
	Removals, Proposed, Excluded, Clusters int
}

// Manifests lists the manifests of ready datasets, newest first; datasetID 0 lists all.
func (d *DB) Manifests(ctx context.Context, datasetID int64) ([]ManifestSummary, error) {
	list, err := queryAll(ctx, d, `SELECT `+manifestColumns+`,
		(SELECT count(*) FROM manifest_items i WHERE i.manifest_id = m.id AND i.decision = 'remove'),
		(SELECT count(*) FROM manifest_items i WHERE i.manifest_id = m.id AND i.decision = 'remove' AND i.reviewed = 0),
		(SELECT count(*) FROM manifest_items i WHERE i.manifest_id = m.id AND i.decision = 'keep'),
		(SELECT count(*) FROM clusters c WHERE c.manifest_id = m.id)`+manifestFrom+`
		WHERE ds.state = 'ready' AND (? = 0 OR m.dataset_id = ?) ORDER BY m.id DESC`,
		func(sc scanner) (ManifestSummary, error) {
			var s ManifestSummary
			var extra [4]int
			m, err := scanManifest(multiScan{sc, []any{&extra[0], &extra[1], &extra[2], &extra[3]}})
			s.Manifest = m
			s.Removals, s.Proposed, s.Excluded, s.Clusters = extra[0], extra[1], extra[2], extra[3]
			return s, err
		}, datasetID, datasetID)
	if err != nil {
		return nil, fmt.Errorf("list manifests: %w", err)
	}
	return list, nil
}

// multiScan appends destinations after a scanner's own: scanManifest reads the manifest
// columns, the query's extra columns land in extra.
type multiScan struct {
	sc    scanner
	extra []any
}

func (m multiScan) Scan(dest ...any) error { return m.sc.Scan(append(dest, m.extra...)...) }

// ManifestRows returns every item of a manifest as the content hash and the exports read
// it, in the documents' import order.
func (d *DB) ManifestRows(ctx context.Context, manifestID int64) ([]review.Row, error) {
	rows, err := queryAll(ctx, d, rowsQuery, scanRow, manifestID)
	if err != nil {
		return nil, fmt.Errorf("rows of manifest %d: %w", manifestID, err)
	}
	return rows, nil
}

const rowsQuery = `SELECT i.document_id, i.keeper_id, d.ext_id, k.ext_id, coalesce(i.cluster_id, 0), i.reason,
	coalesce(i.estimate, 0), coalesce(i.exact, 0), d.content_hash, i.decision, i.reviewed
	FROM manifest_items i JOIN documents d ON d.id = i.document_id JOIN documents k ON k.id = i.keeper_id
	WHERE i.manifest_id = ? ORDER BY i.document_id`

func scanRow(sc scanner) (review.Row, error) {
	var r review.Row
	var reason, decision string
	var reviewed bool
	if err := sc.Scan(&r.Doc, &r.Keeper, &r.ExtID, &r.KeeperExtID, &r.Cluster, &reason, &r.Estimate, &r.Exact, &r.ContentHash,
		&decision, &reviewed); err != nil {
		return r, err
	}
	r.Reason = cluster.Reason(reason)
	r.Decision = loadDecision(decision, reviewed)
	return r, nil
}

// Items returns every removal of a manifest with its decision, by document.
func (d *DB) Items(ctx context.Context, manifestID int64) ([]Item, error) {
	list, err := queryAll(ctx, d, `SELECT `+itemColumns+` FROM manifest_items i WHERE i.manifest_id = ? ORDER BY i.document_id`, scanItem, manifestID)
	if err != nil {
		return nil, fmt.Errorf("removals of manifest %d: %w", manifestID, err)
	}
	return list, nil
}

// ManifestCounts are a manifest's numbers at a glance.
type ManifestCounts struct {
	Rows, Proposed, Approved, Excluded int
	Clusters, Chained                  int
}

// Undecided returns the removals nobody has decided yet.
func (c ManifestCounts) Undecided() int { return c.Proposed }

// CountManifest counts a manifest's items by decision and its clusters.
func (d *DB) CountManifest(ctx context.Context, manifestID int64) (ManifestCounts, error) {
	var c ManifestCounts
	err := d.r.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(decision = 'remove' AND reviewed = 0), 0),
		coalesce(sum(decision = 'remove' AND reviewed = 1), 0), coalesce(sum(decision = 'keep'), 0),
		(SELECT count(*) FROM clusters WHERE manifest_id = ?), (SELECT count(*) FROM clusters WHERE manifest_id = ? AND chained = 1)
		FROM manifest_items WHERE manifest_id = ?`, manifestID, manifestID, manifestID).
		Scan(&c.Rows, &c.Proposed, &c.Approved, &c.Excluded, &c.Clusters, &c.Chained)
	if err != nil {
		return c, fmt.Errorf("count manifest %d: %w", manifestID, err)
	}
	return c, nil
}

const clusterColumns = `c.id, c.keeper_id, c.keeper_rule, c.override, c.size, c.chained, c.chained_members, c.weakest_link,
	coalesce(c.weakest_id, 0), c.links, c.chain, c.cut, coalesce(c.sample_stratum, ''), c.engine_weakest`

func scanCluster(sc scanner) (Cluster, error) {
	var c Cluster
	var links, chain, cut string
	var engine sql.NullFloat64
	if err := sc.Scan(&c.ID, &c.Keeper, &c.KeeperRule, &c.Override, &c.Size, &c.Chained, &c.ChainedMembers, &c.WeakestLink,
		&c.Weakest, &links, &chain, &cut, &c.SampleStratum, &engine); err != nil {
		return c, notFound(err)
	}
	if engine.Valid {
		c.EngineWeakest = &engine.Float64
	}
	if err := json.Unmarshal([]byte(links), &c.Links); err != nil {
		return c, fmt.Errorf("cluster %d: column links: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(chain), &c.Chain); err != nil {
		return c, fmt.Errorf("cluster %d: column chain: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(cut), &c.Cut); err != nil {
		return c, fmt.Errorf("cluster %d: column cut: %w", c.ID, err)
	}
	return c, nil
}

const itemColumns = `i.id, coalesce(i.cluster_id, 0), i.document_id, i.keeper_id, i.score, coalesce(i.estimate, 0), coalesce(i.exact, 0),
	i.reason, i.decision, i.reviewed, coalesce(i.decided_by, 0), coalesce(i.decided_at, ''), coalesce(i.bulk_bar, 0)`

func scanItem(sc scanner) (Item, error) {
	var it Item
	var reason, decision string
	var reviewed bool
	if err := sc.Scan(&it.ID, &it.Cluster, &it.Doc, &it.Keeper, &it.Score, &it.Estimate, &it.Exact, &reason, &decision, &reviewed,
		&it.DecidedBy, &it.DecidedAt, &it.BulkBar); err != nil {
		return it, err
	}
	it.Reason = cluster.Reason(reason)
	it.Decision = loadDecision(decision, reviewed)
	return it, nil
}

// querier is what both a transaction and a pool offer for reading.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// collect runs a read query through q (a transaction or a pool) and scans every row
// with scan.
func collect[T any](ctx context.Context, q querier, query string, scan func(scanner) (T, error), args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// loadCluster reads a cluster of a manifest with its items (by document), through q.
func loadCluster(ctx context.Context, q querier, manifestID, clusterID int64) (Cluster, error) {
	c, err := scanCluster(q.QueryRowContext(ctx, `SELECT `+clusterColumns+` FROM clusters c WHERE c.id = ? AND c.manifest_id = ?`,
		clusterID, manifestID))
	if err != nil {
		return c, err
	}
	c.Items, err = collect(ctx, q, `SELECT `+itemColumns+` FROM manifest_items i WHERE i.cluster_id = ? ORDER BY i.document_id`, scanItem, clusterID)
	return c, err
}

// Cluster returns a cluster of a manifest with its items; one of another manifest is
// ErrNotFound.
func (d *DB) Cluster(ctx context.Context, manifestID, clusterID int64) (Cluster, error) {
	c, err := loadCluster(ctx, d.r, manifestID, clusterID)
	if err != nil {
		return c, fmt.Errorf("cluster %d of manifest %d: %w", clusterID, manifestID, err)
	}
	return c, nil
}

// ClusterFilter narrows the cluster list.
type ClusterFilter struct {
	Reason  cluster.Reason // clusters with a removal for this reason; "" for any
	Group   string         // "source", "domain" or "lang"; with Value, clusters with a member in that group
	Value   string
	Pending bool // clusters with a removal nobody has decided yet
	Chained bool // chained clusters only
	Sample  bool // clusters drawn into the review sample only
}

// ClusterRow is a cluster in the list: its keeper and how far its review has got.
type ClusterRow struct {
	ID                       int64
	Keeper                   int64
	KeeperExtID              string
	Size                     int
	Chained                  bool
	ChainedMembers           int
	WeakestLink              float64
	Override                 string
	Proposed, Approved, Kept int
	Exact, Near              int
	SampleStratum            string // "" when not in the review sample
}

// Clusters lists a manifest's clusters riskiest first (cluster.ByRisk's order: chained
// first, then weakest link to the keeper, then larger first), filtered by f.
func (d *DB) Clusters(ctx context.Context, manifestID int64, f ClusterFilter) ([]ClusterRow, error) {
	var where []string
	args := []any{manifestID}
	if f.Reason != "" {
		where = append(where, `EXISTS (SELECT 1 FROM manifest_items x WHERE x.cluster_id = c.id AND x.reason = ?)`)
		args = append(args, string(f.Reason))
	}
	if f.Group != "" {
		col := map[string]string{"source": "source", "domain": "domain", "lang": "lang"}[f.Group]
		if col == "" {
			return nil, fmt.Errorf("clusters of manifest %d: unknown group %q", manifestID, f.Group)
		}
		where = append(where, `(EXISTS (SELECT 1 FROM manifest_items x JOIN documents xd ON xd.id = x.document_id
			WHERE x.cluster_id = c.id AND xd.`+col+` = ?) OR EXISTS (SELECT 1 FROM documents kd WHERE kd.id = c.keeper_id AND kd.`+col+` = ?))`)
		args = append(args, f.Value, f.Value)
	}
	if f.Pending {
		where = append(where, `EXISTS (SELECT 1 FROM manifest_items x WHERE x.cluster_id = c.id AND x.decision = 'remove' AND x.reviewed = 0)`)
	}
	if f.Chained {
		where = append(where, `c.chained = 1`)
	}
	if f.Sample {
		where = append(where, `c.sample_stratum IS NOT NULL`)
	}
	cond := ""
	for _, w := range where {
		cond += " AND " + w
	}
	list, err := queryAll(ctx, d, `SELECT c.id, c.keeper_id, k.ext_id, c.size, c.chained, c.chained_members, c.weakest_link, c.override,
		coalesce(c.sample_stratum, ''), coalesce(sum(i.decision = 'remove' AND i.reviewed = 0), 0), coalesce(sum(i.decision = 'remove' AND i.reviewed = 1), 0),
		coalesce(sum(i.decision = 'keep'), 0), coalesce(sum(i.reason = 'exact'), 0), coalesce(sum(i.reason = 'near'), 0)
		FROM clusters c JOIN documents k ON k.id = c.keeper_id LEFT JOIN manifest_items i ON i.cluster_id = c.id
		WHERE c.manifest_id = ?`+cond+`
		GROUP BY c.id ORDER BY c.chained DESC, c.weakest_link, c.size DESC, c.id`,
		func(sc scanner) (ClusterRow, error) {
			var r ClusterRow
			return r, sc.Scan(&r.ID, &r.Keeper, &r.KeeperExtID, &r.Size, &r.Chained, &r.ChainedMembers, &r.WeakestLink, &r.Override,
				&r.SampleStratum, &r.Proposed, &r.Approved, &r.Kept, &r.Exact, &r.Near)
		}, args...)
	if err != nil {
		return nil, fmt.Errorf("clusters of manifest %d: %w", manifestID, err)
	}
	return list, nil
}

// DocInfo is what pages and the keeper rule need about a document, without its text.
type DocInfo struct {
	ID          int64
	ExtID       string
	Bytes       int
	Source      string
	Domain      string
	Lang        string
	Meta        string // a JSON object
	ContentHash string
}

const docInfoColumns = `id, ext_id, bytes, source, domain, lang, meta, content_hash`

func scanDocInfo(sc scanner) (DocInfo, error) {
	var di DocInfo
	return di, sc.Scan(&di.ID, &di.ExtID, &di.Bytes, &di.Source, &di.Domain, &di.Lang, &di.Meta, &di.ContentHash)
}

// DatasetDocs returns every document of a dataset without its text, in import order.
func (d *DB) DatasetDocs(ctx context.Context, datasetID int64) ([]DocInfo, error) {
	docs, err := queryAll(ctx, d, `SELECT `+docInfoColumns+` FROM documents WHERE dataset_id = ? ORDER BY id`, scanDocInfo, datasetID)
	if err != nil {
		return nil, fmt.Errorf("documents of dataset %d: %w", datasetID, err)
	}
	return docs, nil
}

// DocInfos returns the documents with those ids, by id; unknown ids are left out.
func (d *DB) DocInfos(ctx context.Context, ids []int64) (map[int64]DocInfo, error) {
	out := make(map[int64]DocInfo, len(ids))
	for marks, args := range inLists(ids) {
		list, err := queryAll(ctx, d, `SELECT `+docInfoColumns+` FROM documents WHERE id IN (`+marks+`)`, scanDocInfo, args...)
		if err != nil {
			return nil, fmt.Errorf("documents: %w", err)
		}
		for _, di := range list {
			out[di.ID] = di
		}
	}
	return out, nil
}

// SampleCounts returns how many removals of a manifest are undecided inside its review
// sample and outside it.
func (d *DB) SampleCounts(ctx context.Context, manifestID int64) (inside, outside int, err error) {
	err = d.r.QueryRowContext(ctx, `SELECT coalesce(sum(c.sample_stratum IS NOT NULL), 0), coalesce(sum(c.sample_stratum IS NULL), 0)
		FROM manifest_items i JOIN clusters c ON c.id = i.cluster_id
		WHERE i.manifest_id = ? AND i.decision = 'remove' AND i.reviewed = 0`, manifestID).Scan(&inside, &outside)
	if err != nil {
		return 0, 0, fmt.Errorf("sample counts of manifest %d: %w", manifestID, err)
	}
	return inside, outside, nil
}

// txer is what inserting a manifest's rows needs of a transaction: a *sql.Tx, or a
// stmtCache over one.
type txer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// stmtCache runs a transaction's statements prepared once each: a manifest of many
// thousand rows repeats the same few inserts and lookups, and preparing each anew cost
// a quarter of storing it.
type stmtCache struct {
	tx *sql.Tx
	m  map[string]*sql.Stmt
}

func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.m[query]; ok {
		return st, nil
	}
	st, err := c.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[query] = st
	return st, nil
}

func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return c.tx.QueryRowContext(ctx, query, args...) // reports the same error
	}
	return st.QueryRowContext(ctx, args...)
}

func (c *stmtCache) close() {
	for _, st := range c.m {
		st.Close()
	}
}
