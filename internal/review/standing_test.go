package review

import (
	"slices"
	"testing"
)

func names(ps []Approver) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// The approval panel's facts, per person: who approved and who may still, what the
// viewer's approval would do, and when nobody left can give what is missing.
func TestStandingOf(t *testing.T) {
	t.Parallel()
	const prep, bob, carol, dave = 1, 2, 3, 4
	team := []Approver{{prep, "ann"}, {bob, "bob"}, {carol, "carol"}, {dave, "dave"}}
	approve := func(u int64) Review { return Review{UserID: u, Verdict: Approve} }
	reject := func(u int64) Review { return Review{UserID: u, Verdict: Reject} }
	tests := []struct {
		name                       string
		state                      State
		reviews                    []Review
		required                   int
		deciders                   map[int64]bool
		approvers                  []Approver
		me                         int64
		needed                     int
		mayStill                   []string
		youApproved, youMay, youSO bool
		blocked                    bool
	}{
		{"first of two", InReview, nil, 2, nil, team, bob, 2, []string{"bob", "carol", "dave"}, false, true, false, false},
		{"second of two signs off", InReview, []Review{approve(bob)}, 2, nil, team, carol, 1, []string{"carol", "dave"}, false, true, true, false},
		// Issue 27: an approver who approved is not offered the approval again.
		{"approved already", InReview, []Review{approve(bob)}, 2, nil, team, bob, 1, []string{"carol", "dave"}, true, false, false, false},
		{"the preparer's never counts", InReview, nil, 1, nil, team, prep, 1, []string{"bob", "carol", "dave"}, false, false, false, false},
		{"a rejection of one's own is replaced", InReview, []Review{approve(carol), reject(bob)}, 2, nil, team, bob, 1, []string{"bob", "dave"}, false, true, true, false},
		{"another's rejection stands", InReview, []Review{approve(carol), reject(dave)}, 2, nil, team, bob, 1, []string{"bob", "dave"}, false, true, false, false},
		{"a decider does not sign off alone", InReview, nil, 1, map[int64]bool{bob: true}, team, bob, 1, []string{"bob", "carol", "dave"}, false, true, false, false},
		// Issue 27: a team of one, who prepared it.
		{"team of one", InReview, nil, 1, nil, []Approver{{prep, "ann"}}, prep, 1, nil, false, false, false, true},
		{"two approvers, both needed, one prepared", InReview, nil, 2, nil, []Approver{{prep, "ann"}, {bob, "bob"}}, bob, 2, []string{"bob"}, false, true, false, true},
		{"only deciders left", InReview, nil, 1, map[int64]bool{bob: true}, []Approver{{prep, "ann"}, {bob, "bob"}}, bob, 1, []string{"bob"}, false, true, false, true},
		{"a draft is approved later", Draft, nil, 1, nil, team, bob, 1, []string{"bob", "carol", "dave"}, false, false, false, false},
		{"not an approver", InReview, nil, 1, nil, []Approver{{bob, "bob"}}, carol, 1, []string{"bob"}, false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := StandingOf(tt.state, tt.reviews, prep, tt.required, 0, tt.deciders, tt.approvers, tt.me)
			if st.Needed != tt.needed || !slices.Equal(names(st.MayStill), tt.mayStill) || st.YouApproved != tt.youApproved || st.YouMay != tt.youMay ||
				st.YouSignOff != tt.youSO || st.Blocked() != tt.blocked || st.YouPrepared != (tt.me == prep) {
				t.Errorf("StandingOf = needed %d, may still %v, you approved %v, may %v, sign off %v, blocked %v; want %d, %v, %v, %v, %v, %v",
					st.Needed, names(st.MayStill), st.YouApproved, st.YouMay, st.YouSignOff, st.Blocked(), tt.needed, tt.mayStill, tt.youApproved, tt.youMay, tt.youSO, tt.blocked)
			}
		})
	}
}
