package campaign

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// Tally keeps the campaign page's and the start page's numbers in memory, per campaign,
// and up to date with the store, so that neither page recounts the label log: after
// 300k label events the campaign page took 5.8 s and the start page 1.7 s.
//
// The first look at a campaign reads its pairs and its label events once. After that a
// look asks the store where it stands (db.LabelMark, two lookups) and reads only what
// changed: the events appended since (the log is append-only, ids grow), and the pairs
// again when their revision moved (drawn, imported, rescored). Each new event updates
// the sums it touches: the pair's old contribution is taken out, its new one put in.
// Every sum is one that labels.Summarize builds from scratch, so Summary returns what
// the from-scratch Summary does (TestTallyMatchesSummary holds them together), whoever
// wrote the labels, in this process or another.
type Tally struct {
	store *db.DB
	mu    sync.Mutex
	byID  map[int64]*tally
}

// NewTally returns an empty Tally over store.
func NewTally(store *db.DB) *Tally {
	return &Tally{store: store, byID: map[int64]*tally{}}
}

// Summary is Summary(ctx, store, c) from the tallies.
func (t *Tally) Summary(ctx context.Context, c db.Campaign) (labels.Overview, error) {
	var o labels.Overview
	if err := t.withFresh(ctx, c, func(ct *tally) { o = ct.summarize(c, true, true) }); err != nil {
		return labels.Overview{}, fmt.Errorf("summary of campaign %d: %w", c.ID, err)
	}
	o.Agreement = cloneAgreement(o.Agreement) // outside the lock: see summarize
	return o, nil
}

// Figures is what the campaign page shows of a campaign's labels, all from one look at
// the store.
type Figures struct {
	// Overview is Summary's, without its Disagreements (the page lists Queue instead).
	Overview labels.Overview
	// Answers counts the standing labels by category and duplicate answer, as db.Answers.
	Answers []db.Answer
	// Queue is the adjudication queue as Disagreements ranks it; nil unless asked for.
	Queue []Disagreement
}

// Figures returns the campaign page's figures of c from the tallies; others asks for
// what only those who may read others' labels see: the adjudication queue, and the
// agreement of each pair of annotators (Overview.Agreement.Pairs; nil without). A pair
// labeled by a hundred people gives thousands of those.
func (t *Tally) Figures(ctx context.Context, c db.Campaign, others bool) (Figures, error) {
	var f Figures
	err := t.withFresh(ctx, c, func(ct *tally) {
		f = Figures{Overview: ct.summarize(c, false, others), Answers: ct.agg.answerList()}
		if others {
			f.Queue = ct.queue(c)
		}
	})
	if err != nil {
		return Figures{}, fmt.Errorf("figures of campaign %d: %w", c.ID, err)
	}
	// Copied outside the lock (see summarize and queue), as they may be long: the
	// agreement of every annotator pair, every disagreement.
	f.Overview.Agreement = cloneAgreement(f.Overview.Agreement)
	f.Queue = cloneQueue(f.Queue)
	return f, nil
}

// LabelCounts is what the start page shows of a campaign's labels.
type LabelCounts struct {
	Categories map[string]int // standing labels (labels and adjudications) by category
	Pairs      int
	Annotators []string // everyone with an event on one of its pairs, sorted
}

// Counts returns c's label counts from the tallies; they agree with
// db.DatasetOverview's.
func (t *Tally) Counts(ctx context.Context, c db.Campaign) (LabelCounts, error) {
	var lc LabelCounts
	err := t.withFresh(ctx, c, func(ct *tally) {
		lc = LabelCounts{Categories: make(map[string]int, len(ct.agg.labelCats)), Pairs: len(ct.pairs)}
		for k, n := range ct.agg.labelCats {
			lc.Categories[k] = n
		}
		for a := range ct.annotators {
			lc.Annotators = append(lc.Annotators, a)
		}
	})
	if err != nil {
		return LabelCounts{}, fmt.Errorf("label counts of campaign %d: %w", c.ID, err)
	}
	slices.Sort(lc.Annotators)
	return lc, nil
}

