package web

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// The start page: the shape calculator, and every dataset with its campaigns and counts.

func (s *server) showHome(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	h := templates.Home{
		Page:      s.page(r, "Start"),
		Threshold: orDefault(q.Get("threshold"), "0.8"),
		Hashes:    orDefault(q.Get("hashes"), "128"),
		WeightFP:  orDefault(q.Get("w-fp"), "0.5"),
		WeightFN:  orDefault(q.Get("w-fn"), "0.5"),
	}
	status := http.StatusOK
	choice, err := func() (lsh.ShapeChoice, error) {
		t, err := floatParam(q, "threshold", 0.8, 0, 1)
		if err != nil {
			return lsh.ShapeChoice{}, err
		}
		k, err := intParam(q, "hashes", 128, 1, 1024)
		if err != nil {
			return lsh.ShapeChoice{}, err
		}
		wfp, err := floatParam(q, "w-fp", 0.5, 0, 1e6)
		if err != nil {
			return lsh.ShapeChoice{}, err
		}
		wfn, err := floatParam(q, "w-fn", 0.5, 0, 1e6)
		if err != nil {
			return lsh.ShapeChoice{}, err
		}
		if wfp+wfn == 0 {
			return lsh.ShapeChoice{}, &formError{"w-fp", "the two weights cannot both be 0"}
		}
		c, err := lsh.OptimalShape(t, k, lsh.Weights{FP: wfp, FN: wfn})
		if err != nil {
			return c, err
		}
		h.Query = url.Values{
			"bands":     {strconv.Itoa(c.Shape.Bands)},
			"rows":      {strconv.Itoa(c.Shape.Rows)},
			"threshold": {strconv.FormatFloat(t, 'g', -1, 64)},
		}.Encode()
		return c, nil
	}()
	if err != nil {
		h.Error = err.Error()
		status = http.StatusUnprocessableEntity
	} else {
		h.Bands, h.Rows = choice.Shape.Bands, choice.Shape.Rows
		h.Approx, h.FP, h.FN = choice.Threshold, choice.FP, choice.FN
		for i := 0; i <= 10; i++ {
			x := float64(i) / 10
			h.Rows10 = append(h.Rows10, templates.ShapeRow{S: x, P: lsh.Probability(x, choice.Shape)})
		}
	}
	datasets, err := s.datasetViews(r.Context(), true)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	role := userOf(r).Role
	h.Data = templates.Data{Datasets: datasets,
		CanImportData: role.Can(auth.ImportData), CanImportLabels: role.Can(auth.ImportLabels),
		CanStart: role.Can(auth.ManageCampaigns), CanLabel: role.Can(auth.Label),
		WhoImportsData: whoCan(auth.ImportData), WhoImportsLabels: whoCan(auth.ImportLabels),
		WhoStarts: capitalize(whoCan(auth.ManageCampaigns)), WhoLabels: whoCan(auth.Label), CommandDB: s.commandDB()}
	h.Page.ThresholdKey = true // the shape calculator's field: "/" focuses it
	s.render(w, r, status, templates.HomePage(h))
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// datasetViews summarizes every ready dataset for the start and import pages.
func (s *server) datasetViews(ctx context.Context, withCounts bool) ([]templates.DatasetView, error) {
	if s.store == nil {
		return nil, nil
	}
	list, err := s.store.Datasets(ctx)
	if err != nil {
		return nil, err
	}
	camps, err := s.store.Campaigns(ctx)
	if err != nil {
		return nil, err
	}
	var canStart, canLabel bool
	if u := userOfCtx(ctx); u != nil {
		canStart, canLabel = u.Role.Can(auth.ManageCampaigns), u.Role.Can(auth.Label)
	}
	var out []templates.DatasetView
	for _, ds := range list {
		v := templates.DatasetView{ID: ds.ID, Name: ds.Name, Version: ds.Version, Docs: ds.Docs, Rejected: ds.Rejected,
			SourceFile: ds.SourceFile, ContentHash: ds.ContentHash, Created: ds.CreatedAt.Format("2006-01-02 15:04 MST"),
			IsDemo: ds.Name == demo.DatasetName, CanStart: canStart, CanLabel: canLabel, Pairless: pairlessOf(userOfCtx(ctx), ds.Docs)}
		for _, c := range camps {
			if c.DatasetID == ds.ID {
				v.Campaigns = append(v.Campaigns, templates.CampaignLink{ID: c.ID, Name: c.Name, Dataset: ds.Name})
			}
		}
		if withCounts {
			if err := s.countInto(ctx, &v, camps); err != nil {
				return nil, err
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// countInto fills in v's counts: documents by source and language (counted once per
// dataset, which never changes once ready), and labels by category, pairs and
// annotators over the dataset's campaigns (from the tallies, not the label log).
func (s *server) countInto(ctx context.Context, v *templates.DatasetView, camps []db.Campaign) error {
	sources, langs, err := s.store.DocumentCounts(ctx, v.ID)
	if err != nil {
		return err
	}
	v.Sources, v.Langs = counts(sources), counts(langs)
	cats := map[string]int{}
	annotators := map[string]bool{}
	for _, c := range camps {
		if c.DatasetID != v.ID {
			continue
		}
		lc, err := s.tally.Counts(ctx, c)
		if err != nil {
			return err
		}
		for k, n := range lc.Categories {
			cats[k] += n
		}
		for _, a := range lc.Annotators {
			annotators[a] = true
		}
		v.Pairs += lc.Pairs
	}
	v.Annotators = len(annotators)
	byCount := make([]db.Count, 0, len(cats))
	for k, n := range cats {
		byCount = append(byCount, db.Count{Key: k, N: n})
	}
	slices.SortFunc(byCount, func(a, b db.Count) int { return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Key, b.Key)) })
	v.Categories = counts(byCount)
	return nil
}

func counts(in []db.Count) []templates.Count {
	out := make([]templates.Count, len(in))
	for i, c := range in {
		out[i] = templates.Count(c)
	}
	return out
}
