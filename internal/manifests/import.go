package manifests

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// DefaultSample is how many clusters of an imported run people review when it has more:
// a stratified sample (review.DrawSample) instead of every cluster.
const DefaultSample = 200

// ImportRequest is a production engine's results to bring back as a manifest for review.
type ImportRequest struct {
	DatasetID int64
	Format    results.Format
	File      results.Source
	Remove    results.Source // datatrove's .remove beside a .clusters file; Reader nil for none
	// Folder, when set, is read instead of File: datatrove's MinhashDedupCluster output
	// folder (remove_ids) with the ids each task read.
	Folder  *results.Folder
	Options results.Options
	// Params is the configuration production ran (a manifest's, or a settings.json);
	// nil takes the one a manifest file names, and a manifest file refuses one that
	// differs from its rows. The imported manifest records the policy a manifest file
	// names, or connected components (what the engines do) for the other formats.
	Params *review.Params
	// OtherDataset imports a manifest file whose rows name a dataset other than
	// DatasetID's (refused otherwise).
	OtherDataset bool
	// IgnoreFileKeepers chooses every keeper by the configuration's rule, even where the
	// file says which document the engine kept.
	IgnoreFileKeepers bool
	// SkipUnknown skips and counts records naming documents the dataset does not have.
	SkipUnknown bool
	// Sample is how many clusters people review (0: DefaultSample; negative: all of
	// them); Seed draws them.
	Sample            int
	Seed              uint64
	ApprovalsRequired int    // 0 for review.DefaultApprovals
	Team              string // why fewer approvals than the default (recorded with the lowering)
	By                db.User
	// ByName is who the origin names as the importer (the account, or cli:$USER).
	ByName string
}

// Phases of an import, in order.
const (
	PhaseRead    = "reading the results file"
	PhaseBuild   = "building clusters"
	PhaseMeasure = "measuring each cluster here"
	PhaseImport  = "saving the manifest"
)

