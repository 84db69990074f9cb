package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/words"
)

// DefaultReplicates is the number of Monte Carlo replicates behind every interval when
// Options leaves it 0.
const DefaultReplicates = 1000

// FalseRemovalUnit is Estimate.Unit for false removals counted in documents under a
// keeper rule (FalseRemovalDefinition). Results stored before it have no unit and no
// per-rule figures.
const FalseRemovalUnit = "documents per keeper rule"

// FalseRemovalDefinition says what a false removal is, for pages and the README.
const FalseRemovalDefinition = "A false removal is a removed document that is not a duplicate of the document kept in its place. " +
	"Each cluster keeps one document, chosen by the keeper rule the manifest will run (earliest, longest, shortest...), and removes the others; " +
	"the sweep counts, for every rule, each removed document against its own keeper, so the figure is the one that rule would produce."

// ModelAssumption is the assumption the dataset estimates add to the labels, for pages.
const ModelAssumption = "The labels of a similarity bin speak for every pair of that bin: a configuration's accepted pairs and " +
	"(removed, keeper) pairs in a bin are assumed to be duplicates as often as the bin's labeled pairs are. " +
	"The manifest's audit checks this on the removals themselves."

// Origins of labeled pairs whose selection depended on similarity alone (the studio's
// draws: a bin's simple random sample, pairs near the threshold, uniformly random
// pairs) or on a manifest's removals (its audit).
var drawnOrigins = []string{"boundary", "random", "audit"}

// drawn reports whether a labeled pair was chosen by the studio (by similarity, or at
// random), not by a person or an import.
func drawn(p ResolvedPair) bool {
	return strings.HasPrefix(p.Design, StudioDesignPrefix) || strings.HasPrefix(p.Design, "draw-") ||
		strings.HasPrefix(p.Origin, "bin:") || slices.Contains(drawnOrigins, p.Origin)
}

// StudioDesignPrefix starts the names of the studio's draws stratified by bins of exact
// Jaccard (labels.DrawDesign).
const StudioDesignPrefix = "jdraw-"

