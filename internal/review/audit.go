package review

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/audit"
	"github.com/dedupstudio/dedupstudio/internal/words"
)

// # The manifest's own audit
//
// Before sign-off, someone who may prepare or approve manifests requests an audit: the
// studio draws a simple random sample of the manifest's uncertain removals (removed,
// keeper) pairs, those whose normalized texts differ (package audit), and queues them
// first for labeling in the manifest's campaign. People label them blind; the labels of
// the manifest's author, and of whoever decided that very removal, do not count (their
// verdict on the pair is the decision under audit, not a check of it), nor do imported
// or rule labels (nobody can say who made them, or when). A pair counts with its label
// under the campaign's label rule (an adjudication, else the majority) over the labels
// that count. The audit's bound is exact and design-based: it assumes the labels are
// right and that the pairs labeled so far are a random part of those drawn (the queue
// serves them in a random order), nothing about similarity bins.
//
// The bound speaks for the removals the audit was drawn from (its frame). A removal
// excluded since leaves it valid (fewer removals, at most as many mistakes); a mistake
// the labels found and a reviewer then excluded lowers it by one. A removal outside the
// frame (a keeper changed, a chain cut) is not covered: the audit no longer bounds the
// manifest, and a new request replaces it. A request while the audit still covers the
// manifest tops it up: more pairs from the same frame, so the pairs drawn so far and
// the new ones together are still one simple random sample.

// AuditGate is the team's rule on audits: when Target is set, the approval that would
// sign a manifest off counts only when the manifest's audit bounds its mistakes at or
// under Target percent of its removals.
type AuditGate struct {
	// Target is the largest upper end allowed, in percent of the removals; 0: no rule.
	Target float64   `json:"target_percent"`
	By     string    `json:"set_by,omitempty"`
	At     time.Time `json:"set_at,omitzero"`
}

// On reports whether the rule is set.
func (g AuditGate) On() bool { return g.Target > 0 }

// Text is the rule in words.
func (g AuditGate) Text() string {
	if !g.On() {
		return "no audit is required before sign-off"
	}
	s := "the last approval counts only when the manifest's audit bounds its mistakes at or under " + Percent(g.Target/100) + " of its removals"
	if g.By != "" {
		s += " (set by " + g.By + " on " + g.At.UTC().Format("2006-01-02 15:04 UTC") + ")"
	}
	return s
}

// MaxAuditGate is the largest target the rule takes, in percent.
const MaxAuditGate = 50.0

// ParseAuditGate reads a target in percent ("" or "0": no rule).
func ParseAuditGate(s string) (float64, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > MaxAuditGate {
		return 0, &InputError{Field: "target", Msg: fmt.Sprintf("%q is not a percentage from 0 (no rule) to %g", s, MaxAuditGate)}
	}
	return v, nil
}

// AuditCounts is what a manifest's audit stands on: the frame it was drawn from, the
// pairs drawn and what their labels say, and the manifest's removals now.
type AuditCounts struct {
	ID          int64     `json:"id"`
	Design      string    `json:"design"`
	Campaign    int64     `json:"campaign"`
	RequestedBy string    `json:"requested_by"`
	RequestedAt time.Time `json:"requested_at"`
	Seeds       []uint64  `json:"seeds"` // one per draw: the request, then each top-up
	// FrameRemovals and FrameCertain are the removals and the certain ones (identical
	// normalized texts) when the audit was drawn.
	FrameRemovals int `json:"frame_removals"`
	FrameCertain  int `json:"frame_certain"`
	// Drawn pairs; of those, Labeled count with a label, Mistakes of them are not
	// duplicates; Tied have labels that tie (an adjudication settles them).
	Drawn    int `json:"drawn"`
	Labeled  int `json:"labeled"`
	Mistakes int `json:"mistakes"`
	Tied     int `json:"tied"`
	// Removals and Certain are the manifest's now; Uncovered counts its uncertain
	// removals outside the frame; MistakesGone the mistakes found among pairs that are
	// no longer removals (excluded since).
	Removals     int `json:"removals"`
	Certain      int `json:"certain"`
	Uncovered    int `json:"uncovered"`
	MistakesGone int `json:"mistakes_gone"`
}

// Audit is a manifest's audit with its bound: AuditCounts and what they bound.
type Audit struct {
	AuditCounts
	// Upper bounds, at Level, the documents the manifest removes now by mistake;
	// UpperRate is Upper per removal. Point is the point estimate (NaN before any
	// label). Covers is false when the manifest has removals outside the frame: the
	// bound then does not speak for it.
	Upper     int     `json:"upper"`
	UpperRate Number  `json:"upper_rate"`
	Point     Number  `json:"point"`
	Covers    bool    `json:"covers"`
	Level     float64 `json:"level"`
}

// AuditAssumption is what the audit's bound assumes, for pages and the record.
const AuditAssumption = "Design-based: the bound assumes the labels that count are right and that the drawn pairs labeled so far " +
	"are a random part of those drawn (the queue serves them in a random order); it assumes nothing about similarity bins."

