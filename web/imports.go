package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

func (s *server) uploadView(r *http.Request) (templates.Upload, error) {
	datasets, err := s.datasetViews(r.Context(), false)
	role := auth.Role(userOf(r).Role)
	return templates.Upload{Page: s.page(r, "Import"), MaxMB: s.maxUpload >> 20, Datasets: datasets,
		ShowData: role.Can(auth.ImportData), ShowLabels: role.Can(auth.ImportLabels),
		IDField: "id", TextField: "text"}, err
}

func (s *server) showUpload(w http.ResponseWriter, r *http.Request) {
	u, err := s.uploadView(r)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.UploadPage(u))
}

func (s *server) showLabelsUpload(w http.ResponseWriter, r *http.Request) {
	u, err := s.uploadView(r)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	u.ShowData = false
	s.render(w, r, http.StatusOK, templates.UploadPage(u))
}

// receiveUpload saves the multipart field "file" to a temporary file named like the
// upload (the extension says the format), enforcing the upload cap.
func (s *server) receiveUpload(w http.ResponseWriter, r *http.Request) (path, name string, status int, err error) {
	r.Body = http.MaxBytesReader(w, r.Body, s.maxUpload)
	mr, err := r.MultipartReader()
	if err != nil {
		return "", "", http.StatusBadRequest, fmt.Errorf("want a multipart form upload: %v", err)
	}
	r.Form = url.Values{} // the small fields, whichever side of the file they come
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return "", "", http.StatusUnprocessableEntity, errors.New("no file was uploaded")
		}
		if err != nil {
			status, err := s.uploadFailure(err)
			return "", "", status, err
		}
		if part.FormName() != "file" {
			// Small fields come before the file in the form; keep them for FormValue.
			b, err := io.ReadAll(io.LimitReader(part, 4096))
			if err != nil {
				return "", "", http.StatusBadRequest, err
			}
			r.Form.Add(part.FormName(), string(b))
			continue
		}
		name = filepath.Base(part.FileName())
		if name == "." || name == "/" || name == "" {
			return "", "", http.StatusUnprocessableEntity, errors.New("no file was chosen")
		}
		dir, err := os.MkdirTemp("", "dedupstudio-upload-")
		if err != nil {
			return "", "", http.StatusInternalServerError, err
		}
		path = filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			os.RemoveAll(dir)
			return "", "", http.StatusInternalServerError, err
		}
		_, err = io.Copy(f, part)
		f.Close()
		if err != nil {
			os.RemoveAll(dir)
			status, err := s.uploadFailure(err)
			return "", "", status, err
		}
		// The remaining fields (after the file) are read too.
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(io.LimitReader(p, 4096))
			r.Form.Add(p.FormName(), string(b))
		}
		return path, name, 0, nil
	}
}

// uploadError shows the upload page again with what went wrong.
func (s *server) uploadError(w http.ResponseWriter, r *http.Request, status int, err error) {
	u, verr := s.uploadView(r)
	if verr != nil {
		s.internalError(w, r, verr)
		return
	}
	u.Error = err.Error()
	s.render(w, r, status, templates.UploadPage(u))
}

// uploadFailure turns a failed read of an upload into a status and a message.
func (s *server) uploadFailure(err error) (int, error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge, fmt.Errorf("the upload is larger than %d MB; use the command line for large files", s.maxUpload>>20)
	}
	return http.StatusBadRequest, err
}

func (s *server) uploadDataset(w http.ResponseWriter, r *http.Request) {
	path, name, status, err := s.receiveUpload(w, r)
	if err == nil {
		if _, ferr := corpus.DetectFormat(name); ferr != nil {
			os.RemoveAll(filepath.Dir(path))
			status, err = http.StatusUnprocessableEntity, ferr
		}
	}
	if err != nil {
		s.uploadError(w, r, status, err)
		return
	}
	opt := ingest.Options{
		Dataset: strings.TrimSpace(r.FormValue("dataset")),
		Corpus:  corpus.Options{IDField: strings.TrimSpace(r.FormValue("id_field")), TextField: strings.TrimSpace(r.FormValue("text_field"))},
		SkipBad: r.FormValue("skip_bad") != "",
		Actor:   "web",
	}
	owner := userOf(r)
	opt.Actor = owner.Name
	id := s.jobs.Start("import", name, owner.ID, func(ctx context.Context, report jobs.Reporter) (any, error) {
		defer os.RemoveAll(filepath.Dir(path))
		opt.Progress = func(p ingest.Progress) { report(p) }
		opt.UserID = owner.ID
		rep, err := ingest.File(ctx, s.store, path, opt)
		if err != nil && !userError(err) {
			s.log.Error("import failed", "file", name, "err", err)
			return rep, errors.New("the import failed on an internal error, which has been logged; nothing was imported")
		}
		return rep, err
	})
	http.Redirect(w, r, "/imports/"+id, http.StatusSeeOther)
}

