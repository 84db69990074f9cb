package handoff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

func python(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH: the generated Python is not run")
	}
	return py
}

// textLines returns n real texts and the awkward ones, and them as JSON lines: the input
// of a generated program run on the studio's texts.
func textLines(t *testing.T, n int) ([]string, []byte) {
	t.Helper()
	texts := append(realtext.Texts(t, n, 0), awkwardTexts...)
	var in bytes.Buffer
	for _, text := range texts {
		b, _ := json.Marshal(text)
		in.Write(append(b, '\n'))
	}
	return texts, in.Bytes()
}

// block returns the text of body from the line starting with start up to (not
// including) the line starting with end.
func block(t *testing.T, body, start, end string) string {
	t.Helper()
	i := strings.Index(body, "\n"+start)
	if i < 0 {
		t.Fatalf("no %q in the program", start)
	}
	j := strings.Index(body[i+1:], "\n"+end)
	if j < 0 {
		t.Fatalf("no %q after %q in the program", end, start)
	}
	return body[i+1 : i+1+j]
}

// Texts where Python and Go, or the studio's steps, are easy to get wrong: the
// information separators U+001C..U+001F (white space to Python's str.split, not to Go),
// the other white space, İ (one rune lowercased in Go, two in str.lower), final sigma,
// compatibility characters, other scripts' digits, symbols, combining marks, runes
// outside the BMP, texts shorter than a shingle, a text that normalizes to nothing.
var awkwardTexts = []string{
	"alpha\x1cbeta gamma\x1d delta\x1e\x1fepsilon zeta eta theta",
	"a\u00a0b\u3000c\u2028d\u0085e\u200bf g\u2009h\u202fi\u205fj k\u1680l",
	"İSTANBUL ΣΊΣΥΦΟΣ ΟΔΥΣΣΕΥΣ Σ ǅemal ﬁnance Ⅻ ²³ ① Kelvin \u212a",
	"full-width ＡＢＣ１２３ and digits ٣٤٥ ߁ ৬ and symbols € $ + < = > ^ ` | ~ — “quoted”",
	"  leading and trailing \t\n ",
	"!!! ... ???",
	"one",
	"two words",
	"e\u0301 combining cafe\u0301 A\u030a Å ḱ\u0323",
	"emoji 😀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐐀𐐨 (Deseret) 〇 Ⅷ 2024-12-03 3.14",
	"tab\tseparated\vvertical\fform\rcarriage\nnew line",
}

// The tokenization the exported programs write out in Python is the studio's: for
// representations that take every normalization step, word and char shingles, the
// Python code of the datasketch program (the same code the datatrove pipeline carries,
// checked below) gives, on 300 real documents and the awkward texts above, exactly the
// shingles lsh.Hasher.Shingles gives, and with SHA-1 exactly the 64-bit shingle set
// (lsh.Hasher.ShingleSet) that exact Jaccard compares. Python's str.split() would fail
// the first awkward text (it splits at U+001C); str.lower() the third.
func TestPythonTokenizationIsTheStudios(t *testing.T) {
	t.Parallel()
	py := python(t)
	texts, in := textLines(t, 300)
	for _, spec := range []string{
		"scheme=datasketch norm=none level=word size=5 hash=sha1",
		"norm=nfkc+lower+space level=word size=5 hash=sha1",
		"norm=nfkc+lower+punct+digits+space level=word size=3 hash=sha1",
		"norm=lower+punct level=word size=2 hash=sha1",
		"norm=nfkc+lower level=char size=4 hash=sha1",
		"norm=none level=char size=3 hash=sha1",
		"norm=punct+digits+space level=char size=5 hash=sha1",
	} {
		t.Run(spec, func(t *testing.T) {
			s := sample(t, spec)
			files, err := All(s)
			if err != nil {
				t.Fatal(err)
			}
			ds := file(t, files, "datasketch/datasketch_lsh.py")
			code := block(t, ds, "# The representation's text steps", "def hash64(")
			if dt := file(t, files, "datatrove/datatrove_minhash.py"); !strings.Contains(dt, code) {
				t.Error("the datatrove pipeline's tokenization is not the datasketch program's")
			}
			prog := "import hashlib, json, sys, unicodedata\n" + code + `
for line in sys.stdin:
    sh = shingles(json.loads(line))
    distinct = list(dict.fromkeys(sh))
    print(json.dumps({"shingles": [s.decode("utf-8") for s in distinct],
                      "set": sorted({int.from_bytes(hashlib.sha1(s).digest()[:8], "little") for s in sh})}))
`
			cmd := exec.Command(py, "-c", prog)
			cmd.Stdin = bytes.NewReader(in)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("python: %v\n%s", err, out)
			}
			h, err := lsh.NewHasher(s.Params.Spec)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != len(texts) {
				t.Fatalf("python wrote %d lines for %d texts", len(lines), len(texts))
			}
			for i, text := range texts {
				var got struct {
					Shingles []string `json:"shingles"`
					Set      []uint64 `json:"set"`
				}
				if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
					t.Fatal(err)
				}
				want := h.Shingles(text)
				if got.Shingles == nil {
					got.Shingles = []string{}
				}
				if want == nil {
					want = []string{}
				}
				if !slices.Equal(got.Shingles, want) {
					t.Errorf("text %d %.40q: Python's shingles %q; the studio's %q", i, text, got.Shingles, want)
					continue
				}
				if set := h.ShingleSet(text); !slices.Equal(got.Set, set) && (len(got.Set) > 0 || len(set) > 0) {
					t.Errorf("text %d %.40q: Python's shingle set differs from the studio's", i, text)
				}
			}
		})
	}
}

