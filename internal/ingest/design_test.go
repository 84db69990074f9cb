package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestImportLabelDesign checks the optional design, stratum and frame_size fields: stored
// on the pair from CSV and JSONL (a large frame size written as a JSON number too), left
// empty without them, and refused, naming line and field, when incomplete or when a
// stratum's frame size disagrees with an earlier row's.
func TestImportLabelDesign(t *testing.T) {
	t.Parallel()
	store, _, rep := goodDataset(t)
	ctx := context.Background()
	opt := LabelOptions{DatasetID: rep.Dataset.ID, Create: true}

	for _, tc := range []struct {
		name, file, body, want string
	}{
		{"no stratum", "l.csv", "a,b,category,design,stratum,frame_size\na,b,minor,d1,,10\n", "l.csv:2: field stratum: missing"},
		{"no design", "l.csv", "a,b,category,design,stratum,frame_size\na,b,minor,,s1,10\n", "l.csv:2: field design: missing"},
		{"no frame", "l.csv", "a,b,category,design,stratum,frame_size\na,b,minor,d1,s1,\n", "l.csv:2: field frame_size: missing"},
		{"frame zero", "l.csv", "a,b,category,design,stratum,frame_size\na,b,minor,d1,s1,0\n", `l.csv:2: field frame_size: "0" is not a positive whole number`},
		{"frame text", "l.jsonl", `{"a":"a","b":"b","category":"minor","design":"d1","stratum":"s1","frame_size":"many"}` + "\n",
			`l.jsonl:1: field frame_size: "many" is not a positive whole number`},
		{"frames disagree", "l.csv", "a,b,category,design,stratum,frame_size\na,b,minor,d1,s1,10\na,c,different,d1,s1,11\n",
			`l.csv:3: field frame_size: 11, but earlier rows give stratum "s1" of design "d1" a frame size of 10`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Labels(ctx, store, strings.NewReader(tc.body), tc.file, opt)
			var le *LabelError
			if !errors.As(err, &le) || len(le.Report.Errors) == 0 || !strings.HasPrefix(le.Report.Errors[0].Error(), tc.want) {
				t.Fatalf("Labels(%q) = %v; want the error %q", tc.body, err, tc.want)
			}
		})
	}
	if o, _ := store.DatasetOverview(ctx, rep.Dataset.ID); o.Pairs != 0 {
		t.Fatalf("%d pairs after refused imports; want 0", o.Pairs)
	}

	csv := "a,b,category,annotator,design,stratum,frame_size\na,b,minor,r,d1,minor|j0.8-0.9,120\na,c,different,r,,,\n"
	lrep, err := Labels(ctx, store, strings.NewReader(csv), "l.csv", opt)
	if err != nil {
		t.Fatal(err)
	}
	jsonl := `{"a":"b","b":"c","category":"different","annotator":"r","design":"d1","stratum":"different|j0","frame_size":2280180}` + "\n"
	if _, err := Labels(ctx, store, strings.NewReader(jsonl), "l.jsonl", opt); err != nil {
		t.Fatal(err)
	}
	// A later label without a design leaves the pair's design as it was.
	if _, err := Labels(ctx, store, strings.NewReader("a,b,category,annotator\na,b,minor,s\n"), "l2.csv", opt); err != nil {
		t.Fatal(err)
	}
	pairs, err := store.SweepPairs(ctx, lrep.CampaignID)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := store.DocumentIDs(ctx, rep.Dataset.ID, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range pairs {
		got[fmt.Sprint(p.A, p.B)] = fmt.Sprintf("%s/%s/%d/%d labels", p.Design, p.Stratum, p.FrameSize, len(p.Labels))
	}
	want := map[string]string{
		fmt.Sprint(ids["a"], ids["b"]): "d1/minor|j0.8-0.9/120/2 labels",
		fmt.Sprint(ids["a"], ids["c"]): "//0/1 labels",
		fmt.Sprint(ids["b"], ids["c"]): "d1/different|j0/2280180/1 labels",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored designs = %v; want %v", got, want)
	}
}