// Warm reads the tallies of every campaign, so that the first page to show one does not
// wait for its first read (seconds at a million label events). The server runs it in the
// background at start.
func (t *Tally) Warm(ctx context.Context) error {
	camps, err := t.store.Campaigns(ctx)
	if err != nil {
		return fmt.Errorf("warm tallies: %w", err)
	}
	for _, c := range camps {
		if err := t.withFresh(ctx, c, func(*tally) {}); err != nil {
			return fmt.Errorf("warm tallies: campaign %d: %w", c.ID, err)
		}
	}
	return nil
}

// withFresh brings c's tally up to date and calls read with it, under its lock, which
// it releases however read returns. read must not keep what it is given (copy what
// outlives it; see summarize and queue).
func (t *Tally) withFresh(ctx context.Context, c db.Campaign, read func(*tally)) error {
	t.mu.Lock()
	ct := t.byID[c.ID]
	if ct == nil {
		ct = &tally{}
		t.byID[c.ID] = ct
	}
	t.mu.Unlock()
	// Where the store stands is asked before taking the lock, so that people looking at
	// once do not wait for each other's queries: whoever holds the lock reads up to
	// where the store stands then, which is at least where it stood for those waiting.
	m, err := t.store.LabelMark(ctx, c.ID)
	if err != nil {
		return err
	}
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if err := ct.refresh(ctx, t.store, c, m); err != nil {
		return err
	}
	read(ct)
	return nil
}

// tally is one campaign's state. Its fields are guarded by mu.
type tally struct {
	mu         sync.Mutex
	loaded     bool
	mark       db.LabelMark
	pairs      map[int64]*pairTally
	annotators map[string]struct{}
	names      map[string]string // interned annotator and category names
	agg        *aggregates       // nil when it must be computed again (pairs or categories changed)
}

// pairTally is a pair with its standing labels, sorted by annotator.
type pairTally struct {
	sim    float64 // NaN when not scored
	wanted int
	labels []labels.Label
}

func (ct *tally) intern(s string) string {
	if v, ok := ct.names[s]; ok {
		return v
	}
	ct.names[s] = s
	return s
}

// refresh reads what changed in the store since the last look, unless the tally has
// read up to mark m already (both counters only grow).
func (ct *tally) refresh(ctx context.Context, store *db.DB, c db.Campaign, m db.LabelMark) error {
	if ct.loaded {
		if ct.mark.PairsRevision >= m.PairsRevision && ct.mark.LastEvent >= m.LastEvent {
			ct.settle(c)
			return nil
		}
	} else {
		ct.pairs, ct.annotators, ct.names = map[int64]*pairTally{}, map[string]struct{}{}, map[string]string{}
	}
	full := !ct.loaded
	var newPairs map[int64]*pairTally
	var events []db.EventRef
	rd := db.LabelRead{
		Revision: ct.mark.PairsRevision,
		Pairs: func(p db.PairStat) error {
			if newPairs == nil {
				newPairs = make(map[int64]*pairTally, len(ct.pairs))
			}
			pt := &pairTally{sim: math.NaN(), wanted: p.Wanted}
			if p.Similarity.Valid {
				pt.sim = p.Similarity.Float64
			}
			if old := ct.pairs[p.ID]; old != nil {
				pt.labels = old.labels
			}
			newPairs[p.ID] = pt
			return nil
		},
		After: ct.mark.LastEvent,
		Event: func(e db.EventRef) error {
			if full { // standing labels: straight into the pairs, sums once at the end
				if newPairs[e.PairID] != nil {
					ct.record(newPairs[e.PairID], e)
				}
				return nil
			}
			events = append(events, e)
			return nil
		},
		Annotator: func(a string) error {
			ct.annotators[ct.intern(a)] = struct{}{}
			return nil
		},
	}
	if full {
		rd.Revision = -1
	}
	m, err := store.ReadLabels(ctx, c.ID, rd)
	if err != nil {
		return err
	}
	if full || m.PairsRevision != ct.mark.PairsRevision {
		if newPairs == nil {
			newPairs = map[int64]*pairTally{}
		}
		ct.pairs, ct.agg = newPairs, nil
	}
	for _, e := range events {
		p := ct.pairs[e.PairID]
		if p == nil {
			continue // a pair removed in the same read
		}
		if ct.agg != nil && e.Kind.SetsLabel() {
			old := slices.Clone(p.labels)
			ct.agg.add(e.PairID, p, -1)
			ct.record(p, e)
			ct.agg.add(e.PairID, p, +1)
			ct.agg.moveRaters(old, p.labels)
		} else {
			ct.record(p, e)
		}
	}
	ct.mark, ct.loaded = m, true
	ct.settle(c)
	return nil
}

