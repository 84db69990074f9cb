package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

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
	if err != nil {
		return templates.Upload{}, err
	}
	me := userOf(r)
	u := templates.Upload{Page: s.page(r, "Import"), MaxMB: s.maxUpload >> 20, Caps: s.importCap.String(), Datasets: datasets,
		ShowData: me.Role.Can(auth.ImportData), ShowLabels: me.Role.Can(auth.ImportLabels),
		Dataset: formValue(r, "dataset", ""), IDField: formValue(r, "id_field", "id"), TextField: formValue(r, "text_field", "text"),
		Meta: formValue(r, "meta", ""), SkipBad: formValue(r, "skip_bad", "") != "", NewVersion: formValue(r, "new_version", "") != "",
		Version: formValue(r, "version", ""), Campaign: formValue(r, "campaign", "default"), Create: formValue(r, "create", "") != "",
		Annotator: formValue(r, "annotator", me.Name), CommandDB: s.commandDB()}
	for _, d := range datasets { // newest first
		if !slices.Contains(u.DatasetNames, d.Name) {
			u.DatasetNames = append(u.DatasetNames, d.Name)
		}
		for _, c := range d.Campaigns {
			if !slices.Contains(u.CampaignNames, c.Name) {
				u.CampaignNames = append(u.CampaignNames, c.Name)
			}
		}
	}
	return u, nil
}

