package results

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/parquet-go/parquet-go"
)

// dataset is ten documents d0..d9; d9 is the longest, so the rule "longest" keeps it.
func dataset() Dataset {
	ds := Dataset{Name: "crawl"}
	for i := range 10 {
		ds.IDs = append(ds.IDs, fmt.Sprintf("d%d", i))
		ds.Docs = append(ds.Docs, cluster.Doc{Len: 100 + 10*i})
	}
	return ds
}

func longest(t *testing.T) cluster.Rule {
	t.Helper()
	r, err := cluster.ParseRule("longest")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func open(t *testing.T, path string) Source {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Source{Name: filepath.Base(path), Reader: bytes.NewReader(b), At: bytes.NewReader(b), Size: int64(len(b))}
}

// shape is a cluster as ext ids: members, keeper, and whether the file chose it.
type shape struct {
	members  string
	keeper   string
	fromFile bool
	weakest  float64 // NaN: none
}

func shapes(ds Dataset, b Built) []shape {
	var out []shape
	for _, c := range b.Clusters {
		var ms []string
		for _, m := range c.Members {
			ms = append(ms, ds.IDs[m])
		}
		out = append(out, shape{strings.Join(ms, " "), ds.IDs[c.Keeper], c.KeeperFromFile, c.Weakest})
	}
	return out
}

func same(a, b []shape) bool {
	return slices.EqualFunc(a, b, func(x, y shape) bool {
		return x.members == y.members && x.keeper == y.keeper && x.fromFile == y.fromFile &&
			(x.weakest == y.weakest || math.IsNaN(x.weakest) && math.IsNaN(y.weakest))
	})
}

func TestFormatsFromRealShapedFiles(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	tests := []struct {
		name, file, remove string
		format             Format
		want               []shape
	}{
		// MinhashDedupCluster's .clusters with its .remove: datatrove kept d2 and d9.
		{"datatrove clusters", "000000.clusters", "000000.remove", Datatrove,
			[]shape{{"d0 d1 d2", "d2", true, nan}, {"d4 d7 d9", "d9", true, nan}}},
		// Without the .remove file the rule chooses (longest: the highest index here).
		{"datatrove clusters alone", "000000.clusters", "", Datatrove,
			[]shape{{"d0 d1 d2", "d2", false, nan}, {"d4 d7 d9", "d9", false, nan}}},
		// The filter's JsonlWriter output (kept and excluded together), gzip.
		{"datatrove jsonl", "datatrove-output.jsonl.gz", "", Datatrove,
			[]shape{{"d0 d1 d2", "d2", false, nan}, {"d4 d7 d9", "d9", false, nan}}},
		// text-dedup keeps the row whose __INDEX__ is its __CLUSTER__: d0 and d4.
		{"text-dedup jsonl", "text-dedup.jsonl", "", TextDedup,
			[]shape{{"d0 d1 d2", "d0", true, nan}, {"d4 d7 d9", "d4", true, nan}}},
		// Search before insert: each removed document with its best stored hit, the
		// stored documents kept (d5, a weaker hit of d9, stays out).
		{"milvus dump", "milvus-dump.jsonl", "", Milvus,
			[]shape{{"d0 d1 d2", "d0", true, 0.71875}, {"d4 d7 d9", "d4", true, 0.6015625}}},
		// Pairs: components; the weakest link is on the maximum spanning tree (d0~d2 at
		// 0.72 is not: d0~d1~d2 holds at 0.81).
		{"pairs csv", "pairs.csv", "", Pairs,
			[]shape{{"d0 d1 d2", "d2", false, 0.81}, {"d4 d7 d9", "d9", false, 0.6}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rm Source
			if tt.remove != "" {
				rm = open(t, filepath.Join("testdata", tt.remove))
			}
			r, err := ReadFile(open(t, filepath.Join("testdata", tt.file)), tt.format, rm, Options{})
			if err != nil {
				t.Fatalf("ReadFile: %v", err)
			}
			if len(r.SHA256) != 64 {
				t.Errorf("SHA256 = %q; want 64 hex digits", r.SHA256)
			}
			ds := dataset()
			b, err := Build(r, ds, BuildOptions{Rule: longest(t)})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if got := shapes(ds, b); !same(got, tt.want) {
				t.Errorf("clusters = %+v; want %+v", got, tt.want)
			}
			if b.Removals != 4 {
				t.Errorf("Removals = %d; want 4", b.Removals)
			}
		})
	}
}

// The review format, written by review.WriteJSONL and review.WriteCSV themselves.
func TestManifestFiles(t *testing.T) {
	t.Parallel()
	spec, err := lsh.ParseSpec("level=word size=5 k=128")
	if err != nil {
		t.Fatal(err)
	}
	p := review.Params{Spec: spec, Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: 0.8, Verification: review.Exact,
		Policy: cluster.Components, Rule: longest(t)}
	h := review.ExportHeader{Dataset: review.Dataset{Name: "crawl", Version: 1}, Params: p}
	rows := []review.Row{
		{ExtID: "d0", KeeperExtID: "d2", Cluster: 7, Reason: cluster.Near, Estimate: 0.9, Exact: 0.85, Decision: review.Proposed},
		{ExtID: "d1", KeeperExtID: "d2", Cluster: 7, Reason: cluster.Near, Estimate: 0.8, Exact: 0.82, Decision: review.Proposed},
		{ExtID: "-d5", KeeperExtID: "d3", Cluster: 8, Reason: cluster.Exact, Estimate: 1, Exact: 1, Decision: review.Excluded},
		{ExtID: "d7", KeeperExtID: "d4", Cluster: 9, Reason: cluster.Exact, Estimate: 1, Exact: 1, Decision: review.Approved},
	}
	for _, name := range []string{"removals.jsonl", "removals.csv"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			write := review.WriteJSONL
			if strings.HasSuffix(name, ".csv") {
				write = review.WriteCSV
			}
			if err := write(&buf, h, rows); err != nil {
				t.Fatal(err)
			}
			r, err := ReadFile(Source{Name: name, Reader: &buf}, Manifest, Source{}, Options{})
			if err != nil {
				t.Fatalf("ReadFile: %v", err)
			}
			if r.Params == nil || r.Params.Spec.ID() != spec.ID() || r.Params.Threshold != 0.8 || r.Params.Shape.Bands != 32 {
				t.Errorf("Params = %+v; want the manifest's", r.Params)
			}
			ds := dataset()
			b, err := Build(r, ds, BuildOptions{Rule: longest(t)})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			// The excluded row (a reviewer kept -d5) is no removal; the file's keepers hold.
			want := []shape{{"d0 d1 d2", "d2", true, 0.82}, {"d4 d7", "d4", true, 1}}
			if got := shapes(ds, b); !same(got, want) {
				t.Errorf("clusters = %+v; want %+v", got, want)
			}
		})
	}
}