// settle computes the sums afresh when they are missing or were made under other
// categories.
func (ct *tally) settle(c db.Campaign) {
	if ct.agg != nil && slices.EqualFunc(ct.agg.cats, c.Categories, func(a, b labels.Category) bool { return a.Key == b.Key }) {
		return
	}
	ct.agg = newAggregates(c.Categories)
	for id, p := range ct.pairs {
		ct.agg.add(id, p, +1)
		ct.agg.moveRaters(nil, p.labels)
	}
}

// record applies event e to pair p: the annotator is counted, and an event that sets a
// label replaces the annotator's standing label (a retraction withdraws it).
func (ct *tally) record(p *pairTally, e db.EventRef) {
	name := ct.intern(e.Annotator)
	ct.annotators[name] = struct{}{}
	if !e.Kind.SetsLabel() {
		return
	}
	i, found := slices.BinarySearchFunc(p.labels, name, func(l labels.Label, n string) int { return cmp.Compare(l.Annotator, n) })
	switch {
	case e.Kind == labels.KindRetract && found:
		p.labels = slices.Delete(p.labels, i, i+1)
	case e.Kind == labels.KindRetract:
	case found:
		p.labels[i] = labels.Label{Annotator: name, Kind: e.Kind, Category: ct.intern(e.Category), Duplicate: e.Duplicate}
	default:
		p.labels = slices.Insert(p.labels, i, labels.Label{Annotator: name, Kind: e.Kind, Category: ct.intern(e.Category), Duplicate: e.Duplicate})
	}
}

// aggregates are the sums labels.Summarize makes over a campaign's pairs, kept so that
// one pair's contribution can be taken out and put back.
type aggregates struct {
	cats     []labels.Category
	catIndex map[string]int

	pairs, complete, target, given int
	coverage                       [][]int // as labels.Overview.Coverage
	coverageDup                    [][]int // as labels.Overview.CoverageDup

	// Agreement over units (pairs) with two or more labels, as labels.Measure counts.
	units, values int
	catValues     map[string]int        // values by category: the categories in use
	coincidences  map[coincidence]int   // ordered value pairs by unit size
	confusion     map[[2]string]int     // ordered value pairs
	agree, all    int                   // unordered value pairs, and those that agree
	raters        map[[2]string]*raters // by annotator pair; some may have no units left
	sorted        []*raters             // listed raters, by annotator pair
	pending       []*raters             // raters with units that are not listed yet
	emptied       bool                  // a listed one may have lost its units

	disagreements map[int64]struct{}
	labelCats     map[string]int    // standing labels by category, for the start page
	answers       map[answerKey]int // standing labels by category and duplicate answer

	// What was built from the sums, until add changes them: a page view while nobody
	// labels builds nothing, and one after a label rebuilds only what that label moved.
	agreementMemo *labels.Agreement // without Pairs
	pairsMemo     []labels.PairAgreement
	pairsMemoOK   bool
	queueMemo     []Disagreement
	queueMemoOK   bool
	queueMemoAt   float64 // the threshold queueMemo was ranked for
}