// showUpload shows the import page: with the document form where withData (/datasets/new,
// for a role that imports data), else with the label form alone (/labels/new).
func (s *server) showUpload(withData bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, err := s.uploadView(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		u.ShowData = u.ShowData && withData
		s.render(w, r, http.StatusOK, templates.UploadPage(u))
	}
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

// receiveUpload saves the multipart field "file" to a directory of its own in the
// upload directory, enforcing the upload cap, and keeps the small fields around it in
// r.Form. What the person can fix is a *pageError; a failure to write the file is an
// internal error.
func (s *server) receiveUpload(w http.ResponseWriter, r *http.Request) (upload, error) {
	if r.ContentLength > s.maxUpload { // declared over the cap: refused before a byte is read
		return upload{}, s.uploadFailure(&bodyError{&http.MaxBytesError{Limit: s.maxUpload}})
	}
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
		u, err := s.saveFile(part.FileName(), bodyReader{part})
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

// saveFile writes an uploaded file to a new directory of its own in the upload
// directory, under its own base name.
func (s *server) saveFile(fileName string, body io.Reader) (upload, error) {
	if fileName == "" {
		return upload{}, &pageError{http.StatusUnprocessableEntity, "No file was chosen."}
	}
	name := path.Base(strings.ReplaceAll(fileName, `\`, "/")) // a browser on Windows may send C:\dir\name
	if name == "." || name == ".." || name == "/" || strings.ContainsFunc(name, unicode.IsControl) {
		return upload{}, &pageError{http.StatusUnprocessableEntity, fmt.Sprintf("The file name %q cannot be used; rename the file and upload it again.", name)}
	}
	if err := os.MkdirAll(s.uploadDir, 0o700); err != nil {
		return upload{}, fmt.Errorf("save upload: %w", err)
	}
	dir, err := os.MkdirTemp(s.uploadDir, "upload-")
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

// importCap is the caps on one uploaded sample, as ingest options take them (0: none).
type importCap struct {
	bytes int64
	docs  int
}

// String says what the caps allow, for the upload form: "4 GiB and 2000000 records".
func (c importCap) String() string {
	var parts []string
	if c.bytes > 0 {
		parts = append(parts, corpus.FormatBytes(c.bytes))
	}
	if c.docs > 0 {
		parts = append(parts, fmt.Sprintf("%d records", c.docs))
	}
	return strings.Join(parts, " and ")
}

// newImportCap reads Deps' caps: 0 is the default, negative is no cap.
func newImportCap(bytes int64, docs int) importCap {
	c := importCap{bytes: bytes, docs: docs}
	switch {
	case c.bytes == 0:
		c.bytes = ingest.DefaultMaxInputBytes
	case c.bytes < 0:
		c.bytes = 0
	}
	switch {
	case c.docs == 0:
		c.docs = ingest.DefaultMaxDocs
	case c.docs < 0:
		c.docs = 0
	}
	return c
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
	// The form's fields are the command line's flags, read by the same code.
	opt := ingest.DocumentChoices{Dataset: r.FormValue("dataset"), IDField: r.FormValue("id_field"), TextField: r.FormValue("text_field"),
		Meta: r.FormValue("meta"), SkipBad: r.FormValue("skip_bad") != "", NewVersion: r.FormValue("new_version") != "",
		MaxInputBytes: s.importCap.bytes, MaxDocs: s.importCap.docs}.Options()
	id, err := s.startImport(userOf(r), up, opt)
	if err != nil {
		up.remove()
		s.failOnUpload(w, r, err)
		return
	}
	http.Redirect(w, r, "/imports/"+id, http.StatusSeeOther)
}

// startImport imports up in a background job. An import refused as identical to an
// earlier version keeps its file for a while, so that its page can ask whether to
// import it as a new version all the same (importNewVersion) without a second upload.
func (s *server) startImport(owner *db.User, up upload, opt ingest.Options) (string, error) {
	opt.Actor, opt.UserID = owner.Name, owner.ID
	var jobID string
	started := make(chan struct{})
	id, err := s.jobs.Start("import", up.name, owner.ID, func(ctx context.Context, report jobs.Reporter) (any, error) {
		opt.Progress = func(p ingest.Progress) { report(p) }
		rep, err := ingest.File(ctx, s.store, up.path, opt)
		if same, ok := errors.AsType[*ingest.IdenticalError](err); ok {
			<-started
			s.held.put(jobID, heldUpload{upload: up, opt: opt, earlier: same.Earlier, at: s.now()}, s.now())
		} else {
			up.remove()
		}
		return rep, s.jobError("import", up.name, err, "nothing was imported")
	})
	if err == nil {
		jobID = id
		close(started)
	}
	return id, err
}

// importNewVersion imports the file of an import refused as identical, as a new version.
func (s *server) importNewVersion(w http.ResponseWriter, r *http.Request, snap jobs.Snapshot) {
	// One at a time from taking the file to its import's start, so that the same
	// button pressed twice (a double click, a replayed POST) finds the import the first
	// press started, goes to it and starts nothing.
	s.held.starts.Lock()
	h, ok, job := s.held.take(snap.ID, s.now())
	var (
		id  string
		err error
	)
	if ok {
		h.opt.NewVersion = true
		id, err = s.startImport(userOf(r), h.upload, h.opt)
		s.held.started(snap.ID, id, err == nil)
	}
	s.held.starts.Unlock()
	switch {
	case !ok && job != "":
		s.redirect(w, r, "/imports/"+job, done("This form was sent already (a double click, or the page reloaded): here is the import it started. Nothing new was started."))
		return
	case !ok:
		s.redirect(w, r, "/datasets/new", refused(r, "That file is no longer kept (files refused as identical are kept for an hour): upload it again and tick \"import as a new version\"."))
		return
	}
	if err != nil {
		h.upload.remove()
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/imports/"+id, http.StatusSeeOther)
}

// jobCaller is the signed-in user asking about a job: admins see every job.
func jobCaller(r *http.Request) jobs.Caller {
	u := userOf(r)
	return jobs.Caller{UserID: u.ID, All: u.Role == auth.Admin}
}

// loadJob finds the {job} of the URL, a job of this kind that the user may see; any
// other is a 404 that says missing.
func (s *server) loadJob(r *http.Request, kind, missing string) (jobs.Snapshot, error) {
	snap, err := s.jobs.Get(chi.URLParam(r, "job"), jobCaller(r))
	if errors.Is(err, jobs.ErrNotFound) || (err == nil && snap.Kind != kind) {
		return snap, &pageError{http.StatusNotFound, missing}
	}
	return snap, err
}

// elapsed is how long a job has taken, to a tenth of a second: until now while it runs.
func (s *server) elapsed(snap jobs.Snapshot) string {
	end := snap.Finished
	if snap.State == jobs.Running {
		end = s.now()
	}
	return end.Sub(snap.Started).Round(100 * time.Millisecond).String()
}

// loadImport finds the {job} of the URL, an import the user may see.
func (s *server) loadImport(r *http.Request) (jobs.Snapshot, error) {
	return s.loadJob(r, "import", "No such import. Imports are kept while the server runs.")
}

func (s *server) showImport(w http.ResponseWriter, r *http.Request, snap jobs.Snapshot) {
	v := templates.ImportStatus{Page: s.page(r, "Import "+snap.Title), JobID: snap.ID, Title: snap.Title, State: string(snap.State),
		Running: snap.State == jobs.Running, Cancelling: snap.Cancelling, Error: snap.Err, Elapsed: s.elapsed(snap)}
	if v.Running {
		v.Page.Refresh = 1
	}
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
	if h, ok := s.held.peek(snap.ID, s.now()); ok {
		e := h.earlier
		v.Identical = &templates.IdenticalView{Name: e.Name, Version: e.Version, Docs: e.Docs, Created: e.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"),
			Hash: e.ContentHash}
	}
	status := http.StatusOK
	if snap.State == jobs.Failed {
		status = http.StatusUnprocessableEntity
	}
	s.render(w, r, status, templates.ImportStatusPage(v))
}

func (s *server) cancelImport(w http.ResponseWriter, r *http.Request) {
	snap, ok := s.cancelJob(w, r, s.loadImport)
	if !ok {
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
	// The form's fields are the command line's flags, read by the same code.
	version, err := optionalInt(r.FormValue("version"))
	if err != nil {
		up.remove()
		s.failOnUpload(w, r, &formError{"version", "want a version number, or nothing for the newest"})
		return
	}
	me := userOf(r)
	annotator := r.FormValue("annotator")
	if strings.TrimSpace(annotator) == "" {
		annotator = me.Name
	}
	ds, opt, err := ingest.LabelChoices{Dataset: r.FormValue("dataset"), Version: version, Campaign: r.FormValue("campaign"),
		Create: r.FormValue("create") != "", Annotator: annotator, SkipBad: r.FormValue("skip_bad") != ""}.Resolve(r.Context(), s.store)
	if err == nil {
		_, err = corpus.DetectFormat(up.name)
	}
	if err != nil {
		up.remove()
		s.failOnUpload(w, r, err)
		return
	}
	s.startLabelImport(w, r, up, ds, opt)
}

// joinErrors lists the rows of a report for a notice.
func joinErrors(errs []*corpus.RecordError, total int) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Error()
	}
	if total > len(errs) {
		parts = append(parts, fmt.Sprintf("and %d more", total-len(errs)))
	}
	return strings.Join(parts, "; ")
}

// optionalInt reads a whole number that may be left empty (0).
func optionalInt(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, ok := parseWhole(s)
	if !ok || n < 0 {
		return 0, errors.New("not a whole number")
	}
	return n, nil
}

// heldUpload is the file of an import refused as identical to an earlier version, kept
// so that the person can import it as a new version without uploading it again.
type heldUpload struct {
	upload  upload
	opt     ingest.Options
	earlier db.Dataset
	at      time.Time
}

// heldUploads are the kept files by import job id. A file is kept for heldFor; expired
// ones are removed whenever the map is touched. Once a file is taken for a new version,
// the import that took it is remembered (also for heldFor) so that the same form sent
// again is sent to that import instead of being told to upload the file again.
type heldUploads struct {
	mu    sync.Mutex
	m     map[string]heldUpload
	taken map[string]takenUpload

	starts sync.Mutex // held from take to started: one new version starts at a time
}

// takenUpload is the import a held file went to.
type takenUpload struct {
	job string
	at  time.Time
}

const heldFor = time.Hour

func (h *heldUploads) expire(now time.Time) {
	for id, u := range h.m {
		if now.Sub(u.at) > heldFor {
			u.upload.remove()
			delete(h.m, id)
		}
	}
	for id, t := range h.taken {
		if now.Sub(t.at) > heldFor {
			delete(h.taken, id)
		}
	}
}

func (h *heldUploads) put(id string, u heldUpload, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]heldUpload{}
	}
	h.expire(now)
	h.m[id] = u
}

func (h *heldUploads) peek(id string, now time.Time) (heldUpload, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expire(now)
	u, ok := h.m[id]
	return u, ok
}

// take hands the file of import id over to one caller, once. Without it (ok false),
// job is the import an earlier take started, if it did.
func (h *heldUploads) take(id string, now time.Time) (u heldUpload, ok bool, job string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expire(now)
	u, ok = h.m[id]
	if !ok {
		return u, false, h.taken[id].job
	}
	delete(h.m, id)
	if h.taken == nil {
		h.taken = map[string]takenUpload{}
	}
	h.taken[id] = takenUpload{at: now}
	return u, true, ""
}

// started records the import job that the taken file of import id went to; ok false
// (it did not start) forgets the take.
func (h *heldUploads) started(id, job string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, taken := h.taken[id]
	switch {
	case !taken:
	case ok:
		t.job = job
		h.taken[id] = t
	default:
		delete(h.taken, id)
	}
}

// commandDB is the server's database file as a command line names it: absolute, so a
// command copied from a page reaches this database from any directory, and quoted for
// a POSIX shell when it needs to be.
func (s *server) commandDB() string {
	p := s.store.Path()
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
