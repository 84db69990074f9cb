package web

import (
	"context"
	"net/http"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// datasetViews summarizes every ready dataset for the start page.
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
		canStart = auth.Role(u.Role).Can(auth.ManageCampaigns)
		canLabel = auth.Role(u.Role).Can(auth.Label)
	}
	var out []templates.DatasetView
	for _, ds := range list {
		v := templates.DatasetView{ID: ds.ID, Name: ds.Name, Version: ds.Version, Docs: ds.Docs, Rejected: ds.Rejected,
			SourceFile: ds.SourceFile, ContentHash: ds.ContentHash, Created: ds.CreatedAt.Format("2006-01-02 15:04 MST"),
			IsDemo: ds.Name == demo.DatasetName, CanStart: canStart, CanLabel: canLabel}
		for _, c := range camps {
			if c.DatasetID == ds.ID {
				v.Campaigns = append(v.Campaigns, templates.CampaignLink{ID: c.ID, Name: c.Name, Dataset: ds.Name})
			}
		}
		if withCounts {
			o, err := s.store.DatasetOverview(ctx, ds.ID)
			if err != nil {
				return nil, err
			}
			v.Sources, v.Langs, v.Categories = counts(o.Sources), counts(o.Langs), counts(o.Categories)
			v.Pairs, v.Annotators = o.Pairs, o.Annotators
		}
		out = append(out, v)
	}
	return out, nil
}

func counts(in []db.Count) []templates.Count {
	out := make([]templates.Count, len(in))
	for i, c := range in {
		out[i] = templates.Count(c)
	}
	return out
}

func (s *server) internalError(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Error("internal error", "err", err, "path", r.URL.Path, "request_id", requestIDOf(r))
	s.renderError(w, r, http.StatusInternalServerError, "Internal error (request "+requestIDOf(r)+"). It has been logged.")
}
