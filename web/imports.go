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

// Imports: uploading a sample (a background job whose page shows its progress) or a
// label file (imported within the request).

func (s *server) uploadView(r *http.Request) (templates.Upload, error) {
	datasets, err := s.datasetViews(r.Context(), false)
	role := userOf(r).Role
	return templates.Upload{Page: s.page(r, "Import"), MaxMB: s.maxUpload >> 20, Datasets: datasets,
		ShowData: role.Can(auth.ImportData), ShowLabels: role.Can(auth.ImportLabels),
		Dataset: formValue(r, "dataset", ""), IDField: formValue(r, "id_field", "id"), TextField: formValue(r, "text_field", "text"),
		SkipBad: formValue(r, "skip_bad", "") != ""}, err
}

func (s *server) showUpload(w http.ResponseWriter, r *http.Request) {
	u, err := s.uploadView(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.UploadPage(u))
}

func (s *server) showLabelsUpload(w http.ResponseWriter, r *http.Request) {
	u, err := s.uploadView(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	u.ShowData = false
	s.render(w, r, http.StatusOK, templates.UploadPage(u))
}

// failOnUpload shows err on the upload form the person came from when they can fix it
// there, with the small fields they filled in.
func (s *server) failOnUpload(w http.ResponseWriter, r *http.Request, err error) {
	form := "/datasets/new"
	if r.URL.Path == "/labels" {
		form = "/labels/new"
	}
	s.failOn(w, r, err, func(_ int, msg string) { s.redirect(w, r, form, refused(r, msg)) })
}

// upload is a received file, in a directory of its own.
type upload struct {
	path string // the file, named like the upload (its extension says the format)
	name string // the name it was uploaded under
}

// remove deletes the upload's directory.
func (u upload) remove() error { return os.RemoveAll(filepath.Dir(u.path)) }

// receiveUpload saves the multipart field "file" to a temporary directory, enforcing
// the upload cap, and keeps the small fields around it in r.Form. What the person can
// fix is a *pageError; a failure to write the file is an internal error.
func (s *server) receiveUpload(w http.ResponseWriter, r *http.Request) (upload, error) {
	r.Body = http.MaxBytesReader(w, r.Body, s.maxUpload)
	mr, err := r.MultipartReader()
	if err != nil {
		return upload{}, &pageError{http.StatusBadRequest, "Want a multipart form upload."}
	}
	r.Form = url.Values{} // the small fields, whichever side of the file they come
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return upload{}, &pageError{http.StatusUnprocessableEntity, "No file was uploaded."}
		}
		if err != nil {
			return upload{}, s.uploadFailure(&bodyError{err})
		}
		if part.FormName() != "file" {
			if err := readField(r, part.FormName(), part); err != nil {
				return upload{}, s.uploadFailure(&bodyError{err})
			}
			continue
		}
		u, err := saveFile(part.FileName(), bodyReader{part})
		if err != nil {
			return upload{}, s.uploadFailure(err)
		}
		// The remaining fields (after the file) are read too.
		for {
			p, err := mr.NextPart()
			if err != nil {
				break // the end, or a broken tail of small fields: the file is what matters
			}
			if err := readField(r, p.FormName(), p); err != nil {
				break
			}
		}
		return u, nil
	}
}

// readField keeps a small form field (up to 4 kB) in r.Form.
func readField(r *http.Request, name string, part io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(part, 4096))
	if err != nil {
		return err
	}
	r.Form.Add(name, string(b))
	return nil
}

// saveFile writes an uploaded file to a new temporary directory under its own base name.
func saveFile(fileName string, body io.Reader) (upload, error) {
	name := filepath.Base(fileName)
	if name == "." || name == "/" || name == "" {
		return upload{}, &pageError{http.StatusUnprocessableEntity, "No file was chosen."}
	}
	dir, err := os.MkdirTemp("", "dedupstudio-upload-")
	if err != nil {
		return upload{}, fmt.Errorf("save upload: %w", err)
	}
	u := upload{path: filepath.Join(dir, name), name: name}
	f, err := os.Create(u.path)
	if err != nil {
		u.remove()
		return upload{}, fmt.Errorf("save upload: %w", err)
	}
	_, err = io.Copy(f, body)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("save upload: %w", cerr)
	}
	if err != nil {
		u.remove()
		return upload{}, err
	}
	return u, nil
}

