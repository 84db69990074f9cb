// Package manifests runs one deduplication configuration over a stored dataset and carries
// the removal manifest it proposes through review, sign-off and export. It is the glue
// between the store (internal/db), the signature cache (internal/sigcache), the
// clustering core (internal/cluster) and the manifest's rules (internal/review); it does
// no HTTP. Nothing here deletes a document: an export writes tombstones, which can be
// restored.
//
// A run (Run) goes the way a production pipeline would, on the whole dataset:
//
//  1. signatures under the representation, from the cache (signed and stored on first use);
//  2. candidate pairs from the banding (a band bucket of more than MaxBucket documents
//     contributes the pairs among its first MaxBucket, as the sweep does);
//  3. the exact pass: documents whose normalized texts are equal (SHA-256) collapse into
//     one exact group, removed for a reason nobody needs to review;
//  4. verification of every candidate by the MinHash estimate or exact Jaccard;
//  5. clustering under every policy on the same verified pairs, compared side by side
//     (removals, clusters, chained clusters and, where the dataset has labels, false
//     merges), and the chosen policy's clusters stored as a draft manifest.
package manifests

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// MaxBucket bounds the documents of one band bucket that pair up (lsh.CandidatesBounded);
// it is lsh.MaxBucket, the bound of the sweep and of the dedup command too.
const MaxBucket = lsh.MaxBucket

// Request is one configuration to run over a dataset.
type Request struct {
	DatasetID int64
	// CampaignID names the campaign whose labels count false merges (and score the
	// configuration); 0 takes the dataset's oldest campaign, if it has one.
	CampaignID        int64
	Params            review.Params
	ApprovalsRequired int    // 0 for review.DefaultApprovals
	Team              string // why fewer approvals than the default (recorded with the lowering)
	By                db.User
	// CarryFrom is a manifest of the same dataset prepared again by this run: its
	// approvals and exclusions carry over where the same document is removed in favour
	// of the same keeper. 0 for none.
	CarryFrom int64
	// RunID is the run's record (db.DB.StartRun), marked done with the manifest; 0 for
	// none.
	RunID int64
}

// Progress is where a run is: a phase and how far through it.
type Progress struct {
	Phase       string
	Done, Total int
}

// Phases of a run, in order.
const (
	PhaseSignatures = "signing documents"
	PhaseCandidates = "finding candidate pairs"
	PhaseTexts      = "reading texts (exact pass)"
	PhaseVerify     = "verifying candidates"
	PhaseCluster    = "clustering under each policy"
	PhaseLabels     = "scoring against the labels"
	PhaseSave       = "saving the manifest"
)

