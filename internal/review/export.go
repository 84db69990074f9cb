package review

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
)

// ExportHeader is what every exported removal repeats about its manifest, so that one
// row read alone says how it came to be removed.
type ExportHeader struct {
	Manifest int64
	Dataset  Dataset
	Params   Params
}

// CSVColumns are the columns of removals.csv, in order.
var CSVColumns = []string{
	"manifest", "dataset", "dataset_version", "ext_id", "keeper_ext_id", "cluster_id", "reason",
	"similarity_estimate", "similarity_exact", "policy", "keeper_rule", "spec", "bands", "rows",
	"threshold", "verification", "content_hash", "decision",
}

// ApprovedRows returns the rows a reviewer approved for removal: what an export removes.
func ApprovedRows(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.Decision == Approved {
			out = append(out, r)
		}
	}
	return out
}

// SafeCell neutralises a CSV cell that a spreadsheet would read as a formula: one
// starting with =, +, -, @, a tab or a carriage return gets a leading apostrophe (the
// OWASP advice), which spreadsheets show as text. Reading it back, drop an apostrophe
// that precedes one of those characters.
func SafeCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

func (h ExportHeader) cells(r Row) []string {
	p := h.Params
	return []string{
		strconv.FormatInt(h.Manifest, 10), h.Dataset.Name, strconv.Itoa(h.Dataset.Version), r.ExtID, r.KeeperExtID,
		strconv.FormatInt(r.Cluster, 10), string(r.Reason), fmtFloat(r.Estimate), fmtFloat(r.Exact),
		string(p.Policy), p.Rule.String(), p.Spec.String(), strconv.Itoa(p.Shape.Bands), strconv.Itoa(p.Shape.Rows),
		fmtFloat(p.Threshold), string(p.Verification), r.ContentHash, string(r.Decision),
	}
}

// WriteCSV writes rows as CSV with a header row (CSVColumns), every cell passed through
// SafeCell.
func WriteCSV(w io.Writer, h ExportHeader, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	for _, r := range rows {
		cells := h.cells(r)
		for i, c := range cells {
			cells[i] = SafeCell(c)
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// jsonRow is a removal in removals.jsonl.
type jsonRow struct {
	Manifest     int64   `json:"manifest"`
	Dataset      string  `json:"dataset"`
	Version      int     `json:"dataset_version"`
	ExtID        string  `json:"ext_id"`
	KeeperExtID  string  `json:"keeper_ext_id"`
	Cluster      int64   `json:"cluster_id"`
	Reason       string  `json:"reason"`
	Estimate     float64 `json:"similarity_estimate"`
	Exact        float64 `json:"similarity_exact"`
	Policy       string  `json:"policy"`
	KeeperRule   string  `json:"keeper_rule"`
	Spec         string  `json:"spec"`
	Bands        int     `json:"bands"`
	Rows         int     `json:"rows"`
	Threshold    float64 `json:"threshold"`
	Verification string  `json:"verification"`
	ContentHash  string  `json:"content_hash"`
	Decision     string  `json:"decision"`
}

// WriteJSONL writes rows as JSON lines with the fields of CSVColumns (numbers as numbers).
func WriteJSONL(w io.Writer, h ExportHeader, rows []Row) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	p := h.Params
	for _, r := range rows {
		if err := enc.Encode(jsonRow{
			Manifest: h.Manifest, Dataset: h.Dataset.Name, Version: h.Dataset.Version, ExtID: r.ExtID, KeeperExtID: r.KeeperExtID,
			Cluster: r.Cluster, Reason: string(r.Reason), Estimate: r.Estimate, Exact: r.Exact, Policy: string(p.Policy),
			KeeperRule: p.Rule.String(), Spec: p.Spec.String(), Bands: p.Shape.Bands, Rows: p.Shape.Rows, Threshold: p.Threshold,
			Verification: string(p.Verification), ContentHash: r.ContentHash, Decision: string(r.Decision),
		}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// SplitDoc is one document of the dataset in split.jsonl: its fields as imported, and
// whether the exported manifest removes it (and in favour of which).
type SplitDoc struct {
	ExtID   string          `json:"id"`
	Text    string          `json:"text"`
	Source  string          `json:"source,omitempty"`
	Domain  string          `json:"domain,omitempty"`
	Lang    string          `json:"lang,omitempty"`
	Meta    json.RawMessage `json:"meta,omitempty"`
	Split   string          `json:"split"` // "kept" or "removed"
	Keeper  string          `json:"keeper,omitempty"`
	Cluster int64           `json:"cluster_id,omitempty"`
}

// SplitWriter writes split.jsonl, one document per line, kept and removed alike, so one
// pass over it (jq 'select(.split == "kept")') gives the deduplicated dataset.
type SplitWriter struct {
	bw  *bufio.Writer
	enc *json.Encoder
}

// NewSplitWriter writes to w; call Flush at the end.
func NewSplitWriter(w io.Writer) *SplitWriter {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &SplitWriter{bw: bw, enc: enc}
}

// Write writes one document.
func (s *SplitWriter) Write(d SplitDoc) error {
	if len(d.Meta) == 0 || string(d.Meta) == "{}" {
		d.Meta = nil
	}
	return s.enc.Encode(d)
}

// Flush writes what is buffered.
func (s *SplitWriter) Flush() error { return s.bw.Flush() }
