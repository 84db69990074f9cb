package calib

import "testing"

func TestPerRuleGivesACommonValueOnce(t *testing.T) {
	t.Parallel()
	id := func(s string) string { return s }
	for _, tc := range []struct {
		rows []string
		want string
	}{
		{[]string{"12"}, "12"},
		{[]string{"12", "12", "12"}, "12"},
		{[]string{"12", "13", "12"}, "12 / 13 / 12"},
	} {
		if got := perRule(tc.rows, id); got != tc.want {
			t.Errorf("perRule(%q) = %q; want %q", tc.rows, got, tc.want)
		}
	}
}