// Run runs req over the live documents of its dataset (those under no standing
// tombstone: a document another manifest removed is neither proposed for removal nor
// kept) and stores the result as a draft manifest prepared by req.By, marked with what it
// read (the newest change of the live documents, the newest label event), so a later
// change makes it stale. report (may be nil) is told the phase and progress; cancelling
// ctx stops the run between steps and stores nothing.
func Run(ctx context.Context, store *db.DB, sigs *sigcache.Cache, req Request, report func(Progress)) (db.Manifest, error) {
	if report == nil {
		report = func(Progress) {}
	}
	p := req.Params
	ds, live, err := datasetToRun(ctx, store, p, req.DatasetID)
	if err != nil {
		return db.Manifest{}, err
	}
	infos := live.Docs
	var carry *carrier
	if req.CarryFrom != 0 {
		if carry, err = carrierOf(ctx, store, ds.ID, req.CarryFrom); err != nil {
			return db.Manifest{}, err
		}
	}

	set, index, err := signaturesOf(ctx, sigs, ds.ID, p.Spec, infos, report)
	if err != nil {
		return db.Manifest{}, err
	}

	report(Progress{Phase: PhaseCandidates})
	cands, _, err := lsh.CandidatesBounded(set.Sigs, p.Shape, MaxBucket)
	if err != nil {
		return db.Manifest{}, &review.InputError{Field: "bands × rows", Msg: err.Error()}
	}
	if err := ctx.Err(); err != nil {
		return db.Manifest{}, err
	}

	ls, err := loadLabels(ctx, store, ds.ID, req.CampaignID, index)
	if err != nil {
		return db.Manifest{}, err
	}
	sets := newShingleSets(store, p.Spec)
	exact, texts, err := readTexts(ctx, store, ds.ID, p, infos, index, cands, sets, ls.set.Counted > 0, report)
	if err != nil {
		return db.Manifest{}, err
	}

	report(Progress{Phase: PhaseVerify, Total: len(cands)})
	sim := similarity(ctx, p.Verification, set.Sigs, infos, sets)
	edges, err := verify(ctx, cands, sim, report)
	if err != nil {
		return db.Manifest{}, err
	}
	docs := make([]cluster.Doc, len(infos))
	for i, di := range infos {
		docs[i] = docOf(di)
	}
	g, err := cluster.NewGraph(cluster.Input{Docs: docs, Exact: exact, Edges: edges, Sim: sim})
	if err != nil {
		return db.Manifest{}, err
	}

	chosen, comparison, err := comparePolicies(ctx, g, p, ls, report)
	if err != nil {
		return db.Manifest{}, err
	}
	if err := sets.err; err != nil {
		return db.Manifest{}, err
	}

	var estimates *review.Estimates
	if ls.set.Counted > 0 {
		report(Progress{Phase: PhaseLabels})
		estimates, err = scoreConfiguration(ctx, store, scoreInput{labels: ls, params: p, sigs: set.Sigs, texts: texts, docs: docs,
			exact: exact, sim: sim, signatures: func(ctx context.Context, spec lsh.Spec) ([]lsh.Signature, error) {
				other, _, err := signaturesOf(ctx, sigs, ds.ID, spec, infos, func(Progress) {})
				return other.Sigs, err
			}})
		if err != nil {
			return db.Manifest{}, err
		}
		texts = nil
		if err := sets.err; err != nil {
			return db.Manifest{}, err
		}
	}

	report(Progress{Phase: PhaseSave})
	clusters, err := manifestClusters(ctx, chosen, p, infos, set.Sigs, sets)
	if err != nil {
		return db.Manifest{}, err
	}
	var carried *review.CarriedOver
	if carry != nil {
		carried = carry.apply(clusters)
	}
	if err := ctx.Err(); err != nil {
		return db.Manifest{}, err
	}
	labelMark := int64(-1)
	if ls.campaign.ID != 0 {
		labelMark = live.LabelMark
	}
	return store.CreateManifest(context.WithoutCancel(ctx), req.By, db.NewManifest{
		DatasetID: ds.ID, CampaignID: ls.campaign.ID, Params: p, DatasetHash: live.Snapshot, ApprovalsRequired: approvalsOr(req.ApprovalsRequired),
		Team: req.Team, Comparison: comparison, Estimates: estimates, Clusters: clusters, LiveMark: live.LiveMark, LabelMark: labelMark,
		CarriedOver: carried, RunID: req.RunID,
	})
}

// approvalsOr is n, or review.DefaultApprovals for 0.
func approvalsOr(n int) int {
	if n <= 0 {
		return review.DefaultApprovals
	}
	return n
}

// datasetToRun checks the parameters and reads the dataset's live documents (at least
// two), its snapshot and the marks, from one view of the store.
func datasetToRun(ctx context.Context, store *db.DB, p review.Params, datasetID int64) (db.Dataset, db.LiveState, error) {
	if err := p.Validate(); err != nil {
		return db.Dataset{}, db.LiveState{}, err
	}
	ds, err := store.Dataset(ctx, datasetID)
	if err != nil {
		return db.Dataset{}, db.LiveState{}, err
	}
	live, err := store.LiveState(ctx, ds.ID)
	if err != nil {
		return db.Dataset{}, db.LiveState{}, err
	}
	if err := TooFew(ds, len(live.Docs)); err != nil {
		return db.Dataset{}, db.LiveState{}, err
	}
	return ds, live, nil
}

// TooFew refuses, as a *review.InputError on the field "dataset", a run over ds when
// fewer than two of its documents are live (under no exported manifest's tombstone):
// there is no pair, so nothing to deduplicate. The run form asks it before a run starts.
func TooFew(ds db.Dataset, live int) error {
	if live >= 2 {
		return nil
	}
	docs := "document"
	if live != 1 {
		docs = "documents"
	}
	msg := fmt.Sprintf("%s has %d %s: nothing to deduplicate", ds.Name, live, docs)
	if removed := ds.Docs - live; removed > 0 {
		msg = fmt.Sprintf("%s has %d live %s (%d removed by exported manifests): nothing to deduplicate", ds.Name, live, docs, removed)
	}
	return &review.InputError{Field: "dataset", Msg: msg}
}

// similarity is how a candidate pair is verified: the MinHash estimate, or exact
// Jaccard of the shingle sets (a text that cannot be read counts as not similar; the
// error surfaces from sets.err).
func similarity(ctx context.Context, v review.Verification, sigs []lsh.Signature, infos []db.DocInfo, sets *shingleSets) func(a, b int) float64 {
	if v != review.Exact {
		return func(a, b int) float64 { return lsh.Estimate(sigs[a], sigs[b]) }
	}
	return func(a, b int) float64 {
		s, err := sets.jaccard(ctx, infos[a].ID, infos[b].ID)
		if err != nil {
			return 0
		}
		return s
	}
}

