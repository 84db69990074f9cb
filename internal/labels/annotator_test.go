package labels

import (
	"errors"
	"testing"
)

func TestCheckAccountName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		reserved bool
	}{
		{"alice", false},
		{"demo", false},
		{"importer", false},
		{"demo-rules", true},
		{"Demo-Rules", true},
		{" demo-rules ", true},
		{"import:alice", true},
		{"IMPORT:alice", true},
		{"import:", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckAccountName(tc.name)
			if got := errors.Is(err, ErrReservedName); got != tc.reserved {
				t.Errorf("CheckAccountName(%q) = %v; want reserved %v", tc.name, err, tc.reserved)
			}
		})
	}
}

func TestImportedAnnotator(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ source, want string }{
		{"alice", "import:alice"},
		{"demo-rules", "import:demo-rules"},
		{"import:alice", "import:alice"}, // exported from here and imported again
		{"Import:bob", "Import:bob"},
	} {
		t.Run(tc.source, func(t *testing.T) {
			got := ImportedAnnotator(tc.source)
			if got != tc.want {
				t.Errorf("ImportedAnnotator(%q) = %q; want %q", tc.source, got, tc.want)
			}
			if CheckAccountName(got) == nil {
				t.Errorf("CheckAccountName(%q) = nil: an account could take an imported label's name", got)
			}
		})
	}
}
