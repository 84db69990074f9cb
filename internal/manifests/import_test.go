package manifests

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

func source(name string, b []byte) results.Source {
	return results.Source{Name: name, Reader: bytes.NewReader(b), At: bytes.NewReader(b), Size: int64(len(b))}
}

// removalsJSONL returns manifest m's rows (there must be some) and its removals.jsonl
// as an export writes them.
func (f *fixture) removalsJSONL(m db.Manifest) ([]review.Row, []byte) {
	f.t.Helper()
	rows, err := f.store.ManifestRows(context.Background(), m.ID)
	if err != nil || len(rows) == 0 {
		f.t.Fatalf("rows of manifest %d: %v, %v", m.ID, rows, err)
	}
	var buf bytes.Buffer
	if err := review.WriteJSONL(&buf, review.ExportHeader{Manifest: m.ID, Dataset: m.Dataset, Params: m.Params}, rows); err != nil {
		f.t.Fatal(err)
	}
	return rows, buf.Bytes()
}

// importShape is an imported cluster as ext ids: keeper, then the removals sorted.
func (f *fixture) importShape(m db.Manifest) []string {
	f.t.Helper()
	ctx := context.Background()
	rows, err := f.store.Clusters(ctx, m.ID, db.ClusterFilter{})
	if err != nil {
		f.t.Fatal(err)
	}
	ext := map[int64]string{}
	for k, v := range f.ids {
		ext[v] = k
	}
	var out []string
	for _, r := range rows {
		c, err := f.store.Cluster(ctx, m.ID, r.ID)
		if err != nil {
			f.t.Fatal(err)
		}
		var rm []string
		for _, it := range c.Items {
			rm = append(rm, ext[it.Doc])
		}
		slices.Sort(rm)
		out = append(out, ext[c.Keeper]+" keeps "+strings.Join(rm, " "))
	}
	slices.Sort(out)
	return out
}

