package review

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/errkind"
)

// State is where a manifest is in its life (see the package doc).
type State string

// States, with the words the store has used for them since the first schema.
const (
	Draft     State = "draft"
	InReview  State = "in_review"
	SignedOff State = "signed"
	Exported  State = "applied" // its approved removals are tombstones in the store
	Revoked   State = "reverted"
)

// ParseState returns the state stored as s.
func ParseState(s string) (State, error) {
	switch st := State(s); st {
	case Draft, InReview, SignedOff, Exported, Revoked:
		return st, nil
	}
	return "", fmt.Errorf("unknown manifest state %q", s)
}

// Label is the state as pages name it.
func (s State) Label() string {
	switch s {
	case InReview:
		return "in review"
	case SignedOff:
		return "signed off"
	case Exported:
		return "exported"
	case Revoked:
		return "revoked"
	}
	return string(s)
}

// Verdict is an approver's word on a whole manifest.
type Verdict string

// Verdicts.
const (
	Approve Verdict = "approve"
	Reject  Verdict = "reject" // changes requested: blocks sign-off until a change dismisses it
	Comment Verdict = "comment"
)

// ParseVerdict returns the verdict named s.
func ParseVerdict(s string) (Verdict, error) {
	switch v := Verdict(s); v {
	case Approve, Reject, Comment:
		return v, nil
	}
	return "", &InputError{Field: "verdict", Msg: "unknown verdict " + strconv.Quote(s) + " (want approve, reject or comment)"}
}

// Review is one approver's verdict, given against the manifest hash it names.
type Review struct {
	ID        int64
	UserID    int64
	Name      string
	Role      string // the reviewer's role when the verdict was given
	Verdict   Verdict
	Hash      string // the manifest content hash the verdict was given on
	Comment   string
	Cluster   int64 // a comment about one cluster; 0 for the whole manifest
	At        time.Time
	Dismissed bool // a later change to the manifest made it stale
}

// ErrSelfApproval refuses an approval (or rejection) by the person who prepared the
// manifest.
var ErrSelfApproval = errkind.New(errkind.Forbidden, "whoever prepared a manifest cannot approve or reject it: another approver signs it off")

// RefusedError is an action the manifest's state or review does not allow now; its text
// says why and what to do.
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }

func refused(format string, args ...any) error {
	return &RefusedError{Msg: fmt.Sprintf(format, args...)}
}

// CanChange says whether a manifest in state s can still change (a decision, a keeper, a
// cut, an undo): not once exported or revoked.
func CanChange(s State) error {
	switch s {
	case Exported:
		return refused("this manifest is exported: it no longer changes (revoke it, then prepare a new run)")
	case Revoked:
		return refused("this manifest is revoked: it no longer changes (prepare a new run)")
	}
	return nil
}

// CanRequestSignOff says whether a manifest in state s with undecided removals can go to
// review.
func CanRequestSignOff(s State, undecided int) error {
	if s != Draft {
		return refused("only a draft goes to review; this manifest is %s", s.Label())
	}
	if undecided > 0 {
		return refused("%s no decision yet: approve or exclude every removal first", Quantity(undecided, "removal has", "removals have"))
	}
	return nil
}

// CanReview says whether user may give verdict v on a manifest in state s prepared by
// preparer. Comments are welcome in review and after sign-off; approvals and rejections
// only in review, and never by the preparer.
func CanReview(s State, v Verdict, preparer, user int64) error {
	if v == Comment {
		if s == InReview || s == SignedOff || s == Draft {
			return nil
		}
		return refused("this manifest is %s: it takes no more comments", s.Label())
	}
	if user == preparer {
		return ErrSelfApproval
	}
	if s != InReview {
		return refused("approvals are given in review; this manifest is %s", s.Label())
	}
	return nil
}

// Tally is what the standing verdicts on a manifest add up to: each approver's latest
// approval or rejection that no change has dismissed, excluding the preparer's.
type Tally struct {
	Approvals  []Review
	Rejections []Review
}

