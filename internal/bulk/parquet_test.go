package bulk

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/parquet-go/parquet-go"
)

type pqDoc struct {
	ID     string `parquet:"id"`
	Text   string `parquet:"text"`
	Source string `parquet:"source"`
}

// TestParquetInputGivesTheSameManifest: the same documents as JSONL and as Parquet (in
// several row groups) give the same clusters and removals.
func TestParquetInputGivesTheSameManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := generate(t, dir, 1200)
	recs := readCorpus(t, in)
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[pqDoc](&buf, parquet.MaxRowsPerRowGroup(500))
	for _, r := range recs {
		src, _ := r.Meta["source"].(string)
		if _, err := w.Write([]pqDoc{{r.ID, r.Text, src}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pq := filepath.Join(dir, "corpus.parquet")
	if err := os.WriteFile(pq, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p := params(t, review.Exact, cluster.KeeperStar)
	var outs []string
	for _, path := range []string{in, pq} {
		out := filepath.Join(dir, filepath.Base(path)+".out")
		opt := options(p, path, out)
		opt.Dataset = "corpus"
		if _, err := Run(context.Background(), opt); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		outs = append(outs, out)
	}
	for _, name := range []string{RemovalsJSONL, RemovalsCSV, ClustersJSONL} {
		a, _ := os.ReadFile(filepath.Join(outs[0], name))
		b, _ := os.ReadFile(filepath.Join(outs[1], name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: %d bytes from JSONL, %d from Parquet; want the same, not empty", name, len(a), len(b))
		}
	}
}
