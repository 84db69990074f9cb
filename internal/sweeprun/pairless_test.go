package sweeprun

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// TestStartRefusesPairless: a sweep over a dataset of one document, or of two where an
// exported manifest removed one (its label keeps counting, so the label check passes), is
// refused before anything is stored, saying why; a re-run of a sweep made before the
// export likewise.
func TestStartRefusesPairless(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "studio.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg := jobs.NewRegistry(ctx)
	t.Cleanup(func() {
		reg.Shutdown(ctx)
		store.Close()
	})
	svc := New(store, sigcache.New(store), reg)
	campaignOf := func(name, jsonl, labels string) db.Campaign {
		t.Helper()
		r, err := corpus.NewReader(strings.NewReader(jsonl), name+".jsonl", corpus.JSONL, corpus.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ingest.Documents(ctx, store, r, name+".jsonl", ingest.Options{Dataset: name})
		if err != nil {
			t.Fatal(err)
		}
		if labels == "" {
			c, err := store.EnsureCampaign(ctx, rep.Dataset.ID, "default", nil)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		lr, err := ingest.Labels(ctx, store, strings.NewReader(labels), "l.csv", ingest.LabelOptions{DatasetID: rep.Dataset.ID, Create: true})
		if err != nil {
			t.Fatal(err)
		}
		c, err := store.Campaign(ctx, lr.CampaignID)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	one := campaignOf("one", `{"id":"only","text":"the one and only document of this dataset"}`+"\n", "")
	two := campaignOf("two", `{"id":"a","text":"a document and its copy, word for word"}`+"\n"+`{"id":"b","text":"a document and its copy, word for word"}`+"\n",
		"a,b,category,annotator\na,b,exact,ann\n")
	ran, err := svc.Start(ctx, StartRequest{CampaignID: two.ID, Name: "before the export", Grid: smallGrid()})
	if err != nil {
		t.Fatalf("Start on two documents: %v", err)
	}
	if _, err := svc.Wait(ctx, ran.ID); err != nil {
		t.Fatal(err)
	}
	ids, err := store.DatasetDocumentIDs(ctx, two.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	dbtest.ExportRemovals(t, store, two.DatasetID, ids)

	before, err := svc.List(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		start func() error
		why   string
	}{
		{"one document", func() error {
			_, err := svc.Start(ctx, StartRequest{CampaignID: one.ID, Grid: smallGrid()})
			return err
		},
			"one has 1 document, so no pairs: a pair takes two documents; import a sample of at least two"},
		{"one live document", func() error {
			_, err := svc.Start(ctx, StartRequest{CampaignID: two.ID, Grid: smallGrid()})
			return err
		},
			"two has 1 live document (1 removed by exported manifests): nothing to deduplicate"},
		{"re-run", func() error { _, err := svc.Rerun(ctx, ran.ID, 0, ""); return err },
			"two has 1 live document (1 removed by exported manifests): nothing to deduplicate"},
		{"Pairless", func() error { return svc.Pairless(ctx, one) }, "one has 1 document, so no pairs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.start()
			if errkind.Of(err) != errkind.Invalid || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("= %v (kind %v); want an Invalid refusal saying %q", err, errkind.Of(err), tc.why)
			}
		})
	}
	if err := svc.Pairless(ctx, db.Campaign{DatasetID: 999}); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("Pairless on no dataset = %v; want db.ErrNotFound", err)
	}
	after, err := svc.List(ctx, 0)
	if err != nil || len(after) != len(before) {
		t.Errorf("after the refusals: %d sweeps, %v; want %d (nothing stored)", len(after), err, len(before))
	}
}
