package web

import (
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// goneLabels says, for a sweep's page, what became of the counted pairs that name a
// document no longer live (an export removed it before the sweep started): "" when
// none. m is the sweep's model (nil without one, or before its run built it).
func goneLabels(l sweeprun.LabelCounts, m *sweep.Model, running bool) string {
	if l.Gone == 0 {
		return ""
	}
	s := fmt.Sprintf("%d of the %d counted pairs name a document an export has removed: they still count for their bins' "+
		"shares of non-duplicates (the estimates over the dataset), not in the labeled-pairs figures, which count pairs of live documents only.",
		l.Gone, l.Counted)
	switch {
	case m == nil && running:
	case m == nil:
		s += " This sweep has no estimates over the dataset, so they count nowhere."
	case m.GoneUnused > 0:
		s += fmt.Sprintf(" %d of them record no draw the estimates can use, so they count nowhere.", m.GoneUnused)
	}
	return s
}

// leftOutLabels is the "left out" line of a sweep's label counts: the pairs that do not
// count, and why.
func leftOutLabels(l sweeprun.LabelCounts) string {
	s := fmt.Sprintf("%d flagged, %d skipped, %d tied, %d unlabeled", l.Flagged, l.Skipped, l.Tied, l.Unlabeled)
	if l.Outside > 0 {
		s += fmt.Sprintf(", %d naming a document the dataset does not hold", l.Outside)
	}
	return s
}
