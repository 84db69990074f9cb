package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Results from production: the manifests page uploads what an engine that ran at scale
// decided (internal/results reads it) into a dataset, as a background job like a run
// (same progress page), ending in a draft manifest whose sample of clusters people
// review.

// resultsUploadPath is where the manifests page posts a results file.
const resultsUploadPath = "/manifests/import"

// importResultsUpload receives the file and the form around it and starts the import.
func (s *server) importResultsUpload(w http.ResponseWriter, r *http.Request) {
	back := func(err error) {
		s.failOn(w, r, err, func(_ int, msg string) { s.redirect(w, r, "/manifests#import-results", refused(r, msg)) })
	}
	up, rm, err := s.receiveResults(w, r)
	if err != nil {
		back(err)
		return
	}
	discard := func() {
		up.remove()
		if rm != nil {
			rm.remove()
		}
	}
	req, title, err := s.resultsRequest(r, up)
	if err != nil {
		discard()
		back(err)
		return
	}
	// The same upload sent twice (a double click, a replayed POST) makes one manifest:
	// the form's one-time token is claimed first, and a later post goes where the first
	// led, its file discarded.
	token := r.Form.Get("token")
	if s.sentAlready(w, r, token, "import", "the list of manifests for it") {
		discard()
		return
	}
	id, err := s.jobs.Start("run", title, req.By.ID, func(ctx context.Context, report jobs.Reporter) (any, error) {
		defer discard()
		f, err := os.Open(up.path)
		if err != nil {
			return nil, s.jobError("import", title, err, "no manifest was made")
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return nil, s.jobError("import", title, err, "no manifest was made")
		}
		req.File = results.Source{Name: up.name, Reader: f, At: f, Size: st.Size()}
		if rm != nil {
			rf, err := os.Open(rm.path)
			if err != nil {
				return nil, s.jobError("import", title, err, "no manifest was made")
			}
			defer rf.Close()
			req.Remove = results.Source{Name: rm.name, Reader: rf}
		}
		m, err := manifests.ImportResults(ctx, s.store, req, func(p manifests.Progress) { report(p) })
		return m.ID, s.jobError("import", title, err, "no manifest was made")
	})
	if token != "" {
		target := ""
		if err == nil {
			target = "/runs/" + id
		}
		// Released when the import did not start, so the form may be sent again. An import
		// that started keeps its file whatever becomes of this record.
		if terr := s.store.SetFormToken(context.WithoutCancel(r.Context()), token, target); terr != nil {
			s.log.Error("results import: record the form's one-time token", "err", terr, "request_id", requestIDOf(r))
		}
	}
	if err != nil {
		discard()
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
}

// receiveResults saves the multipart fields "file" (the results) and, when one was
// chosen, "remove" (datatrove's .remove beside a .clusters file), each to a directory of
// its own in the upload directory under the upload cap, keeping the small fields in
// r.Form.
func (s *server) receiveResults(w http.ResponseWriter, r *http.Request) (upload, *upload, error) {
	if r.ContentLength > s.maxUpload { // declared over the cap: refused before a byte is read
		return upload{}, nil, s.uploadFailure(&bodyError{&http.MaxBytesError{Limit: s.maxUpload}})
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxUpload)
	mr, err := r.MultipartReader()
	if err != nil {
		return upload{}, nil, &pageError{http.StatusBadRequest, "Want a multipart form upload."}
	}
	r.Form = url.Values{}
	var file, remove *upload
	fail := func(err error) (upload, *upload, error) {
		for _, u := range []*upload{file, remove} {
			if u != nil {
				u.remove()
			}
		}
		return upload{}, nil, err
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(s.uploadFailure(&bodyError{err}))
		}
		switch name := part.FormName(); {
		case (name == "file" || name == "remove") && part.FileName() != "":
			if (name == "file" && file != nil) || (name == "remove" && remove != nil) {
				return fail(&pageError{http.StatusUnprocessableEntity, "One file per field, please."})
			}
			u, err := s.saveFile(part.FileName(), bodyReader{part})
			if err != nil {
				return fail(s.uploadFailure(err))
			}
			if name == "file" {
				file = &u
			} else {
				remove = &u
			}
		case name == "file" || name == "remove":
			io.Copy(io.Discard, part) // no file chosen
		default:
			if err := readField(r, name, part); err != nil {
				return fail(s.uploadFailure(&bodyError{err}))
			}
		}
	}
	if file == nil {
		return fail(&pageError{http.StatusUnprocessableEntity, "No results file was chosen."})
	}
	return *file, remove, nil
}

