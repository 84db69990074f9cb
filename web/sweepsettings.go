package web

import (
	"fmt"
	"net/http"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// sweepSettings serves the selected configuration of a sweep (at the slider's threshold,
// ?config=&t= as the dashboard has them) as settings.json, the file the dedup command and
// the engines' hand-off read. A sweep has no keeper rule: the file carries the one a run
// proposed from the sweep starts with ("earliest"), and says it comes from a sweep.
func (s *server) sweepSettings(w http.ResponseWriter, r *http.Request) {
	var body []byte
	settings, ordinal, err := s.selectedSettings(r)
	if err == nil {
		body, err = settings.JSON()
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="sweep-%d-config-%d-settings.json"`, settings.Source.Sweep, ordinal))
	w.Write(body)
}

// selectedSettings is the sweep configuration the URL selects at the slider's threshold
// (?config=&t=) with where it comes from, and its ordinal: what the settings.json
// download and a corpus run from a sweep take.
func (s *server) selectedSettings(r *http.Request) (handoff.Settings, int, error) {
	d, q, err := s.loadSelected(r)
	if err != nil {
		return handoff.Settings{}, 0, err
	}
	if !d.chosen {
		// No configuration named and none recommended (the closest breaks the target):
		// settings of a configuration nobody chose are not handed out as "the recommended".
		return handoff.Settings{}, 0, &formError{field: "config", msg: fmt.Sprintf("no configuration of sweep %d meets its target, so none is recommended: "+
			"give the number of the one you mean (the # column of the sweep's table)", d.sw.ID)}
	}
	ds, err := s.store.Dataset(r.Context(), d.sw.DatasetID)
	if err != nil {
		return handoff.Settings{}, 0, err
	}
	rule, err := cluster.ParseRule(defaultKeeper)
	if err != nil {
		return handoff.Settings{}, 0, err
	}
	// A sweep has no keeper rule: the file carries the one a proposal starts with.
	p, err := d.selected(q).Params(rule)
	if err != nil {
		return handoff.Settings{}, 0, badInput(err)
	}
	ordinal := d.results[d.sel].Ordinal
	return handoff.Settings{Params: p, Source: handoff.Source{Sweep: d.sw.ID, Config: int64(ordinal),
		Dataset: review.Dataset{ID: ds.ID, Name: ds.Name, Version: ds.Version, ContentHash: ds.ContentHash}}}, ordinal, nil
}