// AuditOf bounds a manifest's mistakes from its audit's counts: the exact one-sided
// hypergeometric bound on the mistakes among the frame's uncertain removals
// (audit.Estimate), less the mistakes excluded since, and at most the uncertain removals
// the manifest has now.
func AuditOf(c AuditCounts) (Audit, error) {
	r, err := audit.Estimate(c.FrameRemovals, c.FrameCertain, c.Labeled, c.Mistakes)
	if err != nil {
		return Audit{}, err
	}
	a := Audit{AuditCounts: c, Covers: c.Uncovered == 0, Level: audit.Level, Point: Number(r.Point)}
	a.Upper = min(int(r.Upper)-c.MistakesGone, max(c.Removals-c.Certain, 0))
	a.Upper = max(a.Upper, 0)
	if c.Removals > 0 {
		a.UpperRate = Number(float64(a.Upper) / float64(c.Removals))
	}
	return a, nil
}

// Percent writes a rate as a percentage with two significant digits (whole numbers
// from 10%): 0.46%, 1%, 1.5%, 67%.
func Percent(rate float64) string {
	p := 100 * rate
	switch {
	case math.IsNaN(p):
		return "–"
	case p == 0 || math.Abs(p) >= 10:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	}
	digits := max(0, 1-int(math.Floor(math.Log10(math.Abs(p)))))
	s := strconv.FormatFloat(p, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + "%"
}

// Text is the audit's figure in one sentence: "120 of 300 labeled, 0 mistakes: at most 9
// documents removed by mistake (95%), 0.46% of 1,942 removals; 611 removals are
// identical texts".
func (a Audit) Text() string {
	if !a.Covers {
		are := "are"
		if a.Uncovered == 1 {
			are = "is"
		}
		return fmt.Sprintf("%s of %s labeled, %s, but %s %s outside the audit (the manifest changed since it was drawn): "+
			"it no longer bounds this manifest; request a new audit", Thousands(a.Labeled), Thousands(a.Drawn), Quantity(a.Mistakes, "mistake", "mistakes"),
			Quantity(a.Uncovered, "removal", "removals"), are)
	}
	if a.Removals == a.Certain {
		return fmt.Sprintf("all %s removals are identical texts: none is a mistake", Thousands(a.Removals))
	}
	identical := Quantity(a.Certain, "removal is an identical text", "removals are identical texts")
	s := fmt.Sprintf("%s of %s labeled, %s: at most %s removed by mistake (%.0f%%), %s of %s; %s",
		Thousands(a.Labeled), Thousands(a.Drawn), Quantity(a.Mistakes, "mistake", "mistakes"), documents(a.Upper), 100*a.Level,
		Percent(float64(a.UpperRate)), Quantity(a.Removals, "removal", "removals"), identical)
	if a.Tied > 0 {
		wait := "wait"
		if a.Tied == 1 {
			wait = "waits"
		}
		s += fmt.Sprintf("; %s labeled both ways %s for one more label or an adjudication", Quantity(a.Tied, "pair", "pairs"), wait)
	}
	if a.MistakesGone > 0 {
		are := "are"
		if a.MistakesGone == 1 {
			are = "is"
		}
		s += fmt.Sprintf("; %s it found %s excluded since", Quantity(a.MistakesGone, "mistake", "mistakes"), are)
	}
	return s
}

// Thousands writes a whole number with thousands separators: 1,942 (words.Thousands).
func Thousands(n int) string { return words.Thousands(n) }

// Short is the figure in a few words, for the manifest list: "audit 120/300, ≤ 0.46%".
func (a Audit) Short() string {
	if !a.Covers {
		return fmt.Sprintf("audit %s/%s, outdated", Thousands(a.Labeled), Thousands(a.Drawn))
	}
	return fmt.Sprintf("audit %s/%s, ≤ %s", Thousands(a.Labeled), Thousands(a.Drawn), Percent(float64(a.UpperRate)))
}

// CanRequestAudit says whether a manifest in state s can be audited: before sign-off.
func CanRequestAudit(s State) error {
	if s == Draft || s == InReview {
		return nil
	}
	return refused("an audit is requested before sign-off; this manifest is %s", s.Label())
}

// CheckAuditGate says whether the approval that would sign a manifest off counts under
// the team's rule g, given the manifest's audit (nil for none).
func CheckAuditGate(g AuditGate, a *Audit) error {
	if !g.On() {
		return nil
	}
	target := Percent(g.Target / 100)
	switch {
	case a == nil:
		return refused("the team requires an audit whose upper end is at or under %s of the removals before the last approval counts; "+
			"this manifest has none: request an audit, and approve once its labels bound the mistakes", target)
	case !a.Covers:
		return refused("the team requires an audit whose upper end is at or under %s of the removals before the last approval counts; "+
			"this manifest changed since its audit was drawn (%s outside it): request a new audit", target, Quantity(a.Uncovered, "removal", "removals"))
	case float64(a.UpperRate)*100 > g.Target+1e-9:
		return refused("the team requires the audit's upper end at or under %s of the removals before the last approval counts; "+
			"it is %s now (at most %s of %s removals by mistake, %s of %s drawn pairs labeled): label more of the audit, or top it up",
			target, Percent(float64(a.UpperRate)), Thousands(a.Upper), Thousands(a.Removals), Thousands(a.Labeled), Thousands(a.Drawn))
	}
	return nil
}

// WouldSignOff reports whether an approval by user (who may approve) would sign a
// manifest off now: the tally with it added signs off and holds an approver who made
// none of the review decisions. Pages use it to say what the approval button will do.
func WouldSignOff(reviews []Review, preparer, user int64, required, undecided int, deciders map[int64]bool) bool {
	with := append(append([]Review{}, reviews...), Review{UserID: user, Verdict: Approve})
	t := TallyOf(with, preparer)
	return t.SignsOff(required, undecided) && t.Apart(deciders)
}
