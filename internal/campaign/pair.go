package campaign

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/textdiff"
)

// CharSpec is the second representation the pair page scores every pair under (char
// 5-grams): an opinion that does not depend on the campaign's choice of words.
var CharSpec = lsh.Spec{Scheme: lsh.Classic, Norm: lsh.Norm{NFKC: true, Lower: true, CollapseSpace: true},
	Level: lsh.Char, Size: 5, Hashes: 1, Hash: lsh.XXHash, Seed: 1}

// RecentDecisions is how many of an annotator's last decisions the pair page lists.
const RecentDecisions = 10

// PairView is what one person sees of a pair on its labeling page. Labels are blind:
// annotators see their own labels and events only; reviewers and up see everyone's
// once they decided the pair themselves (or at once when their role does not label),
// and adjudicators always.
type PairView struct {
	Pair db.Pair
	Spec lsh.Spec // the campaign's representation

	Similarity  float64 // exact Jaccard under Spec (stored with the pair, or computed when it never was)
	Estimate    float64 // MinHash estimate under Spec
	CharJaccard float64 // exact Jaccard under CharSpec

	Previous int64          // the viewer's latest label-setting event (0 for none): a new decision names it
	Mine     *db.LabelEvent // the viewer's standing label; nil when none (or withdrawn)
	Flagged  bool

	ShowOthers bool            // the viewer sees other people's labels (see Viewer)
	Others     []db.LabelEvent // other annotators' standing labels, by name; empty unless ShowOthers
	History    []db.LabelEvent // the pair's events, oldest first: all of them when ShowOthers, else the viewer's own

	Recent   []db.LabelEvent // the viewer's last decisions in the campaign, newest first (withdrawn ones left out)
	PrevPair int64           // the pair the viewer decided before this one; 0 for none
}

// Viewer is who looks at a pair, with what their role allows.
type Viewer struct {
	Name       string
	Labels     bool // the role labels pairs: blind until it decided this one
	ReadLabels bool // the role reads everyone's labels (auth.ReadLabels); annotators do not
	Adjudicate bool // opened to adjudicate (the caller checked the role may)
}

// showsOthers is the blindness rule: whether viewer, whose standing label on the pair
// is mine (nil for none), sees other people's labels.
func (v Viewer) showsOthers(mine *db.LabelEvent) bool {
	return v.Adjudicate || (v.ReadLabels && (mine != nil || !v.Labels))
}

// View gathers what viewer sees of pair pairID of c. A pair of another campaign is
// db.ErrNotFound.
func View(ctx context.Context, store *db.DB, c db.Campaign, pairID int64, viewer Viewer) (PairView, error) {
	p, err := store.Pair(ctx, c.ID, pairID)
	if err != nil {
		return PairView{}, err
	}
	v := PairView{Pair: p, Spec: c.Spec, Similarity: p.Similarity.Float64, Estimate: p.Estimate.Float64}
	if !p.Similarity.Valid || !p.Estimate.Valid {
		h, err := lsh.NewHasher(c.Spec)
		if err != nil {
			return PairView{}, err
		}
		v.Similarity, v.Estimate = labels.Score(h, p.A.Text, p.B.Text)
	}
	hc, err := lsh.NewHasher(CharSpec)
	if err != nil {
		return PairView{}, err
	}
	v.CharJaccard = lsh.ExactJaccard(hc.ShingleSet(p.A.Text), hc.ShingleSet(p.B.Text))

	mine, err := store.LatestEvent(ctx, p.ID, viewer.Name)
	switch {
	case err == nil:
		v.Previous = mine.ID
		if mine.Kind != labels.KindRetract {
			v.Mine = &mine
		}
	case !errors.Is(err, db.ErrNotFound):
		return PairView{}, err
	}
	hist, err := store.PairHistory(ctx, p.ID)
	if err != nil {
		return PairView{}, err
	}
	v.ShowOthers = viewer.showsOthers(v.Mine)
	v.Flagged = flagged(hist)
	if v.ShowOthers {
		v.History = hist
		v.Others = standingOthers(hist, viewer.Name)
	} else {
		for _, e := range hist {
			if strings.EqualFold(e.Annotator, viewer.Name) {
				v.History = append(v.History, e)
			}
		}
	}
	recent, err := store.RecentDecisions(ctx, c.ID, viewer.Name, RecentDecisions)
	if err != nil {
		return PairView{}, err
	}
	v.Recent, v.PrevPair = recentAround(recent, p.ID)
	return v, nil
}

// flagged reports whether the pair's newest flag event is a flag.
func flagged(hist []db.LabelEvent) bool {
	f := false
	for _, e := range hist {
		switch e.Kind {
		case labels.KindFlag:
			f = true
		case labels.KindUnflag:
			f = false
		}
	}
	return f
}