// The datasketch program, on the documents datasketch itself signed for the reference
// vectors (lsh/testdata/datasketch-vectors.jsonl.gz, datasketch 1.10, shared/data), makes
// exactly the shingles datasketch was fed (the first 60 words of the lowercased text, as
// 5-shingles), under the constants it is generated with (NUM_PERM, SEED); and the
// studio's signature of the same text is datasketch's. So the program, which hands those
// shingles to datasketch's MinHash(num_perm=NUM_PERM, seed=SEED) with sha1_hash32,
// computes the studio's signature, bit for bit.
func TestDatasketchProgramMatchesReferenceVectors(t *testing.T) {
	t.Parallel()
	py := python(t)
	byID := map[string]string{}
	for _, d := range realtext.Docs(t, 0) {
		byID[d.ID] = d.Text
	}
	type vector struct {
		Doc        string   `json:"doc"`
		Shingles   []string `json:"shingles"`
		Seed       uint64   `json:"seed"`
		NumPerm    int      `json:"num_perm"`
		HashValues []uint32 `json:"hashvalues"`
		text       string
	}
	var vecs []vector
	var in bytes.Buffer
	for _, v := range realtext.Records[vector](t, "internal/lsh/testdata/datasketch-vectors.jsonl.gz", 0) {
		words := strings.Fields(byID[v.Doc])
		if len(words) < 60 {
			continue
		}
		v.text = strings.Join(words[:60], " ")
		b, _ := json.Marshal(v.text)
		in.Write(append(b, '\n'))
		vecs = append(vecs, v)
	}
	if len(vecs) < 30 {
		t.Fatalf("%d reference vectors have a document of 60 words; want at least 30 of the 120", len(vecs))
	}
	// The tokenization does not depend on NUM_PERM and SEED: one run for every vector.
	var code string
	for _, v := range vecs {
		s := sample(t, fmt.Sprintf("scheme=datasketch norm=lower level=word size=5 k=%d seed=%d", v.NumPerm, v.Seed))
		s.Params.Shape = lsh.Shape{Bands: v.NumPerm / 8, Rows: 8}
		files, err := Files(s, Datasketch)
		if err != nil {
			t.Fatal(err)
		}
		prog := file(t, files, "datasketch/datasketch_lsh.py")
		mustContain(t, "datasketch_lsh.py", prog, fmt.Sprintf("NUM_PERM = %d\nSEED = %d\n", v.NumPerm, v.Seed), "seed=SEED, hashfunc=low32")
		if c := block(t, prog, "# The representation's text steps", "def hash64("); code == "" {
			code = c
		} else if c != code {
			t.Fatalf("the tokenization of k=%d seed=%d differs from the others'", v.NumPerm, v.Seed)
		}
	}
	cmd := exec.Command(py, "-c", "import json, sys, unicodedata\n"+code+`
for line in sys.stdin:
    print(json.dumps(sorted({s.decode("utf-8") for s in shingles(json.loads(line))})))
`)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(vecs) {
		t.Fatalf("python wrote %d lines for %d texts", len(lines), len(vecs))
	}
	for i, v := range vecs {
		var got []string
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, v.Shingles) {
			t.Errorf("%s: the program's shingles are not the ones datasketch signed:\n got %q\nwant %q", v.Doc, got, v.Shingles)
		}
		h, err := lsh.NewHasher(mustSpec(t, fmt.Sprintf("scheme=datasketch norm=lower level=word size=5 k=%d seed=%d", v.NumPerm, v.Seed)))
		if err != nil {
			t.Fatal(err)
		}
		if sig := h.Signature(v.text, nil); !slices.Equal([]uint32(sig), v.HashValues) {
			t.Errorf("%s seed=%d k=%d: the studio's signature is not datasketch's", v.Doc, v.Seed, v.NumPerm)
		}
	}
}

