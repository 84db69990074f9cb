package handoff

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Sample returns settings over spec: 16 bands x 8 rows, threshold 0.8, exact verification,
// keeper-star, from signed-off manifest 3 of "Demo corpus" version 2. The module that
// compiles the generated Go program (tools/milvuscheck) uses it too.
func sample(t testing.TB, spec string) Settings {
	t.Helper()
	s, err := lsh.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	rule, err := cluster.ParseRule("longest")
	if err != nil {
		t.Fatal(err)
	}
	return Settings{
		Params: review.Params{Spec: s, Shape: lsh.Shape{Bands: 16, Rows: 8}, Threshold: 0.8, Verification: review.Exact,
			Policy: cluster.KeeperStar, Rule: rule},
		Source: Source{Manifest: 3, Dataset: review.Dataset{Name: "Demo corpus", Version: 2}, State: review.SignedOff},
	}
}

func file(t *testing.T, files []File, name string) string {
	t.Helper()
	for _, f := range files {
		if f.Name == name {
			return string(f.Body)
		}
	}
	t.Fatalf("no file %s among %d", name, len(files))
	return ""
}

func mustContain(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s does not contain %q", what, w)
		}
	}
}

// A milvus-profile representation goes to Milvus as a MinHash function definition whose
// params are Milvus's names and values; anything else ships signatures instead, and the
// files say why.
func TestMilvusFiles(t *testing.T) {
	t.Run("function", func(t *testing.T) {
		files, err := Files(sample(t, "scheme=milvus level=word size=3 k=128 hash=xxh3 seed=1234"), Milvus)
		if err != nil {
			t.Fatal(err)
		}
		py := file(t, files, "milvus/milvus_setup.py")
		mustContain(t, "milvus_setup.py", py,
			`COLLECTION = "dedup_demo_corpus_v2"`, "NUM_HASHES = 128", "BANDS = 16", "THRESHOLD = 0.8",
			`index_type="MINHASH_LSH", metric_type="MHJACCARD"`, `"mh_element_bit_width": 32`, `"mh_lsh_band": BANDS`,
			`"mh_search_with_jaccard": True`, "function_type=FunctionType.MINHASH",
			`params={"num_hashes": 128, "shingle_size": 3, "hash_function": "xxhash", "token_level": "word", "seed": 1234}`,
			"enable_analyzer=True", "def insert_unless_duplicate")
		if strings.Contains(py, "DRAFT") {
			t.Error("a signed-off manifest's files say DRAFT")
		}
		mustContain(t, "README.md", file(t, files, "milvus/README.md"), "computes these signatures itself, bit for bit")
	})
	t.Run("signatures", func(t *testing.T) {
		s := sample(t, "scheme=classic norm=nfkc+lower+space level=char size=5 k=256 hash=xxhash seed=7")
		s.Source.State = review.Draft
		s.Params.Shape = lsh.Shape{Bands: 20, Rows: 10}
		files, err := Files(s, Milvus)
		if err != nil {
			t.Fatal(err)
		}
		py := file(t, files, "milvus/milvus_setup.py")
		// Milvus bands 256 values in 20 bands of floor(256/20) = 12, not the calibrated 10.
		mustContain(t, "milvus_setup.py", py, "DRAFT: this manifest is not signed off",
			"Milvus's MinHash function cannot compute this representation: the representation uses scheme=classic",
			"-format binary", "NUM_HASHES = 256", "= 240 values, 12 per band (calibrated: 10)", "def signatures(path)",
			"not the calibrated 10 rows: Milvus runs 20 x 12")
		if strings.Contains(py, "FunctionType") {
			t.Error("a classic representation got a MinHash function definition")
		}
	})
	t.Run("norm", func(t *testing.T) {
		_, why := MilvusFunction(mustSpec(t, "scheme=milvus norm=lower level=char size=5 k=64 hash=sha1 seed=1"))
		if !strings.Contains(why, "norm=lower") {
			t.Errorf("a milvus spec with norm=lower: why = %q", why)
		}
	})
}