// ImportResults reads req.File, builds its clusters over the dataset, measures each
// removal here (MinHash estimate and exact Jaccard to its keeper under the
// configuration's representation, exact duplicates, chains over the engine's links),
// draws the review sample and stores it all as one draft manifest, in one transaction:
// a bad file, an unknown id or a cancel stores nothing.
func ImportResults(ctx context.Context, store *db.DB, req ImportRequest, report func(Progress)) (db.Manifest, error) {
	if report == nil {
		report = func(Progress) {}
	}
	ds, err := store.Dataset(ctx, req.DatasetID)
	if err != nil {
		return db.Manifest{}, err
	}
	report(Progress{Phase: PhaseRead})
	var read *results.Read
	if req.Folder != nil {
		f := *req.Folder
		f.Options = req.Options // the row cap holds for a folder too
		read, err = results.ReadDatatroveFolder(f)
	} else {
		read, err = results.ReadFile(req.File, req.Format, req.Remove, req.Options)
	}
	if err != nil {
		return db.Manifest{}, err
	}
	var p review.Params
	policy := "the engine's: connected components of its pairs (" + string(read.Format) + " applies no cluster policy of the configuration's)"
	switch {
	case read.Params != nil:
		// A manifest file names the configuration it ran: one given as well must agree.
		p = *read.Params
		if req.Params != nil {
			if name, file, given := paramsDiffer(*read.Params, *req.Params); name != "" {
				// As every error about the file, it starts with the file's name.
				return db.Manifest{}, &results.InputError{Field: "file", Msg: fmt.Sprintf("%s: %s: the file's rows say %s, the configuration given says %s; "+
					"a manifest file names the configuration it ran: import it with the file's own (no -config or -manifest; on the form, \"the file's own\")", read.File, name, file, given)}
			}
		}
		policy = string(p.Policy) + ", as the file's rows say"
		if read.Dataset != "" && read.Dataset != ds.Name && !req.OtherDataset {
			return db.Manifest{}, &results.InputError{Field: "file", Msg: fmt.Sprintf("%s: field dataset: its rows are of dataset %q, not %q: import it into that dataset, "+
				"or say it is this one's (-other-dataset; on the form, \"rows of another dataset\")", read.DatasetAt, read.Dataset, ds.Name)}
		}
	case req.Params != nil:
		p = *req.Params
		p.Policy = cluster.Components
		if read.Format.SearchBeforeInsert() && read.KeeperGiven && !req.IgnoreFileKeepers {
			policy = "the engine's: each query removed in favour of its best stored hit (search before insert)"
		}
	default:
		return db.Manifest{}, &review.InputError{Field: "configuration", Msg: "name the configuration production ran (a manifest, or its settings.json): a " +
			string(req.Format) + " file does not say"}
	}
	if err := p.Validate(); err != nil {
		return db.Manifest{}, err
	}
	if err := ctx.Err(); err != nil {
		return db.Manifest{}, err
	}

	report(Progress{Phase: PhaseBuild})
	infos, err := store.DatasetDocs(ctx, ds.ID)
	if err != nil {
		return db.Manifest{}, err
	}
	rds := results.Dataset{Name: ds.Name, IDs: make([]string, len(infos)), Docs: make([]cluster.Doc, len(infos))}
	for i, di := range infos {
		rds.IDs[i], rds.Docs[i] = di.ExtID, docOf(di)
	}
	built, err := results.Build(read, rds, results.BuildOptions{Rule: p.Rule, IgnoreFileKeepers: req.IgnoreFileKeepers, SkipUnknown: req.SkipUnknown})
	if err != nil {
		return db.Manifest{}, err
	}
	// The engine ran over the corpus as it was: documents exported manifests removed
	// since are neither proposed again nor kept.
	live, err := store.LiveState(ctx, ds.ID)
	if err != nil {
		return db.Manifest{}, err
	}
	lc := liveClusters(built.Clusters, infos, rds.Docs, p.Rule, live.Docs)
	built.Clusters = lc.clusters
	built.Removals = 0
	for _, c := range built.Clusters {
		built.Removals += len(c.Members) - 1
	}

	clusters, err := measure(ctx, store, p, read.Format, infos, built.Clusters, report)
	if err != nil {
		return db.Manifest{}, err
	}
	target := req.Sample
	if target == 0 {
		target = DefaultSample
	}
	units := make([]review.SampleUnit, len(clusters))
	for i, c := range clusters {
		units[i] = review.SampleUnit{Size: c.Size, Weakest: c.WeakestLink}
		if c.EngineWeakest != nil {
			units[i].Weakest = *c.EngineWeakest
		}
	}
	sample, strata := review.DrawSample(units, target, req.Seed)
	for i := range clusters {
		clusters[i].SampleStratum = strata[i]
	}
	keepers := "rule"
	if read.KeeperGiven && !req.IgnoreFileKeepers {
		keepers = "file"
	}
	origin := &review.Origin{Format: string(read.Format), File: read.File, SHA256: read.SHA256, Records: read.Records,
		Pairs: len(read.Pairs), Members: len(read.Members), Skipped: built.Skipped, SkippedIDs: built.SkippedIDs,
		Clusters: len(clusters), Removals: built.Removals, Keepers: keepers, Policy: policy, ImportedBy: req.ByName,
		ImportedAt: time.Now().UTC(), Sample: sample, AlreadyRemoved: lc.removed, AlreadyRemovedIDs: lc.examples, Rekept: lc.rekept}
	if read.Format == results.Manifest {
		origin.Pairs = 0 // its pairs are the removals and their keepers, already counted
	}

	report(Progress{Phase: PhaseImport})
	if err := ctx.Err(); err != nil {
		return db.Manifest{}, err
	}
	return store.CreateManifest(context.WithoutCancel(ctx), req.By, db.NewManifest{
		DatasetID: ds.ID, Params: p, DatasetHash: live.Snapshot, ApprovalsRequired: approvalsOr(req.ApprovalsRequired),
		Team: req.Team, Origin: origin, Clusters: clusters, LiveMark: live.LiveMark, LabelMark: -1,
	})
}

// liveCut is what liveClusters made of an engine's clusters.
type liveCut struct {
	clusters []results.Cluster
	removed  int      // tombstoned members left out
	examples []string // the first of them
	rekept   int      // clusters whose keeper was tombstoned, now keeping a live member
}

