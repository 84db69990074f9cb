package manifests

import (
	"context"
	"fmt"
	"math"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// labelSet is a campaign's labeled pairs over a run's documents, resolved by
// sweep.LabelRule (the rule the sweep pages quote too).
type labelSet struct {
	campaign db.Campaign
	pairs    []sweep.LabeledPair // every labeled pair between documents of the dataset
	set      sweep.LabelSet      // the pairs that count, with their label
	// gone are the documents of the dataset no longer live (an export tombstoned them)
	// that pairs name, indexed after the live ones: their labels still count for the
	// estimates' bins (sweep.Input.Gone), never for the run's own documents.
	gone []int64
}

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

// loadLabels reads the labels of the run's campaign and resolves them. index maps the
// dataset's document ids to their positions. A label made by someone signed in counts
// as a person's; an imported one (the demo's rule labels among them) as a rule's, which
// counts only where no person settles the pair. Pairs that carry the sampling design
// that drew them (migration 0009) feed the dataset-level estimates; the others count on
// the labeled-pairs basis.
func loadLabels(ctx context.Context, store *db.DB, datasetID, campaignID int64, index map[int64]int) (labelSet, error) {
	c, err := campaignFor(ctx, store, datasetID, campaignID)
	if err != nil || c.ID == 0 {
		return labelSet{campaign: c}, err
	}
	pls, err := store.SweepPairs(ctx, c.ID)
	if err != nil {
		return labelSet{}, err
	}
	ls := labelSet{campaign: c}
	goneAt := map[int64]int{}
	at := func(id int64) int {
		if i, ok := index[id]; ok {
			return i
		}
		i, ok := goneAt[id]
		if !ok {
			i = len(index) + len(ls.gone)
			goneAt[id] = i
			ls.gone = append(ls.gone, id)
		}
		return i
	}
	for _, pl := range pls {
		if len(pl.Labels) == 0 {
			continue
		}
		a, b := at(pl.A), at(pl.B)
		lp := sweep.LabeledPair{ID: pl.ID, A: a, B: b, Flagged: pl.Flagged, Skipped: pl.Skipped, Design: pl.Design, Stratum: pl.Stratum,
			FrameSize: pl.FrameSize, Origin: pl.Origin}
		for _, l := range pl.Labels {
			lp.Labels = append(lp.Labels, sweep.Label{Annotator: l.Annotator, Kind: string(l.Kind), Category: l.Category,
				Duplicate: l.Duplicate, Rule: !l.ByAccount})
		}
		ls.pairs = append(ls.pairs, lp)
	}
	if ls.set, err = sweep.ResolveOver(ls.pairs, c.Categories, len(index), len(ls.gone)); err != nil {
		return labelSet{}, err
	}
	return ls, nil
}

// statsOf counts what one policy did, and what it did to the counted labeled pairs.
func statsOf(res cluster.Result, ls labelSet) review.PolicyStats {
	s := review.PolicyStats{Policy: res.Config.Policy, Removed: res.Removed, RemovedExact: res.RemovedExact,
		Clusters: len(res.Clusters), Chained: res.Chained, SimCalls: res.SimCalls, Limited: res.Limited}
	for _, c := range res.Clusters {
		s.Largest = max(s.Largest, len(c.Members))
	}
	for _, lp := range ls.set.Pairs {
		together := res.Together(lp.A, lp.B)
		if lp.Duplicate {
			s.LabeledDuplicates++
			if together {
				s.DuplicatesTogether++
			}
		} else {
			s.LabeledNonDuplicates++
			if together {
				s.FalseMerges++
			}
		}
	}
	return s
}

// scoreInput is what scoring a run's configuration against its labels reads.
type scoreInput struct {
	labels labelSet
	params review.Params
	sigs   []lsh.Signature
	texts  []string
	docs   []cluster.Doc
	exact  [][]int
	sim    func(a, b int) float64
	// signatures returns the dataset's signatures under another representation (the
	// campaign's, for the estimates' bins); nil when only sigs are at hand.
	signatures func(ctx context.Context, spec lsh.Spec) ([]lsh.Signature, error)
}

// scoreConfiguration scores a manifest's configuration against the campaign's labels as
// a sweep of one configuration (internal/sweep): recall, cluster recall, false merges and
// precision on the labeled pairs and by category, each with its interval and count, and,
// where the labels record how they were drawn, recall and false removals over the whole
// dataset under the manifest's own keeper rule and cluster policy (the sweep clusters
// with internal/cluster exactly as the run does); plus the campaign's agreement.
func scoreConfiguration(ctx context.Context, store *db.DB, in scoreInput) (*review.Estimates, error) {
	p, c := in.params, in.labels.campaign
	grid := sweep.ConfigOf(p).Grid()
	goneTexts, err := store.DocumentTexts(ctx, in.labels.gone)
	if err != nil {
		return nil, fmt.Errorf("score the configuration: texts of documents no longer live: %w", err)
	}
	rep, err := sweep.Run(ctx, sweep.Input{
		Docs: sweep.Documents{Count: len(in.texts), Text: func(i int) string { return in.texts[i] }, Keep: in.docs},
		Signatures: func(ctx context.Context, spec lsh.Spec) ([]lsh.Signature, error) {
			if spec == p.Spec {
				return in.sigs, nil
			}
			if in.signatures == nil {
				return nil, fmt.Errorf("score the configuration: signatures under %s asked for, %s held", spec.ID(), p.Spec.ID())
			}
			return in.signatures(ctx, spec)
		},
		Pairs: in.labels.pairs, Categories: c.Categories, Rep: c.Spec,
		Gone: sweep.GoneDocuments{Count: len(goneTexts), Text: func(i int) string { return goneTexts[i] }},
	}, grid, sweep.Options{Seed: 1, MaxBucket: MaxBucket, Rules: []cluster.Rule{p.Rule}})
	if err != nil {
		return nil, err
	}
	if len(rep.Results) != 1 {
		return nil, fmt.Errorf("score the configuration: %d results for one configuration", len(rep.Results))
	}
	r := rep.Results[0]
	sum, err := campaign.Summary(ctx, store, c)
	if err != nil {
		return nil, err
	}
	ls := rep.Labels
	e := &review.Estimates{Campaign: c.ID, CampaignName: c.Name, LabelRule: sweep.LabelRule, LabelVersion: ls.Version,
		Counted: ls.Counted, Left: ls.Flagged + ls.Skipped + ls.Tied + ls.Unlabeled,
		Alpha: review.Number(sum.Agreement.Alpha), AlphaUnits: sum.Agreement.Units,
		Recall: rate(r.Recall), ClusterRecall: rate(r.ClusterRecall), FalseMerges: rate(r.FalseMerges), Precision: rate(r.Precision)}
	dupOf := map[string]bool{}
	for _, cat := range c.Categories {
		dupOf[cat.Key] = cat.Duplicate == labels.Yes
	}
	for _, cs := range r.Categories {
		e.Categories = append(e.Categories, review.CategoryRate{Category: cs.Category, Duplicate: dupOf[cs.Category],
			Recall: rate(cs.Recall), FalseMerges: rate(cs.FalseMerges)})
	}
	none := interval(sweep.Interval{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}, 0)
	e.DatasetRecall, e.FalseRemovals, e.FalseRemovalRate = none, none, none
	if d, m := r.Dataset, rep.Model; d != nil && m != nil && len(d.Rules) > 0 {
		re := d.Rules[0]
		e.Design, e.DesignPairs, e.Replicates = m.Basis, m.Pairs, m.Replicates
		e.KeeperRule, e.Removals, e.Certain, e.Assumption = re.Rule, re.Removals, re.Certain, m.Assumption()
		e.DatasetRecall = interval(d.Recall, m.Pairs)
		e.FalseRemovals = interval(re.FalseRemovals, m.Pairs)
		e.FalseRemovalRate = interval(re.FalseRemovalRate, m.Pairs)
		e.Notes = append(e.Notes, m.Notes...)
	}
	if r.Dataset == nil {
		e.Notes = append(e.Notes, "No labeled pair records how it was drawn: the rates describe the labeled pairs, "+
			"not the whole dataset. Draw pairs from the campaign page to estimate over it.")
	}
	return e, nil
}

func rate(r sweep.Rate) review.Interval {
	return review.Interval{Value: review.Number(r.Value), Lo: review.Number(r.Lo), Hi: review.Number(r.Hi), N: r.Of}
}

func interval(iv sweep.Interval, n int) review.Interval {
	return review.Interval{Value: review.Number(iv.Value), Lo: review.Number(iv.Lo), Hi: review.Number(iv.Hi), N: n}
}
