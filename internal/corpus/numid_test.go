package corpus

import (
	"errors"
	"io"
	"math/big"
	"regexp"
	"strings"
	"testing"
)

// plainNumber is what NumberID reads: JSON's number syntax, leading zeros allowed.
var plainNumber = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func TestNumberID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want, err string }{
		{"2", "2", ""},
		{"2.0", "2", ""},
		{"2e0", "2", ""},
		{"20e-1", "2", ""},
		{"0.2e1", "2", ""},
		{"1e3", "1000", ""},
		{"1E+3", "1000", ""},
		{"-0", "0", ""},
		{"-0.0e-7", "0", ""},
		{"0", "0", ""},
		{"-17", "-17", ""},
		{"-1.70e1", "-17", ""},
		{"12345678901234567890", "12345678901234567890", ""},
		{"123456789012345678901234567890.000", "123456789012345678901234567890", ""},
		{"007", "7", ""}, // not JSON, but the value is plain
		{"2.5", "", "not a whole number"},
		{"1e-3", "", "not a whole number"},
		{"0.5", "", "not a whole number"},
		{"1e99999999", "", "too large or too small"},
		{"1e2000", "", "more than 1024 digits"},
		{"1e", "", "not a number"},
		{"1.", "", "not a number"},
		{"abc", "", "not a number"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := NumberID(tc.raw)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("NumberID(%q) = %q, %v; want an error saying %q", tc.raw, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("NumberID(%q) = %q, %v; want %q", tc.raw, got, err, tc.want)
			}
		})
	}
}

// TestNumericIDsFromFile reads real documents whose ids are written as JSON numbers in
// several forms (testdata/numeric-ids.jsonl, shared with internal/ingest) and one with
// fractions (fraction-ids.jsonl).
func TestNumericIDsFromFile(t *testing.T) {
	t.Parallel()
	read := func(name string) (ids, errs []string) {
		r, err := OpenFile("../ingest/testdata/"+name, "", Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				return ids, errs
			}
			var re *RecordError
			if errors.As(err, &re) {
				errs = append(errs, re.Error())
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, rec.ID)
		}
	}
	ids, errs := read("numeric-ids.jsonl")
	if got, want := strings.Join(ids, " "), "1 2 1000 007 12345678901234567890 0"; got != want || len(errs) != 0 {
		t.Errorf("numeric-ids.jsonl: ids %q, errors %q; want %q and none", got, errs, want)
	}
	ids, errs = read("fraction-ids.jsonl")
	if got := strings.Join(ids, " "); got != "1 2" {
		t.Errorf("fraction-ids.jsonl: ids %q; want 1 2 (20e-1 is 2)", got)
	}
	if len(errs) != 2 || !strings.HasPrefix(errs[0], "fraction-ids.jsonl:2: field id: the number 2.5 is not a whole number") ||
		!strings.HasPrefix(errs[1], "fraction-ids.jsonl:3: field id: the number 1e-3 is not a whole number") {
		t.Errorf("fraction-ids.jsonl: errors %q", errs)
	}
}

// FuzzNumberID checks NumberID against math/big on any input: a whole number gives its
// integer's decimal form (which NumberID gives back unchanged), anything else an error.
//
//	go test ./internal/corpus -run '^$' -fuzz FuzzNumberID -fuzztime 30s
func FuzzNumberID(f *testing.F) {
	for _, s := range []string{"2", "2.0", "20e-1", "-0", "1e3", "2.5", "1e-3", "12345678901234567890", "0.0e9", "1e", "-", "01.50e1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := NumberID(s)
		if err != nil {
			return // refusals are checked by TestNumberID; here, what is accepted
		}
		if !plainNumber.MatchString(s) {
			t.Fatalf("NumberID(%q) = %q; want an error for a non-number", s, got)
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok || !r.IsInt() || r.Num().String() != got {
			t.Fatalf("NumberID(%q) = %q; math/big reads %v", s, got, r)
		}
		if again, err := NumberID(got); err != nil || again != got {
			t.Fatalf("NumberID(%q) = %q, %v; want it unchanged", got, again, err)
		}
	})
}