// Every format from a file shaped like the engine's own, into the fixture's dataset
// (A, B, C, D, D2 at import positions 0-4): the clusters, their keepers, what was
// measured here, and the origin.
func TestImportEachFormat(t *testing.T) {
	t.Parallel()
	clusters := func(pairs ...[2]uint32) []byte {
		var b bytes.Buffer
		for _, p := range pairs {
			binary.Write(&b, binary.LittleEndian, p)
		}
		return b.Bytes()
	}
	tests := []struct {
		name   string
		format results.Format
		file   results.Source
		remove results.Source
		want   []string
		from   string // who chose the keepers
	}{
		{"pairs", results.Pairs, source("pairs.csv", []byte("id_a,id_b,score\nA,B,0.81\nB,C,0.8\nD,D2,1\n")),
			results.Source{}, []string{"A keeps B C", "D keeps D2"}, "rule"},
		{"milvus", results.Milvus, source("dump.jsonl", []byte(`{"id": "B", "hits": [{"id": "A", "distance": 0.8125}]}
{"id": "C", "hits": [{"id": "A", "distance": 0.65625}]}
{"id": "D2", "hits": [{"id": "D", "distance": 1.0}]}
`)), results.Source{}, []string{"A keeps B C", "D keeps D2"}, "file"},
		{"datatrove clusters", results.Datatrove, source("000000.clusters", clusters([2]uint32{0, 0}, [2]uint32{1, 0}, [2]uint32{2, 0}, [2]uint32{3, 1}, [2]uint32{4, 1})),
			source("000000.remove", clusters([2]uint32{0, 1}, [2]uint32{4, 4})[:12]), []string{"C keeps A B", "D keeps D2"}, "file"},
		{"datatrove jsonl", results.Datatrove, source("out.jsonl", []byte(`{"text": "a", "id": "A", "media": [], "metadata": {"minhash_cluster_id": 0, "minhash_cluster_size": 2}}
{"text": "c", "id": "C", "media": [], "metadata": {"minhash_cluster_id": 0, "minhash_cluster_size": 2}}
{"text": "b", "id": "B", "media": [], "metadata": {"minhash_cluster_id": -1, "minhash_cluster_size": 1}}
`)), results.Source{}, []string{"A keeps C"}, "rule"},
		{"text-dedup", results.TextDedup, source("td.jsonl", []byte(`{"id": "A", "__INDEX__": 0, "__CLUSTER__": 0}
{"id": "B", "__INDEX__": 1, "__CLUSTER__": 0}
{"id": "C", "__INDEX__": 2, "__CLUSTER__": 2}
{"id": "D", "__INDEX__": 3, "__CLUSTER__": 4}
{"id": "D2", "__INDEX__": 4, "__CLUSTER__": 4}
`)), results.Source{}, []string{"A keeps B", "D2 keeps D"}, "file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			p := f.params(cluster.KeeperStar, "earliest")
			var phases []string
			m, err := ImportResults(context.Background(), f.store, ImportRequest{DatasetID: f.ds.ID, Format: tt.format, File: tt.file,
				Remove: tt.remove, Params: &p, By: f.prep, ByName: "prep"}, func(pr Progress) {
				if len(phases) == 0 || phases[len(phases)-1] != pr.Phase {
					phases = append(phases, pr.Phase)
				}
			})
			if err != nil {
				t.Fatalf("ImportResults: %v", err)
			}
			if !slices.Equal(phases, []string{PhaseRead, PhaseBuild, PhaseMeasure, PhaseImport}) {
				t.Errorf("phases = %v", phases)
			}
			if got := f.importShape(m); !slices.Equal(got, tt.want) {
				t.Errorf("clusters = %q; want %q", got, tt.want)
			}
			o := m.Origin
			if o == nil || o.Format != string(tt.format) || o.File != tt.file.Name || len(o.SHA256) != 64 || o.Keepers != tt.from ||
				o.ImportedBy != "prep" || o.Sample != nil {
				t.Errorf("origin = %+v", o)
			}
			if m.Params.Policy != cluster.Components || m.Params.Rule.String() != "earliest" || m.State != review.Draft {
				t.Errorf("manifest %+v; want a draft under components with the configuration's rule", m)
			}
			// Measured here: the exact duplicate is removed for that reason, with
			// similarity 1; near removals carry their estimate and exact Jaccard.
			for _, want := range tt.want {
				if !strings.HasPrefix(want, "D") {
					continue
				}
				c := f.clusterOf(m, "D")
				if it := c.Items[0]; it.Reason != cluster.Exact || it.Exact != 1 || it.Estimate != 1 {
					t.Errorf("exact duplicate item %+v; want reason exact at 1", it)
				}
			}
			c := f.clusterOf(m, "A")
			if want := map[string]string{"file": "the engine (" + string(tt.format) + ")", "rule": "earliest"}[tt.from]; c.KeeperRule != want || c.Override != "" {
				t.Errorf("cluster keeper by %q (override %q); want by %q", c.KeeperRule, c.Override, want)
			}
			for _, it := range c.Items {
				if it.Reason != cluster.Near || it.Exact <= 0.5 || it.Exact >= 1 || it.Estimate <= 0.4 {
					t.Errorf("near item %+v; want similarities measured here", it)
				}
			}
		})
	}
}

// A removals.jsonl written by the review format (what the dedup command writes)
// carries its configuration and keepers: imported back, it gives the run's clusters.
func TestImportManifestRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	run := f.run(f.params(cluster.Components, "earliest"))
	_, file := f.removalsJSONL(run)
	m, err := ImportResults(ctx, f.store, ImportRequest{DatasetID: f.ds.ID, Format: results.Manifest, File: source("removals.jsonl", file), By: f.prep}, nil)
	if err != nil {
		t.Fatalf("ImportResults: %v", err)
	}
	if got, want := f.importShape(m), f.importShape(run); !slices.Equal(got, want) {
		t.Errorf("imported clusters %q; the run's %q", got, want)
	}
	if m.Params.Spec.ID() != run.Params.Spec.ID() || m.Params.Threshold != run.Params.Threshold || m.Origin.Keepers != "file" {
		t.Errorf("imported params %+v origin %+v; want the run's", m.Params, m.Origin)
	}
}

