package web

import (
	"fmt"
	"net/http"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// sweepSettings serves the selected configuration of a sweep (at the slider's threshold,
// ?config=&t= as the dashboard has them) as settings.json, the file the dedup command and
// the engines' hand-off read. A sweep has no keeper rule: the file carries the one a run
// proposed from the sweep starts with ("earliest"), and says it comes from a sweep.
func (s *server) sweepSettings(w http.ResponseWriter, r *http.Request) {
	body, _, sweepID, ordinal, err := s.selectedSettings(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="sweep-%d-config-%d-settings.json"`, sweepID, ordinal))
	w.Write(body)
}

// selectedSettings is the settings.json of the sweep configuration the URL selects at
// the slider's threshold (?config=&t=), the parameters it holds, and the sweep and
// configuration it comes from: what the download and a corpus run from a sweep read.
func (s *server) selectedSettings(r *http.Request) (body []byte, p review.Params, sweepID int64, ordinal int, err error) {
	d, q, err := s.loadSelected(r)
	if err != nil {
		return nil, p, 0, 0, err
	}
	ds, err := s.store.Dataset(r.Context(), d.sw.DatasetID)
	if err != nil {
		return nil, p, 0, 0, err
	}
	if p, err = sweepParams(d.selected(q)); err != nil {
		return nil, p, 0, 0, badInput(err)
	}
	ordinal = d.results[d.sel].Ordinal
	files, err := handoff.Files(handoff.Settings{Params: p, Source: handoff.Source{Sweep: d.sw.ID, Config: int64(ordinal),
		Dataset: review.Dataset{ID: ds.ID, Name: ds.Name, Version: ds.Version, ContentHash: ds.ContentHash}}}, handoff.JSON)
	if err != nil {
		return nil, p, 0, 0, err
	}
	return files[0].Body, p, d.sw.ID, ordinal, nil
}

// sweepParams is a sweep configuration as a manifest's parameters, with the keeper rule
// the run form starts from.
func sweepParams(c sweep.Config) (review.Params, error) {
	pol, err := cluster.ParsePolicy(c.Policy)
	if err != nil {
		return review.Params{}, err
	}
	rule, err := cluster.ParseRule(defaultKeeper)
	if err != nil {
		return review.Params{}, err
	}
	ver, err := review.ParseVerification(string(c.Verification))
	if err != nil {
		return review.Params{}, err
	}
	return review.Params{Spec: c.Spec, Shape: c.Shape, Threshold: c.Threshold, Verification: ver, Policy: pol, Rule: rule}, nil
}