// liveClusters leaves the documents under a standing tombstone out of an engine's
// clusters (infos: every document of the dataset; live: the live ones): a cluster keeps
// its live members, a tombstoned keeper gives way to the live member rule keeps, and a
// cluster left with fewer than two members is gone. Links to a member left out go too,
// and so does the engine's weakest link of a cluster that lost a member.
func liveClusters(cs []results.Cluster, infos []db.DocInfo, docs []cluster.Doc, rule cluster.Rule, live []db.DocInfo) liveCut {
	alive := make(map[int64]bool, len(live))
	for _, di := range live {
		alive[di.ID] = true
	}
	var out liveCut
	if len(alive) == len(infos) {
		out.clusters = cs
		return out
	}
	for _, c := range cs {
		var members []int
		for _, m := range c.Members {
			if alive[infos[m].ID] {
				members = append(members, m)
				continue
			}
			out.removed++
			if len(out.examples) < results.MaxListed {
				out.examples = append(out.examples, infos[m].ExtID)
			}
		}
		if len(members) == len(c.Members) {
			out.clusters = append(out.clusters, c)
			continue
		}
		if len(members) < 2 {
			continue
		}
		nc := results.Cluster{Members: members, Keeper: c.Keeper, KeeperFromFile: c.KeeperFromFile, Weakest: math.NaN()}
		if !alive[infos[c.Keeper].ID] {
			nc.Keeper, nc.KeeperFromFile = rule.Keeper(docs, members), false
			out.rekept++
		}
		for _, l := range c.Links {
			if alive[infos[l.A].ID] && alive[infos[l.B].ID] {
				nc.Links = append(nc.Links, l)
			}
		}
		out.clusters = append(out.clusters, nc)
	}
	return out
}

// paramsDiffer names the first setting in which a and b differ, with a's and b's
// values; "" when they agree.
func paramsDiffer(a, b review.Params) (name, av, bv string) {
	for _, f := range []struct{ name, a, b string }{
		{"spec", a.Spec.String(), b.Spec.String()},
		{"bands", strconv.Itoa(a.Shape.Bands), strconv.Itoa(b.Shape.Bands)},
		{"rows", strconv.Itoa(a.Shape.Rows), strconv.Itoa(b.Shape.Rows)},
		{"threshold", strconv.FormatFloat(a.Threshold, 'g', -1, 64), strconv.FormatFloat(b.Threshold, 'g', -1, 64)},
		{"verification", string(a.Verification), string(b.Verification)},
		{"policy", string(a.Policy), string(b.Policy)},
		{"keeper_rule", a.Rule.String(), b.Rule.String()},
	} {
		if f.a != f.b {
			return f.name, f.a, f.b
		}
	}
	return "", "", ""
}

// measureBatch is how many documents' texts are read and signed at a time.
const measureBatch = 2000

// measure turns the engine's clusters into the manifest's, measured here: each removal's
// MinHash estimate and exact Jaccard to its keeper, exact duplicates of the keeper
// (reason exact), the links (the engine's scored pairs, or, when it gave none, each
// member's link to the keeper as measured here), the weakest similarity to the keeper,
// the members chained (under the threshold by the verification's measure) and the
// longest chain of links from the keeper.
func measure(ctx context.Context, store *db.DB, p review.Params, format results.Format, infos []db.DocInfo, cs []results.Cluster, report func(Progress)) ([]db.Cluster, error) {
	h, err := lsh.NewHasher(p.Spec)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, c := range cs {
		total += len(c.Members)
	}
	out := make([]db.Cluster, 0, len(cs))
	done := 0
	for lo := 0; lo < len(cs); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		report(Progress{PhaseMeasure, done, total})
		hi, n := lo, 0
		for hi < len(cs) && (n == 0 || n+len(cs[hi].Members) <= measureBatch) {
			n += len(cs[hi].Members)
			hi++
		}
		var ids []int64
		for _, c := range cs[lo:hi] {
			for _, m := range c.Members {
				ids = append(ids, infos[m].ID)
			}
		}
		texts, err := store.DocumentTexts(ctx, ids)
		if err != nil {
			return nil, err
		}
		sigs, err := p.Spec.Signatures(texts)
		if err != nil {
			return nil, err
		}
		at := 0
		for _, c := range cs[lo:hi] {
			k := len(c.Members)
			ct, csigs := texts[at:at+k], sigs[at:at+k]
			at += k
			sets := make([][]uint64, k)
			for i, t := range ct {
				sets[i] = h.ShingleSet(t)
			}
			out = append(out, measureCluster(p, format, infos, c, ct, csigs, sets))
		}
		done += n
		lo = hi
	}
	report(Progress{PhaseMeasure, total, total})
	return out, nil
}