// Unknown ids: refused by file, line and field, nothing stored; or skipped and counted.
func TestImportUnknownIDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	p := f.params(cluster.Components, "longest")
	file := []byte("id_a,id_b,score\nA,B,0.9\nB,ghost,0.8\nD,D2,1\n")
	_, err := ImportResults(ctx, f.store, ImportRequest{DatasetID: f.ds.ID, Format: results.Pairs, File: source("pairs.csv", file), Params: &p, By: f.prep}, nil)
	var ue *results.UnknownIDsError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `pairs.csv:3: field id_b: no document "ghost" in the dataset`) {
		t.Fatalf("ImportResults = %v; want the unknown id named by file, line and field", err)
	}
	if list, _ := f.store.Manifests(ctx, f.ds.ID); len(list) != 0 {
		t.Errorf("a refused import left %d manifest(s)", len(list))
	}
	m, err := ImportResults(ctx, f.store, ImportRequest{DatasetID: f.ds.ID, Format: results.Pairs, File: source("pairs.csv", file), Params: &p,
		SkipUnknown: true, By: f.prep}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Origin.Skipped != 1 || !slices.Equal(m.Origin.SkippedIDs, []string{"ghost"}) || m.Origin.Removals != 2 {
		t.Errorf("origin %+v; want 1 skipped (ghost) and 2 removals", m.Origin)
	}
	// A pair file needs the configuration production ran.
	_, err = ImportResults(ctx, f.store, ImportRequest{DatasetID: f.ds.ID, Format: results.Pairs, File: source("pairs.csv", file), By: f.prep}, nil)
	var ie *review.InputError
	if !errors.As(err, &ie) || ie.Field != "configuration" {
		t.Errorf("import without a configuration: %v; want an input error on configuration", err)
	}
}