// resultsRequest reads the upload form: dataset, format, the configuration production
// ran (a manifest's), keepers, unknown ids, the sample and approvals.
func (s *server) resultsRequest(r *http.Request, up upload) (manifests.ImportRequest, string, error) {
	ctx := r.Context()
	v := r.Form
	dsID, ok := parseID(v.Get("dataset"))
	if !ok {
		return manifests.ImportRequest{}, "", &formError{field: "dataset", msg: "choose the dataset the engine deduplicated"}
	}
	ds, err := s.store.Dataset(ctx, dsID)
	if errors.Is(err, db.ErrNotFound) {
		return manifests.ImportRequest{}, "", &formError{field: "dataset", msg: "no such dataset"}
	}
	if err != nil {
		return manifests.ImportRequest{}, "", err
	}
	f, err := results.ParseFormat(v.Get("format"))
	if err != nil {
		return manifests.ImportRequest{}, "", err
	}
	req := manifests.ImportRequest{DatasetID: ds.ID, Format: f, SkipUnknown: v.Get("skip_unknown") != "", OtherDataset: v.Get("other_dataset") != "",
		IgnoreFileKeepers: v.Get("keepers") == "rule", By: *userOf(r), ByName: userOf(r).Name,
		Options: results.Options{MaxInputBytes: s.importCap.bytes, MaxRows: s.resultCap}}
	if c := v.Get("config"); c != "" && c != "0" {
		mid, ok := parseID(c)
		if !ok {
			return req, "", &formError{field: "configuration", msg: "no such manifest"}
		}
		m, err := s.store.Manifest(ctx, mid)
		if errors.Is(err, db.ErrNotFound) {
			return req, "", &formError{field: "configuration", msg: "no such manifest"}
		}
		if err != nil {
			return req, "", err
		}
		req.Params = &m.Params
	} else if f != results.Manifest {
		return req, "", &formError{field: "configuration", msg: "choose the manifest whose configuration production ran (a " + string(f) + " file does not say)"}
	}
	num := func(name, def string, min int) (int, error) {
		s := cmp.Or(v.Get(name), def)
		n, ok := parseWhole(s)
		if !ok || n < min {
			return 0, &formError{field: name, msg: fmt.Sprintf("want a whole number of at least %d", min)}
		}
		return n, nil
	}
	if req.Sample, err = num("sample", strconv.Itoa(manifests.DefaultSample), 0); err != nil {
		return req, "", err
	}
	if req.Sample == 0 {
		req.Sample = -1 // every cluster
	}
	seed, err := num("seed", "1", 0)
	if err != nil {
		return req, "", err
	}
	req.Seed = uint64(seed)
	if req.ApprovalsRequired, err = num("approvals", strconv.Itoa(review.DefaultApprovals), 1); err != nil {
		return req, "", err
	}
	if req.Team, err = s.checkApprovals(ctx, "approvals", req.ApprovalsRequired, req.By.ID); err != nil {
		return req, "", err
	}
	title := fmt.Sprintf("import of %s (%s) into %s v%d", up.name, f, ds.Name, ds.Version)
	return req, title, nil
}

// approveOutsideSample approves the removals outside an imported manifest's review
// sample, once the sample is decided.
func (s *server) approveOutsideSample(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	items, clusters, err := manifests.ApproveOutsideSample(r.Context(), s.store, *userOf(r), m)
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	s.toManifest(w, r, m.ID, fmt.Sprintf("Approved %s in %s outside the review sample, on the strength of the sample's review.",
		templates.Plural(items, "removal", "removals"), templates.Plural(clusters, "cluster", "clusters")))
}

