package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// After an export removed a document of a labeled pair, the sweep page says how many
// counted pairs name documents no longer live and that they still count for the bins'
// shares, and states the assumption that adds (the demo's page said 0 left out while a
// third of its labels were dropped).
func TestSweepPageSaysLabelsOfRemovedDocumentsCount(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withDemo()
	ctx := context.Background()
	camps, err := f.store.Campaigns(ctx)
	if err != nil || len(camps) != 1 {
		t.Fatalf("campaigns %v, %v", camps, err)
	}
	c := camps[0]
	form := smallGridForm("before the export")
	before := f.startSweep(c.ID, form)
	if _, body := get(t, f.h, fmt.Sprintf("/sweeps/%d", before), f.admin); strings.Contains(body, `data-testid="sweep-labels-gone"`) {
		t.Errorf("a sweep before any export says labels name removed documents")
	}

	pairs, err := f.store.SweepPairs(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var keeper, gone int64
	for _, p := range pairs {
		if strings.HasSuffix(p.Stratum, "|j0.9-1") && len(p.Labels) > 0 && p.Labels[0].Duplicate {
			keeper, gone = p.A, p.B
			break
		}
	}
	if gone == 0 {
		t.Fatal("the demo has no labeled duplicate in J 0.9-1")
	}
	named := 0
	for _, p := range pairs {
		if (p.A == gone || p.B == gone) && len(p.Labels) > 0 {
			named++
		}
	}
	dbtest.ExportRemovals(t, f.store, c.DatasetID, []int64{keeper, gone})

	form.Set("name", "after the export")
	after := f.startSweep(c.ID, form)
	res, body := get(t, f.h, fmt.Sprintf("/sweeps/%d", after), f.admin)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /sweeps/%d: %d", after, res.StatusCode)
	}
	want := fmt.Sprintf(`<p data-testid="sweep-labels-gone">%d of the 826 counted pairs name a document an export has removed: they still count for their bins`, named)
	if !strings.Contains(body, want) {
		t.Errorf("the sweep page lacks %q", want)
	}
	if !strings.Contains(body, "<dt>counted pairs</dt><dd>826</dd>") {
		t.Errorf("the sweep page does not count the demo's 826 pairs after the export")
	}
	// The assumption's last words (those before hold an apostrophe, which the page escapes).
	if tail := sweep.GoneAssumption[strings.LastIndex(sweep.GoneAssumption, "non-duplicates measured"):]; strings.Count(body, tail) != 1 {
		t.Errorf("the sweep page states the assumption %q %d times; want once", tail, strings.Count(body, tail))
	}
	// The card says it once, with the label counts: not again in the design notes, nor
	// in the assumption beside the bins (it said it three times).
	card := body[strings.Index(body, `data-testid="sweep-labels"`):]
	card = card[:strings.Index(card, "</section>")]
	for _, said := range []string{"export", "no longer live", "still count"} {
		if n := strings.Count(card, said); n > 1 {
			t.Errorf("the Labels and basis card says %q %d times; want once:\n%s", said, n, card)
		}
	}
	if !strings.Contains(card, sweep.ModelAssumption[:40]) {
		t.Errorf("the card lost the model's assumption %q", sweep.ModelAssumption[:40])
	}
}

// TestGoneLabelsSentences: what the page says of pairs naming removed documents, with
// and without a model to count them, and of pairs that cannot count at all.
func TestGoneLabelsSentences(t *testing.T) {
	t.Parallel()
	l := sweeprun.LabelCounts{Counted: 826, Gone: 278, Flagged: 1, Outside: 2}
	for _, tc := range []struct {
		name    string
		l       sweeprun.LabelCounts
		m       *sweep.Model
		running bool
		want    []string
		not     []string
	}{
		{"none", sweeprun.LabelCounts{Counted: 826}, &sweep.Model{}, false, nil, []string{"removed"}},
		{"counted", l, &sweep.Model{Gone: 278}, false, []string{"278 of the 826 counted pairs", "still count for their bins"}, []string{"nowhere"}},
		{"some unused", l, &sweep.Model{Gone: 270, GoneUnused: 8}, false, []string{"278 of the 826", "8 of them record no draw"}, nil},
		{"no model", l, nil, false, []string{"278 of the 826", "count nowhere"}, nil},
		{"running", l, nil, true, []string{"278 of the 826"}, []string{"nowhere"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := goneLabels(tc.l, tc.m, tc.running)
			if len(tc.want) == 0 && got != "" {
				t.Errorf("goneLabels = %q; want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("goneLabels = %q; want %q in it", got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("goneLabels = %q; want no %q", got, n)
				}
			}
		})
	}
	if got, want := leftOutLabels(l), "1 flagged, 0 skipped, 0 tied, 0 unlabeled, 2 naming a document the dataset does not hold"; got != want {
		t.Errorf("leftOutLabels = %q; want %q", got, want)
	}
}

// TestDesignNotesLeaveOutRemovedDocuments: the notes under the label counts do not say
// again what goneLabels says, with a model or without one, nor what the basis sentence
// says of labels that record no draw.
func TestDesignNotesLeaveOutRemovedDocuments(t *testing.T) {
	t.Parallel()
	m := &sweep.Model{Gone: 3, GoneUnused: 1}
	m.Notes = []string{"a note", sweep.GoneNote(3), sweep.GoneUnusedNote(1), m.Assumption()}
	for _, tc := range []struct {
		name      string
		m         *sweep.Model
		modelNote string
		want      []string
	}{
		{"model", m, "", []string{"a note", sweep.ModelAssumption}},
		{"no model, another note", nil, "imported labels; " + sweep.GoneUncountedNote(3), []string{"Imported labels."}},
		{"no model, that note alone", nil, sweep.GoneUncountedNote(3), nil},
		{"no model, no note", nil, "", nil},
		// basisSentence says it: the page said it twice, in the paragraph and the note.
		{"no model, undrawn labels", nil, sweep.UndrawnNote, nil},
		{"no model, undrawn labels and removed documents", nil, sweep.UndrawnNote + "; " + sweep.GoneUncountedNote(3), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := designNotes(tc.m, tc.modelNote, 3); !slices.Equal(got, tc.want) {
				t.Errorf("designNotes = %q; want %q", got, tc.want)
			}
		})
	}
}
