package gencorpus

import (
	"bytes"
	"strings"
	"testing"
)

var sample = []Doc{
	{Text: "Preface\n\nThis manual describes the system.\n\nIt is written for administrators who know the shell.", Source: "debref", Lang: "en"},
	{Text: "MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy.\n\nTHE SOFTWARE IS PROVIDED AS IS.", Source: "spdx", Lang: "en"},
	{Text: "Install\n\nRun npm install to fetch the package and its dependencies.\n\nUsage follows below in detail.", Source: "npm", Lang: "en"},
}

func TestWriteIsDeterministicAndPlantsWhatItSays(t *testing.T) {
	t.Parallel()
	gen := func(seed uint64) (string, string, Summary) {
		var body, truth bytes.Buffer
		sum, err := Write(&body, &truth, sample, Options{N: 2000, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return body.String(), truth.String(), sum
	}
	a, ta, sum := gen(7)
	b, tb, _ := gen(7)
	c, _, _ := gen(8)
	if a != b || ta != tb {
		t.Error("Write(seed 7) twice gave different bytes")
	}
	if a == c {
		t.Error("Write(seed 7) and Write(seed 8) gave the same corpus")
	}
	if got := strings.Count(a, "\n"); got != 2000 || sum.Docs != 2000 || sum.Fresh+sum.Near+sum.Exact != 2000 {
		t.Fatalf("wrote %d lines, summary %+v; want 2000 documents", got, sum)
	}
	// 12% near and 3% exact planted: with 2000 draws, 4 standard deviations either side.
	if sum.Near < 180 || sum.Near > 300 || sum.Exact < 30 || sum.Exact > 95 {
		t.Errorf("planted %d near and %d exact; want about 240 and 60", sum.Near, sum.Exact)
	}
	planted, err := ReadTruth(strings.NewReader(ta))
	if err != nil {
		t.Fatal(err)
	}
	if len(planted) != sum.Near+sum.Exact {
		t.Errorf("truth file lists %d pairs; want %d", len(planted), sum.Near+sum.Exact)
	}
	for _, p := range planted {
		if p.Kind == "near" && (p.EditRate < 0.002 || p.EditRate > 0.02) {
			t.Errorf("planted %+v: edit rate outside [0.002, 0.02]", p)
		}
	}
}
