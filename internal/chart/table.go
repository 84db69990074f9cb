package chart

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
)

// Table is the data behind a figure: named columns, one row per mark drawn (a point,
// a bar, a cell, a bin), every value as text.
type Table struct {
	Columns []string
	Rows    [][]string
}

// CSV writes the table as RFC 4180 CSV with a header line. Numbers are written with
// the fewest digits that read back to the same float64; a missing number is an empty
// field. A text field that a spreadsheet would run as a formula (starting with =, +,
// -, @, tab or carriage return) gets a leading apostrophe, since document names come
// from uploads.
func (t Table) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(t.Columns)
	for _, r := range t.Rows {
		w.Write(r)
	}
	w.Flush() // writes to a bytes.Buffer cannot fail
	return b.Bytes()
}

// num formats a number for a table; NaN is the empty string.
func num(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func intCell(n int) string { return strconv.Itoa(n) }

func boolCell(b bool) string { return strconv.FormatBool(b) }

// textCell neutralises spreadsheet formulas in free text (see Table.CSV).
func textCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// estimateCells is an estimate's value, interval and sample size as four cells; an
// interval that is not drawn is written empty.
func estimateCells(e Estimate) []string {
	lo, hi := math.NaN(), math.NaN()
	if e.hasInterval() {
		lo, hi = e.Lo, e.Hi
	}
	v := e.Value
	if !e.hasValue() {
		v = math.NaN()
	}
	return []string{num(v), num(lo), num(hi), intCell(e.N)}
}

func estimateColumns(name string) []string {
	return []string{name, name + "_lo", name + "_hi", name + "_n"}
}