// signaturesOf returns the signatures under spec of the documents infos (the live ones,
// in import order), from the cache (which holds every document of the dataset), and each
// document's index in them and in infos.
func signaturesOf(ctx context.Context, sigs *sigcache.Cache, datasetID int64, spec lsh.Spec, infos []db.DocInfo, report func(Progress)) (sigcache.Set, map[int64]int, error) {
	report(Progress{Phase: PhaseSignatures})
	all, err := sigs.Signatures(ctx, datasetID, spec, func(done, total int) { report(Progress{PhaseSignatures, done, total}) })
	if err != nil {
		return sigcache.Set{}, nil, err
	}
	set := sigcache.Set{Spec: all.Spec, IDs: make([]int64, len(infos)), Sigs: make([]lsh.Signature, len(infos))}
	index := make(map[int64]int, len(infos))
	j := 0
	for i, di := range infos {
		for j < len(all.IDs) && all.IDs[j] < di.ID {
			j++
		}
		if j == len(all.IDs) || all.IDs[j] != di.ID {
			return sigcache.Set{}, nil, fmt.Errorf("run on dataset %d: no signature of document %d", datasetID, di.ID)
		}
		set.IDs[i], set.Sigs[i] = di.ID, all.Sigs[j]
		index[di.ID] = i
	}
	return set, index, nil
}

