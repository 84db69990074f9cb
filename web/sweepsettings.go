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
	q, err := parseDash(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := s.loadSweepData(r, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if d.sel < 0 {
		s.fail(w, r, &pageError{http.StatusNotFound, "This sweep has no results yet."})
		return
	}
	c := d.selected(q)
	ds, err := s.store.Dataset(r.Context(), d.sw.DatasetID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := sweepParams(c)
	if err != nil {
		s.fail(w, r, badInput(err))
		return
	}
	ordinal := d.results[d.sel].Ordinal
	files, err := handoff.Files(handoff.Settings{Params: p, Source: handoff.Source{Sweep: d.sw.ID, Config: int64(ordinal),
		Dataset: review.Dataset{ID: ds.ID, Name: ds.Name, Version: ds.Version, ContentHash: ds.ContentHash}}}, handoff.JSON)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="sweep-%d-config-%d-settings.json"`, d.sw.ID, ordinal))
	w.Write(files[0].Body)
}

// sweepParams is a sweep configuration as a manifest's parameters, with the keeper rule
// the run form starts from.
func sweepParams(c sweep.Config) (review.Params, error) {
	policy := c.Policy
	if policy == sweep.ConnectedComponents {
		policy = string(cluster.Components)
	}
	pol, err := cluster.ParsePolicy(policy)
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
