package lsh

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestDatatroveVectors reproduces the signatures datatrove 0.10.0 itself computed
// (testdata/datatrove-vectors.jsonl: MinhashDedupSignature's get_shingles and
// get_signature, run from its source with Debian's numpy, over 12 corpus documents
// tokenized as the studio tokenizes norm=nfkc+lower+space word 5-shingles, under three
// settings of seed, buckets, hashes per bucket and hash_fc): datatrove's n-gram texts are
// the studio's shingles there, hashed and permuted datatrove's way.
func TestDatatroveVectors(t *testing.T) {
	type vector struct {
		Doc       string   `json:"doc"`
		Spec      string   `json:"spec"`
		Seed      uint32   `json:"seed"`
		Buckets   int      `json:"buckets"`
		Rows      int      `json:"rows"`
		HashFC    string   `json:"hash_fc"`
		Signature []uint64 `json:"signature"`
	}
	var vecs []vector
	b, err := os.ReadFile("testdata/datatrove-vectors.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var v vector
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		vecs = append(vecs, v)
	}
	docs := map[string]string{}
	for _, d := range readJSONLGz[struct{ ID, Text string }](t, "testdata/corpus5000.jsonl.gz") {
		docs[d.ID] = d.Text
	}
	if len(vecs) != 36 {
		t.Fatalf("read %d vectors; want 36", len(vecs))
	}
	for _, v := range vecs {
		h, err := NewHasher(mustSpec(t, v.Spec))
		if err != nil {
			t.Fatal(err)
		}
		text, ok := docs[v.Doc]
		if !ok {
			t.Fatalf("no document %s in the corpus", v.Doc)
		}
		d := NewDatatrove(v.Seed, v.Buckets*v.Rows, v.HashFC == "sha1")
		var hashes []uint64
		for _, s := range h.Shingles(text) {
			hashes = append(hashes, d.Hash(s))
		}
		if got := d.Signature(hashes, nil); !slices.Equal(got, v.Signature) {
			t.Errorf("%s seed=%d %dx%d %s: signature %v; datatrove computed %v", v.Doc, v.Seed, v.Buckets, v.Rows, v.HashFC, got, v.Signature)
		}
	}
	if got := NewDatatrove(1, 4, false).Signature(nil, nil); len(got) != 0 {
		t.Errorf("no n-gram: signature %v; want none, as datatrove writes none", got)
	}
}
