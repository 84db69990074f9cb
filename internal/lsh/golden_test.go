package lsh

import (
	"encoding/json"
	"flag"
	"os"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the current code")

// golden returns the entries of the golden file path, after writing got there with
// -update; it fails when their numbers differ (what a golden entry is, is the caller's
// to compare).
func golden[T any](t *testing.T, path string, got []T) []T {
	t.Helper()
	if *update {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []T
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("%s has %d entries; want %d (run with -update after a deliberate change)", path, len(want), len(got))
	}
	return want
}

// goldenSpecs are one representation per profile. The milvus entries are checked against
// Milvus's own code by TestMilvusVectors; golden-milvus.json holds more of them.
var goldenSpecs = []string{
	"scheme=classic norm=nfkc+lower+space level=word size=5 k=32 hash=xxhash seed=1",
	"scheme=classic norm=nfkc+lower+punct+digits+space level=char size=5 k=32 hash=xxh3 seed=7",
	"scheme=fast norm=nfkc+lower+space level=word size=5 k=32 hash=xxhash seed=1",
	"scheme=datasketch norm=lower level=word size=5 k=32 seed=1",
	"scheme=milvus level=word size=3 k=32 hash=xxh3 seed=1234",
	"scheme=milvus norm=none level=char size=4 k=32 hash=sha1 seed=1234",
}

var goldenTexts = []string{
	"",
	"one",
	"The Debian Project is an association of individuals who have made common cause to create a free operating system.",
	"Das Debian-Projekt ist eine Vereinigung von Einzelpersonen, die gemeinsam ein freies Betriebssystem erstellen.",
	"Debian プロジェクトは、フリーなオペレーティングシステムを作るという共通の目的を持つ個人の集まりです。",
	"Permission is hereby granted, free of charge, to any person obtaining a copy of this software",
}

type goldenEntry struct {
	Spec string      `json:"spec"`
	ID   string      `json:"id"`
	Sigs []Signature `json:"signatures"`
}

func TestGoldenSignatures(t *testing.T) {
	var got []goldenEntry
	for _, text := range goldenSpecs {
		spec := mustSpec(t, text)
		h, _ := NewHasher(spec)
		e := goldenEntry{Spec: spec.String(), ID: spec.ID()}
		for _, doc := range goldenTexts {
			e.Sigs = append(e.Sigs, h.Signature(doc, nil))
		}
		got = append(got, e)
	}
	want := golden(t, "testdata/golden-signatures.json", got)
	for i := range got {
		if got[i].Spec != want[i].Spec || got[i].ID != want[i].ID {
			t.Errorf("spec %d: %s (%s); golden %s (%s)", i, got[i].Spec, got[i].ID, want[i].Spec, want[i].ID)
		}
		for j := range got[i].Sigs {
			if !slices.Equal(got[i].Sigs[j], want[i].Sigs[j]) {
				t.Errorf("%s, text %d: signature changed; bump SpecVersion if deliberate", got[i].Spec, j)
			}
		}
	}
}