// raters is what two annotators' shared units add up to, for Cohen's kappa.
type raters struct {
	key       [2]string
	counts    map[[2]string]int // (category by one, category by the other) -> units
	agreement labels.PairAgreement
	stale     bool // agreement is to be computed again from counts
	listed    bool // in aggregates.sorted
	pending   bool // in aggregates.pending
}

// answerKey is a category with a duplicate answer.
type answerKey struct {
	category  string
	duplicate bool
}

// coincidence is an ordered pair of values (categories) within a unit of m values.
type coincidence struct {
	m    int
	c, k string
}

func newAggregates(cats []labels.Category) *aggregates {
	a := &aggregates{cats: cats, catIndex: map[string]int{}, catValues: map[string]int{}, coincidences: map[coincidence]int{},
		confusion: map[[2]string]int{}, raters: map[[2]string]*raters{}, disagreements: map[int64]struct{}{},
		labelCats: map[string]int{}, answers: map[answerKey]int{}}
	for i, c := range cats {
		a.catIndex[c.Key] = i
	}
	a.coverage = make([][]int, len(cats)+1)
	a.coverageDup = make([][]int, len(cats)+1)
	for i := range a.coverage {
		a.coverage[i] = make([]int, Bins+1)
		a.coverageDup[i] = make([]int, Bins+1)
	}
	return a
}

// bump adds sign to m[k], forgetting keys that reach 0.
func bump[K comparable](m map[K]int, k K, sign int) {
	if n := m[k] + sign; n != 0 {
		m[k] = n
	} else {
		delete(m, k)
	}
}

// add puts pair id's contribution into the sums (sign +1) or takes it out (-1), as
// labels.Summarize and labels.Measure count it, all but the annotator pairs' (moveRaters).
// It takes time in proportion to the pair's labels, not their square: under load the
// queue can hand one pair to a hundred people, and each of their labels changes it.
func (a *aggregates) add(id int64, p *pairTally, sign int) {
	a.agreementMemo, a.pairsMemo, a.pairsMemoOK, a.queueMemo, a.queueMemoOK = nil, nil, false, nil, false
	a.pairs += sign
	a.target += sign * p.wanted
	adjudicated := false
	var names, values []string // the unit: annotators (sorted) and their categories
	for _, l := range p.labels {
		bump(a.labelCats, l.Category, sign)
		bump(a.answers, answerKey{l.Category, l.Duplicate}, sign)
		if l.Kind == labels.KindAdjudication {
			adjudicated = true
			continue
		}
		names, values = append(names, l.Annotator), append(values, l.Category)
	}
	given := min(len(names), p.wanted)
	if adjudicated {
		given = p.wanted
	}
	a.given += sign * given
	if given >= p.wanted {
		a.complete += sign
	}
	if m := len(names); m >= 2 {
		// Every ordered pair of values (from different annotators) counts once: with h[c]
		// values of category c, h[c]*h[k] pairs (c, k), and h[c]*(h[c]-1) pairs (c, c).
		a.units += sign
		a.values += sign * m
		a.all += sign * m * (m - 1) / 2
		type count struct {
			cat string
			n   int
		}
		var hist []count // by category, in order of first use: a handful
		for _, v := range values {
			i := slices.IndexFunc(hist, func(c count) bool { return c.cat == v })
			if i < 0 {
				hist = append(hist, count{v, 0})
				i = len(hist) - 1
			}
			hist[i].n++
		}
		for _, c := range hist {
			bump(a.catValues, c.cat, sign*c.n)
			a.agree += sign * c.n * (c.n - 1) / 2
			for _, k := range hist {
				n := c.n * k.n
				if c.cat == k.cat {
					n = c.n * (c.n - 1)
				}
				if n > 0 {
					bump(a.coincidences, coincidence{m, c.cat, k.cat}, sign*n)
					bump(a.confusion, [2]string{c.cat, k.cat}, sign*n)
				}
			}
		}
	}
	col := Bins
	if !math.IsNaN(p.sim) {
		col = labels.Bin(p.sim, Bins)
	}
	row, dup := len(a.cats), false
	if c, d, ok := (labels.PairState{Labels: p.labels}).Resolved(a.cats); ok {
		if i, known := a.catIndex[c]; known {
			row, dup = i, d
		}
	}
	a.coverage[row][col] += sign
	if dup {
		a.coverageDup[row][col] += sign
	}
	if !adjudicated && labels.Disagree(p.labels) {
		if sign > 0 {
			a.disagreements[id] = struct{}{}
		} else {
			delete(a.disagreements, id)
		}
	}
}