// originView fills an imported manifest's origin and sample into its page.
func (s *server) originView(ctx context.Context, v *templates.ManifestPage, m db.Manifest) error {
	o := m.Origin
	if o == nil {
		return nil
	}
	keepers := "the configuration's keeper rule (" + m.Params.Rule.String() + ")"
	if o.Keepers == "file" {
		keepers = "the engine's, as the file gives them"
	}
	v.Origin = []templates.Param{
		{Name: "File", Value: fmt.Sprintf("%s (%s)", o.File, o.Format)},
		{Name: "SHA-256", Value: o.SHA256},
		{Name: "Read", Value: templates.Plural(o.Records, "record", "records")},
		{Name: "Built", Value: templates.Plural(o.Clusters, "cluster", "clusters") + ", " + templates.Plural(o.Removals, "removal", "removals")},
		{Name: "Keepers", Value: keepers},
		{Name: "Imported by", Value: fmt.Sprintf("%s, %s", o.ImportedBy, o.ImportedAt.Format("2006-01-02 15:04 MST"))},
	}
	if o.Pairs > 0 {
		v.Origin[2].Value += ", " + templates.Plural(o.Pairs, "pair", "pairs")
	}
	if o.Skipped > 0 {
		v.Origin = append(v.Origin, templates.Param{Name: "Skipped", Value: fmt.Sprintf("%s naming documents the dataset does not have (e.g. %s)",
			templates.Plural(o.Skipped, "record", "records"), strings.Join(o.SkippedIDs, ", "))})
	}
	if o.AlreadyRemoved > 0 {
		v.Origin = append(v.Origin, templates.Param{Name: "Left out", Value: fmt.Sprintf("%s exported manifests had removed (e.g. %s): "+
			"neither proposed again nor kept; %s a live member by the keeper rule",
			templates.Plural(o.AlreadyRemoved, "document", "documents"), strings.Join(o.AlreadyRemovedIDs, ", "), templates.Plural(o.Rekept, "cluster whose keeper was among them keeps", "clusters whose keeper was among them keep"))})
	}
	if o.Sample == nil {
		return nil
	}
	v.Sample = o.Sample.String()
	for _, st := range o.Sample.Strata {
		v.SampleStrata = append(v.SampleStrata, templates.SampleStratum{Size: st.Size, Link: st.Link, Clusters: st.Clusters, Drawn: st.Drawn})
	}
	var err error
	if v.SampleUndecided, v.OutsideUndecided, err = s.store.SampleCounts(ctx, m.ID); err != nil {
		return err
	}
	v.CanApproveOutside = v.CanDecide
	return nil
}

// policyText is the cluster policy as a manifest's page and its sign-off record state
// it: for one imported from production, how the engine formed its clusters, as the
// import recorded it (the file's policy, or what the engine did), not a policy of the
// configuration's that production never applied.
func policyText(p review.Params, o *review.Origin) string {
	if o != nil && o.Policy != "" {
		return o.Policy
	}
	return string(p.Policy)
}