// The datasketch program writes what import-results reads back: its own report_line,
// run, gives lines that results.ReadFile takes as -format datasketch, every match kept,
// best first, and the import removes each reported document in favour of its best match.
func TestDatasketchProgramOutputReadsBack(t *testing.T) {
	py := python(t)
	files, err := Files(sample(t, "scheme=datasketch k=128"), Datasketch)
	if err != nil {
		t.Fatal(err)
	}
	code := block(t, file(t, files, "datasketch/datasketch_lsh.py"), "def report_line(", "def main(")
	out, err := exec.Command(py, "-c", "import json\n"+code+`
print(report_line("d1", [("d0", 0.9375)]))
print(report_line("d2", [("d0", 0.71875)]))
print(report_line("d7", [("d4", 1.0)]))
print(report_line("d9", [("d5", 0.59375), ("d4", 0.6015625)]))
`).CombinedOutput()
	if err != nil {
		t.Fatalf("report_line: %v\n%s", err, out)
	}
	want, err := os.ReadFile("../results/testdata/datasketch-matches.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(want) {
		t.Errorf("report_line wrote\n%s\nthe import's fixture is\n%s", out, want)
	}
	r, err := results.ReadFile(results.Source{Name: "matches.jsonl", Reader: bytes.NewReader(out)}, results.Datasketch, results.Source{}, results.Options{})
	if err != nil {
		t.Fatalf("the output does not import: %v", err)
	}
	if len(r.Pairs) != 5 || !r.KeeperGiven || r.Docs[r.Pairs[3].B].ID != "d4" {
		t.Errorf("read back %+v", r.Pairs)
	}
}

// The pymilvus script compares MHJACCARD scores, which Milvus returns as float32, with
// the threshold as a float32: a pair exactly at a threshold such as 0.7 (7 of 10 values)
// is kept, as the studio keeps it, where comparing with the Python float 0.7 would drop
// it (float32(0.7) is 0.699999988).
func TestMilvusScriptThresholdIsFloat32(t *testing.T) {
	py := python(t)
	s := sample(t, "scheme=milvus level=word size=3 k=10 hash=xxh3 seed=1234")
	s.Params.Shape = lsh.Shape{Bands: 5, Rows: 2}
	s.Params.Threshold = 0.7
	s.Params.Verification = review.Estimate
	files, err := Files(s, Milvus)
	if err != nil {
		t.Fatal(err)
	}
	script := file(t, files, "milvus/milvus_setup.py")
	consts := block(t, script, "THRESHOLD = ", "INDEX_PARAMS = ")
	out, err := exec.Command(py, "-c", "import struct\n"+consts+`
score = struct.unpack("f", struct.pack("f", 7 / 10))[0]  # what Milvus returns for 7 of 10
print(score >= THRESHOLD_F32, score >= THRESHOLD)
`).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "True False" {
		t.Errorf("at the threshold: float32 comparison, float comparison = %s; want True False", got)
	}
	mustContain(t, "milvus_setup.py", script, `if h["distance"] >= THRESHOLD_F32]`)
}