// buildModel chooses which labeled pairs the dataset estimates rest on and builds the
// model: the demo's category × bin design when most counted pairs carry it, else the
// studio's draws (and the audits' pairs), else every counted pair (labels imported
// without a design, assumed chosen without regard to their answer within a bin).
// Counted pairs naming a document no longer live (LabelSet.Gone) count in their bin as
// the live ones do: a label is evidence about its bin of similarity.
func (e *engine) buildModel(ctx context.Context) error {
	if e.model != nil || e.noModel {
		return nil
	}
	demoCount := map[string]int{}
	studio, other := 0, 0
	for _, p := range slices.Concat(e.ls.Pairs, e.ls.Gone) {
		switch k := ParseStratum(p.Design, p.Stratum); {
		case k.Measure == JaccardMeasure && k.Scheme == DemoBins && p.FrameSize > 0:
			demoCount[p.Design]++
		case drawn(p):
			studio++
		default:
			other++
		}
	}
	demoName := ""
	for n, c := range demoCount {
		if demoName == "" || c > demoCount[demoName] || c == demoCount[demoName] && n < demoName {
			demoName = n
		}
	}
	m := &Model{}
	var pooled func(p ResolvedPair) bool // the pairs that make each bin's pooled cell
	switch {
	case demoName != "":
		m.Basis, m.Scheme, m.Rep = "design "+demoName, frame.Demo12, DemoRep
		pooled = drawn
		if studio > 0 {
			m.Basis += " and the studio's draws"
		}
	case studio > 0:
		m.Basis, m.Scheme, m.Rep = "the studio's draws", frame.Default, e.rep()
		pooled = drawn
	default:
		// Labels that record no draw (imported, picked by hand) may have been chosen for
		// their answer: they speak for themselves, not for the dataset.
		e.noModel = true
		if other > 0 {
			e.modelNote = UndrawnNote
		}
		e.noteGoneUncounted(len(e.ls.Gone))
		return nil
	}
	sets, err := frame.NewSets(ctx, e.n, e.in.Docs.Text, m.Rep, e.opt.FrameSetBudget)
	if errors.Is(err, frame.ErrTooLarge) {
		e.noModel = true
		e.modelNote = "the dataset's shingle sets do not fit the set budget: no estimate over the whole dataset (raise it or sample fewer documents)"
		e.noteGoneUncounted(len(e.ls.Gone))
		return nil
	}
	if err != nil {
		return err
	}
	e.bin = &binner{sets: sets, scheme: m.Scheme, memo: sortedMemo[uint8]{bound: DefaultBinMemo}}
	gone, err := e.goneSets(ctx, m.Rep)
	if err != nil {
		return err
	}
	m.Identical = identicalPairs(sets)
	nb := m.Scheme.Bins()
	m.Bins = make([]ModelBin, nb)
	for b := range m.Bins {
		m.Bins[b] = ModelBin{Bin: b, Label: m.Scheme.Label(b), Lo: m.Scheme.Lower(b), Hi: m.Scheme.Upper(b)}
	}
	if demoName != "" {
		e.demoCells(m, demoName, gone)
	} else if err := e.frameSizes(ctx, m); err != nil {
		return err
	}
	identicalNonDup := 0
	count := func(p ResolvedPair, sets *frame.Sets, a, b int, live bool) {
		m.Pairs++
		if sets.Identical(a, b) {
			if !p.Duplicate {
				identicalNonDup++
			}
			return
		}
		if demoName != "" && p.Design == demoName {
			return // counted into its stratum by demoCells
		}
		c := &m.Bins[sets.Bin(m.Scheme, a, b)].Pooled
		c.Labeled++
		if !p.Duplicate {
			c.NonDup++
		}
		if !live {
			// Drawn from the frame before the export, not from the live one Frame counts:
			// the finite-population correction is left out (it would narrow too much).
			c.Frame = 0
		}
	}
	for i, p := range e.ls.Pairs {
		if !(demoName != "" && p.Design == demoName) && !pooled(p) {
			e.outsideModel[i] = true
			m.Unused++
			continue
		}
		count(p, sets, p.A, p.B, true)
	}
	for _, p := range e.ls.Gone {
		if !(demoName != "" && p.Design == demoName) && !pooled(p) {
			m.GoneUnused++
			continue
		}
		m.Gone++
		a, b := gone.of(p)
		count(p, gone.sets, a, b, false)
	}
	if m.Unused > 0 {
		m.Notes = append(m.Notes, words.Count(m.Unused, "labeled pair records", "labeled pairs record")+
			" no draw the estimates can use (imported, or of another design): they count in the labeled-pairs figures only")
	}
	if m.Gone > 0 {
		m.Notes = append(m.Notes, GoneNote(m.Gone))
	}
	if m.GoneUnused > 0 {
		m.Notes = append(m.Notes, GoneUnusedNote(m.GoneUnused))
	}
	if identicalNonDup > 0 {
		m.Notes = append(m.Notes, words.Count(identicalNonDup, "labeled pair with identical normalized text is labeled not a duplicate",
			"labeled pairs with identical normalized text are labeled not duplicates")+
			": the estimates count identical texts as duplicates whatever their labels say")
	}
	for b := range m.Bins {
		sortCells(m.Bins[b].Cells)
	}
	newModel(m, e.opt.Replicates, e.opt.Seed)
	if g := m.Guard(); g >= 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("Recall counts the duplicates from J ≥ %s up, the least similar bin with a labeled duplicate; "+
			"its interval also allows for those the labels of the bin below (J ≥ %s) cannot rule out, where they found none; "+
			"below that the labels found none either (a configuration's costs say how many they cannot rule out there).",
			trimFloat(m.Bins[m.Floor].Lo), trimFloat(m.Bins[g].Lo)))
	}
	if bs := m.UnlabeledBins(); len(bs) > 0 {
		var names []string
		for _, b := range bs {
			names = append(names, m.Bins[b].Label)
		}
		m.Notes = append(m.Notes, fmt.Sprintf("%s pairs and no label (%s): a configuration that removes or accepts pairs there "+
			"gets an interval that spans them whole", words.Count(len(bs), "bin holds", "bins hold"), strings.Join(names, ", ")))
	}
	m.Notes = append(m.Notes, m.Assumption())
	e.model = m
	return nil
}