// measureCluster is one cluster as the store keeps it; texts, sigs and sets are its
// members', in c.Members's order.
func measureCluster(p review.Params, format results.Format, infos []db.DocInfo, c results.Cluster, texts []string, sigs []lsh.Signature, sets [][]uint64) db.Cluster {
	loc := func(d int) int { i, _ := slices.BinarySearch(c.Members, d); return i }
	id := func(d int) int64 { return infos[d].ID }
	k := loc(c.Keeper)
	exactOf := map[int]bool{}
	for _, g := range cluster.ExactGroups(texts, p.Spec.Norm) {
		if slices.Contains(g, k) {
			for _, i := range g {
				exactOf[i] = true
			}
		}
	}
	sim := func(a, b int) (est, ex float64) {
		return lsh.Estimate(sigs[a], sigs[b]), lsh.ExactJaccard(sets[a], sets[b])
	}
	dc := db.Cluster{Keeper: id(c.Keeper), KeeperRule: p.Rule.String(), Size: len(c.Members), WeakestLink: 1, Weakest: id(c.Keeper)}
	if c.KeeperFromFile {
		dc.KeeperRule = "the engine (" + string(format) + ")" // the cluster page reads "keeper X by the engine (datatrove)"
	}
	if !math.IsNaN(c.Weakest) {
		w := c.Weakest
		dc.EngineWeakest = &w
	}
	first := true
	for i, m := range c.Members {
		if i == k {
			continue
		}
		est, ex := sim(i, k)
		score := est
		if p.Verification == review.Exact {
			score = ex
		}
		reason := cluster.Near
		if exactOf[i] {
			reason, score = cluster.Exact, 1
		}
		dc.Items = append(dc.Items, db.Item{Doc: id(m), Keeper: id(c.Keeper), Score: score, Estimate: est, Exact: ex,
			Reason: reason, Decision: review.Proposed})
		if first || score < dc.WeakestLink {
			dc.WeakestLink, dc.Weakest, first = score, id(m), false
		}
		if score < p.Threshold {
			dc.ChainedMembers++
		}
	}
	dc.Chained = dc.ChainedMembers > 0
	if len(c.Links) > 0 {
		for _, l := range c.Links {
			dc.Links = append(dc.Links, db.Link{A: id(l.A), B: id(l.B), Sim: l.Sim})
		}
	} else {
		for _, it := range dc.Items {
			a, b := min(it.Doc, it.Keeper), max(it.Doc, it.Keeper)
			dc.Links = append(dc.Links, db.Link{A: a, B: b, Sim: it.Score})
		}
	}
	dc.Chain = longestChain(dc.Keeper, dc.Links)
	return dc
}

// longestChain is the longest of the shortest link paths from the keeper to a member
// (breadth first; ties to the lower similarity of the last link), as the clustering of a
// run reports it.
func longestChain(keeper int64, links []db.Link) db.Chain {
	adj := map[int64][]db.Link{}
	for _, l := range links {
		adj[l.A] = append(adj[l.A], l)
		adj[l.B] = append(adj[l.B], l)
	}
	type step struct {
		from int64
		sim  float64
	}
	prev := map[int64]step{keeper: {}}
	queue := []int64{keeper}
	last := keeper
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		last = u
		for _, l := range adj[u] {
			v := l.A
			if v == u {
				v = l.B
			}
			if _, ok := prev[v]; !ok {
				prev[v] = step{u, l.Sim}
				queue = append(queue, v)
			}
		}
	}
	var ch db.Chain
	for d := last; ; {
		ch.Docs = append(ch.Docs, d)
		if d == keeper {
			break
		}
		ch.Sims = append(ch.Sims, prev[d].sim)
		d = prev[d].from
	}
	slices.Reverse(ch.Docs)
	slices.Reverse(ch.Sims)
	return ch
}