// An opt-in run of the datasketch program with the real datasketch (its source or an
// install on DEDUP_DATASKETCH_PYTHONPATH, run by DEDUP_PYTHON, default python3; numpy
// and, for xxhash representations, the xxhash module installed): the program imported as
// a module computes, for 200 real documents, signatures bit-identical to the studio's
// under scheme=datasketch, and to the studio's scheme=datasketch of the same
// normalization, shingling and hash for a classic representation (what the program says
// it computes).
func TestDatasketchProgramWithDatasketch(t *testing.T) {
	path := os.Getenv("DEDUP_DATASKETCH_PYTHONPATH")
	if path == "" {
		t.Skip("DEDUP_DATASKETCH_PYTHONPATH unset: datasketch is not run (see the README's hand-off section)")
	}
	py := os.Getenv("DEDUP_PYTHON")
	if py == "" {
		py = "python3"
	}
	texts, in := textLines(t, 200)
	for _, tc := range []struct{ spec, same string }{
		{"scheme=datasketch level=word size=5 k=128 seed=1", ""},
		{"scheme=datasketch norm=nfkc+lower+punct+space level=char size=5 k=64 hash=sha1 seed=42", ""},
		{"norm=nfkc+lower+space level=word size=5 k=128 hash=xxhash seed=7", "scheme=datasketch norm=nfkc+lower+space level=word size=5 k=128 hash=xxhash seed=7"},
		{"scheme=fast norm=lower+space level=word size=3 k=128 hash=xxh3 seed=3", "scheme=datasketch norm=lower+space level=word size=3 k=128 hash=xxh3 seed=3"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			s := sample(t, tc.spec)
			s.Params.Shape = lsh.Shape{Bands: s.Params.Spec.Hashes / 8, Rows: 8}
			files, err := Files(s, Datasketch)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "datasketch_lsh.py"), []byte(file(t, files, "datasketch/datasketch_lsh.py")), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(py, "-c", `import json, sys
import datasketch_lsh as p
for line in sys.stdin:
    m = p.signature([p.hash64(s) for s in p.shingles(json.loads(line))])
    print(json.dumps([int(v) for v in m.hashvalues]))
`)
			cmd.Env = append(os.Environ(), "PYTHONPATH="+dir+string(os.PathListSeparator)+path)
			cmd.Stdin = bytes.NewReader(in)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("python: %v\n%s", err, out)
			}
			spec := tc.same
			if spec == "" {
				spec = tc.spec
			}
			h, err := lsh.NewHasher(mustSpec(t, spec))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != len(texts) {
				t.Fatalf("python wrote %d lines for %d texts:\n%s", len(lines), len(texts), out)
			}
			for i, text := range texts {
				var got []uint32
				if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
					t.Fatal(err)
				}
				if want := h.Signature(text, nil); !slices.Equal(got, []uint32(want)) {
					t.Errorf("text %d %.40q: datasketch's signature differs from the studio's %s", i, text, spec)
				}
			}
		})
	}
}

