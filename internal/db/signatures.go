package db

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Signatures are cached per representation (an lsh.Spec, by its ID) and document, as
// lsh.Signature.Bytes. The cache itself, computing what is missing in batches, is
// internal/sigcache; these are its statements.

// DatasetSignatures returns every document id of a dataset, ascending, with its stored
// signature under spec aligned with it; sigs[i] is nil where none is stored (or the
// stored one does not have spec.Hashes values). No text is read.
func (d *DB) DatasetSignatures(ctx context.Context, datasetID int64, spec lsh.Spec) (ids []int64, sigs []lsh.Signature, err error) {
	rows, err := d.r.QueryContext(ctx, `SELECT d.id, s.signature FROM documents d
		LEFT JOIN signatures s ON s.document_id = d.id AND s.representation_id = ?
		WHERE d.dataset_id = ? ORDER BY d.id`, spec.ID(), datasetID)
	if err != nil {
		return nil, nil, fmt.Errorf("signatures of dataset %d under %s: %w", datasetID, spec.ID(), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return nil, nil, fmt.Errorf("signatures of dataset %d under %s: %w", datasetID, spec.ID(), err)
		}
		var sig lsh.Signature
		if b != nil {
			if s, ok := lsh.SignatureFromBytes(b); ok && len(s) == spec.Hashes {
				sig = s
			}
		}
		ids = append(ids, id)
		sigs = append(sigs, sig)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("signatures of dataset %d under %s: %w", datasetID, spec.ID(), err)
	}
	return ids, sigs, nil
}

// MissingSignatures returns the ids of a dataset's documents without a usable stored
// signature under spec, ascending.
func (d *DB) MissingSignatures(ctx context.Context, datasetID int64, spec lsh.Spec) ([]int64, error) {
	ids, err := queryAll(ctx, d, `SELECT d.id FROM documents d
		LEFT JOIN signatures s ON s.document_id = d.id AND s.representation_id = ?
		WHERE d.dataset_id = ? AND (s.signature IS NULL OR length(s.signature) != ?) ORDER BY d.id`,
		scanValue[int64], spec.ID(), datasetID, 4*spec.Hashes)
	if err != nil {
		return nil, fmt.Errorf("missing signatures of dataset %d under %s: %w", datasetID, spec.ID(), err)
	}
	return ids, nil
}

// StoreSignatures stores sigs[i] as document ids[i]'s signature under spec, replacing
// what was there, in one transaction (recording the representation first).
func (d *DB) StoreSignatures(ctx context.Context, spec lsh.Spec, ids []int64, sigs []lsh.Signature) error {
	if len(ids) != len(sigs) {
		return fmt.Errorf("store signatures: %d ids for %d signatures", len(ids), len(sigs))
	}
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO representations (id, spec, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			spec.ID(), spec.String(), d.stamp()); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO signatures (representation_id, document_id, signature) VALUES (?, ?, ?)
			ON CONFLICT (representation_id, document_id) DO UPDATE SET signature = excluded.signature`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, id := range ids {
			if _, err := stmt.ExecContext(ctx, spec.ID(), id, sigs[i].Bytes()); err != nil {
				return fmt.Errorf("document %d: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store %d signatures under %s: %w", len(ids), spec.ID(), err)
	}
	return nil
}
