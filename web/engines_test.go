package web

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// A manifest's page offers its settings for the engines that run at scale, saying
// whether Milvus's MinHash function computes the representation and that a draft's
// files say DRAFT; the zip and settings.json downloads carry the manifest's own
// configuration, for every role that sees the manifest.
func TestEngineHandoffDownloads(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	ck := f.signIn(string(auth.Annotator))
	_, page := get(t, f.h, fmt.Sprintf("/manifests/%d", m.ID), ck)
	for _, want := range []string{`data-testid="engines"`, `data-testid="engines-draft"`,
		"MinHash function cannot compute this representation (the representation uses scheme=classic",
		fmt.Sprintf(`href="/manifests/%d/engines.zip"`, m.ID), fmt.Sprintf("-manifest %d -format all -out engines/", m.ID),
		`data-testid="engines-differs"`, "a datasketch program (MinHashLSH, its signatures computed over this studio"} {
		if !strings.Contains(page, want) {
			t.Errorf("manifest page lacks %q", want)
		}
	}

	res, body := get(t, f.h, fmt.Sprintf("/manifests/%d/settings.json", m.ID), ck)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" ||
		!strings.Contains(res.Header.Get("Content-Disposition"), fmt.Sprintf("manifest-%d-settings.json", m.ID)) {
		t.Fatalf("settings.json: %d %v", res.StatusCode, res.Header)
	}
	var d handoff.Description
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	if d.Spec != m.Params.Spec.String() || d.Bands != 32 || d.Rows != 4 || d.Threshold != 0.75 || d.Verification != "exact" ||
		d.Source.Manifest != m.ID || d.Source.SignedOff {
		t.Errorf("settings.json %+v; want the draft manifest's 32x4 at 0.75", d)
	}

	res, body = get(t, f.h, fmt.Sprintf("/manifests/%d/engines.zip", m.ID), ck)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("engines.zip: %d %v", res.StatusCode, res.Header)
	}
	zr, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	dir := fmt.Sprintf("manifest-%d-engines/", m.ID)
	got := map[string]string{}
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		got[strings.TrimPrefix(zf.Name, dir)] = string(b)
	}
	if py := got["milvus/milvus_setup.py"]; !strings.Contains(py, "BANDS = 32") || !strings.Contains(py, "DRAFT") {
		t.Errorf("milvus_setup.py in the zip:\n%.600s", py)
	}
	if !strings.Contains(got["datasketch/datasketch_lsh.py"], "BANDS, ROWS = 32, 4") {
		t.Errorf("datasketch_lsh.py lacks the shape 32x4")
	}
	// The differences are measured on the manifest's dataset and written into the files.
	for _, name := range []string{"datasketch/datasketch_lsh.py", "milvus/milvus_setup.py", "datatrove/datatrove_minhash.py"} {
		if body := strings.Join(strings.Fields(strings.ReplaceAll(got[name], "#", "")), " "); !strings.Contains(body, "Measured by the studio on dataset ") {
			t.Errorf("%s in the zip gives no measured figures", name)
		}
	}
	if len(got) != 6 {
		t.Errorf("zip holds %d files; want 6", len(got))
	}
	if res, _ := get(t, f.h, "/manifests/999/engines.zip", ck); res.StatusCode != http.StatusNotFound {
		t.Errorf("engines.zip of an unknown manifest: %d; want 404", res.StatusCode)
	}
}

// The page's note on the shape is true of each engine: a shape Milvus runs as calibrated
// (rows = floor(k/bands)) gets none; one it does not names the shape Milvus runs and says
// datasketch bands exactly bands × rows (it used to say datasketch bands all k values).
func TestEngineShapeNote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		shape lsh.Shape
		want  string
	}{
		{lsh.Shape{Bands: 37, Rows: 3}, ""},
		{lsh.Shape{Bands: 16, Rows: 6}, "so it runs 16 × 8, not this 16 × 6"},
	} {
		m := db.Manifest{Params: review.Params{Spec: lsh.DefaultSpec(), Shape: tc.shape}}
		note := shapeNote(m)
		if tc.want == "" && note != "" || tc.want != "" && (!strings.Contains(note, tc.want) || !strings.Contains(note, "datasketch's MinHashLSH and datatrove band exactly bands × rows")) {
			t.Errorf("%v: note %q; want %q", tc.shape, note, tc.want)
		}
		if strings.Contains(note, "band all") {
			t.Errorf("%v: note %q says an engine bands all the values", tc.shape, note)
		}
	}
}
