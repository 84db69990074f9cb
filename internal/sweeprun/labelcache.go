package sweeprun

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// labelCache keeps, per campaign, every pair's label resolved under sweep.LabelRule, up
// to date with the store, so that comparing a sweep's labels with the campaign's
// (LabelsChanged, on the sweeps list and every dashboard) does not read the label log
// again: at 300k labeled pairs that read took 7 of the 9 s a dashboard took.
//
// A look asks the store where the campaign's labels stand (db.LabelMark). Nothing moved:
// the comparisons made at that mark are answered again. Events since: only the pairs
// they touched are read (db.SweepPairsChanged) and resolved again. The pairs themselves
// changed (a draw, an import): everything is read again. A sweep's snapshot never
// changes; it is kept in a compact form, decoded once (or taken from Start), for the
// last sweepsKept sweeps of a campaign. What a comparison takes of the campaign's side
// (the pairs counted over the sweep's documents and their version: a SHA-256 step a
// pair) is kept too, per set of documents, and shared by the sweeps on the same
// documents: a list of ten sweeps costs one pass over the labels and ten merges, not
// ten passes. A campaign's pairs cost about 40 bytes each; a sweep's snapshot 32, and
// so does a set of documents' counted pairs.
type labelCache struct {
	mu         sync.Mutex
	byCampaign map[int64]*campaignLabels
}

// campaignLabels is one campaign's resolved pairs. Fields are guarded by mu.
type campaignLabels struct {
	mu     sync.Mutex
	loaded bool
	mark   db.LabelMark
	cats   []labels.Category // the categories the pairs were resolved under
	ids    []int64           // pair ids, ascending
	pairs  []resolvedPair    // per id
	sweeps map[int64]*sweepLabels
	looks  uint64            // counts the looks at sweeps, for sweepLabels.used
	names  map[string]string // interned categories
	// gen counts the changes of pairs: a comparison or view made at another is redone.
	gen   uint64
	views []*labelView // by set of documents, at most viewsKept
	// reads counts the whole reads, catchUps the reads of what changed (for tests).
	reads, catchUps int
}

type resolvedPair struct {
	a, b     int64 // documents (store ids)
	status   sweep.Status
	category string
	dup      bool
}

// sweepLabels is what a sweep's comparison needs of the sweep, and the last answer.
type sweepLabels struct {
	snap    []snapEntry     // the counted pairs it was scored on, by id
	docs    []int64         // its documents, ascending
	leftOut []int64         // the documents it left out (no longer live), ascending
	index   map[int64]int32 // its documents, then those left out (store id to index: docIndex)
	at      uint64          // diff is at this campaignLabels.gen
	ok      bool
	used    uint64 // the campaign's looks when it was last looked at
	diff    LabelDiff
}

// labelView is the campaign's side of the comparisons of the sweeps over one set of
// documents: the pairs counted over them now, by id, and their version.
type labelView struct {
	docs    []int64 // ascending
	leftOut []int64 // ascending
	gen     uint64  // made at this campaignLabels.gen
	version string
	counted []snapEntry
	used    uint64
}

// viewsKept bounds the sets of documents a campaign's entry keeps a view of (sweeps
// started before and after documents were removed score different sets).
const viewsKept = 4

type snapEntry struct {
	id       int64
	category string
	dup      bool
}

// campaign returns the campaign's entry (new, not loaded, when it has none).
func (lc *labelCache) campaign(id int64) *campaignLabels {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.byCampaign == nil {
		lc.byCampaign = map[int64]*campaignLabels{}
	}
	cl := lc.byCampaign[id]
	if cl == nil {
		cl = &campaignLabels{sweeps: map[int64]*sweepLabels{}, names: map[string]string{}}
		lc.byCampaign[id] = cl
	}
	return cl
}

