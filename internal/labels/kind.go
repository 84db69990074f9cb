package labels

import "fmt"

// Kind is what a label event records. Events are appended and never changed: an
// annotator's standing label on a pair is the newest of their events whose kind
// SetsLabel, unless that one is a retraction.
type Kind string

// Kinds of label events.
const (
	KindLabel        Kind = "label"        // a category and a duplicate decision
	KindAdjudication Kind = "adjudication" // the final word on a pair, by an adjudicator
	KindRetract      Kind = "retract"      // withdraws the annotator's standing label (undo)
	KindSkip         Kind = "skip"         // not now: the pair goes to the back of the queue
	KindFlag         Kind = "flag"         // marks the pair for a discussion
	KindUnflag       Kind = "unflag"       // lifts the flag
)

// Kinds lists every kind.
var Kinds = []Kind{KindLabel, KindAdjudication, KindRetract, KindSkip, KindFlag, KindUnflag}

// ParseKind reads a kind's name.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown label event kind %q", s)
}

// SetsLabel reports whether an event of kind k replaces the annotator's standing label
// on the pair (labels, adjudications and retractions do; skips and flags leave it be).
func (k Kind) SetsLabel() bool {
	return k == KindLabel || k == KindAdjudication || k == KindRetract
}