// A run at scale: more clusters than the sample, so a stratified sample goes to review;
// the rest is approved on its strength, and the sign-off record says how it was drawn.
func TestImportSampleAndSignOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	// A second dataset of 300 documents: 100 clusters, sizes 2 and 5, strong and weak.
	words := strings.Fields(strings.Join(realtext.Texts(t, 3, 300), " "))
	var lines []string
	for i := range 300 {
		text := strings.Join(words[i:i+120], " ")
		lines = append(lines, fmt.Sprintf(`{"id": "s%d", "text": %q}`, i, text))
	}
	r, err := corpus.NewReader(strings.NewReader(strings.Join(lines, "\n")), "scale.jsonl", corpus.JSONL, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ingest.Documents(ctx, f.store, r, "scale.jsonl", ingest.Options{Dataset: "scale"})
	if err != nil {
		t.Fatal(err)
	}
	var pairs strings.Builder
	pairs.WriteString("id_a,id_b,score\n")
	doc := 0
	for c := range 100 {
		size, score := 2, 0.95
		if c%10 == 0 {
			size = 5
		}
		if c%4 == 0 {
			score = 0.62
		}
		for m := 1; m < size; m++ {
			fmt.Fprintf(&pairs, "s%d,s%d,%g\n", doc, doc+m, score)
		}
		doc += size
	}
	p := f.params(cluster.Components, "earliest")
	req := ImportRequest{DatasetID: rep.Dataset.ID, Format: results.Pairs, File: source("scale-pairs.csv", []byte(pairs.String())), Params: &p,
		Sample: 12, Seed: 7, By: f.prep, ApprovalsRequired: 1}
	m, err := ImportResults(ctx, f.store, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Origin.Sample
	if s == nil || s.Drawn != 12 || s.Clusters != 100 || s.Seed != 7 || len(s.Strata) != 4 {
		t.Fatalf("sample %+v; want 12 of 100 in 4 strata with seed 7", s)
	}
	for _, st := range s.Strata {
		if st.Drawn != 3 {
			t.Errorf("stratum %+v; want 3 drawn (12 / 4 strata)", st)
		}
	}
	sampled, err := f.store.Clusters(ctx, m.ID, db.ClusterFilter{Sample: true})
	if err != nil || len(sampled) != 12 {
		t.Fatalf("sample clusters = %d, %v; want 12", len(sampled), err)
	}
	// The same import with the same seed draws the same clusters.
	m2, err := ImportResults(ctx, f.store, ImportRequest{DatasetID: rep.Dataset.ID, Format: results.Pairs, File: source("scale-pairs.csv", []byte(pairs.String())),
		Params: &p, Sample: 12, Seed: 7, By: f.prep}, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := f.store.Clusters(ctx, m2.ID, db.ClusterFilter{Sample: true})
	keepers := func(rows []db.ClusterRow) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.KeeperExtID+"/"+r.SampleStratum)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(keepers(sampled), keepers(again)) {
		t.Errorf("same seed, other sample: %v and %v", keepers(sampled), keepers(again))
	}

	if _, _, err := ApproveOutsideSample(ctx, f.store, f.prep, m); !errors.Is(err, db.ErrSampleUndecided) {
		t.Errorf("approval outside an undecided sample: %v; want ErrSampleUndecided", err)
	}
	for _, row := range sampled {
		c, err := f.store.Cluster(ctx, m.ID, row.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecideCluster(ctx, f.store, f.prep, f.manifest(m.ID), c, review.Approved, Scope{Chained: ChainedUndecided(c, f.manifest(m.ID).Params.Threshold)}); err != nil {
			t.Fatal(err)
		}
	}
	items, clusters, err := ApproveOutsideSample(ctx, f.store, f.prep, f.manifest(m.ID))
	counts, _ := f.store.CountManifest(ctx, m.ID)
	if err != nil || clusters != 88 || counts.Proposed != 0 || counts.Approved != m.Origin.Removals {
		t.Fatalf("outside the sample: %d items in %d clusters, %v; counts %+v", items, clusters, err, counts)
	}
	if err := RequestSignOff(ctx, f.store, f.prep, f.manifest(m.ID)); err != nil {
		t.Fatal(err)
	}
	m = f.manifest(m.ID)
	if signed, err := Review(ctx, f.store, f.appr1, m, review.Approve, "sample looks right", m.ContentHash, "test"); err != nil || !signed.Signed {
		t.Fatalf("approval = %v, %v", signed, err)
	}
	sos, err := f.store.SignOffs(ctx, m.ID)
	if err != nil || len(sos) != 1 {
		t.Fatalf("sign-offs %v, %v", sos, err)
	}
	rec := sos[0].Record
	if !rec.ReviewedSample || rec.Origin == nil || rec.Origin.Sample == nil || rec.Origin.Sample.Seed != 7 ||
		len(rec.Origin.Sample.Strata) != 4 || rec.Origin.Format != "pairs" || rec.Origin.File != "scale-pairs.csv" {
		t.Errorf("sign-off record: reviewed sample %v, origin %+v", rec.ReviewedSample, rec.Origin)
	}
	outside := slices.IndexFunc(rec.BulkApprovals, func(b review.Bulk) bool { return b.OutsideSample })
	if outside < 0 || rec.BulkApprovals[outside].Items != items || rec.BulkApprovals[outside].Name != "prep" {
		t.Errorf("bulk approvals %+v; want the approval outside the sample, %d items by prep", rec.BulkApprovals, items)
	}
}

// A sampled cluster cut or given another keeper stays in the sample, split-offs
// included, so the sample's review can finish.
func TestSampledClusterStaysInTheSample(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	p := f.params(cluster.Components, "earliest")
	// The chain (3 documents) and a cluster of 5: a sample of one draws from the first
	// stratum in order, the chain's (size 3-4 before 5-9).
	file := []byte("id_a,id_b,score\nA,B,0.81\nB,C,0.8\nother0,other1,0.9\nother1,other2,0.9\nother2,other3,0.9\nother3,other4,0.9\n")
	m, err := ImportResults(ctx, f.store, ImportRequest{DatasetID: f.ds.ID, Format: results.Pairs, File: source("pairs.csv", file), Params: &p,
		Sample: 1, Seed: 4, By: f.prep, ApprovalsRequired: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := f.clusterOf(m, "A")
	if c.SampleStratum != "size=3-4 link=0.8-0.9" {
		t.Fatalf("the chain's cluster is in stratum %q; want size=3-4 link=0.8-0.9", c.SampleStratum)
	}
	// Cutting A~B leaves the keeper A alone and B~C a new cluster of its own.
	out, err := Cut(ctx, f.store, f.prep, m, c, [2]int64{f.ids["A"], f.ids["B"]})
	if err != nil {
		t.Fatal(err)
	}
	sampled, err := f.store.Clusters(ctx, m.ID, db.ClusterFilter{Sample: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || len(sampled) != 1 || sampled[0].ID != out[0].ID || sampled[0].SampleStratum != c.SampleStratum {
		t.Errorf("after the cut: clusters %+v, in the sample %+v; want B~C, in the sample", out, sampled)
	}
}

// A manifest file names the configuration and policy it ran: a configuration given as
// well that differs is refused naming the setting (it silently replaced the file's: a
// run at 0.75 imported with a 0.9 configuration read 0.900 and counted chains against
// it), the file's policy is what the imported manifest records (keeper-star, not
// components), and rows of another dataset are refused unless the caller says so. A
// pairs file records what the engine did, not the configuration's policy.
func TestImportManifestKeepsItsOwnConfiguration(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	run := f.run(f.params(cluster.KeeperStar, "earliest"))
	rows, file := f.removalsJSONL(run)
	req := func(p *review.Params) ImportRequest {
		return ImportRequest{DatasetID: f.ds.ID, Format: results.Manifest, File: source("removals.jsonl", file), Params: p, By: f.prep}
	}
	higher := run.Params
	higher.Threshold = 0.9
	_, err := ImportResults(ctx, f.store, req(&higher), nil)
	if err == nil || !strings.Contains(err.Error(), "removals.jsonl: threshold: the file's rows say 0.75, the configuration given says 0.9") {
		t.Errorf("a 0.9 configuration over a 0.75 file: %v; want it refused naming the threshold", err)
	}
	components := run.Params
	components.Policy = cluster.Components
	if _, err = ImportResults(ctx, f.store, req(&components), nil); err == nil || !strings.Contains(err.Error(), "policy: the file's rows say keeper-star, the configuration given says components") {
		t.Errorf("a components configuration over a keeper-star file: %v; want it refused naming the policy", err)
	}
	same := run.Params
	m, err := ImportResults(ctx, f.store, req(&same), nil)
	if err != nil {
		t.Fatalf("the file's own configuration given again: %v", err)
	}
	if m.Params.Threshold != 0.75 || m.Params.Policy != cluster.KeeperStar || m.Origin.Policy != "keeper-star, as the file's rows say" {
		t.Errorf("imported threshold %v policy %q origin policy %q; want the file's 0.75, keeper-star", m.Params.Threshold, m.Params.Policy, m.Origin.Policy)
	}
	all, err := f.store.Manifests(ctx, f.ds.ID)
	if err != nil {
		t.Fatal(err)
	}

	// Rows of another dataset.
	other := bytes.ReplaceAll(file, []byte(`"dataset":"`+run.Dataset.Name+`"`), []byte(`"dataset":"elsewhere"`))
	if bytes.Equal(other, file) {
		t.Fatalf("no dataset field in %s", file)
	}
	r := req(nil)
	r.File = source("removals.jsonl", other)
	if _, err := ImportResults(ctx, f.store, r, nil); err == nil || !strings.Contains(err.Error(), `removals.jsonl:1: field dataset: its rows are of dataset "elsewhere", not "`+f.ds.Name+`"`) {
		t.Errorf("rows of another dataset: %v; want them refused", err)
	}
	if after, _ := f.store.Manifests(ctx, f.ds.ID); len(after) != len(all) {
		t.Errorf("%d manifests after refusals; want %d (nothing stored)", len(after), len(all))
	}
	r.File, r.OtherDataset = source("removals.jsonl", other), true
	if _, err := ImportResults(ctx, f.store, r, nil); err != nil {
		t.Errorf("rows of another dataset, OtherDataset: %v", err)
	}

	// A pairs file: the engine's components, whatever policy the configuration names.
	var pairs strings.Builder
	pairs.WriteString("id_a,id_b,score\n")
	for _, row := range rows {
		fmt.Fprintf(&pairs, "%s,%s,0.9\n", row.KeeperExtID, row.ExtID)
	}
	star := run.Params
	pm, err := ImportResults(ctx, f.store, ImportRequest{DatasetID: f.ds.ID, Format: results.Pairs, File: source("pairs.csv", []byte(pairs.String())), Params: &star, By: f.prep}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pm.Params.Policy != cluster.Components || !strings.Contains(pm.Origin.Policy, "the engine's: connected components of its pairs") {
		t.Errorf("pairs import policy %q, origin %q; want the engine's components, not the configuration's keeper-star", pm.Params.Policy, pm.Origin.Policy)
	}
}

// Results brought back from a run over the whole corpus name documents exported
// manifests removed since: they are left out, neither proposed again nor kept, and a
// cluster whose keeper was among them keeps a live member by the rule (issue 24: the
// whole-corpus path works on the live documents).
func TestImportLeavesOutRemovedDocuments(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	// Manifest 1 removes B and C in favour of A, and D2 in favour of D, and is exported.
	first := f.run(f.params(cluster.Components, "earliest"))
	if _, _, err := BulkApprove(ctx, f.store, f.prep, first, 0.75, -1); err != nil {
		t.Fatal(err)
	}
	first = f.manifest(first.ID)
	if n, err := DecideCluster(ctx, f.store, f.prep, first, f.clusterOf(first, "A"), review.Approved, Scope{Chained: ChainedUndecided(f.clusterOf(first, "A"), first.Params.Threshold)}); err != nil || n != 2 {
		t.Fatalf("approve the chain: %d, %v", n, err)
	}
	f.signOff(first.ID)
	if n, err := exportShown(ctx, f.store, f.appr1, f.manifest(first.ID)); err != nil || n != 3 {
		t.Fatalf("export = %d, %v; want B, C and D2", n, err)
	}
	// The engine kept B (a tombstoned document) in a cluster with A and other0, and D2
	// with D; other1 with other2 is news.
	dump := []byte(`{"id": "A", "hits": [{"id": "B", "distance": 0.9}]}
{"id": "other0", "hits": [{"id": "B", "distance": 0.9}]}
{"id": "D", "hits": [{"id": "D2", "distance": 1.0}]}
{"id": "other1", "hits": [{"id": "other2", "distance": 0.9}]}
`)
	p := f.params(cluster.Components, "earliest")
	m, err := ImportResults(ctx, f.store, ImportRequest{DatasetID: f.ds.ID, Format: results.Milvus, File: source("dump.jsonl", dump), Params: &p,
		By: f.prep, ApprovalsRequired: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := m.Origin; o.AlreadyRemoved != 2 || !slices.Equal(o.AlreadyRemovedIDs, []string{"B", "D2"}) || o.Rekept != 1 || o.Clusters != 2 || o.Removals != 2 {
		t.Errorf("origin %+v; want B and D2 left out, 1 cluster kept by the rule, 2 clusters, 2 removals", o)
	}
	items, err := f.store.Items(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		for _, gone := range []string{"B", "C", "D2"} {
			if it.Doc == f.ids[gone] || it.Keeper == f.ids[gone] {
				t.Errorf("the import proposes or keeps %s, which manifest %d removed: %+v", gone, first.ID, it)
			}
		}
	}
	if c := f.clusterOf(m, "A"); c.Keeper != f.ids["A"] || len(c.Items) != 1 {
		t.Errorf("the cluster the engine kept B in: keeper %d with %d removal(s); want A (the rule, earliest) keeping other0", c.Keeper, len(c.Items))
	}
	if st, err := f.store.Staleness(ctx, m); err != nil || st.Stale() {
		t.Errorf("the import is stale at once: %+v, %v", st, err)
	}
}