// labelDiff is LabelsChanged from the cache: it brings the campaign's entry up to the
// store's mark and compares.
func (s *Service) labelDiff(ctx context.Context, sw db.Sweep, c db.Campaign) (LabelDiff, error) {
	cl := s.labels.campaign(c.ID)
	// Asked before the lock: whoever holds it reads up to at least this mark.
	m, err := s.store.LabelMark(ctx, c.ID)
	if err != nil {
		return LabelDiff{}, err
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if err := cl.refresh(ctx, s.store, c, m); err != nil {
		return LabelDiff{}, err
	}
	sl := cl.sweeps[sw.ID]
	if sl == nil {
		if sl, err = s.sweepLabels(ctx, sw); err != nil {
			return LabelDiff{}, err
		}
		cl.put(sw.ID, sl)
	}
	cl.looks++
	sl.used = cl.looks
	if !sl.ok || sl.at != cl.gen {
		sl.diff, sl.at, sl.ok = cl.compare(sl), cl.gen, true
	}
	return sl.diff, nil
}

// sweepLabels reads what a sweep's comparison needs: its snapshot and its documents.
func (s *Service) sweepLabels(ctx context.Context, sw db.Sweep) (*sweepLabels, error) {
	snap, err := s.readSnapshot(ctx, sw.ID)
	if err != nil {
		return nil, err
	}
	all, err := s.store.DatasetDocumentIDs(ctx, sw.DatasetID)
	if err != nil {
		return nil, err
	}
	leftOut, err := s.store.SweepLeftOut(ctx, sw.ID)
	if err != nil {
		return nil, err
	}
	return newSweepLabels(snap, without(all, leftOut), leftOut), nil
}

// keep keeps what a new sweep's comparison needs (its snapshot, its documents ids and
// those it left out), as sweepLabels would read it.
func (lc *labelCache) keep(campaignID, sweepID int64, snap []snapPair, ids, leftOut []int64) {
	sl := newSweepLabels(snap, ids, leftOut)
	cl := lc.campaign(campaignID)
	cl.mu.Lock()
	cl.put(sweepID, sl)
	cl.mu.Unlock()
}

// sweepsKept bounds the sweeps whose snapshots a campaign's entry keeps (the sweeps list
// compares its first ten): the one looked at longest ago goes first.
const sweepsKept = 16

// put keeps sweep id's comparison state (cl.mu held). Its categories become the
// campaign's interned ones, so compare's string comparisons are of equal pointers.
func (cl *campaignLabels) put(id int64, sl *sweepLabels) {
	for i := range sl.snap {
		sl.snap[i].category = cl.intern(sl.snap[i].category)
	}
	cl.looks++
	sl.used = cl.looks
	cl.sweeps[id] = sl
	for len(cl.sweeps) > sweepsKept {
		stale := id
		for k, o := range cl.sweeps {
			if o.used < cl.sweeps[stale].used {
				stale = k
			}
		}
		delete(cl.sweeps, stale)
	}
}

func newSweepLabels(snap []snapPair, ids, leftOut []int64) *sweepLabels {
	sl := &sweepLabels{snap: make([]snapEntry, len(snap)), docs: slices.Clone(ids), leftOut: slices.Clone(leftOut), index: docIndex(ids, leftOut)}
	for i, p := range snap {
		sl.snap[i] = snapEntry{id: p.ID, category: p.Category, dup: p.Duplicate}
	}
	slices.SortFunc(sl.snap, func(a, b snapEntry) int { return cmp.Compare(a.id, b.id) })
	return sl
}

// refresh brings the entry up to mark m (it may read further: the next look reads the
// pairs of those events again, which changes nothing).
func (cl *campaignLabels) refresh(ctx context.Context, store *db.DB, c db.Campaign, m db.LabelMark) error {
	sameCats := slices.EqualFunc(cl.cats, c.Categories, func(a, b labels.Category) bool { return a.Key == b.Key })
	switch {
	case cl.loaded && sameCats && cl.mark.PairsRevision == m.PairsRevision && cl.mark.LastEvent >= m.LastEvent:
		return nil
	case cl.loaded && sameCats && cl.mark.PairsRevision == m.PairsRevision:
		changed, err := store.SweepPairsChanged(ctx, c.ID, cl.mark.LastEvent)
		if err != nil {
			return err
		}
		cl.catchUps++
		for _, p := range changed {
			i, ok := slices.BinarySearch(cl.ids, p.ID)
			if !ok { // a pair the revision does not account for: read everything
				cl.loaded = false
				return cl.refresh(ctx, store, c, m)
			}
			cl.pairs[i] = cl.resolve(p, c.Categories)
		}
		cl.mark = m
		cl.gen++
		return nil
	}
	all, err := store.SweepPairs(ctx, c.ID)
	if err != nil {
		return err
	}
	cl.fill(c, m, all)
	return nil
}

// fill replaces the entry with every pair of the campaign, read (SweepPairs) after the
// store stood at mark m.
func (cl *campaignLabels) fill(c db.Campaign, m db.LabelMark, all []db.SweepPair) {
	cl.reads++
	cl.ids, cl.pairs = make([]int64, 0, len(all)), make([]resolvedPair, 0, len(all))
	for _, p := range all {
		cl.ids = append(cl.ids, p.ID)
		cl.pairs = append(cl.pairs, cl.resolve(p, c.Categories))
	}
	cl.cats, cl.mark, cl.loaded = slices.Clone(c.Categories), m, true
	cl.gen++
}

// sweepsWarmed is how many of a campaign's newest sweeps Warm reads the snapshots of:
// those the sweeps list compares with the campaign's labels (web's maxDiffed).
const sweepsWarmed = 10

// Warm reads the labels of every campaign with a sweep, and the snapshots of its newest
// sweepsWarmed sweeps, so that the first sweeps list or dashboard after a start does not
// wait for them (seconds at a million labeled pairs: a snapshot is tens of megabytes of
// JSON). The server runs it in the background at start.
func (s *Service) Warm(ctx context.Context) error {
	sweeps, err := s.store.Sweeps(ctx, 0) // newest first
	if err != nil {
		return err
	}
	seen := map[int64]int{}
	for _, sw := range sweeps {
		seen[sw.CampaignID]++
		if seen[sw.CampaignID] == 1 {
			if err := s.warmCampaign(ctx, sw.CampaignID); err != nil {
				return err
			}
		}
		if seen[sw.CampaignID] > sweepsWarmed {
			continue
		}
		cl := s.labels.campaign(sw.CampaignID)
		cl.mu.Lock()
		_, kept := cl.sweeps[sw.ID]
		cl.mu.Unlock()
		if kept {
			continue
		}
		// Read without the lock: a page looking meanwhile reads what it needs itself.
		sl, err := s.sweepLabels(ctx, sw)
		if err != nil {
			return err
		}
		cl.mu.Lock()
		if _, kept := cl.sweeps[sw.ID]; !kept {
			cl.put(sw.ID, sl)
		}
		cl.mu.Unlock()
	}
	return nil
}

// warmCampaign brings the campaign's resolved labels up to the store's.
func (s *Service) warmCampaign(ctx context.Context, id int64) error {
	c, err := s.store.Campaign(ctx, id)
	if err != nil {
		return err
	}
	m, err := s.store.LabelMark(ctx, c.ID)
	if err != nil {
		return err
	}
	cl := s.labels.campaign(c.ID)
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.refresh(ctx, s.store, c, m)
}

// resolve resolves one stored pair as labelsNow does.
func (cl *campaignLabels) resolve(p db.SweepPair, cats []labels.Category) resolvedPair {
	r := sweep.Resolve(labeledPair(p, 0, 1), cats)
	return resolvedPair{a: p.A, b: p.B, status: r.Status, category: cl.intern(r.Category), dup: r.Duplicate}
}

// intern returns the campaign's one copy of category name s.
func (cl *campaignLabels) intern(s string) string {
	if c, ok := cl.names[s]; ok {
		return c
	}
	cl.names[s] = s
	return s
}

// compare is LabelsChanged's comparison of the campaign's labels (pairs over the
// sweep's documents and those it left out, counted) with the sweep's snapshot, and the
// labels' version over those documents, as sweep.ResolveOver computes it.
func (cl *campaignLabels) compare(sl *sweepLabels) LabelDiff {
	v := cl.view(sl)
	d := LabelDiff{Version: v.version}
	matched := 0
	j := 0
	for _, p := range v.counted {
		for j < len(sl.snap) && sl.snap[j].id < p.id {
			j++
		}
		switch {
		case j == len(sl.snap) || sl.snap[j].id != p.id:
			d.Added++
		case sl.snap[j].category != p.category || sl.snap[j].dup != p.dup:
			d.Changed++
			matched++
		default:
			matched++
		}
	}
	d.Removed = len(sl.snap) - matched
	return d
}

// view returns the campaign's pairs counted over the sweep's documents now, and their
// version: the one kept for those documents, or made (and kept, dropping the one used
// longest ago beyond viewsKept).
func (cl *campaignLabels) view(sl *sweepLabels) *labelView {
	cl.looks++
	var v *labelView
	for _, o := range cl.views {
		if slices.Equal(o.docs, sl.docs) && slices.Equal(o.leftOut, sl.leftOut) {
			v = o
			break
		}
	}
	if v == nil {
		v = &labelView{docs: sl.docs, leftOut: sl.leftOut, used: cl.looks}
		cl.views = append(cl.views, v)
		if len(cl.views) > viewsKept {
			oldest := 0
			for i, o := range cl.views {
				if o.used < cl.views[oldest].used {
					oldest = i
				}
			}
			cl.views = slices.Delete(cl.views, oldest, oldest+1)
		}
	} else if v.gen == cl.gen && v.counted != nil {
		v.used = cl.looks
		return v
	}
	v.used, v.gen = cl.looks, cl.gen
	var h sweep.VersionHash
	if v.counted == nil {
		v.counted = make([]snapEntry, 0, len(cl.pairs))
	}
	v.counted = v.counted[:0]
	for i, p := range cl.pairs {
		if p.status != sweep.Counted {
			continue
		}
		a, okA := sl.index[p.a]
		b, okB := sl.index[p.b]
		if !okA || !okB || a == b {
			continue
		}
		id := cl.ids[i]
		h.Add(id, int(min(a, b)), int(max(a, b)), p.dup, p.category)
		v.counted = append(v.counted, snapEntry{id: id, category: p.category, dup: p.dup})
	}
	if v.counted == nil {
		v.counted = []snapEntry{} // made, with no pair counted
	}
	v.version = h.Sum()
	return v
}

// labeledPair is a stored pair as a sweep reads it, its documents at indexes a and b: a
// label given by someone signed in is a person's; one imported or made by a rule (the
// demo's "demo-rules") counts only where no person settles the pair.
func labeledPair(p db.SweepPair, a, b int) sweep.LabeledPair {
	lp := sweep.LabeledPair{ID: p.ID, A: a, B: b, Flagged: p.Flagged, Skipped: p.Skipped,
		Design: p.Design, Stratum: p.Stratum, FrameSize: p.FrameSize, Origin: p.Origin}
	for _, l := range p.Labels {
		lp.Labels = append(lp.Labels, sweep.Label{Annotator: l.Annotator, Kind: string(l.Kind), Category: l.Category,
			Duplicate: l.Duplicate, Rule: !l.ByAccount})
	}
	return lp
}