// GoneAssumption is what the estimates assume beyond ModelAssumption once labeled pairs
// name documents no longer live: the labels (and the design's frame sizes) describe the
// pairs at the time of the draw.
const GoneAssumption = "Some labeled pairs name documents an export has removed since they were drawn: their labels still count " +
	"for their bins, and the design's frame sizes stay those of the draw, on the assumption that each bin's share of " +
	"non-duplicates measured on the pairs at the time of the draw holds for the pairs that are left."

// Assumption is the assumption the model's estimates add to the labels, for pages:
// ModelAssumption, and GoneAssumption when labeled pairs naming documents no longer
// live count in its bins.
func (m *Model) Assumption() string {
	if m.Gone > 0 {
		return ModelAssumption + " " + GoneAssumption
	}
	return ModelAssumption
}

// GoneNote, GoneUnusedNote and GoneUncountedNote are the model's notes (Model.Notes, and
// Report.ModelNote without a model, after "; " when it says more) on n labeled pairs
// naming documents no longer live: those that count for their bins, those that record no
// draw, and those of a sweep without estimates over the dataset. Pages that say it with
// the label counts leave these notes out.
func GoneNote(n int) string {
	return words.Count(n, "labeled pair names", "labeled pairs name") + " a document no longer live (an export removed it): each still counts " +
		"for its bin's share of non-duplicates, binned by the exact Jaccard of the stored texts, and in no count of the live " +
		"dataset's pairs (candidates, clusters, the labeled-pairs figures)"
}

// GoneUnusedNote: see GoneNote.
func GoneUnusedNote(n int) string {
	return words.Count(n, "labeled pair names a document no longer live and records", "labeled pairs name a document no longer live and record") +
		" no draw the estimates can use: they count nowhere (the labeled-pairs figures count pairs of live documents only)"
}

// GoneUncountedNote: see GoneNote.
func GoneUncountedNote(n int) string {
	return words.Count(n, "labeled pair names", "labeled pairs name") + " a document no longer live (an export removed it): without estimates over the dataset " +
		"they count nowhere (the labeled-pairs figures count pairs of live documents only)"
}

// noteGoneUncounted adds to the note of a sweep without a model that n labeled pairs
// naming documents no longer live count nowhere.
func (e *engine) noteGoneUncounted(n int) {
	if n == 0 {
		return
	}
	note := GoneUncountedNote(n)
	if e.modelNote == "" {
		e.modelNote = note
	} else {
		e.modelNote += "; " + note
	}
}

// goneSet holds the shingle sets of the documents the pairs of LabelSet.Gone name (live
// or not), under the model's representation: what binning those pairs needs.
type goneSet struct {
	sets *frame.Sets
	at   map[int]int // document index (LabeledPair.A, B) to its place in sets
}

// of returns the places in g.sets of pair p's documents.
func (g goneSet) of(p ResolvedPair) (a, b int) { return g.at[p.A], g.at[p.B] }

// goneSets shingles the documents the counted pairs naming documents no longer live
// name, under rep (a few: their texts are read once, one by one).
func (e *engine) goneSets(ctx context.Context, rep lsh.Spec) (goneSet, error) {
	g := goneSet{at: map[int]int{}}
	if len(e.ls.Gone) == 0 {
		return g, nil
	}
	var texts []string
	for _, p := range e.ls.Gone {
		for _, d := range []int{p.A, p.B} {
			if _, ok := g.at[d]; ok {
				continue
			}
			g.at[d] = len(texts)
			if d < e.n {
				texts = append(texts, e.in.Docs.Text(d))
			} else {
				texts = append(texts, e.in.Gone.Text(d-e.n))
			}
		}
	}
	sets, err := frame.NewSets(ctx, len(texts), func(i int) string { return texts[i] }, rep, e.opt.FrameSetBudget)
	if err != nil {
		return g, fmt.Errorf("shingle the documents no longer live that labeled pairs name: %w", err)
	}
	g.sets = sets
	return g, nil
}

func trimFloat(x float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", x), "0"), ".")
}

// identicalPairs counts the pairs of documents whose normalized texts are identical.
func identicalPairs(s *frame.Sets) int64 {
	count := make([]int64, s.TextClasses())
	for i := range s.Docs() {
		count[s.TextClass(i)]++
	}
	var n int64
	for _, c := range count {
		n += c * (c - 1) / 2
	}
	return n
}

