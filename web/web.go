// Package web is Dedup Studio's HTTP face: chi routes, handlers that parse input, call the
// domain packages and render templ views, middleware, and the embedded static files.
package web

import (
	"cmp"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/corpusrun"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/searchindex"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// Deps is what the handlers need from the outside world.
type Deps struct {
	Log     *slog.Logger
	Version string
	Store   *db.DB
	// Jobs runs the background work (imports); required. Its owner shuts it down, before
	// closing Store.
	Jobs *jobs.Registry
	Now  func() time.Time // defaults to time.Now
	// MaxUpload caps an uploaded sample, in bytes; default 512 MB.
	MaxUpload int64
	// MaxImportBytes and MaxImportDocs cap what one uploaded sample may hold once
	// decompressed, in bytes and records; 0 is ingest.DefaultMaxInputBytes and
	// ingest.DefaultMaxDocs, negative is no cap.
	MaxImportBytes int64
	MaxImportDocs  int
	// MaxResultRows caps the rows of one uploaded results file, good or bad; 0 is
	// results.DefaultMaxRows, negative is no cap.
	MaxResultRows int
	// UploadDir is where uploads are kept while they are imported ("" is the system's
	// temporary folder). Nothing else may live there: the server empties it at start.
	UploadDir string
	// SetupToken, when set, is the one-time link token that creates the first admin.
	SetupToken string
	// TrustProxy trusts X-Forwarded-Proto: https from a reverse proxy for cookie security.
	TrustProxy bool
	// KDF is the password hashing cost; default auth.DefaultParams.
	KDF auth.Params
	// The services the handlers call, each built once for the process by its owner
	// (cmd/server), which also recovers them at start (MarkInterrupted) and shuts their
	// jobs down (Jobs): required.
	//
	// Signatures is the store's signature cache, shared by drawing pairs and runs.
	Signatures *sigcache.Cache
	// Sweeps starts, resumes and reads sweeps.
	Sweeps *sweeprun.Service
	// Tally keeps the campaign and start pages' label counts.
	Tally *campaign.Tally
	// SearchIndexes holds the search API's indexes in memory.
	SearchIndexes *searchindex.Service
	// CorpusRuns starts, cancels, resumes and reads whole-corpus runs.
	CorpusRuns *corpusrun.Service
}

// maxBody caps every other request body.
const maxBody = 1 << 20

type server struct {
	log       *slog.Logger
	version   string
	store     *db.DB
	sigs      *sigcache.Cache // the store's signatures, shared by drawing pairs (and sweeps next)
	tally     *campaign.Tally // the campaign and start pages' label counts, kept up to date
	sweeps    *sweeprun.Service
	jobs      *jobs.Registry
	now       func() time.Time
	maxUpload int64
	uploadDir string
	importCap importCap // caps on one uploaded sample
	resultCap int       // cap on the rows of one results file (results.Options.MaxRows)

	indexes *searchindex.Service // the search API's indexes
	tokens  apiTokens            // the search API's tokens read lately

	notices notices     // what a POST leaves for the page it redirects to
	held    heldUploads // files of imports refused as identical, until confirmed or an hour passes

	setup      setup
	trustProxy bool
	kdf        auth.Params
	dummyHash  string
	logins     *auth.Guard    // sign-in limits, counted before each password check
	hashes     *auth.HashGate // password checks running at once

	corpusRuns *corpusrun.Service // whole-corpus runs (dedupjobs.go)
}

// New returns the application's handler. It panics without d.Jobs or, with a store,
// without one of the services: one made here would have nobody to recover it at start
// or shut it down.
func New(d Deps) http.Handler {
	if d.Jobs == nil {
		panic("web.New: Deps.Jobs is nil")
	}
	if d.Store != nil {
		for name, missing := range map[string]bool{"Signatures": d.Signatures == nil, "Sweeps": d.Sweeps == nil, "Tally": d.Tally == nil,
			"SearchIndexes": d.SearchIndexes == nil, "CorpusRuns": d.CorpusRuns == nil} {
			if missing {
				panic("web.New: Deps." + name + " is nil")
			}
		}
	}
	s := &server{log: d.Log, version: d.Version, store: d.Store, jobs: d.Jobs, now: d.Now, maxUpload: d.MaxUpload,
		sigs: d.Signatures, tally: d.Tally, sweeps: d.Sweeps, indexes: d.SearchIndexes, corpusRuns: d.CorpusRuns}
	if s.maxUpload <= 0 {
		s.maxUpload = 512 << 20
	}
	s.importCap = newImportCap(d.MaxImportBytes, d.MaxImportDocs)
	s.resultCap = d.MaxResultRows
	s.uploadDir = cmp.Or(d.UploadDir, os.TempDir())
	s.trustProxy = d.TrustProxy
	s.kdf = d.KDF
	if s.kdf == (auth.Params{}) {
		s.kdf = auth.DefaultParams
	}
	if d.SetupToken != "" {
		s.setup.hash = auth.HashToken(d.SetupToken)
	}
	// Only the time the hash takes matters (a sign-in of an unknown name costs as much as
	// a known one's): its error, impossible for a valid cost, would change nothing.
	s.dummyHash, _ = auth.HashPassword("no such account", s.kdf)
	s.logins = auth.NewGuard(auth.DefaultLoginLimits)
	s.hashes = auth.NewHashGate(runtime.GOMAXPROCS(0))
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s.routes()
}

func (s *server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.requestID, s.logRequests, s.recoverPanics, securityHeaders, crossOriginProtection, s.limitBodies, s.authenticate, s.uploadDeadlines, s.readForms, s.takeNotices)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		if isAPI(r) {
			s.failAPI(w, r, &apiError{Status: http.StatusNotFound, Message: "there is no API at " + r.URL.Path})
			return
		}
		s.fail(w, r, &pageError{http.StatusNotFound, "There is no page at " + r.URL.Path + "."})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		if isAPI(r) {
			s.failAPI(w, r, &apiError{Status: http.StatusMethodNotAllowed, Message: r.URL.Path + " does not take " + r.Method + " requests"})
			return
		}
		s.fail(w, r, &pageError{http.StatusMethodNotAllowed, "This page does not take " + r.Method + " requests."})
	})

	r.Get("/static/*", staticHandler().ServeHTTP)
	r.Get("/healthz", s.health)
	// The search API: an API token, not a session, opens it (searchapi.go).
	r.Post("/api/v1/indexes/{index}/search", s.searchIndex)

	// Public: signing in and joining.
	r.Get("/login", s.showLogin)
	r.Post("/login", s.login)
	r.Post("/logout", s.logout)
	r.Get("/setup", s.showSetup)
	r.Post("/setup", s.completeSetup)
	r.Get("/invite/{token}", s.showInvite)
	r.Post("/invite/{token}", s.acceptInvite)

	// Everything else needs a signed-in user with the right role.
	r.With(s.require(auth.View)).Group(func(r chi.Router) {
		r.Get("/", s.showHome)
		r.Get("/shape.svg", s.shapeSVG)
		r.Get("/shape.csv", s.shapeCSV)
	})
	// Manifests and their clusters: every role sees them; deciding is the reviewers',
	// signing off and exporting the approvers'.
	r.With(s.require(auth.View)).Group(func(r chi.Router) {
		r.Get("/manifests", s.listManifests)
		r.Get("/manifests/diff", s.diffManifests)
		r.Get("/manifests/{manifest}", loaded(s, s.loadManifest, s.showManifest))
		r.Get("/manifests/{manifest}/impact.{format}", loaded(s, s.loadManifest, s.impactChart))
		r.Get("/manifests/{manifest}/clusters", loaded(s, s.loadManifest, s.listClusters))
		r.Get("/manifests/{manifest}/clusters/{cluster}", loaded2(s, s.loadCluster, s.showCluster))
		r.Get("/manifests/{manifest}/clusters/{cluster}/matrix.{format}", loaded2(s, s.loadCluster, s.clusterChart("matrix")))
		r.Get("/manifests/{manifest}/clusters/{cluster}/chain.{format}", loaded2(s, s.loadCluster, s.clusterChart("chain")))
		r.Get("/manifests/{manifest}/signoff", loaded(s, s.loadManifest, s.showSignOff))
		r.Get("/manifests/{manifest}/signoff.json", loaded(s, s.loadManifest, s.signOffJSON))
		r.Get("/manifests/{manifest}/removals.csv", loaded(s, s.loadManifest, s.exportFile(manifests.RemovalsCSV)))
		r.Get("/manifests/{manifest}/removals.jsonl", loaded(s, s.loadManifest, s.exportFile(manifests.RemovalsJSONL)))
		r.Get("/manifests/{manifest}/split.jsonl", loaded(s, s.loadManifest, s.exportFile(manifests.SplitJSONL)))
		r.Get("/manifests/{manifest}/engines.zip", s.engineFiles("engines.zip"))
		r.Get("/manifests/{manifest}/settings.json", s.engineFiles("settings.json"))
	})
	r.With(s.require(auth.PrepareManifests)).Group(func(r chi.Router) {
		r.Get("/datasets/{dataset}/runs/new", loaded(s, s.loadDataset, s.newRun))
		r.Post("/datasets/{dataset}/runs", loaded(s, s.loadDataset, s.startRun))
		r.Get("/runs/{job}", s.showRun)
		r.Post("/runs/{job}/cancel", s.cancelRun)
		r.Post("/manifests/{manifest}/items/{item}", loaded(s, s.loadManifest, s.decideItem))
		r.Post("/manifests/{manifest}/clusters/{cluster}/decide", loaded2(s, s.loadCluster, s.decideCluster))
		r.Post("/manifests/{manifest}/clusters/{cluster}/keeper", loaded2(s, s.loadCluster, s.makeKeeper))
		r.Post("/manifests/{manifest}/clusters/{cluster}/cut", loaded2(s, s.loadCluster, s.cutCluster))
		r.Post("/manifests/{manifest}/clusters/{cluster}/comment", loaded2(s, s.loadCluster, s.commentCluster))
		r.Post("/manifests/{manifest}/bulk", loaded(s, s.loadManifest, s.bulkApprove))
		r.Post("/manifests/{manifest}/approve-outside-sample", loaded(s, s.loadManifest, s.approveOutsideSample))
		r.Post(resultsUploadPath, s.importResultsUpload)
		r.Post("/manifests/{manifest}/undo", loaded(s, s.loadManifest, s.undoDecision))
		r.Post("/manifests/{manifest}/submit", loaded(s, s.loadManifest, s.requestSignOff))
		r.Post("/manifests/{manifest}/settings", loaded(s, s.loadManifest, s.saveManifestSettings))
		r.Post("/manifests/{manifest}/prepare-again", loaded(s, s.loadManifest, s.prepareAgain))
	})
	// Whole-corpus runs of a manifest's or a sweep result's settings (dedupjobs.go).
	r.With(s.require(auth.PrepareManifests)).Group(func(r chi.Router) {
		r.Get("/dedup-jobs", s.listDedupJobs)
		r.Get("/dedup-jobs/from-sweep", s.dedupFromSweep)
		r.Get("/dedup-jobs/{dedupJob}", loaded(s, s.loadDedupJob, s.showDedupJob))
		r.Get("/dedup-jobs/{dedupJob}/files/{file}", loaded(s, s.loadDedupJob, s.dedupJobFile))
		r.Post("/dedup-jobs/{dedupJob}/cancel", s.cancelDedupJob)
		r.Post("/dedup-jobs/{dedupJob}/resume", s.resumeDedupJob)
		r.Post("/dedup-jobs/{dedupJob}/import", loaded(s, s.loadDedupJob, s.importDedupJob))
		r.Get("/manifests/{manifest}/dedup-jobs/new", s.newDedupJob)
		r.Post("/manifests/{manifest}/dedup-jobs", s.startDedupJob)
		r.Get("/sweeps/{sweep}/dedup-jobs/new", s.newDedupJob)
		r.Post("/sweeps/{sweep}/dedup-jobs", s.startDedupJob)
	})
	// A manifest's own audit: whoever prepares or approves manifests requests it.
	r.With(s.require(auth.RequestAudit)).Post("/manifests/{manifest}/audit", loaded(s, s.loadManifest, s.requestAudit))
	r.With(s.require(auth.Approve)).Group(func(r chi.Router) {
		r.Post("/manifests/{manifest}/reviews", loaded(s, s.loadManifest, s.reviewManifest))
		r.Post("/manifests/{manifest}/export", loaded(s, s.loadManifest, s.exportManifest))
		r.Post("/manifests/{manifest}/revoke", loaded(s, s.loadManifest, s.revokeManifest))
		r.Post("/manifests/{manifest}/tombstones/{doc}/restore", loaded(s, s.loadManifest, s.restoreDocument))
	})
	// Sweeps: every role sees them and their charts; running one is the reviewers'.
	r.With(s.require(auth.View)).Group(func(r chi.Router) {
		r.Get("/campaigns/{campaign}/sweeps", loaded(s, s.loadCampaign, s.listSweeps))
		r.Get("/sweeps/{sweep}", s.showSweep)
		r.Get("/sweeps/{sweep}/progress", loaded(s, s.loadSweep, s.sweepProgress))
		r.Get("/sweeps/{sweep}/live", s.sweepLive)
		r.Get("/sweeps/{sweep}/results.csv", s.sweepResultsCSV)
		r.Get("/sweeps/{sweep}/settings.json", s.sweepSettings)
		r.Get("/sweeps/{sweep}/charts/{chart}.{format}", s.sweepChart)
	})
	r.With(s.require(auth.RunSweeps)).Group(func(r chi.Router) {
		r.Post("/campaigns/{campaign}/sweeps", loaded(s, s.loadCampaign, s.startSweep))
		r.Post("/sweeps/{sweep}/cancel", s.cancelSweep)
		r.Post("/sweeps/{sweep}/resume", s.resumeSweep)
		r.Post("/sweeps/{sweep}/rerun", s.rerunSweep)
		r.Post("/sweeps/{sweep}/notes", loaded(s, s.loadSweep, s.saveSweepNotes))
	})
	r.With(s.require(auth.View)).Group(func(r chi.Router) {
		r.Get("/campaigns/{campaign}", loaded(s, s.loadCampaign, s.showCampaign))
		r.Get("/campaigns/{campaign}/pairs/{pair}", loaded2(s, s.loadPair, s.showPair))
		r.Get("/documents/{doc}/raw", s.rawDocument)
	})
	// Everyone's labels: annotators label blind and see their own only.
	r.With(s.require(auth.ReadLabels)).Group(func(r chi.Router) {
		r.Get("/campaigns/{campaign}/labels.csv", loaded(s, s.loadCampaign, s.exportLabels("csv")))
		r.Get("/campaigns/{campaign}/labels.jsonl", loaded(s, s.loadCampaign, s.exportLabels("jsonl")))
	})
	r.With(s.require(auth.Label)).Group(func(r chi.Router) {
		r.Get("/campaigns/{campaign}/next", loaded(s, s.loadCampaign, s.nextPair))
		r.Post("/campaigns/{campaign}/undo", loaded(s, s.loadCampaign, s.undoLast))
	})
	r.With(s.require(auth.Adjudicate)).Get("/campaigns/{campaign}/disagreements/next", loaded(s, s.loadCampaign, s.nextDisagreement))
	// Labeling or adjudicating: the handler checks which the form asks for.
	r.With(s.require(auth.View)).Post("/campaigns/{campaign}/pairs/{pair}/label", loaded2(s, s.loadPair, s.labelPair))
	r.With(s.require(auth.ManageCampaigns)).Group(func(r chi.Router) {
		r.Post("/campaigns/{campaign}/settings", loaded(s, s.loadCampaign, s.saveCampaignSettings))
		r.Post("/campaigns/{campaign}/sample", loaded(s, s.loadCampaign, s.samplePairs))
		r.Post("/datasets/{dataset}/campaigns", s.startCampaign)
	})
	r.With(s.require(auth.ImportData)).Group(func(r chi.Router) {
		r.Get("/datasets/new", s.showUpload(true))
		r.Post("/datasets", s.uploadDataset)
		r.Get("/imports/{job}", loaded(s, s.loadImport, s.showImport))
		r.Post("/imports/{job}/cancel", s.cancelImport)
		r.Post("/imports/{job}/new-version", loaded(s, s.loadImport, s.importNewVersion))
	})
	r.With(s.require(auth.ImportLabels)).Group(func(r chi.Router) {
		r.Get("/labels/new", s.showUpload(false))
		r.Post("/labels", s.uploadLabels)
		r.Get("/label-imports/{job}", loaded(s, s.loadLabelImport, s.showLabelImport))
		r.Post("/label-imports/{job}/cancel", s.cancelLabelImport)
	})
	r.With(s.require(auth.ManageUsers)).Group(func(r chi.Router) {
		r.Get("/audit", s.showAudit)
		r.Get("/admin/users", s.showUsers)
		r.Post("/admin/invites", s.createInvite)
		r.Post("/admin/invites/{invite}/revoke", s.revokeInvite)
		r.Post("/admin/users/{id}/role", loaded(s, s.loadUser, s.setUserRole))
		r.Get("/admin/users/{id}/disable", loaded(s, s.loadUser, s.confirmDisable))
		r.Post("/admin/users/{id}/disable", loaded(s, s.loadUser, s.setUserDisabled(true)))
		r.Post("/admin/users/{id}/enable", loaded(s, s.loadUser, s.setUserDisabled(false)))
		r.Post("/admin/users/{id}/unlock", s.unlockUser)
		r.Post("/admin/api-tokens", s.createAPIToken)
		r.Post("/admin/api-tokens/{apiToken}/revoke", s.revokeAPIToken)
		r.Post("/admin/search-indexes", s.createSearchIndex)
		r.Post("/admin/settings/audit-gate", s.setAuditGate)
	})
	return r
}

func (s *server) health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}
