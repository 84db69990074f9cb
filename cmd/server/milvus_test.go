package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// A Milvus function definition's params, pasted as -spec, give Milvus's own signatures:
// the expected values are reference vectors computed by Milvus's MinHash C++ code
// (shared/data/milvus-vectors.jsonl; all 256 are checked in internal/lsh).
func TestSignaturesCommandMilvusParams(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "docs.jsonl")
	docs := []string{"Hello", "three word text", "MiXeD CaSe WoRdS: ThE QuIcK bRoWn FoX JUMPS over THE lazy DOG"}
	writeDocs(t, in, "id", "text", docs)
	for _, tc := range []struct {
		params string
		want   [][]uint32
	}{
		{`{"num_hashes": 16, "shingle_size": 3, "token_level": "word", "hash_function": "sha1", "seed": 1234}`, [][]uint32{
			{3737785883, 4040219127, 2751677779, 1052524701, 3490604307, 882314665, 1001706412, 3823640815, 548264628, 3947478883, 501856782, 4180041013, 607818788, 25993990, 4070763874, 820996481},
			{3134664810, 3106414140, 2812095395, 3313423123, 1851700624, 679079326, 3240787348, 2408011040, 3403777545, 3920968330, 957642301, 2594126107, 1895407400, 2866944117, 1544208694, 1054148159},
			{40524176, 183017729, 223643167, 422038961, 1207400328, 266652486, 70893403, 142071209, 67237812, 805727377, 370590481, 159823642, 435795874, 403494792, 124719245, 142841839},
		}},
		{`num_hashes=16 shingle_size=3 token_level=char hash_function=xxhash seed=42`, [][]uint32{
			{3660059442, 316837721, 906167878, 1462645338, 302533089, 448518330, 553090275, 2177057508, 206205060, 519399998, 926910909, 641178125, 2558148900, 342011049, 777881027, 224920081},
			{214837012, 22030037, 205008993, 516575415, 1093910474, 209541805, 149276321, 486577012, 294349053, 412698415, 22029168, 634221228, 455088524, 6762874, 351064986, 1107502499},
			{80006444, 5763901, 41121915, 2103715, 45206622, 7459274, 71406799, 9916754, 45445640, 22309700, 129218298, 48425295, 134422037, 111450889, 17071499, 59708533},
		}},
	} {
		bin := filepath.Join(dir, "sigs.bin")
		var stdout, stderr bytes.Buffer
		if err := run([]string{"signatures", "-spec", tc.params, "-in", in, "-out", bin, "-format", "binary"}, &stdout, &stderr); err != nil {
			t.Fatalf("signatures -spec %s: %v\n%s", tc.params, err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "spec v2 scheme=milvus norm=none") {
			t.Errorf("signatures -spec %s: stderr %q does not name the milvus spec", tc.params, stderr.String())
		}
		raw := []byte(readFile(t, bin))
		for i, want := range tc.want {
			got, ok := lsh.SignatureFromBytes(raw[i*64 : (i+1)*64])
			if !ok || !slices.Equal(got, lsh.Signature(want)) {
				t.Errorf("signatures -spec %s, doc %d = %v; Milvus gives %v", tc.params, i, got, want)
			}
		}
	}
}

// shape -spec takes k from a representation, Milvus params included.
func TestShapeCommandSpec(t *testing.T) {
	shape := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(append([]string{"shape"}, args...), &out, &errb)
		return out.String(), err
	}
	want, err := shape("-threshold", "0.7", "-hashes", "64")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"k=64", "scheme=milvus k=64", `{"num_hashes": 64, "token_level": "char"}`} {
		got, err := shape("-threshold", "0.7", "-spec", spec)
		if err != nil || got != want {
			t.Errorf("shape -spec %s = %q, %v; want %q (as -hashes 64)", spec, got, err, want)
		}
	}
	if _, err := shape("-spec", "k=64", "-hashes", "64"); err == nil {
		t.Error("shape with both -spec and -hashes succeeded")
	}
	if _, err := shape("-spec", "num_hashes=lots"); err == nil || !strings.Contains(err.Error(), "num_hashes") {
		t.Errorf("shape -spec num_hashes=lots error = %v; want one naming num_hashes", err)
	}
}

// Under scheme=milvus an empty text is signed as Milvus's MinHash function signs it: no
// shingle (HashNGramWindow counts none for a text of no bytes or no tokens), so every
// value stays MAX_HASH_32, 0xFFFFFFFF; the rest of the file is signed as before (its
// "Hello" is the Milvus reference vector). Other schemes still refuse an empty text
// naming file, line and field, as the studio's imports do; a missing text is refused
// under every scheme.
func TestSignaturesCommandMilvusEmptyText(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	body := `{"id": "a", "text": "Hello"}` + "\n" + `{"id": "b", "text": ""}` + "\n" + `{"id": "c", "text": "!!! ..."}` + "\n"
	if err := os.WriteFile(in, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	hello := []uint32{3737785883, 4040219127, 2751677779, 1052524701, 3490604307, 882314665, 1001706412, 3823640815, 548264628, 3947478883, 501856782, 4180041013, 607818788, 25993990, 4070763874, 820996481}
	empty := slices.Repeat([]uint32{0xFFFFFFFF}, 16)
	out := filepath.Join(dir, "sigs.jsonl")
	var stdout, stderr bytes.Buffer
	params := `{"num_hashes": 16, "shingle_size": 3, "token_level": "word", "hash_function": "sha1", "seed": 1234}`
	if err := run([]string{"signatures", "-q", "-spec", params, "-in", in, "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("signatures under scheme=milvus: %v\n%s", err, stderr.String())
	}
	var got [][]uint32
	for line := range strings.SplitSeq(strings.TrimSpace(readFile(t, out)), "\n") {
		var rec struct {
			ID        string   `json:"id"`
			Signature []uint32 `json:"signature"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		got = append(got, rec.Signature)
	}
	// "!!! ..." has no word token: Milvus's analyzer gives none, so it is signed as empty.
	if want := [][]uint32{hello, empty, empty}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("signatures = %v; want %v", got, want)
	}
	for _, spec := range []string{"scheme=datasketch k=16", "level=char size=3 k=16"} {
		err := run([]string{"signatures", "-q", "-spec", spec, "-in", in, "-out", out}, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "in.jsonl:2: field text: empty") {
			t.Errorf("signatures -spec %s = %v; want the empty text refused by line and field", spec, err)
		}
	}
	missing := filepath.Join(dir, "missing.jsonl")
	if err := os.WriteFile(missing, []byte(`{"id": "a"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"signatures", "-q", "-spec", params, "-in", missing, "-out", out}, &stdout, &stderr); err == nil ||
		!strings.Contains(err.Error(), "missing.jsonl:1: field text: missing") {
		t.Errorf("a missing text under scheme=milvus: %v; want it refused", err)
	}
}