// TallyOf tallies reviews (oldest first) of a manifest prepared by preparer.
func TallyOf(reviews []Review, preparer int64) Tally {
	latest := map[int64]Review{}
	var order []int64
	for _, r := range reviews {
		if r.Verdict == Comment || r.Dismissed || r.UserID == preparer {
			continue
		}
		if _, ok := latest[r.UserID]; !ok {
			order = append(order, r.UserID)
		}
		latest[r.UserID] = r
	}
	var t Tally
	for _, u := range order {
		switch r := latest[u]; r.Verdict {
		case Approve:
			t.Approvals = append(t.Approvals, r)
		case Reject:
			t.Rejections = append(t.Rejections, r)
		}
	}
	return t
}

// SignsOff reports whether the tally signs a manifest off: at least required approvals,
// no standing rejection, and no removal without a decision. Separation of duties is
// Apart's.
func (t Tally) SignsOff(required, undecided int) bool {
	return len(t.Approvals) >= required && len(t.Rejections) == 0 && undecided == 0
}

// Apart reports whether at least one approval comes from someone who made none of the
// manifest's review decisions (deciders, by user id): whoever decided may approve, but
// must not be the only approver.
func (t Tally) Apart(deciders map[int64]bool) bool {
	for _, a := range t.Approvals {
		if !deciders[a.UserID] {
			return true
		}
	}
	return false
}

// CheckBulkBar says whether bar is a bar for approving low-risk clusters in bulk on a
// manifest of threshold t: a similarity in (0, 1], and not under t. Every removal passed
// t to be proposed, so a bar under it selects every cluster that is not chained, which is
// approving without reading, not a bar.
func CheckBulkBar(bar, t float64) error {
	switch {
	case math.IsNaN(bar) || bar <= 0 || bar > 1:
		return &InputError{Field: "bar", Msg: "want a similarity in (0, 1], e.g. 0.95"}
	case bar < t:
		return &InputError{Field: "bar", Msg: fmt.Sprintf("%g is under the manifest's threshold %.2f, which every removal passed already: "+
			"it would approve every cluster that is not chained; choose a bar from %.2f to 1 (0.95 is usual)", bar, t, t)}
	}
	return nil
}

// CanExport says whether a manifest in state s can be exported.
func CanExport(s State) error {
	switch s {
	case SignedOff:
		return nil
	case Exported:
		return refused("this manifest is exported already")
	}
	return refused("only a signed-off manifest is exported; this one is %s", s.Label())
}

// CanRevoke says whether a manifest in state s can be revoked.
func CanRevoke(s State) error {
	if s == SignedOff || s == Exported {
		return nil
	}
	return refused("only a signed-off or exported manifest is revoked; this one is %s", s.Label())
}

// StaleError refuses an export whose manifest or dataset no longer hashes to what was
// signed off: the plan changed since it was approved.
type StaleError struct {
	What    string // "manifest" or "dataset"
	Signed  string // the hash the sign-off bound (or the run computed on)
	Current string // the hash recomputed now
	// AtSignOff is set when the dataset changed between the run and the sign-off: the
	// approval is refused, since it would sign a plan computed on another dataset.
	AtSignOff bool
}

func (e *StaleError) Error() string {
	if e.AtSignOff {
		return fmt.Sprintf("the dataset changed since the run (snapshot %s then, %s now; another manifest's export or a restore): nothing was signed off; prepare a new run", Short(e.Signed), Short(e.Current))
	}
	if e.What == "dataset" {
		return fmt.Sprintf("the dataset changed since the sign-off (snapshot %s signed, %s now): nothing was exported; prepare a new run", Short(e.Signed), Short(e.Current))
	}
	return fmt.Sprintf("the manifest changed since the sign-off (content hash %s signed, %s now): nothing was exported; review it and sign it off again", Short(e.Signed), Short(e.Current))
}