// demoCells fills the bins from a category × bin design: its strata are the cells, each
// standing for its frame size N_h less the share of its labeled pairs that are
// identical texts (counted apart, exactly). Bin sizes are the cells' sums.
func (e *engine) demoCells(m *Model, design string, gone goneSet) {
	type cell struct {
		Cell
		bin   int
		total int // labeled pairs, identical ones included
	}
	cells := map[string]*cell{}
	var order []string
	live := len(e.ls.Pairs)
	for i, p := range slices.Concat(e.ls.Pairs, e.ls.Gone) {
		if p.Design != design {
			continue
		}
		sets, a, b := e.bin.sets, p.A, p.B
		if i >= live {
			sets = gone.sets
			a, b = gone.of(p)
		}
		k := ParseStratum(p.Design, p.Stratum)
		c := cells[p.Stratum]
		if c == nil {
			c = &cell{Cell: Cell{Name: p.Stratum}, bin: k.Bin}
			cells[p.Stratum] = c
			order = append(order, p.Stratum)
		}
		c.Size = max(c.Size, float64(p.FrameSize))
		c.Frame = max(c.Frame, int64(p.FrameSize))
		c.total++
		if sets.Identical(a, b) {
			continue
		}
		c.Labeled++
		if !p.Duplicate {
			c.NonDup++
		}
	}
	for _, name := range order {
		c := cells[name]
		if c.Labeled == 0 {
			continue // every labeled pair identical: the stratum is the certain one
		}
		c.Size *= float64(c.Labeled) / float64(c.total)
		c.Frame = int64(math.Round(c.Size))
		mb := &m.Bins[c.bin]
		mb.Cells = append(mb.Cells, c.Cell)
		mb.Size += c.Size
		mb.Drawable += int64(c.Size)
	}
	for b := range m.Bins {
		m.Bins[b].Pooled = Cell{Name: "drawn pairs", Size: m.Bins[b].Size}
	}
}

// frameSizes sizes the bins from the dataset's frame (the studio's draws choose from
// it): each bin one pooled cell.
func (e *engine) frameSizes(ctx context.Context, m *Model) error {
	sigs, err := e.signatures(ctx, m.Rep)
	if err != nil {
		return err
	}
	f, err := frame.Build(ctx, sigs, e.bin.sets, m.Scheme, frame.Options{})
	if err != nil {
		return err
	}
	// Only the sizes are kept: the frame's entries (24 bytes a listed class pair, which
	// grow with the square of the near-duplicates) are released before the shapes run.
	for b := range m.Bins {
		m.Bins[b].Size, m.Bins[b].Drawable = f.Sizes[b], f.Listed[b]
		m.Bins[b].Pooled = Cell{Name: "drawn pairs", Size: f.Sizes[b], Frame: f.Listed[b]}
	}
	if fl := f.Floor(0.999); fl > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("The frame is every pair the banding %v over %s finds (P ≥ 0.999 from J = %s up); "+
			"bin sizes below that are corrected for the pairs it misses (1/P).", f.Shape, m.Rep.String(), trimFloat(fl)))
	}
	if f.Skipped > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("%d band collisions were left out of the frame by its bucket bound: the bins of very common "+
			"texts may be a little larger than shown", f.Skipped))
	}
	return nil
}

// rep is the campaign's representation, DefaultSpec when the input names none.
func (e *engine) rep() lsh.Spec {
	if e.in.Rep.Hashes > 0 {
		return e.in.Rep
	}
	return lsh.DefaultSpec()
}

// modelBinOf returns the model bin of labeled pair i (-1 for identical texts and pairs
// the model does not use).
func (e *engine) modelBinOf(i int) int {
	if e.model == nil || e.outsideModel[i] {
		return -1
	}
	p := e.ls.Pairs[i]
	b := e.bin.of(p.A, p.B)
	if b == e.bin.identicalBin() {
		return -1
	}
	return b
}

// UndrawnNote is a sweep's model note when no counted pair records how it was drawn: the
// figures are on the labeled-pairs basis. Pages that state the basis say it already.
const UndrawnNote = "no labeled pair records how it was chosen (imported or picked by hand): the figures describe the labeled pairs, " +
	"not the whole dataset; draw pairs from the campaign page to estimate over it"
