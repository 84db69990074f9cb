package manifests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// The files of an exported manifest, as the manifest page offers them and
// `server manifest export` writes them.
const (
	RemovalsCSV   = "removals.csv"   // approved removals, formula cells neutralised
	RemovalsJSONL = "removals.jsonl" // the same as JSON lines
	SplitJSONL    = "split.jsonl"    // every document of the dataset, marked kept or removed
	SignOffJSON   = "signoff.json"   // the sign-off record
)

// ExportFiles lists the files in the order they are written.
var ExportFiles = []string{RemovalsCSV, RemovalsJSONL, SplitJSONL, SignOffJSON}

// Header is what every exported removal repeats about manifest m.
func Header(m db.Manifest) review.ExportHeader {
	return review.ExportHeader{Manifest: m.ID, Dataset: m.Dataset, Params: m.Params}
}

// WriteExport writes one file of an exported manifest to w, after checking (as the
// export did) that neither the manifest nor the dataset changed since the sign-off.
func WriteExport(ctx context.Context, store *db.DB, m db.Manifest, name string, w io.Writer) error {
	if name == SignOffJSON {
		return WriteSignOff(ctx, store, m, w)
	}
	rows, _, err := store.ExportedRows(ctx, m.ID)
	if err != nil {
		return err
	}
	switch name {
	case RemovalsCSV:
		return review.WriteCSV(w, Header(m), review.ApprovedRows(rows))
	case RemovalsJSONL:
		return review.WriteJSONL(w, Header(m), review.ApprovedRows(rows))
	case SplitJSONL:
		return writeSplit(ctx, store, m, rows, w)
	}
	return fmt.Errorf("no export file %q", name)
}

// writeSplit writes every document of the dataset with its fate: removed when this
// manifest's tombstone on it stands (a restored document is kept).
func writeSplit(ctx context.Context, store *db.DB, m db.Manifest, rows []review.Row, w io.Writer) error {
	stones, err := store.Tombstones(ctx, m.ID)
	if err != nil {
		return err
	}
	removed := map[int64]bool{}
	for _, t := range stones {
		if !t.Restored {
			removed[t.Doc] = true
		}
	}
	byDoc := map[int64]review.Row{}
	for _, r := range rows {
		byDoc[r.Doc] = r
	}
	sw := review.NewSplitWriter(w)
	err = store.EachDocument(ctx, m.DatasetID, func(doc db.Document) error {
		sd := review.SplitDoc{ExtID: doc.ExtID, Text: doc.Text, Source: doc.Source, Domain: doc.Domain, Lang: doc.Lang,
			Meta: json.RawMessage(doc.Meta), Split: "kept"}
		if removed[doc.ID] {
			r := byDoc[doc.ID]
			sd.Split, sd.Keeper, sd.Cluster = "removed", r.KeeperExtID, r.Cluster
		}
		return sw.Write(sd)
	})
	if err != nil {
		return err
	}
	return sw.Flush()
}

// signOffFile is signoff.json: the record as it was sealed, and whether it still holds.
type signOffFile struct {
	Status       string     `json:"status"` // current, superseded or revoked
	RevokedBy    string     `json:"revoked_by,omitempty"`
	RevokedAt    *time.Time `json:"revoked_at,omitempty"`
	RevokeReason string     `json:"revoke_reason,omitempty"`
	// LabelsSince is set when the campaign's labels changed after those the record's
	// label figures were computed on: the figures are stale.
	LabelsSince *LabelsSince  `json:"labels_since,omitempty"`
	Record      review.Record `json:"record"`
	// AuditHeadAtExport is the audit chain's head when the manifest was exported (its
	// export the last entry); the record holds the head at sign-off.
	AuditHeadAtExport *review.AuditHead `json:"audit_head_at_export,omitempty"`
}

// LabelsSince counts the label events of a sign-off record's campaign after the labels
// its figures were computed on.
type LabelsSince struct {
	Events int       `json:"label_events"`
	Pairs  int       `json:"pairs"`
	Last   time.Time `json:"last"`
}

// LabelsAfter returns what the record's campaign was labeled after the labels its figures
// were computed on; nil when nothing was (or the record has no labels).
func LabelsAfter(ctx context.Context, store *db.DB, rec review.Record) (*LabelsSince, error) {
	if rec.Labels == nil || rec.LabelMark <= 0 {
		return nil, nil
	}
	events, pairs, last, err := store.LabelsSince(ctx, rec.Labels.Campaign, rec.LabelMark)
	if err != nil || events == 0 {
		return nil, err
	}
	return &LabelsSince{Events: events, Pairs: pairs, Last: last.UTC()}, nil
}

// SignOffStatus names whether a sign-off still holds.
func SignOffStatus(so db.SignOff) string {
	switch {
	case so.Revoked:
		return "revoked"
	case so.Superseded:
		return "superseded"
	}
	return "current"
}

// WriteSignOff writes the manifest's latest sign-off record as JSON; a manifest never
// signed off is db.ErrNotFound.
func WriteSignOff(ctx context.Context, store *db.DB, m db.Manifest, w io.Writer) error {
	list, err := store.SignOffs(ctx, m.ID)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return fmt.Errorf("sign-off of manifest %d: %w", m.ID, db.ErrNotFound)
	}
	so := list[0]
	f := signOffFile{Status: SignOffStatus(so), Record: so.Record}
	if f.LabelsSince, err = LabelsAfter(ctx, store, so.Record); err != nil {
		return err
	}
	if so.Revoked {
		f.RevokedBy, f.RevokedAt, f.RevokeReason = so.RevokedBy, &so.RevokedAt, so.RevokeReason
	}
	switch head, err := store.ExportAuditHead(ctx, m.ID); {
	case err == nil:
		f.AuditHeadAtExport = &head
	case !errors.Is(err, db.ErrNotFound):
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(f)
}
