package results

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

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

// builtShapes reads main (with side) in format f and returns the shapes of the clusters
// Build makes of it over dataset() with opt.
func builtShapes(t *testing.T, opt BuildOptions, main Source, f Format, side Source) []shape {
	t.Helper()
	r, err := ReadFile(main, f, side, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds := dataset()
	b, err := Build(r, ds, opt)
	if err != nil {
		t.Fatal(err)
	}
	return shapes(ds, b)
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
		// The datasketch program: every stored match of each reported document; as for
		// Milvus, each is removed in favour of its best match (d5 stays out).
		{"datasketch matches", "datasketch-matches.jsonl", "", Datasketch,
			[]shape{{"d0 d1 d2", "d0", true, 0.71875}, {"d4 d7 d9", "d4", true, 0.6015625}}},
		// What the datasketch program exported before issue 28 printed: the best match,
		// tab-separated.
		{"datasketch best match (tsv)", "datasketch-best.tsv", "", Datasketch,
			[]shape{{"d0 d1 d2", "d0", true, 0.7188}, {"d4 d7 d9", "d4", true, 0.6016}}},
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
			[]string{"pairs.csv: 1 bad record\n", "pairs.csv:3: field score: 1.5 is not a similarity in [0, 1]"}},
		{"pairs two scores out of range", "pairs.csv", "id_a,id_b,score\nd0,d1,-1\nd1,d2,1.5\n", Pairs,
			[]string{"pairs.csv: 2 bad records\n", "pairs.csv:2: field score: -1 is not", "pairs.csv:3: field score: 1.5 is not"}},
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
			[]string{"000000.clusters:2: ends 2 bytes into a record at byte 8"}},
		{"clusters cut at a byte", "000000.clusters", "\x00\x00\x00\x00\x01\x00\x00\x00\x02", Datatrove,
			[]string{"000000.clusters:2: ends 1 byte into a record at byte 8"}},
		{"datasketch jaccard", "matches.jsonl", `{"id": "d2", "matches": [{"id": "d0", "jaccard": 0.9}, {"id": "d1", "jaccard": 1.5}]}` + "\n", Datasketch,
			[]string{"matches.jsonl:1: field matches[1].jaccard: 1.5 is not a similarity in [0, 1]"}},
		{"datasketch matches not a list", "matches.jsonl", `{"id": "d2", "hits": [{"id": "d0", "distance": 0.9}]}` + "\n", Datasketch,
			[]string{`matches.jsonl:1: field matches: want a list of {"id", "jaccard"} objects`}},
		{"datasketch itself", "matches.jsonl", `{"id": "d2", "matches": [{"id": "d2", "jaccard": 1}]}` + "\n", Datasketch,
			[]string{"matches.jsonl:1: field matches[0].id: the query document itself"}},
		{"datasketch tsv line", "ds1.tsv", "d1\tduplicate of\td0\tjaccard estimate\t0.92\nd2 duplicate of d0\n", Datasketch,
			[]string{`ds1.tsv:2: want JSON lines {"id", "matches": [...]} or the tab-separated line id, "duplicate of", id, "jaccard estimate", score of the datasketch program; got 1 field`}},
		{"datasketch tsv line of two fields", "ds1.tsv", "d2 duplicate of\td0\n", Datasketch,
			[]string{`ds1.tsv:1: want JSON lines {"id", "matches": [...]} or the tab-separated line id, "duplicate of", id, "jaccard estimate", score of the datasketch program; got 2 fields`}},
		{"datasketch tsv score", "ds1.tsv", "d1\tduplicate of\td0\tjaccard estimate\tnan\n", Datasketch,
			[]string{"ds1.tsv:1: field jaccard estimate: nan is not a similarity in [0, 1]"}},
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
	// The missing keeper is named.
	checkBuildRefused(t, Source{Name: "000000.clusters", Reader: &clusters}, Datatrove, Source{Name: "000000.remove", Reader: &remove},
		"field cluster 0: every listed member (d0, ...) is removed")
	// An index past the dataset is an unknown document, refused by record.
	var far bytes.Buffer
	binary.Write(&far, binary.LittleEndian, [4]uint32{3, 0, 12, 0})
	checkBuildRefused(t, Source{Name: "000000.clusters", Reader: &far}, Datatrove, Source{},
		"000000.clusters:2: field document: document index 12: the dataset has 10 documents")
}

