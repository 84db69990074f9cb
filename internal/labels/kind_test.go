package labels

import "testing"

func TestKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in        string
		sets, bad bool
	}{
		{"label", true, false},
		{"adjudication", true, false},
		{"retract", true, false},
		{"skip", false, false},
		{"flag", false, false},
		{"unflag", false, false},
		{"Label", false, true},
		{"", false, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			k, err := ParseKind(tc.in)
			if (err != nil) != tc.bad {
				t.Fatalf("ParseKind(%q) error = %v; want error %v", tc.in, err, tc.bad)
			}
			if err == nil && (string(k) != tc.in || k.SetsLabel() != tc.sets) {
				t.Errorf("ParseKind(%q) = %q, SetsLabel %v; want %q, %v", tc.in, k, k.SetsLabel(), tc.in, tc.sets)
			}
		})
	}
}