// resultsForm is the upload form's choices: the datasets, the formats, and the
// manifests whose configuration production may have run (the newest first). The
// configuration preselected is the file's own for a manifest file (it names its own);
// for the other formats the newest signed-off (or exported) manifest of the chosen
// dataset computed here, the kind handed to an engine: never a draft, nor an imported
// manifest. ConfigDefaults gives that choice per dataset, for the page's script to
// follow the dataset and format selects.
func (s *server) resultsForm(r *http.Request, datasets []templates.Option, summaries []db.ManifestSummary) templates.ResultsForm {
	f := templates.ResultsForm{Sample: manifests.DefaultSample, Token: newFormToken(), Approvals: review.DefaultApprovals}
	if me := userOf(r); me != nil {
		if others, err := s.store.Approvers(r.Context(), me.ID); err == nil {
			f.Shortfall = shortfall(me, f.Approvals, others, false, "you")
		}
	}
	chosenDS := formValue(r, "dataset", "")
	if chosenDS == "" && len(datasets) > 0 {
		chosenDS = datasets[0].Value // what the select shows first
	}
	for _, d := range datasets {
		d.Selected = chosenDS == d.Value
		f.Datasets = append(f.Datasets, d)
	}
	labels := map[results.Format]string{results.Datatrove: "datatrove", results.TextDedup: "text-dedup", results.Milvus: "Milvus search dump",
		results.Datasketch: "datasketch program output",
		results.Pairs:      "pairs with scores (id_a,id_b,score)", results.Manifest: "manifest file (removals.jsonl/.csv)"}
	format := formValue(r, "format", string(results.Formats[0]))
	for _, x := range results.Formats {
		f.Formats = append(f.Formats, templates.Option{Value: string(x), Label: labels[x], Selected: format == string(x)})
	}
	defaults := map[string]string{} // dataset id: its default configuration
	for _, m := range summaries {
		ds := strconv.FormatInt(m.DatasetID, 10)
		if _, ok := defaults[ds]; !ok && m.Origin == nil && (m.State == review.SignedOff || m.State == review.Exported) {
			defaults[ds] = strconv.FormatInt(m.ID, 10)
		}
	}
	if b, err := json.Marshal(defaults); err == nil {
		f.ConfigDefaults = string(b)
	}
	chosen := formValue(r, "config", "")
	if chosen == "" {
		chosen = "0"
		if format != string(results.Manifest) && defaults[chosenDS] != "" {
			chosen = defaults[chosenDS]
		}
	}
	f.Configs = append(f.Configs, templates.Option{Value: "0", Label: "the file's own (manifest files)", Selected: chosen == "0"})
	for _, m := range summaries {
		id := strconv.FormatInt(m.ID, 10)
		kind := m.State.Label()
		if m.Origin != nil {
			kind += ", imported"
		}
		f.Configs = append(f.Configs, templates.Option{Value: id, Selected: chosen == id,
			Label: fmt.Sprintf("manifest %d: %s, %s t=%s %s (%s)", m.ID, datasetLabel(m.Manifest), m.Params.Shape, fmtNum(m.Params.Threshold, 2),
				m.Params.Verification, kind)})
	}
	return f
}

// originSections lay out an imported manifest's origin in the sign-off record's page:
// the engine's file and, when people reviewed a sample, that it was one and how it was
// drawn.
func originSections(rec review.Record) []templates.RecordSection {
	o := rec.Origin
	if o == nil {
		return nil
	}
	secs := []templates.RecordSection{{Title: "Imported from production", Facts: []templates.Param{
		{Name: "File", Value: fmt.Sprintf("%s (%s), sha256 %s", o.File, o.Format, o.SHA256)},
		{Name: "Read", Value: templates.Plural(o.Records, "record", "records") + "; " + fmt.Sprint(o.Skipped) + " skipped for naming documents the dataset does not have"},
		{Name: "Built", Value: templates.Plural(o.Clusters, "cluster", "clusters") + ", " + templates.Plural(o.Removals, "removal", "removals") + "; keepers by " + o.Keepers},
		{Name: "Imported by", Value: fmt.Sprintf("%s, %s", o.ImportedBy, o.ImportedAt.Format("2006-01-02 15:04 MST"))},
	}}}
	if !rec.ReviewedSample || o.Sample == nil {
		secs[0].Facts = append(secs[0].Facts, templates.Param{Name: "Reviewed", Value: "every cluster"})
		return secs
	}
	sm := o.Sample
	secs[0].Facts = append(secs[0].Facts, templates.Param{Name: "Reviewed", Value: "a sample: " + sm.String()},
		templates.Param{Name: "How it was drawn", Value: fmt.Sprintf("%s; %d clusters asked for, seed %d", sm.Method, sm.Target, sm.Seed)})
	strata := templates.RecordSection{Title: "The review sample's strata", Header: []string{"cluster size", "weakest link", "clusters", "drawn"}}
	for _, st := range sm.Strata {
		strata.Rows = append(strata.Rows, []string{st.Size, st.Link, strconv.Itoa(st.Clusters), strconv.Itoa(st.Drawn)})
	}
	return append(secs, strata)
}
