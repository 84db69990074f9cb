package campaign

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// Adjudication. A pair whose standing labels differ waits for an adjudicator, who sets
// its final label. The queue puts the pairs that are most in dispute first: the most
// distinct answers (category and duplicate decision), then the nearest the campaign's
// threshold, where a wrong label moves the estimates most. Nobody settles a
// disagreement they are a party to (they labeled the pair) while another adjudicator
// could; when none could, they may, and the audit log records it.

// Disagreement is a pair whose annotators' standing labels differ, with no adjudication.
type Disagreement struct {
	PairID     int64
	Similarity float64 // exact Jaccard; NaN when not scored
	Answers    int     // distinct (category, duplicate) answers among the labels
	Distance   float64 // from the campaign's threshold; +Inf when not scored
	Labels     []db.ContestedLabel
}

// Parties lists the annotators whose labels are in dispute.
func (d Disagreement) Parties() []string {
	out := make([]string, len(d.Labels))
	for i, l := range d.Labels {
		out[i] = l.Annotator
	}
	return out
}

// Disagreements returns c's adjudication queue: pairs whose standing labels differ, most
// distinct answers first, then nearest the threshold, then by pair id.
func Disagreements(ctx context.Context, store *db.DB, c db.Campaign) ([]Disagreement, error) {
	contested, err := store.ContestedLabels(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	var out []Disagreement
	for i := 0; i < len(contested); {
		j := i
		for j < len(contested) && contested[j].PairID == contested[i].PairID {
			j++
		}
		if d, ok := disagreement(contested[i:j], c.Threshold); ok {
			out = append(out, d)
		}
		i = j
	}
	RankDisagreements(out)
	return out, nil
}

// disagreement reads one pair's standing labels; ok is false when they agree.
func disagreement(ls []db.ContestedLabel, threshold float64) (Disagreement, bool) {
	type answer struct {
		cat string
		dup bool
	}
	answers := map[answer]bool{}
	for _, l := range ls {
		answers[answer{l.Category, l.Duplicate}] = true
	}
	if len(answers) < 2 {
		return Disagreement{}, false
	}
	d := Disagreement{PairID: ls[0].PairID, Similarity: math.NaN(), Answers: len(answers), Distance: math.Inf(1), Labels: ls}
	if s := ls[0].Similarity; s.Valid {
		d.Similarity, d.Distance = s.Float64, math.Abs(s.Float64-threshold)
	}
	return d, true
}

// RankDisagreements sorts an adjudication queue: most distinct answers first, then
// nearest the threshold, then by pair id.
func RankDisagreements(ds []Disagreement) {
	slices.SortStableFunc(ds, func(a, b Disagreement) int {
		return cmp.Or(cmp.Compare(b.Answers, a.Answers), cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.PairID, b.PairID))
	})
}

// PartyError refuses an adjudication by a party to the disagreement while others could
// settle it.
type PartyError struct {
	PairID int64
	Others []string // the adjudicators who are no party to it
}

func (e *PartyError) Error() string {
	return fmt.Sprintf("you labeled pair %d yourself, so another adjudicator settles it: %s", e.PairID, orList(e.Others))
}

// orList joins names as "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// adjudicators lists the enabled accounts whose role adjudicates, by name.
func adjudicators(ctx context.Context, store *db.DB) ([]string, error) {
	users, err := store.Users(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range users {
		if !u.Disabled && u.Role.Can(auth.Adjudicate) {
			out = append(out, u.Name)
		}
	}
	return out, nil
}

// mayAdjudicate decides whether by may settle a pair whose labels are by parties:
// byParty says by is one of them, and err is a *PartyError when others could settle it.
func mayAdjudicate(by string, pairID int64, parties, adjudicators []string) (byParty bool, err error) {
	if !containsFold(parties, by) {
		return false, nil
	}
	var others []string
	for _, a := range adjudicators {
		if !containsFold(parties, a) {
			others = append(others, a)
		}
	}
	if len(others) > 0 {
		return true, &PartyError{PairID: pairID, Others: others}
	}
	return true, nil
}

// containsFold reports whether names holds name; account names compare without case.
func containsFold(names []string, name string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, name) })
}

// MayAdjudicate reports whether by may adjudicate pair pairID of c: byParty says by
// has a standing label on it, and the error is a *PartyError when another adjudicator
// (no party to it) could settle it instead. The caller checked by's role adjudicates.
func MayAdjudicate(ctx context.Context, store *db.DB, c db.Campaign, pairID int64, by string) (byParty bool, err error) {
	hist, err := store.PairHistory(ctx, pairID)
	if err != nil {
		return false, err
	}
	parties := labelers(hist)
	if !containsFold(parties, by) {
		return false, nil
	}
	adj, err := adjudicators(ctx, store)
	if err != nil {
		return false, err
	}
	return mayAdjudicate(by, pairID, parties, adj)
}

// labelers lists the annotators with a standing label (not an adjudication) in a
// pair's history.
func labelers(hist []db.LabelEvent) []string {
	var out []string
	for _, e := range standingOthers(hist, "") {
		if e.Kind == labels.KindLabel {
			out = append(out, e.Annotator)
		}
	}
	return out
}

// NextDisagreement returns the first pair of c's adjudication queue, other than after,
// that by may settle (see MayAdjudicate); ok is false when there is none.
func NextDisagreement(ctx context.Context, store *db.DB, c db.Campaign, by string, after int64) (pairID int64, ok bool, err error) {
	ds, err := Disagreements(ctx, store, c)
	if err != nil {
		return 0, false, err
	}
	adj, err := adjudicators(ctx, store)
	if err != nil {
		return 0, false, err
	}
	for _, d := range ds {
		if d.PairID == after {
			continue
		}
		if _, err := mayAdjudicate(by, d.PairID, d.Parties(), adj); err == nil {
			return d.PairID, true, nil
		}
	}
	return 0, false, nil
}