// moveRaters moves a pair's units by annotator pair from what its standing labels old
// gave to what labels now give: only the annotator pairs with one whose label changed
// move, so a change by one of m labelers costs m steps, not m squared.
func (a *aggregates) moveRaters(old, now []labels.Label) {
	a.pairsMemo, a.pairsMemoOK = nil, false
	// The units: labels (not adjudications) of pairs that have two or more, by annotator.
	unit := func(ls []labels.Label) []labels.Label {
		var u []labels.Label
		for _, l := range ls {
			if l.Kind != labels.KindAdjudication {
				u = append(u, l)
			}
		}
		if len(u) < 2 {
			return nil
		}
		return u
	}
	ou, nu := unit(old), unit(now)
	// Who changed: an annotator in one unit only, or with another category in each
	// (both are sorted by annotator).
	oc, nc := make([]bool, len(ou)), make([]bool, len(nu))
	for i, j := 0, 0; i < len(ou) || j < len(nu); {
		switch {
		case j == len(nu) || (i < len(ou) && ou[i].Annotator < nu[j].Annotator):
			oc[i] = true
			i++
		case i == len(ou) || nu[j].Annotator < ou[i].Annotator:
			nc[j] = true
			j++
		default:
			if ou[i].Category != nu[j].Category {
				oc[i], nc[j] = true, true
			}
			i++
			j++
		}
	}
	move := func(u []labels.Label, changed []bool, sign int) {
		for i := range u {
			if !changed[i] {
				continue
			}
			for j := range u {
				if j == i || (changed[j] && j < i) { // a pair of two who changed counts once
					continue
				}
				x, y := min(i, j), max(i, j)
				a.bumpRaters([2]string{u[x].Annotator, u[y].Annotator}, [2]string{u[x].Category, u[y].Category}, sign)
			}
		}
	}
	move(ou, oc, -1)
	move(nu, nc, +1)
}

// bumpRaters adds sign to the units where annotators key said categories cats. The
// sorted list of annotator pairs changes only when the agreement is built again
// (sortRaters): a pair labeled by many people has thousands of annotator pairs (m(m-1)/2),
// and each label on it brings a few new ones.
func (a *aggregates) bumpRaters(key, cats [2]string, sign int) {
	r := a.raters[key]
	if r == nil {
		r = &raters{key: key, counts: map[[2]string]int{}}
		a.raters[key] = r
	}
	bump(r.counts, cats, sign)
	r.stale = true
	switch {
	case len(r.counts) == 0:
		a.emptied = true
	case !r.listed && !r.pending:
		r.pending = true
		a.pending = append(a.pending, r)
	}
}

