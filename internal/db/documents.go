package db

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
)

// Document is one stored document.
type Document struct {
	ID        int64
	DatasetID int64
	ExtID     string
	Text      string
	Source    string
	Domain    string
	Lang      string
	Meta      string // a JSON object
}

// Document returns a document of a ready dataset.
func (d *DB) Document(ctx context.Context, id int64) (Document, error) {
	var doc Document
	err := d.r.QueryRowContext(ctx, `SELECT d.id, d.dataset_id, d.ext_id, d.text, d.source, d.domain, d.lang, d.meta FROM documents d
		JOIN datasets ds ON ds.id = d.dataset_id AND ds.state = 'ready' WHERE d.id = ?`, id).
		Scan(&doc.ID, &doc.DatasetID, &doc.ExtID, &doc.Text, &doc.Source, &doc.Domain, &doc.Lang, &doc.Meta)
	if err != nil {
		return Document{}, fmt.Errorf("document %d: %w", id, notFound(err))
	}
	return doc, nil
}

// DocText is a document's id and text, for computing over a dataset.
type DocText struct {
	ID    int64
	ExtID string
	Text  string
}

// DatasetTexts returns every document of a dataset, by id. It holds every text in
// memory: work over a large dataset reads DocumentTexts batch by batch instead.
func (d *DB) DatasetTexts(ctx context.Context, datasetID int64) ([]DocText, error) {
	docs, err := queryAll(ctx, d, `SELECT id, ext_id, text FROM documents WHERE dataset_id = ? ORDER BY id`,
		func(sc scanner) (DocText, error) {
			var t DocText
			return t, sc.Scan(&t.ID, &t.ExtID, &t.Text)
		}, datasetID)
	if err != nil {
		return nil, fmt.Errorf("texts of dataset %d: %w", datasetID, err)
	}
	return docs, nil
}

// maxParams bounds the ids bound into one IN (...) list.
const maxParams = 500

// inLists splits vals into IN (...) lists of at most maxParams: each list's
// placeholders ("?,?,?") and its arguments, first then the list's values.
func inLists[T any](vals []T, first ...any) iter.Seq2[string, []any] {
	return func(yield func(string, []any) bool) {
		for part := range slices.Chunk(vals, maxParams) {
			args := make([]any, 0, len(first)+len(part))
			args = append(args, first...)
			for _, v := range part {
				args = append(args, v)
			}
			if !yield("?"+strings.Repeat(",?", len(part)-1), args) {
				return
			}
		}
	}
}

// DocumentTexts returns the texts of the documents with those ids, aligned with ids
// (which may repeat); an id that is not there is ErrNotFound. One query per 500 ids.
func (d *DB) DocumentTexts(ctx context.Context, ids []int64) ([]string, error) {
	byID := make(map[int64]string, len(ids))
	for marks, args := range inLists(ids) {
		rows, err := queryAll(ctx, d, `SELECT id, text FROM documents WHERE id IN (`+marks+`)`,
			func(sc scanner) (DocText, error) {
				var t DocText
				return t, sc.Scan(&t.ID, &t.Text)
			}, args...)
		if err != nil {
			return nil, fmt.Errorf("document texts: %w", err)
		}
		for _, r := range rows {
			byID[r.ID] = r.Text
		}
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		t, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("document texts: document %d: %w", id, ErrNotFound)
		}
		out[i] = t
	}
	return out, nil
}

// DocumentIDs maps external ids of a dataset to internal ids; unknown ids are absent.
func (d *DB) DocumentIDs(ctx context.Context, datasetID int64, extIDs []string) (map[string]int64, error) {
	out := make(map[string]int64, len(extIDs))
	for marks, args := range inLists(extIDs, datasetID) {
		rows, err := queryAll(ctx, d, `SELECT ext_id, id FROM documents WHERE dataset_id = ? AND ext_id IN (`+marks+`)`,
			func(sc scanner) (DocText, error) {
				var t DocText
				return t, sc.Scan(&t.ExtID, &t.ID)
			}, args...)
		if err != nil {
			return nil, fmt.Errorf("document ids of dataset %d: %w", datasetID, err)
		}
		for _, r := range rows {
			out[r.ExtID] = r.ID
		}
	}
	return out, nil
}
