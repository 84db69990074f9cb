package dedup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// labeledPair is a labeled pair of the dataset (document indexes) with the duplicate
// decision it counts with.
type labeledPair struct {
	id        int64
	a, b      int
	category  string
	duplicate bool
}

// labelRule says which label of a pair counts.
const labelRule = "A pair counts with its adjudicated label if it has one; else with the duplicate decision most of its " +
	"current labels give (the most common category among those); a tie, a flagged pair or an unlabeled pair is left out."

// campaignFor returns the campaign whose labels a run on a dataset uses: id when it is
// one of the dataset's, the dataset's oldest when id is 0, none (ID 0) when the dataset
// has no campaign.
func campaignFor(ctx context.Context, store *db.DB, datasetID, id int64) (db.Campaign, error) {
	if id != 0 {
		c, err := store.Campaign(ctx, id)
		if err != nil {
			return c, err
		}
		if c.DatasetID != datasetID {
			return db.Campaign{}, &review.InputError{Field: "campaign", Msg: fmt.Sprintf("campaign %d labels another dataset", id)}
		}
		return c, nil
	}
	list, err := store.Campaigns(ctx)
	if err != nil {
		return db.Campaign{}, err
	}
	var found db.Campaign
	for _, c := range list { // newest first: the last match is the oldest
		if c.DatasetID == datasetID {
			found = c
		}
	}
	return found, nil
}

// labeledPairs returns the labeled pairs of the run's campaign that count under
// labelRule, with the campaign.
func labeledPairs(ctx context.Context, store *db.DB, datasetID, campaignID int64, index map[int64]int) ([]labeledPair, db.Campaign, error) {
	c, err := campaignFor(ctx, store, datasetID, campaignID)
	if err != nil || c.ID == 0 {
		return nil, c, err
	}
	refs, err := store.PairDocs(ctx, c.ID)
	if err != nil {
		return nil, c, err
	}
	cur, err := store.CurrentLabels(ctx, c.ID)
	if err != nil {
		return nil, c, err
	}
	flagged, err := store.FlaggedPairs(ctx, c.ID)
	if err != nil {
		return nil, c, err
	}
	byPair := map[int64][]db.CurrentLabel{}
	for _, l := range cur {
		byPair[l.PairID] = append(byPair[l.PairID], l)
	}
	var out []labeledPair
	for _, r := range refs {
		a, okA := index[r.DocA]
		b, okB := index[r.DocB]
		if !okA || !okB || flagged[r.ID] {
			continue
		}
		cat, dup, ok := resolve(byPair[r.ID], c.Categories)
		if ok {
			out = append(out, labeledPair{id: r.ID, a: a, b: b, category: cat, duplicate: dup})
		}
	}
	return out, c, nil
}

// resolve applies labelRule to a pair's standing labels.
func resolve(ls []db.CurrentLabel, cats []labels.Category) (category string, duplicate, ok bool) {
	for _, l := range ls {
		if l.Kind == labels.KindAdjudication {
			category, duplicate, ok = l.Category, l.Duplicate, true
		}
	}
	if ok {
		return
	}
	yes := 0
	for _, l := range ls {
		if l.Duplicate {
			yes++
		}
	}
	if no := len(ls) - yes; yes == no {
		return "", false, false
	} else {
		duplicate = yes > no
	}
	count := map[string]int{}
	for _, l := range ls {
		if l.Duplicate == duplicate {
			count[l.Category]++
		}
	}
	order := func(c string) int {
		if i := slices.IndexFunc(cats, func(x labels.Category) bool { return x.Key == c }); i >= 0 {
			return i
		}
		return len(cats)
	}
	for c, n := range count {
		if category == "" || n > count[category] || n == count[category] && order(c) < order(category) {
			category = c
		}
	}
	return category, duplicate, true
}

// labelVersion names a set of resolved labels: equal versions count the same pairs
// with the same labels.
func labelVersion(ps []labeledPair) string {
	h := sha256.New()
	for _, p := range ps {
		fmt.Fprintf(h, "%d\t%d\t%d\t%t\t%s\n", p.id, p.a, p.b, p.duplicate, p.category)
	}
	return "l" + hex.EncodeToString(h.Sum(nil)[:6])
}