// sortRaters brings the sorted list up to date: the annotator pairs without units leave
// it (and the map), the new ones are merged in, in time linear in the list.
func (a *aggregates) sortRaters() {
	if len(a.pending) == 0 && !a.emptied {
		return
	}
	keep := func(r *raters) bool {
		if len(r.counts) > 0 {
			return true
		}
		r.listed, r.pending = false, false
		delete(a.raters, r.key)
		return false
	}
	byKey := func(x, y *raters) int {
		return cmp.Or(cmp.Compare(x.key[0], y.key[0]), cmp.Compare(x.key[1], y.key[1]))
	}
	add := slices.DeleteFunc(a.pending, func(r *raters) bool { return !keep(r) })
	slices.SortFunc(add, byKey)
	old := slices.DeleteFunc(a.sorted, func(r *raters) bool { return !keep(r) })
	merged := make([]*raters, 0, len(old)+len(add))
	for len(old) > 0 || len(add) > 0 {
		if len(add) == 0 || (len(old) > 0 && byKey(old[0], add[0]) < 0) {
			merged, old = append(merged, old[0]), old[1:]
			continue
		}
		add[0].listed, add[0].pending = true, false
		merged, add = append(merged, add[0]), add[1:]
	}
	a.sorted, a.pending, a.emptied = merged, a.pending[:0], false
}

// answerList is db.Answers from the sums: by category, then duplicate answer (no
// before yes).
func (a *aggregates) answerList() []db.Answer {
	out := make([]db.Answer, 0, len(a.answers))
	for k, n := range a.answers {
		out = append(out, db.Answer{Category: k.category, Duplicate: k.duplicate, N: n})
	}
	bit := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	slices.SortFunc(out, func(x, y db.Answer) int {
		return cmp.Or(cmp.Compare(x.Category, y.Category), cmp.Compare(bit(x.Duplicate), bit(y.Duplicate)))
	})
	return out
}

// queue is Disagreements from the tallies: the pairs in dispute, their labels by
// annotator, ranked as RankDisagreements ranks them. What it returns is the tally's, kept
// until a label changes the sums and never changed: the caller copies it (cloneQueue),
// and may do so without the lock.
func (ct *tally) queue(c db.Campaign) []Disagreement {
	a := ct.agg
	if !a.queueMemoOK || a.queueMemoAt != c.Threshold {
		a.queueMemo, a.queueMemoOK, a.queueMemoAt = ct.rankQueue(c), true, c.Threshold
	}
	return a.queueMemo
}

// cloneQueue copies a queue and its labels.
func cloneQueue(q []Disagreement) []Disagreement {
	if q == nil {
		return nil
	}
	out := slices.Clone(q)
	for i := range out {
		out[i].Labels = slices.Clone(out[i].Labels)
	}
	return out
}

// rankQueue builds the adjudication queue from the disputed pairs.
func (ct *tally) rankQueue(c db.Campaign) []Disagreement {
	var out []Disagreement
	for id := range ct.agg.disagreements {
		p := ct.pairs[id]
		var sim sql.NullFloat64
		if !math.IsNaN(p.sim) {
			sim = sql.NullFloat64{Float64: p.sim, Valid: true}
		}
		ls := make([]db.ContestedLabel, 0, len(p.labels))
		for _, l := range p.labels {
			if l.Kind == labels.KindLabel {
				ls = append(ls, db.ContestedLabel{PairID: id, Similarity: sim, Annotator: l.Annotator, Category: l.Category, Duplicate: l.Duplicate})
			}
		}
		if d, ok := disagreement(ls, c.Threshold); ok {
			out = append(out, d)
		}
	}
	RankDisagreements(out)
	return out
}