func mustSpec(t *testing.T, s string) lsh.Spec {
	t.Helper()
	spec, err := lsh.ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// The function definition an export writes computes, in Milvus, exactly the signatures
// this studio computes: for every setting of the Milvus reference vectors (made by
// Milvus's own MinHash code), the params written back from the parsed representation are
// the reference's params, and the representation they name reproduces every signature.
func TestMilvusFunctionMatchesReferenceVectors(t *testing.T) {
	type vector struct {
		Text         string   `json:"text"`
		NumHashes    int      `json:"num_hashes"`
		ShingleSize  int      `json:"shingle_size"`
		TokenLevel   string   `json:"token_level"`
		HashFunction string   `json:"hash_function"`
		Seed         uint64   `json:"seed"`
		Signature    []uint32 `json:"signature"`
	}
	vecs := realtext.Records[vector](t, "internal/lsh/testdata/milvus-vectors.jsonl.gz", 0)
	for n, v := range vecs {
		ref, _ := json.Marshal(map[string]any{"num_hashes": v.NumHashes, "shingle_size": v.ShingleSize,
			"token_level": v.TokenLevel, "hash_function": v.HashFunction, "seed": v.Seed})
		spec := mustSpec(t, string(ref))
		params, why := MilvusFunction(spec)
		if params == nil {
			t.Fatalf("line %d: %s: %s", n+1, ref, why)
		}
		got, _ := json.Marshal(params)
		if string(got) != string(ref) {
			t.Fatalf("line %d: exported params %s; the reference was made with %s", n+1, got, ref)
		}
		back := mustSpec(t, string(got))
		h, err := lsh.NewHasher(back)
		if err != nil {
			t.Fatal(err)
		}
		if sig := h.Signature(v.Text, nil); !slices.Equal([]uint32(sig), v.Signature) {
			t.Fatalf("line %d (%s): the exported function's representation does not reproduce Milvus's signature", n+1, got)
		}
	}
	if len(vecs) != 256 {
		t.Fatalf("checked %d reference vectors; want 256", len(vecs))
	}
}

func TestJSONDescription(t *testing.T) {
	s := sample(t, "scheme=milvus level=char size=4 k=128 hash=sha1 seed=9")
	files, err := Files(s, JSON)
	if err != nil {
		t.Fatal(err)
	}
	var d Description
	if err := json.Unmarshal([]byte(file(t, files, "settings.json")), &d); err != nil {
		t.Fatal(err)
	}
	spec, err := lsh.ParseSpec(d.Spec)
	if err != nil || spec != s.Params.Spec || d.SpecID != s.Params.Spec.ID() {
		t.Errorf("spec %q (%v) id %s; want %s id %s", d.Spec, err, d.SpecID, s.Params.Spec, s.Params.Spec.ID())
	}
	if d.Bands != 16 || d.Rows != 8 || d.Threshold != 0.8 || d.Verification != "exact" || d.Policy != "keeper-star" ||
		d.KeeperRule != "longest" || !d.Source.SignedOff || d.Source.Manifest != 3 || d.Representation.K != 128 {
		t.Errorf("description %+v", d)
	}
	if d.SCurveMidpoint != 0.7071 { // (1/16)^(1/8)
		t.Errorf("s_curve_threshold %v; want 0.7071", d.SCurveMidpoint)
	}
	if d.MilvusFunction["token_level"] != "char" || d.MilvusFunction["hash_function"] != "sha1" {
		t.Errorf("milvus_function %v", d.MilvusFunction)
	}
}

// The Go program is valid Go whatever the settings (the nested module
// tools/milvuscheck compiles it against the real Milvus client), and everything zips.
func TestAllFilesAndZip(t *testing.T) {
	for _, spec := range []string{"scheme=milvus level=word size=3 k=128 hash=xxh3 seed=1234", "level=char size=7 k=256", "scheme=fast k=64"} {
		s := sample(t, spec)
		s.Params.Shape = lsh.Shape{Bands: 8, Rows: 8}
		s.Source.Dataset.Name = `9 "odd" name/..`
		files, err := All(s)
		if err != nil {
			t.Fatal(err)
		}
		src := file(t, files, "milvus/go/main.go")
		if _, err := parser.ParseFile(token.NewFileSet(), "main.go", src, parser.AllErrors); err != nil {
			t.Errorf("%s: generated Go: %v", spec, err)
		}
		mustContain(t, "main.go", src, `collection = "dedup_d_9_odd_name_v2"`)
		var buf bytes.Buffer
		if err := Zip(&buf, "manifest-3-engines", files, s.Generated); err != nil {
			t.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		want := []string{"manifest-3-engines/milvus/README.md", "manifest-3-engines/milvus/milvus_setup.py", "manifest-3-engines/milvus/go/main.go",
			"manifest-3-engines/datasketch/datasketch_lsh.py", "manifest-3-engines/datatrove/datatrove_minhash.py", "manifest-3-engines/settings.json"}
		if !slices.Equal(names, want) {
			t.Errorf("zip holds %q; want %q", names, want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats {
		if g, err := ParseFormat(string(f)); err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, g, err)
		}
	}
	if _, err := ParseFormat("faiss"); err == nil || !strings.Contains(err.Error(), "want milvus, datasketch, datatrove or json") {
		t.Errorf("ParseFormat(faiss): %v", err)
	}
}

// The Milvus scripts write the dump import-results reads back: the Python script's own
// dump_line, run, gives lines that results.ReadFile takes as the milvus format, and the
// Go program writes the same fields.
func TestMilvusScriptsWriteTheImportedDump(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	for _, spec := range []string{"scheme=milvus level=word size=3 k=128 hash=xxh3 seed=1234 norm=none", "level=word size=5 k=128"} {
		files, err := All(sample(t, spec))
		if err != nil {
			t.Fatal(err)
		}
		script := file(t, files, "milvus/milvus_setup.py")
		i, j := strings.Index(script, "def dump_line("), strings.Index(script, "\nif __name__")
		if i < 0 || j < i {
			t.Fatalf("%s: milvus_setup.py has no dump_line before its main", spec)
		}
		prog := "import json\n" + script[i:j] + `
print(dump_line("doc-2", [("doc-1", 0.9375), (7, 0.8125)]))
print(dump_line("doc-3", [("doc-1", 1.0)]))
`
		out, err := exec.Command(py, "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: dump_line: %v\n%s", spec, err, out)
		}
		r, err := results.ReadFile(results.Source{Name: "dump.jsonl", Reader: bytes.NewReader(out)}, results.Milvus, results.Source{}, results.Options{})
		if err != nil {
			t.Fatalf("%s: the dump %q does not import: %v", spec, out, err)
		}
		id := func(doc int) string { return r.Docs[doc].ID }
		if len(r.Pairs) != 3 || id(r.Pairs[0].A) != "doc-2" || id(r.Pairs[0].B) != "doc-1" || r.Pairs[0].Score != 0.9375 || id(r.Pairs[1].B) != "7" {
			t.Errorf("%s: pairs read from the dump: %+v", spec, r.Pairs)
		}
		mustContain(t, "main.go", file(t, files, "milvus/go/main.go"), "json:\"id\"", "json:\"hits\"", "json:\"distance\"", "json.Marshal(dumpLine{ID: id, Hits: hits})")
	}
}