func TestDatasketchAndDatatrove(t *testing.T) {
	s := sample(t, "scheme=datasketch level=word size=5 k=128 hash=sha1 seed=42")
	files, err := Files(s, Datasketch)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "datasketch_lsh.py", file(t, files, "datasketch/datasketch_lsh.py"),
		"MinHashLSH(num_perm=NUM_PERM, params=(BANDS, ROWS))", "BANDS, ROWS = 16, 8", "NUM_PERM = 128", "SEED = 42", "THRESHOLD = 0.8",
		`VERIFY = "exact"`, "MinHash(num_perm=NUM_PERM, seed=SEED, hashfunc=low32, permutations=PERMUTATIONS)",
		"bit-identical to the studio's", "from datasketch.hashfunc import sha1_hash32", "def report_line(doc_id, matches)",
		"server import-results -format datasketch -in matches.jsonl -manifest 3")
	files, err = Files(s, Datatrove)
	if err != nil {
		t.Fatal(err)
	}
	py := file(t, files, "datatrove/datatrove_minhash.py")
	mustContain(t, "datatrove_minhash.py", py, "n_grams=5", "num_buckets=16", "hashes_per_bucket=8", "seed=42",
		`hash_fc="sha1"`, "the calibrated policy is keeper-star", `TOKENIZER = "studio"`, "LocalPipelineExecutor(",
		"MinhashDedupSignature(output_folder=", "MinhashDedupBuckets(input_folder=", "save_cluster_id=True", "MinhashDedupFilter(",
		"load_cluster_ids=True", `JsonlWriter(f"{out}/deduplicated")`, "# On a Slurm cluster, the same stages with SlurmPipelineExecutor",
		`pip install "datatrove[io,processing]"`, "server import-results -format datatrove -in minhash/remove_ids -manifest 3",
		"datatrove does not verify", "no n-gram of a document of fewer than 5 tokens")
	c := sample(t, "level=char size=5 k=128")
	files, err = Files(c, Datatrove)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "datatrove_minhash.py (char)", file(t, files, "datatrove/datatrove_minhash.py"), `LEVEL, SIZE = "char", 5`, "each character a token")
	m := sample(t, "scheme=milvus level=word size=3 k=128 hash=xxh3 seed=1234")
	files, err = All(m)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "datatrove_minhash.py (milvus)", squash(file(t, files, "datatrove/datatrove_minhash.py")), `TOKENIZER = "language"`, "whose word tokens (Milvus's analyzer) are not written out")
	mustContain(t, "datasketch_lsh.py (milvus)", squash(file(t, files, "datasketch/datasketch_lsh.py")), "give --signatures sigs.jsonl", "the program reads the studio's signatures")
}

// The Python files compile as Python 3 (python3 -m py_compile) for representations and
// shapes that take every branch of the templates: each hash, word and char, the milvus
// scheme (signatures read, not computed), one band (datasketch's MinHashLSH refuses it),
// a sweep result and a draft.
func TestPythonCompiles(t *testing.T) {
	t.Parallel()
	py := python(t)
	dir := t.TempDir()
	var paths []string
	for i, tc := range []struct {
		spec  string
		shape lsh.Shape
	}{
		{"scheme=milvus level=word size=3 k=128 hash=xxh3 seed=1234", lsh.Shape{Bands: 16, Rows: 8}},
		{"scheme=datasketch k=128 hash=sha1", lsh.Shape{Bands: 37, Rows: 3}},
		{"level=char size=5 k=128", lsh.Shape{Bands: 1, Rows: 20}},
		{"scheme=fast norm=nfkc+lower+punct+digits+space level=word size=3 k=64 hash=xxh3 seed=99999999999", lsh.Shape{Bands: 8, Rows: 8}},
		{"scheme=milvus level=char size=5 k=64 hash=sha1", lsh.Shape{Bands: 1, Rows: 64}},
	} {
		s := sample(t, tc.spec)
		s.Params.Shape = tc.shape
		if i == 2 {
			s.Source = Source{Sweep: 4, Config: 2, Dataset: s.Source.Dataset}
		}
		if i == 3 {
			s.Source.State = review.Draft
		}
		files, err := All(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if !strings.HasSuffix(f.Name, ".py") {
				continue
			}
			path := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(f.Name)))
			if err := os.WriteFile(path, f.Body, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, path)
		}
	}
	// One interpreter for every file; a syntax error names the file and line.
	if out, err := exec.Command(py, append([]string{"-m", "py_compile"}, paths...)...).CombinedOutput(); err != nil {
		t.Errorf("py_compile: %v\n%s", err, out)
	}
	if len(paths) != 15 {
		t.Errorf("compiled %d Python files; want 15", len(paths))
	}
}

