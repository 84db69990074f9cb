package web

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// exportLabels writes the campaign's standing labels (and adjudications) as CSV or JSONL
// in the format import-labels reads.
func (s *server) exportLabels(format string) func(http.ResponseWriter, *http.Request, db.Campaign) {
	return func(w http.ResponseWriter, r *http.Request, c db.Campaign) {
		cur, err := s.store.CurrentLabels(r.Context(), c.ID)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		name := fmt.Sprintf("labels-campaign-%d.%s", c.ID, format)
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		if format == "csv" {
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			err = writeLabelsCSV(w, cur)
		} else {
			w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
			err = writeLabelsJSONL(w, cur)
		}
		if err != nil {
			// The status is sent: the download ends short, and the log says why.
			s.log.Error("export labels", "campaign", c.ID, "err", err, "request_id", requestIDOf(r))
		}
	}
}

const exportTime = "2006-01-02T15:04:05Z"

func writeLabelsCSV(w http.ResponseWriter, cur []db.CurrentLabel) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"a", "b", "category", "duplicate", "annotator", "note", "kind", "labeled_at", "similarity"})
	for _, l := range cur {
		sim := ""
		if l.Similarity.Valid {
			sim = strconv.FormatFloat(l.Similarity.Float64, 'f', 4, 64)
		}
		// Notes, names and ids are people's text: a cell a spreadsheet would run as a
		// formula is written as text, as removals.csv does (import-labels drops the mark).
		row := []string{l.ExtA, l.ExtB, l.Category, yesNo(l.Duplicate), l.Annotator, l.Note, string(l.Kind), l.At.UTC().Format(exportTime), sim}
		for i, c := range row {
			row[i] = review.SafeCell(c)
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

func writeLabelsJSONL(w http.ResponseWriter, cur []db.CurrentLabel) error {
	enc := json.NewEncoder(w)
	for _, l := range cur {
		rec := map[string]any{"a": l.ExtA, "b": l.ExtB, "category": l.Category, "duplicate": yesNo(l.Duplicate),
			"annotator": l.Annotator, "note": l.Note, "kind": l.Kind, "labeled_at": l.At.UTC().Format(exportTime)}
		if l.Similarity.Valid {
			rec["similarity"] = l.Similarity.Float64
		}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	return nil
}