// readTexts is the one pass over the texts: the normalized hash of every document for
// the exact pass (the groups of equal ones it returns, by first member), under exact
// verification the shingle sets of every document in a candidate (into sets), and, when
// keepTexts (there are labels to score against), the texts themselves.
func readTexts(ctx context.Context, store *db.DB, datasetID int64, p review.Params, infos []db.DocInfo, index map[int64]int, cands []lsh.Candidate,
	sets *shingleSets, keepTexts bool, report func(Progress)) (exact [][]int, texts []string, err error) {
	if keepTexts {
		texts = make([]string, len(infos))
	}
	var want map[int64]bool
	if p.Verification == review.Exact {
		want = make(map[int64]bool)
		for _, c := range cands {
			want[infos[c.A].ID], want[infos[c.B].ID] = true, true
		}
	}
	norm := lsh.NewNormalizer(p.Spec.Norm)
	groupOf := map[[32]byte][]int{}
	err = store.EachDocument(ctx, datasetID, func(doc db.Document) error {
		i, live := index[doc.ID]
		if !live {
			return nil // tombstoned: not part of the run
		}
		if i%512 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			report(Progress{PhaseTexts, i, len(infos)})
		}
		key := sha256.Sum256([]byte(norm.Normalize(doc.Text)))
		groupOf[key] = append(groupOf[key], i)
		if want[doc.ID] {
			sets.add(doc.ID, doc.Text)
		}
		if texts != nil {
			texts[i] = doc.Text
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, g := range groupOf {
		if len(g) > 1 {
			exact = append(exact, g)
		}
	}
	slices.SortFunc(exact, func(a, b []int) int { return a[0] - b[0] })
	return exact, texts, nil
}

// verify scores every candidate pair with sim.
func verify(ctx context.Context, cands []lsh.Candidate, sim func(a, b int) float64, report func(Progress)) ([]cluster.Edge, error) {
	edges := make([]cluster.Edge, len(cands))
	for i, c := range cands {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			report(Progress{PhaseVerify, i, len(cands)})
		}
		edges[i] = cluster.Edge{A: c.A, B: c.B, Sim: sim(c.A, c.B)}
	}
	return edges, nil
}

// comparePolicies clusters the verified pairs under every policy, for the side-by-side
// comparison, and returns the chosen policy's result with it.
func comparePolicies(ctx context.Context, g *cluster.Graph, p review.Params, ls labelSet, report func(Progress)) (chosen cluster.Result, comparison []review.PolicyStats, err error) {
	for i, pol := range cluster.Policies() {
		report(Progress{PhaseCluster, i, len(cluster.Policies())})
		cfg := p.Config()
		cfg.Policy = pol
		res, err := g.Cluster(cfg)
		if err != nil {
			return cluster.Result{}, nil, err
		}
		if err := ctx.Err(); err != nil {
			return cluster.Result{}, nil, err
		}
		comparison = append(comparison, statsOf(res, ls))
		if pol == p.Policy {
			chosen = res
		}
	}
	return chosen, comparison, nil
}

// docOf is what the keeper rule reads of a document (cluster.DocOf).
func docOf(di db.DocInfo) cluster.Doc { return cluster.DocOf(di.Bytes, di.Source, di.Lang, di.Meta) }

// manifestClusters turns the chosen clustering into the manifest's clusters, with every
// removal's MinHash estimate and exact Jaccard to its keeper.
func manifestClusters(ctx context.Context, res cluster.Result, p review.Params, infos []db.DocInfo, sigs []lsh.Signature, sets *shingleSets) ([]db.Cluster, error) {
	var need []int64
	for _, c := range res.Clusters {
		for _, m := range c.Members {
			need = append(need, infos[m].ID)
		}
	}
	if err := sets.ensure(ctx, need); err != nil {
		return nil, err
	}
	id := func(i int) int64 { return infos[i].ID }
	out := make([]db.Cluster, 0, len(res.Clusters))
	for _, c := range res.Clusters {
		dc := storedCluster(c, p, id)
		for _, rm := range c.Removed {
			ex, err := sets.jaccard(ctx, id(rm.Doc), id(c.Keeper))
			if err != nil {
				return nil, err
			}
			dc.Items = append(dc.Items, db.Item{Doc: id(rm.Doc), Keeper: id(c.Keeper), Score: rm.Sim, Reason: rm.Reason,
				Estimate: lsh.Estimate(sigs[rm.Doc], sigs[c.Keeper]), Exact: ex, Decision: review.Proposed})
		}
		out = append(out, dc)
	}
	return out, nil
}

// storedCluster is a cluster's diagnostics as the store keeps them, documents named by id
// (items left to the caller).
func storedCluster(c cluster.Cluster, p review.Params, id func(int) int64) db.Cluster {
	dc := db.Cluster{Keeper: id(c.Keeper), KeeperRule: p.Rule.String(), Override: c.Override, Size: len(c.Members),
		Chained: c.Diag.Chained, ChainedMembers: c.Diag.ChainedMembers, WeakestLink: c.Diag.WeakestSim, Weakest: id(c.Diag.Weakest),
		Links: make([]db.Link, len(c.Links))}
	for i, l := range c.Links {
		dc.Links[i] = db.Link{A: id(l.A), B: id(l.B), Sim: l.Sim}
	}
	for _, d := range c.Diag.Chain.Docs {
		dc.Chain.Docs = append(dc.Chain.Docs, id(d))
	}
	dc.Chain.Sims = slices.Clone(c.Diag.Chain.Sims)
	if cut := c.Diag.Cut; cut.Chained > 0 {
		dc.Cut = db.Cut{A: id(cut.Edge.A), B: id(cut.Edge.B), Sim: cut.Edge.Sim, Chained: cut.Chained, Unchained: cut.Unchained}
	}
	return dc
}

// shingleSets holds the shingle sets of some documents of a dataset, reading texts from
// the store for the ones it lacks. It is not safe for concurrent use.
type shingleSets struct {
	store *db.DB
	h     *lsh.Hasher
	sets  map[int64][]uint64
	err   error // the first failure to read a text (Sim cannot return one)
}

func newShingleSets(store *db.DB, spec lsh.Spec) *shingleSets {
	h, _ := lsh.NewHasher(spec) // the spec is validated before
	return &shingleSets{store: store, h: h, sets: map[int64][]uint64{}}
}

func (s *shingleSets) add(id int64, text string) { s.sets[id] = s.h.ShingleSet(text) }

// ensure reads and shingles the documents of ids it lacks, 500 at a time.
func (s *shingleSets) ensure(ctx context.Context, ids []int64) error {
	var missing []int64
	for _, id := range ids {
		if _, ok := s.sets[id]; !ok {
			missing = append(missing, id)
		}
	}
	missing = slices.Compact(slices.Sorted(slices.Values(missing)))
	for lo := 0; lo < len(missing); lo += 500 {
		if err := ctx.Err(); err != nil {
			return err
		}
		part := missing[lo:min(lo+500, len(missing))]
		texts, err := s.store.DocumentTexts(ctx, part)
		if err != nil {
			return err
		}
		for i, id := range part {
			s.add(id, texts[i])
		}
	}
	return nil
}

// jaccard returns the exact Jaccard similarity of two documents.
func (s *shingleSets) jaccard(ctx context.Context, a, b int64) (float64, error) {
	if err := s.ensure(ctx, []int64{a, b}); err != nil {
		if s.err == nil {
			s.err = err
		}
		return 0, err
	}
	return lsh.ExactJaccard(s.sets[a], s.sets[b]), nil
}