// checkBuildRefused reads main (with side) in format f and checks that Build refuses
// what it read over dataset() with an error saying want.
func checkBuildRefused(t *testing.T, main Source, f Format, side Source, want string) {
	t.Helper()
	r, err := ReadFile(main, f, side, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(r, dataset(), BuildOptions{Rule: longest(t)}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Build(%s) = %v; want an error saying %q", main.Name, err, want)
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
	checkBuildRefused(t, Source{Name: "removed.jsonl", Reader: strings.NewReader(body)}, Datatrove, Source{},
		"removed.jsonl:1: field metadata.minhash_cluster_size: cluster 5 has 2 documents in the file of the 3 datatrove says it has")
}

func FuzzReadPairs(f *testing.F) {
	f.Add([]byte("id_a,id_b,score\nd0,d1,0.9\n"))
	f.Add([]byte(`{"id": "d1", "hits": [{"id": "d0", "distance": 0.9}]}`))
	f.Add([]byte("d1\tduplicate of\td0\tjaccard estimate\t0.92\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range []struct {
			name string
			f    Format
		}{{"p.csv", Pairs}, {"m.jsonl", Milvus}, {"t.jsonl", TextDedup}, {"x.jsonl", Datatrove}, {"y.clusters", Datatrove}, {"r.jsonl", Manifest}, {"d.jsonl", Datasketch}, {"d.tsv", Datasketch}} {
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
	got := builtShapes(t, BuildOptions{Rule: longest(t)}, Source{Name: "dump.jsonl", Reader: strings.NewReader(both)}, Milvus, Source{})
	if want := []shape{{"d0 d1 d2", "d2", false, 0.8}}; !same(got, want) {
		t.Errorf("batch search: clusters %+v; want %+v", got, want)
	}
	got = builtShapes(t, BuildOptions{Rule: longest(t), IgnoreFileKeepers: true}, open(t, filepath.Join("testdata", "milvus-dump.jsonl")), Milvus, Source{})
	if want := []shape{{"d0 d1 d2", "d2", false, 0.71875}, {"d4 d5 d7 d9", "d9", false, 0.59375}}; !same(got, want) {
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
	got := builtShapes(t, BuildOptions{Rule: longest(t)}, Source{Name: "out.jsonl", Reader: strings.NewReader(body)}, Datatrove, Source{})
	if want := []shape{{"d0 d1", "d1", false, math.NaN()}}; !same(got, want) {
		t.Errorf("clusters %+v; want %+v", got, want)
	}
}

// The datasketch program's JSON lines under a name that does not say JSON (its standard
// output redirected to matches.out), plain and gzip, read as JSON lines.
func TestDatasketchOutputUnderAnyName(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(filepath.Join("testdata", "datasketch-matches.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(body)
	zw.Close()
	for name, b := range map[string][]byte{"matches.out": body, "matches.out.gz": gz.Bytes(), "matches.jsonl.gz": gz.Bytes()} {
		r, err := ReadFile(Source{Name: name, Reader: bytes.NewReader(b)}, Datasketch, Source{}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(r.Pairs) != 5 || !r.KeeperGiven || r.File != name {
			t.Errorf("%s: %d pairs, keepers given %v, file %q; want 5, true, %q", name, len(r.Pairs), r.KeeperGiven, r.File, name)
		}
	}
}

// datatrove's MinhashDedupCluster output folder (remove_ids: a .clusters and a .remove
// file per task) with the ids each task read (doc_ids, what the exported pipeline
// writes): a cluster spanning two tasks is one cluster, and datatrove's keepers hold.
func TestDatatroveFolder(t *testing.T) {
	t.Parallel()
	run := filepath.Join("testdata", "datatrove-run")
	folder := Folder{Name: "remove_ids", Dir: os.DirFS(filepath.Join(run, "remove_ids")), IDsName: "doc_ids", IDs: os.DirFS(filepath.Join(run, "doc_ids"))}
	r, err := ReadDatatroveFolder(folder)
	if err != nil {
		t.Fatalf("ReadDatatroveFolder: %v", err)
	}
	if r.Records != 6 || len(r.SHA256) != 64 || !r.KeeperGiven {
		t.Errorf("records %d, sha %q, keepers given %v; want 6, 64 hex digits, true", r.Records, r.SHA256, r.KeeperGiven)
	}
	ds := dataset()
	b, err := Build(r, ds, BuildOptions{Rule: mustRule("shortest")})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	want := []shape{{"d0 d1 d2", "d2", true, math.NaN()}, {"d4 d7 d9", "d9", true, math.NaN()}}
	if got := shapes(ds, b); !same(got, want) || b.Removals != 4 {
		t.Errorf("clusters = %+v, %d removals; want %+v, 4", got, b.Removals, want)
	}

	// Without the ids, a document's index says nothing across tasks.
	_, err = ReadDatatroveFolder(Folder{Name: "remove_ids", Dir: folder.Dir})
	if err == nil || !strings.Contains(err.Error(), "remove_ids: holds the clusters of 2 tasks (000000.clusters, ...)") ||
		!strings.Contains(err.Error(), "doc_ids/") {
		t.Errorf("without ids: %v; want the tasks named and doc_ids asked for", err)
	}
}

// Bad folders are refused naming the file, the record and the field.
func TestDatatroveFolderBad(t *testing.T) {
	t.Parallel()
	rec := func(idx, c uint32) []byte {
		return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, idx), c)
	}
	tests := []struct {
		name  string
		files fstest.MapFS
		ids   fstest.MapFS
		want  string
	}{
		{"remove only", fstest.MapFS{"000000.remove": {Data: []byte{1, 0, 0, 0}}}, nil,
			"remove_ids: 1 .remove file and no .clusters file: a .remove file lists the documents to remove but not what each duplicates"},
		{"removes only", fstest.MapFS{"000000.remove": {Data: []byte{1, 0, 0, 0}}, "000001.remove": {Data: []byte{2, 0, 0, 0}}}, nil,
			"remove_ids: 2 .remove files and no .clusters file"},
		{"one task not the first", fstest.MapFS{"000003.clusters": {Data: append(rec(0, 1), rec(1, 1)...)}}, nil,
			"remove_ids: holds the clusters of 1 task (000003.clusters, ...)"},
		{"empty", fstest.MapFS{"README": {Data: []byte("x")}}, nil, "remove_ids: no NNNNNN.clusters file in it"},
		{"ids missing", fstest.MapFS{"000003.clusters": {Data: append(rec(0, 1), rec(1, 1)...)}}, fstest.MapFS{"000000.ids": {Data: []byte(`"a"` + "\n")}},
			"doc_ids has no 000003.ids: the ids task 3 read are missing"},
		{"index past the ids", fstest.MapFS{"000000.clusters": {Data: append(rec(0, 1), rec(7, 1)...)}}, fstest.MapFS{"000000.ids": {Data: []byte(`"d0"` + "\n" + `"d1"` + "\n")}},
			"remove_ids/000000.clusters:2: field document: index 7: task 0 read 2 documents by doc_ids/000000.ids"},
		{"bad id line", fstest.MapFS{"000000.clusters": {Data: append(rec(0, 1), rec(1, 1)...)}}, fstest.MapFS{"000000.ids": {Data: []byte(`"d0"` + "\n" + `{"id": 1}` + "\n")}},
			"doc_ids/000000.ids:2: field id: want a string or a whole number"},
		{"cut short", fstest.MapFS{"000000.clusters": {Data: append(rec(0, 1), 1, 0)}}, nil,
			"remove_ids/000000.clusters:2: ends 2 bytes into a record at byte 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := Folder{Name: "remove_ids", Dir: tt.files}
			if tt.ids != nil {
				f.IDsName, f.IDs = "doc_ids", tt.ids
			}
			r, err := ReadDatatroveFolder(f)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReadDatatroveFolder = %+v, %v; want an error saying %q", r, err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "remove_ids") && !strings.HasPrefix(err.Error(), "doc_ids") {
				t.Errorf("error %q does not start with the folder's name", err)
			}
		})
	}
}

// A one-task folder without ids is read as a single .clusters file is: indexes in the
// dataset's import order (the sibling .remove gives the keepers).
func TestDatatroveFolderOneTask(t *testing.T) {
	t.Parallel()
	dir := fstest.MapFS{}
	for _, name := range []string{"000000.clusters", "000000.remove"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		dir[name] = &fstest.MapFile{Data: b}
	}
	r, err := ReadDatatroveFolder(Folder{Name: "remove_ids/", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ds := dataset()
	b, err := Build(r, ds, BuildOptions{Rule: longest(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := shapes(ds, b), []shape{{"d0 d1 d2", "d2", true, math.NaN()}, {"d4 d7 d9", "d9", true, math.NaN()}}; !same(got, want) {
		t.Errorf("clusters %+v; want %+v", got, want)
	}
}

// A real datatrove 0.10.0 run of the exported pipeline (testdata/datatrove-0.10.0, see its
// README): its remove_ids folder read with the ids each task read names exactly the 87
// documents datatrove's filter removed.
func TestDatatroveFolderOfARealRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "datatrove-0.10.0")
	r, err := ReadDatatroveFolder(Folder{Name: "remove_ids", Dir: os.DirFS(filepath.Join(dir, "remove_ids")), IDsName: "doc_ids", IDs: os.DirFS(filepath.Join(dir, "doc_ids"))})
	if err != nil {
		t.Fatal(err)
	}
	// The dataset: the documents both tasks read, in the order of the files they read.
	var ds Dataset
	for _, task := range []string{"000000.ids", "000001.ids"} {
		b, err := os.ReadFile(filepath.Join(dir, "doc_ids", task))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			ds.IDs = append(ds.IDs, strings.Trim(line, `"`))
			ds.Docs = append(ds.Docs, cluster.Doc{Len: 1})
		}
	}
	if len(ds.IDs) != 600 {
		t.Fatalf("%d ids; want 600", len(ds.IDs))
	}
	b, err := Build(r, ds, BuildOptions{Rule: longest(t)})
	if err != nil {
		t.Fatal(err)
	}
	var removed []string
	for _, c := range b.Clusters {
		if !c.KeeperFromFile {
			t.Fatalf("cluster of %v: keeper not datatrove's", c.Members)
		}
		for _, m := range c.Members {
			if m != c.Keeper {
				removed = append(removed, ds.IDs[m])
			}
		}
	}
	want, err := os.ReadFile(filepath.Join(dir, "removed.ids"))
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := strings.Fields(string(want))
	slices.Sort(removed)
	slices.Sort(wantIDs)
	if !slices.Equal(removed, wantIDs) || b.Removals != 87 {
		t.Errorf("removals %d %v; datatrove removed %d %v", b.Removals, removed, len(wantIDs), wantIDs)
	}
}
