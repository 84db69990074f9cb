// Package dbtest gives tests outside internal/db real stores. Open and OpenFile make a
// SQLite file in the test's temporary folder, migrated by db.Open and closed when the
// test ends; Dataset stores documents as a ready dataset, the way an import leaves it.
// (internal/db's own tests use their in-package openTest.)
//
// Build makes large stores for benchmarks and load tests, quickly: the rows are
// generated inside SQLite by a few INSERT ... SELECT statements over a recursive
// counter, in one transaction, rather than sent one by one through the store's API (a
// million label events take seconds this way, minutes the other).
//
// The history it writes is deterministic and shaped like a real campaign's: every
// pair is labeled by one of 20 annotators; a fifth is wanted twice and has a second
// human label (one in ten of those disagrees, half of those adjudicated), the others
// a rule label; labels are edited, withdrawn and given again, pairs skipped, flagged
// and unflagged. One pair in ten is left unlabeled (only skipped), for queues to serve.
package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

// Campaign is the shape of a generated campaign.
type Campaign struct {
	Docs   int // documents in its dataset
	Pairs  int
	Events int // label events, in rounds of Pairs events (a round is one kind of step)
}

// Built says where the generated rows are.
type Built struct {
	DatasetID, CampaignID int64
	FirstPair             int64 // pair k (0-based) has id FirstPair + k
	Unlabeled             []int64
}

// Annotators are the names of the generated history's annotators, besides "rules" and
// "reviewer".
const Annotators = 20