// Every file says what its engine does differently, and says it truly: datasketch's
// MinHashLSH bands exactly b*r values (its hashranges), so it runs any calibrated shape;
// Milvus bands floor(k/b) rows per band, so it runs the calibrated shape only when r is
// that (37 x 3 at k=128: yes; 16 x 6: it runs 16 x 8); the verification each engine
// uses, search before insert against the calibrated policy, Strong consistency, and the
// VARCHAR limit of the function path. With estimate verification calibrated, no file
// says the verification differs.
func TestScriptsSayWhatDiffers(t *testing.T) {
	for _, tc := range []struct {
		shape        lsh.Shape
		milvusExact  bool
		milvusRuns   string
		datasketchOK string
	}{
		{lsh.Shape{Bands: 37, Rows: 3}, true, "", "bands the first 111 of the 128 values (its hashranges): exactly the calibrated 37 x 3"},
		{lsh.Shape{Bands: 16, Rows: 6}, false, "Milvus runs 16 x 8", "bands the first 96 of the 128 values (its hashranges): exactly the calibrated 16 x 6"},
		{lsh.Shape{Bands: 5, Rows: 25}, true, "", "bands the first 125 of the 128 values (its hashranges): exactly the calibrated 5 x 25"},
	} {
		s := sample(t, "scheme=milvus level=word size=3 k=128 hash=xxh3 seed=1234")
		s.Params.Shape = tc.shape
		files, err := All(s)
		if err != nil {
			t.Fatal(err)
		}
		ds := file(t, files, "datasketch/datasketch_lsh.py")
		mustContain(t, "datasketch_lsh.py", squash(ds), tc.datasketchOK)
		for _, name := range []string{"milvus/milvus_setup.py", "milvus/go/main.go", "milvus/README.md"} {
			body := squash(file(t, files, name))
			mustContain(t, name, body, "accepts a candidate at MinHash estimate >= 0.8", "the calibration verified with the exact Jaccard of the shingle sets",
				"searches before it inserts", "That is not the calibrated keeper-star policy", "refine_k = 64")
			if tc.milvusExact {
				mustContain(t, name, body, fmt.Sprintf("exactly the calibrated %d x %d", tc.shape.Bands, tc.shape.Rows))
			} else {
				mustContain(t, name, body, tc.milvusRuns)
			}
		}
		for _, f := range files {
			if body := squash(string(f.Body)); strings.Contains(body, "bands all") || strings.Contains(body, "splits all") {
				t.Errorf("%s (%v) still says an engine bands all the values", f.Name, tc.shape)
			}
		}
		mustContain(t, "milvus_setup.py", squash(file(t, files, "milvus/milvus_setup.py")), `consistency_level="Strong"`, "MAX_TEXT_BYTES = 65535",
			`print("skipped:", e, file=sys.stderr)`, "THRESHOLD_F32", "every value 0xFFFFFFFF", `raise ValueError(f"{doc_id}: empty text`)
		mustContain(t, "main.go", file(t, files, "milvus/go/main.go"), "WithConsistencyLevel(entity.ClStrong)")
		mustContain(t, "README.md", squash(file(t, files, "milvus/README.md")), "Consistency level Strong", "not the calibrated keeper-star policy",
			fmt.Sprintf("(%d rows per band)", 128/tc.shape.Bands))
	}
	s := sample(t, "scheme=datasketch k=128")
	s.Params.Verification = review.Estimate
	files, err := All(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"milvus/milvus_setup.py", "datasketch/datasketch_lsh.py"} {
		body := squash(file(t, files, name))
		mustContain(t, name, body, "as the calibration did")
		if strings.Contains(body, "the calibration verified with the exact Jaccard") {
			t.Errorf("%s says the calibration verified with exact Jaccard; it used the estimate", name)
		}
	}
	mustContain(t, "datasketch_lsh.py", file(t, files, "datasketch/datasketch_lsh.py"), `VERIFY = "estimate"`)
}

// squash joins a file's comment lines back into running text: the statements are
// wrapped, so a phrase may break across lines and their comment markers.
func squash(body string) string {
	var words []string
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"#", "//", "-"} {
			line = strings.TrimSpace(strings.TrimPrefix(line, p))
		}
		words = append(words, strings.Fields(line)...)
	}
	return strings.Join(words, " ")
}
