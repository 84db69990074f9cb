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
	"github.com/dedupstudio/dedupstudio/internal/handoff"
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
		fmt.Sprintf(`href="/manifests/%d/engines.zip"`, m.ID), fmt.Sprintf("-manifest %d -format all -out engines/", m.ID)} {
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
	if !strings.Contains(got["datasketch/datasketch_lsh.py"], "params=(32, 4)") {
		t.Errorf("datasketch_lsh.py lacks the shape 32x4")
	}
	if len(got) != 6 {
		t.Errorf("zip holds %d files; want 6", len(got))
	}
	if res, _ := get(t, f.h, "/manifests/999/engines.zip", ck); res.StatusCode != http.StatusNotFound {
		t.Errorf("engines.zip of an unknown manifest: %d; want 404", res.StatusCode)
	}
}
