package web

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Label imports run as background jobs, like dataset imports: a 300k-row file took four
// minutes inside one request, holding the write lock for a minute. The job's page shows
// progress and can cancel until every row is staged (see ingest.Labels).

// labelImportJob is the jobs kind of label imports.
const labelImportJob = "labels"

// labelImportResult is what a label import job returns.
type labelImportResult struct {
	Report  ingest.LabelReport
	Dataset db.Dataset
	Refused string     // what was wrong with the file or the choices, for the form
	Form    url.Values // the form's small fields, to fill it again after a refusal
}

// startLabelImport runs the import of the uploaded file up into dataset version ds as a
// job of the signed-in user's, recorded as theirs (adjudication rows only if they may
// adjudicate), and sends them to its page. The job removes the upload when it ends.
func (s *server) startLabelImport(w http.ResponseWriter, r *http.Request, up upload, ds db.Dataset, opt ingest.LabelOptions) {
	me := userOf(r)
	opt.Actor, opt.UserID, opt.MayAdjudicate = me.Name, me.ID, me.Role.Can(auth.Adjudicate)
	form := maps.Clone(r.Form)
	id, err := s.jobs.Start(labelImportJob, up.name, me.ID, func(ctx context.Context, report jobs.Reporter) (any, error) {
		defer up.remove()
		opt.Progress = func(p ingest.LabelProgress) { report(p) }
		rep, err := ingest.LabelsFile(ctx, s.store, up.path, opt)
		res := labelImportResult{Report: rep, Dataset: ds, Form: form}
		if msg, ok := userMessage(err); ok {
			res.Refused = msg
		}
		return res, s.jobError("label import", up.name, err, "nothing was imported")
	})
	if err != nil {
		up.remove()
		s.failOnUpload(w, r, err)
		return
	}
	http.Redirect(w, r, "/label-imports/"+id, http.StatusSeeOther)
}

// loadLabelImport finds the {job} of the URL, a label import the user may see.
func (s *server) loadLabelImport(r *http.Request) (jobs.Snapshot, error) {
	return s.loadJob(r, labelImportJob, "No such label import. Imports are kept while the server runs.")
}

// showLabelImport shows a running label import's progress. A finished one sends the
// person where the import's result belongs, as the form did when imports ran within the
// request: to the campaign saying what it did, or back to the form saying what was wrong
// (with what they chose); a cancelled one says so here.
func (s *server) showLabelImport(w http.ResponseWriter, r *http.Request, snap jobs.Snapshot) {
	res, _ := snap.Result.(labelImportResult) // none until the job has finished
	switch snap.State {
	case jobs.Done:
		s.redirect(w, r, fmt.Sprintf("/campaigns/%d", res.Report.CampaignID), done(labelImportMessage(res.Report, res.Dataset)))
		return
	case jobs.Failed:
		msg := res.Refused
		if msg == "" {
			msg = snap.Err
		}
		s.redirect(w, r, "/labels/new", &notice{Notice: templates.Notice{Text: msg, Error: true}, Form: res.Form})
		return
	}
	v := templates.LabelImportStatus{Page: s.page(r, "Label import "+snap.Title), JobID: snap.ID, Title: snap.Title,
		State: string(snap.State), Running: snap.State == jobs.Running, Elapsed: s.elapsed(snap)}
	if v.Running {
		v.Page.Refresh = 1
	}
	if p, ok := snap.Progress.(ingest.LabelProgress); ok {
		v.Phase, v.Done, v.Total = p.Phase, p.Done, p.Total
	}
	s.render(w, r, http.StatusOK, templates.LabelImportStatusPage(v))
}

func (s *server) cancelLabelImport(w http.ResponseWriter, r *http.Request) {
	snap, err := s.loadLabelImport(r)
	if err == nil {
		err = s.jobs.Cancel(snap.ID, jobCaller(r))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, _ := snap.Result.(labelImportResult)
	p, _ := snap.Progress.(ingest.LabelProgress)
	switch {
	case snap.State == jobs.Done:
		s.redirect(w, r, fmt.Sprintf("/campaigns/%d", res.Report.CampaignID),
			done("The label import had ended already: there was nothing to cancel. "+labelImportMessage(res.Report, res.Dataset)))
	case snap.State == jobs.Failed:
		s.redirect(w, r, "/labels/new", done("The label import had ended already (refused): there was nothing to cancel."))
	case snap.State == jobs.Cancelled:
		s.redirect(w, r, "/label-imports/"+snap.ID, done("The label import had been cancelled already."))
	case p.Phase == ingest.PhasePublishing || p.Phase == ingest.PhaseScoring:
		s.redirect(w, r, "/label-imports/"+snap.ID, done("Too late to cancel: every row was in, and the labels are being published."))
	default:
		s.redirect(w, r, "/label-imports/"+snap.ID, done("Cancelled the label import: what it staged is being discarded."))
	}
}

// labelImportMessage says what a finished label import did.
func labelImportMessage(rep ingest.LabelReport, ds db.Dataset) string {
	created := ""
	if rep.Created {
		created = " (created)"
	}
	msg := fmt.Sprintf("Campaign “%s”%s of %s version %d: %d new, %d unchanged, %d rejected of %s.", rep.Campaign, created, ds.Name, ds.Version,
		rep.New, rep.Unchanged, rep.Rejected, templates.Plural(rep.Rows, "row", "rows"))
	if rep.Rejected > 0 {
		msg += " Skipped: " + joinErrors(rep.Errors, rep.Rejected) + "."
	}
	if rep.Overrides > 0 {
		msg += fmt.Sprintf(" %s override what their category says (kept as written): %s.", templates.Plural(rep.Overrides, "row", "rows"), joinErrors(rep.Warnings, rep.Overrides))
	}
	return msg
}

// labelAuthor is who a label event is shown as. An imported label is shown as imported by
// someone from a file, with the source the file named, never as if the named person (or
// rule) had labeled it; an imported adjudication is the importer's own.
func labelAuthor(e db.LabelEvent) string {
	if e.Import.ID == 0 {
		return e.Annotator
	}
	if e.Kind == labels.KindAdjudication {
		return fmt.Sprintf("%s (imported from file %s)", e.Annotator, e.Import.File)
	}
	source, ok := labels.ImportSource(e.Annotator)
	if !ok {
		source = e.Annotator // the program's own rule labels (demo-rules)
	}
	return fmt.Sprintf("imported by %s from file %s (source %s)", e.Import.ImportedBy, e.Import.File, source)
}
