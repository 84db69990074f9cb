package lsh

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type datasketchVector struct {
	Doc        string   `json:"doc"`
	Shingles   []string `json:"shingles"`
	Seed       uint64   `json:"seed"`
	NumPerm    int      `json:"num_perm"`
	HashValues []uint32 `json:"hashvalues"`
}

func readJSONLGz[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDatasketchVectors reproduces every signature that the real datasketch 1.10 produced
// (testdata/datasketch-vectors.jsonl.gz, from shared/data): MinHash(num_perm, seed) with
// sha1_hash32, updated once per shingle.
func TestDatasketchVectors(t *testing.T) {
	vecs := readJSONLGz[datasketchVector](t, "testdata/datasketch-vectors.jsonl.gz")
	if len(vecs) != 120 {
		t.Fatalf("read %d vectors; want 120", len(vecs))
	}
	for _, v := range vecs {
		spec, err := ParseSpec("scheme=datasketch k=" + strconv.Itoa(v.NumPerm) + " seed=" + strconv.FormatUint(v.Seed, 10))
		if err != nil {
			t.Fatal(err)
		}
		h, err := NewHasher(spec)
		if err != nil {
			t.Fatal(err)
		}
		got := h.SignatureOfShingles(v.Shingles, nil)
		if !slices.Equal(got, Signature(v.HashValues)) {
			t.Errorf("%s seed=%d k=%d: signature differs from datasketch at %d of %d positions",
				v.Doc, v.Seed, v.NumPerm, countDiff(got, v.HashValues), v.NumPerm)
		}
	}
}

// TestDatasketchShingling checks that the datasketch profile's own shingling (word
// 5-shingles joined by one space, lowercased) yields the exact shingle set fed to
// datasketch for the vectors, from the first 60 words of the documents' text.
func TestDatasketchShingling(t *testing.T) {
	vecs := readJSONLGz[datasketchVector](t, "testdata/datasketch-vectors.jsonl.gz")
	docs := map[string]string{}
	for _, d := range readJSONLGz[struct{ ID, Text string }](t, "testdata/corpus5000.jsonl.gz") {
		docs[d.ID] = d.Text
	}
	h, err := NewHasher(mustSpec(t, "scheme=datasketch norm=lower level=word size=5"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, v := range vecs {
		text, ok := docs[v.Doc]
		if !ok || v.Seed != 1 {
			continue
		}
		words := strings.Fields(text)
		if len(words) < 60 {
			continue
		}
		got := h.Shingles(strings.Join(words[:60], " "))
		slices.Sort(got)
		if !slices.Equal(got, v.Shingles) {
			t.Errorf("%s: shingles differ:\n got %q\nwant %q", v.Doc, got, v.Shingles)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("checked %d documents; want at least 20 of the 40 in the sample", checked)
	}
}

type milvusVector struct {
	Text         string   `json:"text"`
	NumHashes    int      `json:"num_hashes"`
	ShingleSize  int      `json:"shingle_size"`
	TokenLevel   string   `json:"token_level"`
	HashFunction string   `json:"hash_function"`
	Seed         int64    `json:"seed"`
	Signature    []uint32 `json:"signature"`
}

// params is the vector's setting as the params of a Milvus function definition.
func (v milvusVector) params() string {
	return fmt.Sprintf(`{"num_hashes": %d, "shingle_size": %d, "token_level": %q, "hash_function": %q, "seed": %d}`,
		v.NumHashes, v.ShingleSize, v.TokenLevel, v.HashFunction, v.Seed)
}

// TestMilvusVectors reproduces every signature of testdata/milvus-vectors.jsonl.gz (a
// copy of shared/data/milvus-vectors.jsonl): 32 texts under 8 settings, computed by
// Milvus's own MinHash C++ code (MinHashComputer.cpp and its kernel) compiled here, with a
// port of its default analyzer for word level. Each setting is given as Milvus function
// params, as a user would paste them.
func TestMilvusVectors(t *testing.T) {
	vecs := readJSONLGz[milvusVector](t, "testdata/milvus-vectors.jsonl.gz")
	if len(vecs) != 256 {
		t.Fatalf("read %d vectors; want 256", len(vecs))
	}
	type tally struct{ matched, total int }
	bySetting := map[string]*tally{}
	var order []string
	for i, v := range vecs {
		spec, err := ParseSpec(v.params())
		if err != nil {
			t.Fatalf("vector %d: ParseSpec(%s): %v", i, v.params(), err)
		}
		h, err := NewHasher(spec)
		if err != nil {
			t.Fatal(err)
		}
		setting := fmt.Sprintf("%s/%s size=%d k=%d seed=%d", v.TokenLevel, v.HashFunction, v.ShingleSize, v.NumHashes, v.Seed)
		if bySetting[setting] == nil {
			bySetting[setting] = &tally{}
			order = append(order, setting)
		}
		bySetting[setting].total++
		got := h.Signature(v.Text, nil)
		if slices.Equal(got, Signature(v.Signature)) {
			bySetting[setting].matched++
			continue
		}
		t.Errorf("vector %d (%s), text %.40q: %d of %d positions differ from Milvus; shingles %q",
			i, setting, v.Text, countDiff(got, v.Signature), v.NumHashes, h.Shingles(v.Text))
	}
	for _, s := range order {
		t.Logf("%-36s %d/%d match", s, bySetting[s].matched, bySetting[s].total)
	}
}

func countDiff(a []uint32, b []uint32) int {
	n := 0
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			n++
		}
	}
	return n + max(len(a), len(b)) - min(len(a), len(b))
}

// The reference outputs of the Mersenne Twisters: the 10000th draw after default
// seeding (5489), as the C++ standard requires of std::mt19937 and std::mt19937_64.
func TestMersenneTwisters(t *testing.T) {
	m32 := newMT19937(5489)
	var v32 uint32
	for range 10000 {
		v32 = m32.next()
	}
	if v32 != 4123659995 {
		t.Errorf("mt19937 10000th = %d; want 4123659995", v32)
	}
	m64 := newMT19937_64(5489)
	var v64 uint64
	for range 10000 {
		v64 = m64.next()
	}
	if v64 != 9981545732273789042 {
		t.Errorf("mt19937_64 10000th = %d; want 9981545732273789042", v64)
	}
}

// TestMilvusParameters pins the milvus profile's first permutation parameters
// (a = rng()%(P-1)+1, then b = rng()%P) to the first draws of std::mt19937_64(1234) as
// printed by libstdc++ 12 (g++ on this machine).
func TestMilvusParameters(t *testing.T) {
	draws := []uint64{17473339210090333472, 963351229459618018, 17972999874122035550, 17445978100525441934}
	p := newPermutations(Milvus, 1234, 2)
	for i := range 2 {
		wantA, wantB := draws[2*i]%(mersenne61-1)+1, draws[2*i+1]%mersenne61
		if p.a[i] != wantA || p.b[i] != wantB {
			t.Errorf("milvus a[%d], b[%d] = %d, %d; want %d, %d", i, i, p.a[i], p.b[i], wantA, wantB)
		}
	}
}

func mustSpec(t testing.TB, text string) Spec {
	t.Helper()
	s, err := ParseSpec(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