// bodyError is a failure reading the request body (too large, cut short), as opposed to
// one writing the file.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "read upload: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// bodyReader marks the errors of reading r as bodyErrors.
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = &bodyError{err}
	}
	return n, err
}

// uploadFailure names a failed read of the request body for the person (too large, or
// broken off); other errors (writing the file) pass as they are.
func (s *server) uploadFailure(err error) error {
	var be *bodyError
	if !errors.As(err, &be) {
		return err
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &pageError{http.StatusRequestEntityTooLarge, fmt.Sprintf("The upload is larger than %d MB; use the command line for large files.", s.maxUpload>>20)}
	}
	return &pageError{http.StatusBadRequest, "The upload could not be read (was it cut short?); try again."}
}

func (s *server) uploadDataset(w http.ResponseWriter, r *http.Request) {
	up, err := s.receiveUpload(w, r)
	if err != nil {
		s.failOnUpload(w, r, err)
		return
	}
	if _, err := corpus.DetectFormat(up.name); err != nil {
		up.remove()
		s.failOnUpload(w, r, err)
		return
	}
	owner := userOf(r)
	opt := ingest.Options{
		Dataset: strings.TrimSpace(r.FormValue("dataset")),
		Corpus:  corpus.Options{IDField: strings.TrimSpace(r.FormValue("id_field")), TextField: strings.TrimSpace(r.FormValue("text_field"))},
		SkipBad: r.FormValue("skip_bad") != "",
		Actor:   owner.Name,
		UserID:  owner.ID,
	}
	id, err := s.jobs.Start("import", up.name, owner.ID, func(ctx context.Context, report jobs.Reporter) (any, error) {
		defer up.remove()
		opt.Progress = func(p ingest.Progress) { report(p) }
		rep, err := ingest.File(ctx, s.store, up.path, opt)
		return rep, s.jobError("import", up.name, err, "nothing was imported")
	})
	if err != nil {
		up.remove()
		s.failOnUpload(w, r, err)
		return
	}
	http.Redirect(w, r, "/imports/"+id, http.StatusSeeOther)
}

// jobCaller is the signed-in user asking about a job: admins see every job.
func jobCaller(r *http.Request) jobs.Caller {
	u := userOf(r)
	return jobs.Caller{UserID: u.ID, All: u.Role == auth.Admin}
}

// loadImport finds the {job} of the URL, an import the user may see.
func (s *server) loadImport(r *http.Request) (jobs.Snapshot, error) {
	snap, err := s.jobs.Get(chi.URLParam(r, "job"), jobCaller(r))
	if errors.Is(err, jobs.ErrNotFound) || (err == nil && snap.Kind != "import") {
		return snap, &pageError{http.StatusNotFound, "No such import. Imports are kept while the server runs."}
	}
	return snap, err
}

func (s *server) showImport(w http.ResponseWriter, r *http.Request) {
	snap, err := s.loadImport(r)
	if err != nil {
		s.fail(w, r, err)
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
	rep, _ := snap.Result.(ingest.Report) // none until the job has finished
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
	snap, err := s.loadImport(r)
	if err == nil {
		err = s.jobs.Cancel(snap.ID, jobCaller(r))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	n := done("Cancelled the import: what it read so far is being discarded.")
	if snap.State != jobs.Running {
		n = done("The import had ended already: there was nothing to cancel.")
	}
	s.redirect(w, r, "/imports/"+snap.ID, n)
}

func (s *server) uploadLabels(w http.ResponseWriter, r *http.Request) {
	up, err := s.receiveUpload(w, r)
	if err != nil {
		s.failOnUpload(w, r, err)
		return
	}
	dsID, _ := strconv.ParseInt(r.FormValue("dataset_id"), 10, 64) // none: 0, no such dataset
	if _, err := s.store.Dataset(r.Context(), dsID); errors.Is(err, db.ErrNotFound) {
		up.remove()
		s.fail(w, r, notFound("dataset"))
		return
	} else if err != nil {
		up.remove()
		s.fail(w, r, err)
		return
	}
	if _, err := corpus.DetectFormat(up.name); err != nil {
		up.remove()
		s.failOnUpload(w, r, err)
		return
	}
	// Rows that name no annotator are the importer's source ("import:<name>").
	s.startLabelImport(w, r, up, ingest.LabelOptions{DatasetID: dsID, Annotator: userOf(r).Name})
}
