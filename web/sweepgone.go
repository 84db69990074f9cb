package web

import (
	"fmt"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// goneLabels says, for a sweep's page, what became of the counted pairs that name a
// document no longer live (an export removed it before the sweep started): "" when
// none. m is the sweep's model (nil without one, or before its run built it). It is the
// one place the card says it: designNotes leaves out the model's notes that say it again
// (sweep.GoneNote and the like); sweep.ModelAssumption is a note, and the bins' table
// states it only when the notes do not.
func goneLabels(l sweeprun.LabelCounts, m *sweep.Model, running bool) string {
	if l.Gone == 0 {
		return ""
	}
	s := fmt.Sprintf("%d of the %d counted pairs name a document an export has removed: they still count for their bins' "+
		"shares of non-duplicates (the estimates over the dataset, binned by the exact Jaccard of their stored texts), not in the "+
		"labeled-pairs figures, which count pairs of live documents only.", l.Gone, l.Counted)
	switch {
	case m == nil && running:
	case m == nil:
		s += " This sweep has no estimates over the dataset, so they count nowhere."
	default:
		if m.GoneUnused > 0 {
			s += fmt.Sprintf(" %d of them record no draw the estimates can use, so they count nowhere.", m.GoneUnused)
		}
		if m.Gone > 0 {
			s += " The design's frame sizes stay those of the draw: the estimates assume that each bin's share of " +
				"non-duplicates measured on the pairs at the time of the draw holds for the pairs that are left."
		}
	}
	return s
}

// designNotes are the notes on a sweep's design and model for its page: the model's
// notes (m non-nil) or the note of a sweep without one, less what goneLabels says with
// the label counts (the notes on labeled pairs naming removed documents), with
// sweep.ModelAssumption for the model's assumption (GoneAssumption's part is goneLabels').
func designNotes(m *sweep.Model, modelNote string, gone int) []string {
	if m == nil {
		note := sweep.GoneUncountedNote(gone)
		if modelNote = strings.TrimSuffix(modelNote, "; "+note); modelNote == note {
			return nil
		}
		// The basis sentence says what the note on undrawn labels says.
		if modelNote = strings.TrimPrefix(strings.TrimPrefix(modelNote, sweep.UndrawnNote), "; "); modelNote == "" {
			return nil
		}
		return []string{capitalize(modelNote) + "."}
	}
	var notes []string
	for _, n := range m.Notes {
		switch n {
		case sweep.GoneNote(m.Gone), sweep.GoneUnusedNote(m.GoneUnused):
		case m.Assumption():
			notes = append(notes, sweep.ModelAssumption)
		default:
			notes = append(notes, n)
		}
	}
	return notes
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