// standingOthers returns the standing labels of annotators other than viewer, by name.
func standingOthers(hist []db.LabelEvent, viewer string) []db.LabelEvent {
	latest := map[string]db.LabelEvent{}
	for _, e := range hist {
		if e.Kind.SetsLabel() {
			latest[e.Annotator] = e
		}
	}
	var out []db.LabelEvent
	for name, e := range latest {
		if name != viewer && e.Kind != labels.KindRetract {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b db.LabelEvent) int { return strings.Compare(a.Annotator, b.Annotator) })
	return out
}

// recentAround drops withdrawn decisions from recent and finds the pair to go back to
// from pairID: the decision before it when pairID is among them, else the newest.
func recentAround(recent []db.LabelEvent, pairID int64) (kept []db.LabelEvent, prev int64) {
	for i, d := range recent {
		if d.Kind == labels.KindRetract {
			continue
		}
		kept = append(kept, d)
		if d.PairID == pairID && i+1 < len(recent) {
			prev = recent[i+1].PairID
		}
	}
	if prev == 0 && len(recent) > 0 && recent[0].PairID != pairID {
		prev = recent[0].PairID
	}
	return kept, prev
}

// SharedShingles splits both texts into runs of shingles the other text has and runs
// it lacks, at the campaign's shingle size for word shingles and 5 words for char
// shingles (shared letters would say nothing).
func (v PairView) SharedShingles() (left, right []textdiff.Span) {
	size := v.Spec.Size
	if v.Spec.Level != lsh.Word {
		size = 5
	}
	return textdiff.Shared(v.Pair.A.Text, v.Pair.B.Text, v.Spec.Norm, size)
}

// MaxNote is the longest note a decision may carry, in bytes (the message says 4,000).
const MaxNote = 4000

// Decision is what an annotator (or adjudicator) sends about a pair.
type Decision struct {
	Kind      labels.Kind // KindLabel, KindAdjudication, KindSkip, KindFlag or KindUnflag
	Category  string      // for a label: the category's key, name or 1-based number
	Duplicate string      // for a label: yes or no, or "" when the category settles it
	Note      string
	Previous  int64 // the event the person's page was built on (PairView.Previous)
}

// Record checks d against c's categories and appends it as by's event on the pair. A
// label made on a page that is out of date (the person's standing label changed since:
// another tab) is db.ErrStale; a pair of another campaign db.ErrNotFound; an
// adjudication by a party to the disagreement while someone else could settle it a
// *PartyError (see MayAdjudicate).
func Record(ctx context.Context, store *db.DB, c db.Campaign, pairID int64, by db.User, d Decision) error {
	l := db.NewLabel{Annotator: by.Name, UserID: by.ID, Kind: d.Kind, Note: strings.TrimSpace(d.Note)}
	switch d.Kind {
	case labels.KindSkip, labels.KindFlag, labels.KindUnflag:
		l.Category = string(d.Kind)
	case labels.KindLabel, labels.KindAdjudication:
		if d.Kind == labels.KindAdjudication {
			byParty, err := MayAdjudicate(ctx, store, c, pairID, by.Name)
			if err != nil {
				return err
			}
			l.ByParty = byParty
		}
		cat, ok := labels.Find(c.Categories, d.Category)
		if !ok {
			return invalid("choose a category (keys 1-%d)", len(c.Categories))
		}
		dup, err := labels.ResolveDuplicate(cat, d.Duplicate)
		if err != nil {
			return invalid("duplicate: %v: press y or n", err)
		}
		l.Category, l.Duplicate = cat.Key, dup
	default:
		return invalid("unknown action %q", d.Kind)
	}
	if len(l.Note) > MaxNote {
		return invalid("the note is longer than 4,000 characters")
	}
	_, err := store.RecordEvent(ctx, c.ID, pairID, l, d.Previous)
	return err
}

// Undo withdraws by's most recent decision in c (with a retract event, so the history
// keeps it) and returns it, to decide again; ok is false when there is nothing to undo.
// If the decision changed meanwhile (another tab), it is returned as it is.
func Undo(ctx context.Context, store *db.DB, c db.Campaign, by db.User) (undone db.LabelEvent, ok bool, err error) {
	recent, err := store.RecentDecisions(ctx, c.ID, by.Name, 1)
	if err != nil {
		return db.LabelEvent{}, false, err
	}
	if len(recent) == 0 || recent[0].Kind == labels.KindRetract {
		return db.LabelEvent{}, false, nil
	}
	last := recent[0]
	_, err = store.RecordEvent(ctx, c.ID, last.PairID, db.NewLabel{Annotator: by.Name, UserID: by.ID, Kind: labels.KindRetract,
		Category: last.Category, Duplicate: last.Duplicate, Note: "undo"}, last.ID)
	if err != nil && !errors.Is(err, db.ErrStale) {
		return db.LabelEvent{}, false, fmt.Errorf("undo in campaign %d: %w", c.ID, err)
	}
	return last, true, nil
}