// scoreConfiguration scores a manifest's configuration against the campaign's labels:
// recall (labeled duplicates accepted: candidates whose verified similarity reaches the
// threshold), cluster recall and false merges (labeled pairs that end in one cluster
// under the chosen policy), precision, and the same by category, each with its 95%
// Wilson interval, plus the campaign's agreement.
func scoreConfiguration(ctx context.Context, store *db.DB, c db.Campaign, p review.Params, set sigcache.Set, infos []db.DocInfo, g *cluster.Graph) (*review.Estimates, error) {
	index := make(map[int64]int, len(infos))
	for i, di := range infos {
		index[di.ID] = i
	}
	pairs, _, err := labeledPairs(ctx, store, c.DatasetID, c.ID, index)
	if err != nil {
		return nil, err
	}
	refs, err := store.PairDocs(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	res, err := g.Cluster(p.Config())
	if err != nil {
		return nil, err
	}
	accepted := acceptedPairs(ctx, store, p, set, pairs)
	sum, err := campaign.Summary(ctx, store, c)
	if err != nil {
		return nil, err
	}
	e := &review.Estimates{Campaign: c.ID, CampaignName: c.Name, LabelRule: labelRule, LabelVersion: labelVersion(pairs),
		Counted: len(pairs), Left: len(refs) - len(pairs), Alpha: review.Number(sum.Agreement.Alpha), AlphaUnits: sum.Agreement.Units}
	type tally struct{ dup, acc, together, non, merged, accNon int }
	var all tally
	byCat := map[string]*tally{}
	for i, lp := range pairs {
		t := byCat[lp.category]
		if t == nil {
			t = &tally{}
			byCat[lp.category] = t
		}
		together := res.Together(lp.a, lp.b)
		for _, x := range []*tally{&all, t} {
			if lp.duplicate {
				x.dup++
				if accepted[i] {
					x.acc++
				}
				if together {
					x.together++
				}
			} else {
				x.non++
				if together {
					x.merged++
				}
				if accepted[i] {
					x.accNon++
				}
			}
		}
	}
	e.Recall = wilson(all.acc, all.dup)
	e.ClusterRecall = wilson(all.together, all.dup)
	e.FalseMerges = wilson(all.merged, all.non)
	e.Precision = wilson(all.acc, all.acc+all.accNon)
	for _, cat := range c.Categories {
		t := byCat[cat.Key]
		if t == nil {
			continue
		}
		e.Categories = append(e.Categories, review.CategoryRate{Category: cat.Key, Duplicate: cat.Duplicate == labels.Yes,
			Recall: wilson(t.acc, t.dup), FalseMerges: wilson(t.merged, t.non)})
	}
	e.Notes = append(e.Notes, "Rates are on the labeled pairs only (no sampling design is stored with these labels): "+
		"they describe the labeled sample, not the whole dataset.")
	return e, nil
}

// acceptedPairs reports, for each labeled pair, whether the configuration accepts it:
// the pair collides in a band and its verified similarity reaches the threshold.
func acceptedPairs(ctx context.Context, store *db.DB, p review.Params, set sigcache.Set, pairs []labeledPair) []bool {
	out := make([]bool, len(pairs))
	var keys [2][]uint64
	sets := newShingleSets(store, p.Spec)
	for i, lp := range pairs {
		a, b := set.Sigs[lp.a], set.Sigs[lp.b]
		keys[0] = p.Shape.BandKeys(a, keys[0][:0])
		keys[1] = p.Shape.BandKeys(b, keys[1][:0])
		collide := false
		for j := range keys[0] {
			if keys[0][j] == keys[1][j] {
				collide = true
				break
			}
		}
		if !collide {
			continue
		}
		s := lsh.Estimate(a, b)
		if p.Verification == review.Exact {
			var err error
			if s, err = sets.jaccard(ctx, set.IDs[lp.a], set.IDs[lp.b]); err != nil {
				s = 0
			}
		}
		out[i] = s >= p.Threshold
	}
	return out
}

func wilson(k, n int) review.Interval {
	if n == 0 {
		nan := review.Number(math.NaN())
		return review.Interval{Value: nan, Lo: nan, Hi: nan}
	}
	lo, hi := review.Wilson(k, n)
	return review.Interval{Value: review.Number(float64(k) / float64(n)), Lo: review.Number(lo), Hi: review.Number(hi), N: n}
}
