package review

// Standing is where a manifest's approvals stand, for the person looking at it: who
// approved, who asked for changes, who may still approve, how many more approvals are
// needed, and what the viewer's own approval would do. Pages build the approval panel
// from it so that a button never offers what the rules will not count.
type Standing struct {
	Approved []Review // standing approvals, oldest first
	Rejected []Review // standing requests for changes
	// Needed is how many more approvals sign the manifest off in number (0 when enough);
	// NeedApart that they are enough but all come from people who made its review
	// decisions, so one from someone who made none is still needed.
	Needed    int
	NeedApart bool
	// MayStill are the approvers who may still give an approval that counts: enabled
	// accounts that approve, not the preparer, without a standing approval.
	MayStill []Approver
	// Apart are those of MayStill who made none of the review decisions.
	Apart []Approver
	// The viewer: a standing approval or request for changes of theirs; whether an
	// approval of theirs would count now (YouMay) and would sign the manifest off
	// (YouSignOff); YouPrepared when they prepared it (their approval never counts).
	YouApproved, YouRejected bool
	YouMay, YouSignOff       bool
	YouPrepared              bool
	apartSoFar               bool // a standing approval comes from someone who made no decision
}

// Approver is an account that may approve, as the approval rules see it.
type Approver struct {
	ID   int64
	Name string
}

// StandingOf computes the standing of a manifest in state s prepared by preparer, with
// its reviews (oldest first), the approvals it requires, its undecided removals and
// deciders (by user id), for viewer me among approvers (the enabled accounts that
// approve).
func StandingOf(s State, reviews []Review, preparer int64, required, undecided int, deciders map[int64]bool, approvers []Approver, me int64) Standing {
	t := TallyOf(reviews, preparer)
	st := Standing{Approved: t.Approvals, Rejected: t.Rejections, YouPrepared: me == preparer}
	approved := map[int64]bool{}
	for _, a := range t.Approvals {
		approved[a.UserID] = true
		if a.UserID == me {
			st.YouApproved = true
		}
	}
	for _, r := range t.Rejections {
		if r.UserID == me {
			st.YouRejected = true
		}
	}
	st.Needed = max(0, required-len(t.Approvals))
	st.apartSoFar = t.Apart(deciders)
	st.NeedApart = st.Needed == 0 && len(t.Approvals) > 0 && !st.apartSoFar
	isApprover := false
	for _, p := range approvers {
		if p.ID == me {
			isApprover = true
		}
		if p.ID == preparer || approved[p.ID] {
			continue
		}
		st.MayStill = append(st.MayStill, p)
		if !deciders[p.ID] {
			st.Apart = append(st.Apart, p)
		}
	}
	if s != InReview || !isApprover || me == preparer || st.YouApproved {
		return st
	}
	st.YouMay = true
	// With the viewer's approval (replacing a request for changes of theirs).
	with := Tally{Approvals: append(append([]Review(nil), t.Approvals...), Review{UserID: me, Verdict: Approve})}
	for _, r := range t.Rejections {
		if r.UserID != me {
			with.Rejections = append(with.Rejections, r)
		}
	}
	st.YouSignOff = with.SignsOff(required, undecided) && with.Apart(deciders)
	return st
}

// Blocked reports whether nobody who may still approve can give what the manifest
// waits for: fewer such approvers than approvals needed, or, when no standing approval
// comes from someone who made no review decision, nobody such left to give one. A team
// whose only approver prepared the manifest is the usual case.
func (st Standing) Blocked() bool {
	return st.Needed > len(st.MayStill) || !st.apartSoFar && len(st.Apart) == 0
}