func TestTextDedupParquet(t *testing.T) {
	t.Parallel()
	type row struct {
		ID      string `parquet:"id"`
		Text    string `parquet:"text"`
		Index   int64  `parquet:"__index__"`
		Cluster int64  `parquet:"__cluster__"`
	}
	parents := []int64{0, 0, 0, 3, 4, 5, 6, 4, 8, 4}
	var rows []row
	for i, p := range parents {
		rows = append(rows, row{ID: fmt.Sprintf("d%d", i), Text: fmt.Sprintf("document %d", i), Index: int64(i), Cluster: p})
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	r, err := ReadFile(Source{Name: "dedup.parquet", Reader: bytes.NewReader(b), At: bytes.NewReader(b), Size: int64(len(b))}, TextDedup, Source{}, Options{})
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	ds := dataset()
	built, err := Build(r, ds, BuildOptions{Rule: longest(t)})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	want := []shape{{"d0 d1 d2", "d0", true, math.NaN()}, {"d4 d7 d9", "d4", true, math.NaN()}}
	if got := shapes(ds, built); !same(got, want) {
		t.Errorf("clusters = %+v; want %+v", got, want)
	}
}

// Bad input names file, line and field; nothing is returned.
func TestBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, body string
		format           Format
		want             []string // in the error, in order
	}{
		{"pairs score out of range", "pairs.csv", "id_a,id_b,score\nd0,d1,0.9\nd1,d2,1.5\n", Pairs,
			[]string{"pairs.csv: 1 bad record(s)", "pairs.csv:3: field score: 1.5 is not a similarity in [0, 1]"}},
		{"pairs missing id", "pairs.csv", "id_a,id_b,score\n,d1,0.9\n", Pairs, []string{"pairs.csv:2: field id_a: empty"}},
		{"pairs self", "pairs.tsv", "id_a\tid_b\tscore\nd1\td1\t1\n", Pairs, []string{"pairs.tsv:2: field id_b: the same document as id_a"}},
		{"milvus hits not a list", "dump.jsonl", `{"id": "d1", "hits": {"id": "d0"}}` + "\n", Milvus,
			[]string{"dump.jsonl:1: field hits: want a list"}},
		{"milvus distance", "dump.jsonl", `{"id": "d1", "hits": [{"id": "d0", "distance": 0.9}]}` + "\n" + `{"id": "d2", "hits": [{"id": "d0", "distance": -3}]}` + "\n", Milvus,
			[]string{"dump.jsonl:2: field hits[0].distance: -3 is not a similarity in [0, 1] (MHJACCARD answers a similarity)"}},
		{"milvus broken json", "dump.jsonl", `{"id": "d1", "hits": [` + "\n", Milvus, []string{"dump.jsonl:1:"}},
		{"datatrove no cluster id", "out.jsonl", `{"id": "d1", "text": "x", "metadata": {}}` + "\n", Datatrove,
			[]string{"out.jsonl: no document has metadata.minhash_cluster_id: run MinhashDedupCluster with save_cluster_id=True"}},
		{"datatrove bad cluster id", "out.jsonl", `{"id": "d1", "text": "x", "metadata": {"minhash_cluster_id": [1]}}` + "\n", Datatrove,
			[]string{"out.jsonl:1: field metadata.minhash_cluster_id: want a number or a string"}},
		{"text-dedup filtered", "td.jsonl", `{"id": "d1", "__CLUSTER__": 1, "__INDEX__": 1}` + "\n" + `{"id": "d2", "__CLUSTER__": 2, "__INDEX__": 2}` + "\n", TextDedup,
			[]string{"td.jsonl: every row is in a cluster of its own", "skip_filtering"}},
		{"empty", "pairs.csv", "id_a,id_b,score\n", Pairs, []string{"pairs.csv: no duplicates in it"}},
		{"remove alone", "000000.remove", "\x00\x00\x00\x00", Datatrove, []string{"a .remove file lists the documents to remove but not what each duplicates"}},
		{"milvus given a csv", "p1.csv", "id_a,id_b,score\nd0,d1,0.9\nd1,d2,0.8\n", Milvus,
			[]string{"p1.csv:1: not JSON: a Milvus dump is JSON lines"}},
		{"datatrove word cluster id", "out.jsonl", `{"id": "d1", "text": "x", "metadata": {"minhash_cluster_id": "seven"}}` + "\n", Datatrove,
			[]string{`out.jsonl:1: field metadata.minhash_cluster_id: "seven" is not a cluster id`}},
		{"datatrove fractional cluster id", "out.jsonl", `{"id": "d1", "text": "x", "metadata": {"minhash_cluster_id": 7}}` + "\n" +
			`{"id": "d2", "text": "x", "metadata": {"minhash_cluster_id": 1.5}}` + "\n", Datatrove,
			[]string{`out.jsonl:2: field metadata.minhash_cluster_id: "1.5" is not a cluster id`}},
		{"clusters cut short", "000000.clusters", "\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00", Datatrove,
			[]string{"000000.clusters:2: ends 2 byte(s) into a record at byte 8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := ReadFile(Source{Name: tt.file, Reader: strings.NewReader(tt.body)}, tt.format, Source{}, Options{})
			if err == nil {
				t.Fatalf("ReadFile = %+v; want an error", r)
			}
			msg := err.Error()
			// Every error about a file starts with its name, as a bad record's does
			// ("file: pairs.csv: ..." was the field's name before the file's).
			if !strings.HasPrefix(msg, tt.file+":") {
				t.Errorf("error %q; want it to start with %q", msg, tt.file+":")
			}
			if n := strings.Count(msg, "\n"); tt.format == Milvus && strings.HasSuffix(tt.file, ".csv") && n > 0 {
				t.Errorf("error %q; want one line for a file that is not JSON", msg)
			}
			at := 0
			for _, w := range tt.want {
				i := strings.Index(msg[at:], w)
				if i < 0 {
					t.Fatalf("error %q; want it to say %q", msg, w)
				}
				at += i + len(w)
			}
		})
	}
}

