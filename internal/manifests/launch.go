package manifests

import (
	"context"
	"errors"
	"log/slog"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// Launch records a run (db.DB.StartRun: the record outlives the process, so a run killed
// while it works says so after a restart) and starts Run as a background job of reg whose
// phases the record follows. wrap turns the run's error into what the job reports (the
// caller's presentation of internal errors; nil keeps it). It returns the job's id.
func Launch(ctx context.Context, store *db.DB, sigs *sigcache.Cache, reg *jobs.Registry, log *slog.Logger,
	req Request, run db.NewRun, wrap func(error) error) (string, error) {
	ctx = context.WithoutCancel(ctx)
	runID, err := store.StartRun(ctx, req.By, run)
	if err != nil {
		return "", err
	}
	req.RunID = runID
	id, err := reg.Start("run", run.Title, req.By.ID, func(jctx context.Context, report jobs.Reporter) (any, error) {
		phase := ""
		m, err := Run(jctx, store, sigs, req, func(p Progress) {
			report(p)
			if p.Phase != phase {
				phase = p.Phase
				if err := store.SetRunPhase(ctx, runID, phase); err != nil {
					log.Error("record a run's phase", "run", runID, "err", err)
				}
			}
		})
		if err != nil && wrap != nil {
			err = wrap(err)
		}
		if err != nil {
			state := db.RunFailed
			if errors.Is(err, context.Canceled) {
				state = db.RunCancelled
			}
			if ferr := store.FinishRun(ctx, runID, state, err.Error()); ferr != nil {
				log.Error("record how a run ended", "run", runID, "err", ferr)
			}
		}
		return m.ID, err
	})
	if err != nil {
		if ferr := store.FinishRun(ctx, runID, db.RunFailed, err.Error()); ferr != nil {
			log.Error("record a run that did not start", "run", runID, "err", ferr)
		}
		return "", err
	}
	if err := store.SetRunJob(ctx, runID, id); err != nil {
		log.Error("record a run's job", "run", runID, "err", err)
	}
	return id, nil
}