func (s *server) showImport(w http.ResponseWriter, r *http.Request) {
	snap, ok := s.jobs.Get(chi.URLParam(r, "job"))
	if !ok || snap.Kind != "import" {
		s.renderError(w, r, http.StatusNotFound, "No such import. Imports are kept while the server runs.")
		return
	}
	v := templates.ImportStatus{Page: s.page(r, "Import "+snap.Title), JobID: snap.ID, Title: snap.Title, State: string(snap.State),
		Running: snap.State == jobs.Running, Error: snap.Err}
	end := snap.Finished
	if v.Running {
		end = s.now()
		v.Page.Refresh = 1
	}
	v.Elapsed = end.Sub(snap.Started).Round(100 * time.Millisecond).String()
	if p, ok := snap.Progress.(ingest.Progress); ok {
		v.Docs, v.Rejected, v.MB = p.Docs, p.Rejected, fmt.Sprintf("%.1f", float64(p.Bytes)/1e6)
	}
	rep, _ := snap.Result.(ingest.Report)
	if snap.State != jobs.Running {
		v.Docs, v.Rejected = rep.Accepted, rep.Rejected
		if snap.State != jobs.Done {
			v.Docs = 0 // nothing landed
		}
	}
	for _, e := range rep.Errors {
		v.Errors = append(v.Errors, templates.RecordErrorView{Place: e.Place.String(), Field: e.Field, Reason: e.Msg})
	}
	v.More = rep.Rejected - len(rep.Errors)
	if rep.Dataset.ID != 0 {
		v.DatasetID, v.Dataset, v.Version = rep.Dataset.ID, rep.Dataset.Name, rep.Dataset.Version
	}
	status := http.StatusOK
	if snap.State == jobs.Failed {
		status = http.StatusUnprocessableEntity
	}
	s.render(w, r, status, templates.ImportStatusPage(v))
}

func (s *server) cancelImport(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "job")
	if !s.jobs.Cancel(id) {
		s.renderError(w, r, http.StatusNotFound, "No such import.")
		return
	}
	http.Redirect(w, r, "/imports/"+id, http.StatusSeeOther)
}

func (s *server) uploadLabels(w http.ResponseWriter, r *http.Request) {
	path, name, status, err := s.receiveUpload(w, r)
	fail := func(status int, err error) { s.uploadError(w, r, status, err) }
	if err != nil {
		fail(status, err)
		return
	}
	defer os.RemoveAll(filepath.Dir(path))
	dsID, _ := strconv.ParseInt(r.FormValue("dataset_id"), 10, 64)
	if _, err := s.store.Dataset(r.Context(), dsID); errors.Is(err, db.ErrNotFound) {
		fail(http.StatusNotFound, errors.New("no such dataset"))
		return
	} else if err != nil {
		s.internalError(w, r, err)
		return
	}
	rep, err := ingest.LabelsFile(r.Context(), s.store, path, ingest.LabelOptions{DatasetID: dsID, Actor: userOf(r).Name, Annotator: userOf(r).Name})
	var le *ingest.LabelError
	if errors.As(err, &le) {
		var lines []string
		for _, e := range le.Report.Errors {
			lines = append(lines, e.Error())
		}
		fail(http.StatusUnprocessableEntity, fmt.Errorf("%s of %s: %s", le.Error(), name, strings.Join(lines, "; ")))
		return
	}
	if err != nil {
		fail(http.StatusUnprocessableEntity, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/?labels=%d", rep.Accepted), http.StatusSeeOther)
}

// userError reports whether an import error is about the user's file (and so worth
// showing as is) rather than an internal failure.
func userError(err error) bool {
	var re *corpus.RecordError
	var ie *ingest.Error
	var fe *corpus.FormatError
	switch {
	case errors.As(err, &re), errors.As(err, &fe), errors.Is(err, ingest.ErrEmpty), errors.Is(err, context.Canceled):
		return true
	case errors.As(err, &ie):
		return ie.Err == nil
	}
	return false
}