func TestUnknownIDs(t *testing.T) {
	t.Parallel()
	body := "id_a,id_b,score\nd0,d1,0.9\nd1,x-404,0.8\nd4,d5,0.7\nnope,d5,0.75\n"
	read := func() *Read {
		r, err := ReadFile(Source{Name: "pairs.csv", Reader: strings.NewReader(body)}, Pairs, Source{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ds := dataset()
	_, err := Build(read(), ds, BuildOptions{Rule: longest(t)})
	var ue *UnknownIDsError
	if !errors.As(err, &ue) {
		t.Fatalf("Build = %v; want an *UnknownIDsError", err)
	}
	if ue.Total != 2 || ue.Errors[0].Line != 3 || ue.Errors[0].Field != "id_b" || ue.Errors[1].Line != 5 || ue.Errors[1].Field != "id_a" {
		t.Errorf("unknown ids = %v; want pairs.csv:3 id_b and pairs.csv:5 id_a", err)
	}
	if !strings.Contains(err.Error(), `pairs.csv:3: field id_b: no document "x-404" in the dataset`) {
		t.Errorf("error = %q; want it to name file, line, field and id", err)
	}
	b, err := Build(read(), ds, BuildOptions{Rule: longest(t), SkipUnknown: true})
	if err != nil {
		t.Fatalf("Build with SkipUnknown: %v", err)
	}
	if b.Skipped != 2 || !slices.Equal(b.SkippedIDs, []string{"x-404", "nope"}) {
		t.Errorf("Skipped = %d %v; want 2 [x-404 nope]", b.Skipped, b.SkippedIDs)
	}
	want := []shape{{"d0 d1", "d1", false, 0.9}, {"d4 d5", "d5", false, 0.7}}
	if got := shapes(ds, b); !same(got, want) {
		t.Errorf("clusters = %+v; want %+v", got, want)
	}
}

// Older datatrove can leave a cluster's root out of .clusters; with .remove beside it
// every listed member is removed, and the kept document cannot be named.
func TestDatatroveRootMissing(t *testing.T) {
	t.Parallel()
	var clusters, remove bytes.Buffer
	for _, d := range []uint32{0, 1} {
		binary.Write(&clusters, binary.LittleEndian, [2]uint32{d, 0})
		binary.Write(&remove, binary.LittleEndian, d)
	}
	r, err := ReadFile(Source{Name: "000000.clusters", Reader: &clusters}, Datatrove, Source{Name: "000000.remove", Reader: &remove}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(r, dataset(), BuildOptions{Rule: longest(t)})
	if err == nil || !strings.Contains(err.Error(), "field cluster 0: every listed member (d0, ...) is removed") {
		t.Errorf("Build = %v; want the missing keeper named", err)
	}
	// An index past the dataset is an unknown document.
	var far bytes.Buffer
	binary.Write(&far, binary.LittleEndian, [4]uint32{3, 0, 12, 0})
	r, err = ReadFile(Source{Name: "000000.clusters", Reader: &far}, Datatrove, Source{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(r, dataset(), BuildOptions{Rule: longest(t)})
	if err == nil || !strings.Contains(err.Error(), "000000.clusters:2: field document: document index 12: the dataset has 10 documents") {
		t.Errorf("Build = %v; want index 12 refused by record", err)
	}
}

// A datatrove cluster whose documents are only partly in the file (the exclusion output
// alone) is refused: its size says so.
func TestDatatrovePartialCluster(t *testing.T) {
	t.Parallel()
	body := `{"id": "d0", "text": "a", "metadata": {"minhash_cluster_id": 5, "minhash_cluster_size": 3}}
{"id": "d1", "text": "b", "metadata": {"minhash_cluster_id": 5, "minhash_cluster_size": 3}}
{"id": "d3", "text": "c", "metadata": {"minhash_cluster_id": -1, "minhash_cluster_size": 1}}
`
	r, err := ReadFile(Source{Name: "removed.jsonl", Reader: strings.NewReader(body)}, Datatrove, Source{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(r, dataset(), BuildOptions{Rule: longest(t)})
	if err == nil || !strings.Contains(err.Error(), "removed.jsonl:1: field metadata.minhash_cluster_size: cluster 5 has 2 documents in the file of the 3 datatrove says it has") {
		t.Errorf("Build = %v; want the partial cluster refused", err)
	}
}

func FuzzReadPairs(f *testing.F) {
	f.Add([]byte("id_a,id_b,score\nd0,d1,0.9\n"))
	f.Add([]byte(`{"id": "d1", "hits": [{"id": "d0", "distance": 0.9}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range []struct {
			name string
			f    Format
		}{{"p.csv", Pairs}, {"m.jsonl", Milvus}, {"t.jsonl", TextDedup}, {"x.jsonl", Datatrove}, {"y.clusters", Datatrove}, {"r.jsonl", Manifest}} {
			r, err := ReadFile(Source{Name: c.name, Reader: bytes.NewReader(b)}, c.f, Source{}, Options{})
			if err != nil {
				continue
			}
			if _, err := Build(r, dataset(), BuildOptions{Rule: mustRule("longest"), SkipUnknown: true}); err != nil {
				var bad *BadInputError
				if !errors.As(err, &bad) {
					t.Fatalf("%s: Build: %v", c.name, err)
				}
			}
		}
	})
}

func mustRule(s string) cluster.Rule {
	r, err := cluster.ParseRule(s)
	if err != nil {
		panic(err)
	}
	return r
}

// A keeper the dataset does not have, skipped on request, leaves its cluster to the rule.
func TestSkippedKeeperFallsBackToTheRule(t *testing.T) {
	t.Parallel()
	body := `{"id": "gone", "__INDEX__": 0, "__CLUSTER__": 0}
{"id": "d1", "__INDEX__": 1, "__CLUSTER__": 0}
{"id": "d2", "__INDEX__": 2, "__CLUSTER__": 0}
`
	r, err := ReadFile(Source{Name: "td.jsonl", Reader: strings.NewReader(body)}, TextDedup, Source{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds := dataset()
	b, err := Build(r, ds, BuildOptions{Rule: longest(t), SkipUnknown: true})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	want := []shape{{"d1 d2", "d2", false, math.NaN()}}
	if got := shapes(ds, b); !same(got, want) || b.Skipped != 1 {
		t.Errorf("clusters = %+v, skipped %d; want %+v, 1", got, b.Skipped, want)
	}
}

// A datatrove document written out with its text, longer than a label row may be, reads.
func TestDatatroveLongDocument(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 700_000) // 3.5 MB
	body := fmt.Sprintf(`{"id": "d1", "text": %q, "metadata": {"minhash_cluster_id": 3}}
{"id": "d2", "text": "short", "metadata": {"minhash_cluster_id": 3}}
`, long)
	r, err := ReadFile(Source{Name: "out.jsonl", Reader: strings.NewReader(body)}, Datatrove, Source{}, Options{})
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	if len(r.Members) != 2 {
		t.Errorf("members %+v; want d1 and d2", r.Members)
	}
}

// A Milvus dump of a search over documents all stored (every pair both ways, hits that
// are queries too) says nothing of keepers: components, keepers by the rule; and with
// the rule asked for, a search-before-insert dump is clustered as components too.
func TestMilvusWithoutKeepers(t *testing.T) {
	t.Parallel()
	both := `{"id": "d1", "hits": [{"id": "d0", "distance": 0.9}, {"id": "d2", "distance": 0.8}]}
{"id": "d0", "hits": [{"id": "d1", "distance": 0.9}]}
{"id": "d2", "hits": [{"id": "d1", "distance": 0.8}]}
`
	r, err := ReadFile(Source{Name: "dump.jsonl", Reader: strings.NewReader(both)}, Milvus, Source{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds := dataset()
	b, err := Build(r, ds, BuildOptions{Rule: longest(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := shapes(ds, b), []shape{{"d0 d1 d2", "d2", false, 0.8}}; !same(got, want) {
		t.Errorf("batch search: clusters %+v; want %+v", got, want)
	}
	r, err = ReadFile(open(t, filepath.Join("testdata", "milvus-dump.jsonl")), Milvus, Source{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err = Build(r, ds, BuildOptions{Rule: longest(t), IgnoreFileKeepers: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := shapes(ds, b), []shape{{"d0 d1 d2", "d2", false, 0.71875}, {"d4 d5 d7 d9", "d9", false, 0.59375}}; !same(got, want) {
		t.Errorf("keepers by the rule: clusters %+v; want %+v", got, want)
	}
}

// datatrove's kept output with the exclusion writer's beside it: its own keepers.
func TestDatatroveKeptAndExcluded(t *testing.T) {
	t.Parallel()
	kept := `{"id": "d2", "text": "a", "metadata": {"minhash_cluster_id": 0, "minhash_cluster_size": 3}}
{"id": "d3", "text": "b", "metadata": {"minhash_cluster_id": -1, "minhash_cluster_size": 1}}
`
	excluded := `{"id": "d0", "text": "c", "metadata": {"minhash_cluster_id": 0, "minhash_cluster_size": 3}}
{"id": "d1", "text": "d", "metadata": {"minhash_cluster_id": 0, "minhash_cluster_size": 3}}
`
	r, err := ReadFile(Source{Name: "kept.jsonl", Reader: strings.NewReader(kept)}, Datatrove,
		Source{Name: "excluded.jsonl", Reader: strings.NewReader(excluded)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds := dataset()
	b, err := Build(r, ds, BuildOptions{Rule: mustRule("shortest")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := shapes(ds, b), []shape{{"d0 d1 d2", "d2", true, math.NaN()}}; !same(got, want) {
		t.Errorf("clusters %+v; want %+v (datatrove kept d2)", got, want)
	}
}

// Older datatrove sets minhash_cluster only on the documents in a cluster.
func TestDatatroveOlderMetadata(t *testing.T) {
	t.Parallel()
	body := `{"id": "d0", "text": "a", "metadata": {"minhash_cluster": 4}}
{"id": "d5", "text": "b", "metadata": {"source": "x"}}
{"id": "d1", "text": "c", "metadata": {"minhash_cluster": 4}}
`
	r, err := ReadFile(Source{Name: "out.jsonl", Reader: strings.NewReader(body)}, Datatrove, Source{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds := dataset()
	b, err := Build(r, ds, BuildOptions{Rule: longest(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := shapes(ds, b), []shape{{"d0 d1", "d1", false, math.NaN()}}; !same(got, want) {
		t.Errorf("clusters %+v; want %+v", got, want)
	}
}