// Build adds a ready dataset named name with a default campaign shaped like spec to the
// store at path, which db.Open has created (so its schema is current). The store may be
// open meanwhile; its caches must not hold the new dataset yet.
func Build(ctx context.Context, path, name string, spec Campaign) (Built, error) {
	var b Built
	// Pair k joins document k mod D with the one 17m further on, m = 1 + k div D: the
	// pairs are distinct while 17m mod D never meets D - 17m' mod D, so for m < D/2 when
	// 17 does not divide D (a campaign of many pairs over few documents, as a team that
	// labels for long has).
	if spec.Docs < 100 || spec.Pairs < 1 || spec.Pairs > 2*spec.Docs && (spec.Docs%17 == 0 || spec.Pairs > spec.Docs*(spec.Docs/2-1)) {
		return b, fmt.Errorf("dbtest: %d pairs over %d documents: want at least 100 documents and at most 2 pairs per document, or D(D/2-1) when 17 does not divide D", spec.Pairs, spec.Docs)
	}
	conn, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		return b, err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return b, err
	}
	defer tx.Rollback() // after a commit, a no-op
	const stamp = "2026-01-01T00:00:00Z"
	exec := func(query string, args ...any) (sql.Result, error) {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return nil, fmt.Errorf("dbtest: %w", err)
		}
		return res, nil
	}
	res, err := exec(`INSERT INTO datasets (name, version, state, source_file, content_hash, doc_count, created_at, heartbeat_at)
		VALUES (?, 1, 'ready', ?, 'generated', ?, ?, ?)`, name, name+".jsonl", spec.Docs, stamp, stamp)
	if err != nil {
		return b, err
	}
	if b.DatasetID, err = res.LastInsertId(); err != nil {
		return b, err
	}
	// Documents of 60 to 110 words: a paragraph with a few words varied by document.
	if _, err := exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1),
		t(i, text) AS (SELECT i, printf('Section %d of the generated sample. ', i % 997) ||
			substr('Near-duplicate removal starts with a labeled sample: pairs of documents that people judge, one category ' ||
			'each, so that the settings of MinHash LSH can be chosen against what the team calls a duplicate. ' ||
			'Licenses, templated READMEs and translated manuals are the usual suspects; boilerplate around different ' ||
			'content is the usual trap. Each pair shows both texts side by side with a word diff.', 1, 400 + (i * 37) % 300) ||
			printf(' Variant %d, topic %d.', i % 13, i % 101) FROM n)
		INSERT INTO documents (dataset_id, ext_id, text, content_hash, bytes, source, domain, lang, meta)
		SELECT ?, 'doc' || i, text, printf('%016x', i * 2654435761), length(text), 'source' || (i % 5), '', 'l' || (i % 4), '{}' FROM t`,
		spec.Docs, b.DatasetID); err != nil {
		return b, err
	}
	var firstDoc int64
	if err := tx.QueryRowContext(ctx, `SELECT min(id) FROM documents WHERE dataset_id = ?`, b.DatasetID).Scan(&firstDoc); err != nil {
		return b, err
	}
	res, err = exec(`INSERT INTO campaigns (dataset_id, name, categories, created_at) VALUES (?, 'default', '[]', ?)`, b.DatasetID, stamp)
	if err != nil {
		return b, err
	}
	if b.CampaignID, err = res.LastInsertId(); err != nil {
		return b, err
	}
	// Pair k joins document k mod D with the one 17 (then 34) further on, wrapping.
	if _, err := exec(`WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k < ?1 - 1),
		d(k, a, b) AS (SELECT k, k % ?2, (k % ?2 + 17 * (1 + k / ?2)) % ?2 FROM n)
		INSERT INTO label_pairs (campaign_id, doc_a, doc_b, origin, created_at, similarity, estimate, wanted)
		SELECT ?3, ?4 + min(a, b), ?4 + max(a, b), 'generated', ?5, ((k * 7919) % 1000) / 1000.0,
			((k * 7919 + 31) % 1000) / 1000.0, CASE WHEN k % 5 = 0 THEN 2 ELSE 1 END FROM d ORDER BY k`,
		spec.Pairs, spec.Docs, b.CampaignID, firstDoc, stamp); err != nil {
		return b, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT min(id) FROM label_pairs WHERE campaign_id = ?`, b.CampaignID).Scan(&b.FirstPair); err != nil {
		return b, err
	}
	// Event j is step r = j div P of pair k = j mod P; see the package doc.
	if _, err := exec(`WITH RECURSIVE n(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM n WHERE j < ?1 - 1),
		e(j, k, r, c1, c2, a1, a2, a3) AS (SELECT j, j % ?2, j / ?2, (j % ?2) * 2654435761 % 7,
			CASE WHEN j % ?2 % 50 = 0 THEN ((j % ?2) * 2654435761 % 7 + 1) % 7 ELSE (j % ?2) * 2654435761 % 7 END,
			printf('ann%02d', j % ?2 % 20), printf('ann%02d', (j % ?2 + 7) % 20), printf('ann%02d', (j % ?2 + 13) % 20) FROM n),
		s(j, k, r, c, who, kind) AS (SELECT j, k, r, CASE WHEN r = 1 AND k % 5 = 0 THEN c2 ELSE c1 END,
			CASE WHEN k % 10 = 9 THEN a3
				WHEN r IN (0, 4, 6) THEN a1
				WHEN r = 1 THEN CASE WHEN k % 5 = 0 THEN a2 ELSE 'rules' END
				WHEN r IN (2, 3) AND k % 10 = 0 THEN a1
				WHEN r = 5 AND k % 7 = 0 THEN a1
				WHEN r = 8 AND k % 100 = 0 THEN 'reviewer'
				ELSE a3 END,
			CASE WHEN k % 10 = 9 THEN 'skip'
				WHEN r IN (0, 1, 4, 6) THEN 'label'
				WHEN r = 2 AND k % 10 = 0 THEN 'flag'
				WHEN r = 3 AND k % 10 = 0 THEN 'unflag'
				WHEN r = 5 AND k % 7 = 0 THEN 'retract'
				WHEN r = 8 AND k % 100 = 0 THEN 'adjudication'
				ELSE 'skip' END FROM e)
		INSERT INTO label_events (pair_id, annotator, kind, category, duplicate, created_at)
		SELECT ?3 + k, who, kind,
			CASE c WHEN 0 THEN 'exact' WHEN 1 THEN 'format' WHEN 2 THEN 'minor' WHEN 3 THEN 'boilerplate'
				WHEN 4 THEN 'partial' WHEN 5 THEN 'translation' ELSE 'different' END,
			c < 3, ?4 FROM s ORDER BY j`,
		spec.Events, spec.Pairs, b.FirstPair, stamp); err != nil {
		return b, err
	}
	if err := tx.Commit(); err != nil {
		return b, fmt.Errorf("dbtest: commit: %w", err)
	}
	for k := 9; k < spec.Pairs; k += 10 {
		b.Unlabeled = append(b.Unlabeled, b.FirstPair+int64(k))
	}
	return b, nil
}