// summarize builds the campaign page's numbers from the sums, with the disagreements
// (labels.Overview's, nearest the threshold first) or without. All but the Agreement's
// slices are the caller's; those are the tally's, kept until a label changes the sums
// and never changed, so the caller copies them (cloneAgreement), without the lock if it
// likes.
func (ct *tally) summarize(c db.Campaign, withDisagreements, withPairs bool) labels.Overview {
	a := ct.agg
	o := labels.Summarize(nil, c.Categories, Bins, c.Threshold) // bin labels and the empty shapes
	o.Pairs, o.Complete, o.Target, o.Given = a.pairs, a.complete, a.target, a.given
	for i, row := range a.coverage {
		copy(o.Coverage[i], row)
		copy(o.CoverageDup[i], a.coverageDup[i])
	}
	o.Agreement = a.agreement(withPairs)
	if !withDisagreements {
		return o
	}
	o.Disagreements = make([]labels.Disagreement, 0, len(a.disagreements))
	for id := range a.disagreements {
		p := ct.pairs[id]
		d := labels.Disagreement{PairID: id, Similarity: p.sim, Labels: slices.Clone(p.labels), Distance: math.Inf(1)}
		if !math.IsNaN(p.sim) {
			d.Distance = math.Abs(p.sim - c.Threshold)
		}
		o.Disagreements = append(o.Disagreements, d)
	}
	slices.SortFunc(o.Disagreements, func(x, y labels.Disagreement) int {
		return cmp.Or(cmp.Compare(x.Distance, y.Distance), cmp.Compare(x.PairID, y.PairID))
	})
	if len(o.Disagreements) == 0 {
		o.Disagreements = nil
	}
	return o
}

// cloneAgreement copies ag's slices.
func cloneAgreement(ag labels.Agreement) labels.Agreement {
	ag.Pairs, ag.Categories, ag.Confusion = slices.Clone(ag.Pairs), slices.Clone(ag.Categories), slices.Clone(ag.Confusion)
	for i := range ag.Confusion {
		ag.Confusion[i] = slices.Clone(ag.Confusion[i])
	}
	return ag
}

// agreement is labels.Measure over the units, from the sums, with the agreement of each
// annotator pair or without (Pairs nil); the tally keeps what it returns (callers copy
// it) until the sums change.
func (a *aggregates) agreement(withPairs bool) labels.Agreement {
	if a.agreementMemo == nil {
		ag := a.measure()
		a.agreementMemo = &ag
	}
	ag := *a.agreementMemo
	if withPairs {
		if !a.pairsMemoOK {
			a.pairsMemo, a.pairsMemoOK = a.kappas(), true
		}
		ag.Pairs = a.pairsMemo
	}
	return ag
}

func (a *aggregates) measure() labels.Agreement {
	ag := labels.Agreement{Units: a.units, Values: a.values}
	for c := range a.catValues {
		ag.Categories = append(ag.Categories, c)
	}
	slices.Sort(ag.Categories)
	idx := make(map[string]int, len(ag.Categories))
	for i, c := range ag.Categories {
		idx[c] = i
	}
	nc := len(ag.Categories)
	o := make([][]float64, nc)
	ag.Confusion = make([][]int, nc)
	for i := range o {
		o[i] = make([]float64, nc)
		ag.Confusion[i] = make([]int, nc)
	}
	for k, n := range a.coincidences {
		o[idx[k.c]][idx[k.k]] += float64(n) / float64(k.m-1)
	}
	for k, n := range a.confusion {
		ag.Confusion[idx[k[0]]][idx[k[1]]] = n
	}
	if a.all > 0 {
		ag.PercentAgreement = float64(a.agree) / float64(a.all)
	}
	ag.Alpha = labels.Alpha(o)
	return ag
}

// kappas is labels.Measure's Pairs: Cohen's kappa of each annotator pair, computed again
// only for those whose shared units changed.
func (a *aggregates) kappas() []labels.PairAgreement {
	a.sortRaters()
	if len(a.sorted) == 0 {
		return nil
	}
	out := make([]labels.PairAgreement, len(a.sorted))
	for i, r := range a.sorted {
		if r.stale {
			units, observed, kappa := labels.CohenKappaCounts(r.counts)
			r.agreement, r.stale = labels.PairAgreement{A: r.key[0], B: r.key[1], Units: units, Observed: observed, Kappa: kappa}, false
		}
		out[i] = r.agreement
	}
	return out
}
