// Package sweeprun runs sweeps (internal/sweep) over what the store holds and keeps
// them: a saved sweep is a campaign, a grid, a name and notes, and one stored result per
// configuration scored, written as each completes, so a page shows results as they
// arrive and after a reload, and a sweep cut short by a cancel or a killed process
// continues where it stopped.
//
// A sweep runs as a background job (internal/jobs) reporting configurations done of
// total, the rate and the time left. It is scored on a snapshot of the campaign's
// resolved labels (sweep.LabelRule) taken when it starts and stored with it: resuming
// scores the remaining configurations on that snapshot, so a resumed sweep ends with
// the results an uninterrupted one would have had, and the live threshold slider
// (Select) rescores on the labels the table was scored on. LabelsChanged compares the
// snapshot with the campaign's labels now; Rerun starts a new sweep of the same grid on
// them.
//
// Resume needs no partial state: the configurations of one (representation, shape)
// share their candidates, so the remaining work is run as one sweep per representation
// over the shapes not finished, at every threshold, verification and policy of the grid
// (whose lowest threshold is what the engine's early stop depends on), and only the
// configurations not stored yet are written.
package sweeprun

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// State is a stored sweep's lifecycle state.
type State string

// States. A started or resumed sweep is Queued until it is its turn (one sweep runs at a
// time per Service, in the order they were queued), then Running. A sweep found queued or
// running at start-up was left by a process that died and becomes Interrupted
// (MarkInterrupted). Interrupted, Cancelled and Failed sweeps can be resumed.
const (
	Queued      State = "queued"
	Running     State = "running"
	Done        State = "done"
	Failed      State = "failed"
	Cancelled   State = "cancelled"
	Interrupted State = "interrupted"
)

// Resumable reports whether a sweep in state s can continue (Resume).
func (s State) Resumable() bool { return s == Cancelled || s == Interrupted || s == Failed }

// JobKind is the jobs.Registry kind of a sweep's job.
const JobKind = "sweep"

// Errors a caller may act on (besides db.ErrNotFound for a sweep or campaign that does
// not exist, and *sweep.GridError for a grid that cannot be swept).
var (
	// ErrRunning refuses to resume a sweep that is running.
	ErrRunning = errkind.New(errkind.Conflict, "sweep is running")
	// ErrNotResumable refuses to resume a sweep that finished (Rerun starts it again).
	ErrNotResumable = errkind.New(errkind.Conflict, "sweep finished: nothing to resume")
	// ErrNotRunning is a cancel of a sweep that runs in no job of this process.
	ErrNotRunning = errkind.New(errkind.Conflict, "sweep is not running")
	// ErrNoLabels refuses to start a sweep on a campaign without a counted label.
	ErrNoLabels = errkind.New(errkind.Invalid, "campaign has no counted label to score a sweep on")
	// ErrReplayed comes with the sweep a form's token started already: the form was
	// posted twice, and nothing new started.
	ErrReplayed = db.ErrReplayed
)

// Service starts, resumes and reads sweeps. It is safe for concurrent use; one Service
// serves a process (it remembers which sweep runs in which job).
type Service struct {
	store *db.DB
	cache *sigcache.Cache
	jobs  *jobs.Registry

	mu      sync.Mutex
	running map[int64]*run // by sweep id: the sweeps whose job runs in this process
	// The queue: active is the sweep that runs (0: none); queue the sweeps waiting for
	// their turn, first first, each woken by closing its turn channel.
	active int64
	queue  []int64
	turn   map[int64]chan struct{}
	// volumeLimit is the most signature values a sweep may need (CheckVolume).
	volumeLimit int64
	states      *stateCache   // prepared configurations for Select
	selections  *stateCache   // what Select answered last
	results     resultCache   // decoded results of the last few sweeps
	decoded     atomic.Int64  // results read back from the store (decoding is what a first view costs)
	analyses    analysisCache // what their results say together (Analyze)
	labels      labelCache    // campaigns' labels resolved, for LabelsChanged

	// flushEvery results are stored in one transaction (flushAfter at the latest);
	// afterFlush, when set (tests), is called from the sweep's writer (writer.go) after each.
	flushEvery int
	afterFlush func(id int64, done int)
	// taken, when set (tests), is called from the writer with each result it takes.
	taken func(id int64)
}

// New returns a Service over the store, its signature cache and the registry the sweeps
// run in.
func New(store *db.DB, cache *sigcache.Cache, reg *jobs.Registry) *Service {
	return &Service{store: store, cache: cache, jobs: reg, running: map[int64]*run{}, states: newStateCache(StatesKept),
		selections: newStateCache(SelectionsKept),
		flushEvery: 512, turn: map[int64]chan struct{}{}, volumeLimit: MaxSignatureValues}
}

// StartRequest is a new sweep.
type StartRequest struct {
	CampaignID int64
	Name       string // "" names it after the time it starts
	Notes      string
	Grid       sweep.Grid
	// By is the user who starts it (0 for the system or the command line); the sweep and
	// its job record it.
	By int64
	// Token is the one-time token of the form that asks for it ("" for none): a second
	// Start with the same token starts nothing and returns the first sweep with
	// ErrReplayed.
	Token string
}

// MaxSignatureValues bounds a sweep's signature volume, documents × the signature
// values of its representations (Σ k over sweep.Requests: specs that differ in k alone
// share the longest): 500 million values, 2 GB at 4 bytes each, the most a sweep may
// compute and cache. The default grid on 100,000 documents needs 256 million.
const MaxSignatureValues = 500_000_000

// SignatureValues is the signature volume of g over docs documents.
func SignatureValues(g sweep.Grid, docs int) int64 {
	var k int64
	for _, s := range sweep.Requests(g.Specs) {
		k += int64(s.Hashes)
	}
	return k * int64(docs)
}

// VolumeError refuses a grid whose signature volume exceeds the Service's limit
// (MaxSignatureValues unless SetVolumeLimit changed it).
type VolumeError struct {
	Values, Limit   int64
	Docs            int
	Representations int // signature requests (representations sharing a prefix count once)
	MaxK            int
}

func (e *VolumeError) Error() string {
	return fmt.Sprintf("%d documents × %d representations' signatures (k up to %d) make %d signature values; the limit is %d (documents × representations × k)",
		e.Docs, e.Representations, e.MaxK, e.Values, e.Limit)
}

// SetVolumeLimit changes the most signature values a sweep may need (tests, and servers
// with memory to spare); n <= 0 restores MaxSignatureValues.
func (s *Service) SetVolumeLimit(n int64) {
	if n <= 0 {
		n = MaxSignatureValues
	}
	s.mu.Lock()
	s.volumeLimit = n
	s.mu.Unlock()
}

// CheckVolume returns a *VolumeError when g over docs documents needs more signature
// values than the limit.
func (s *Service) CheckVolume(g sweep.Grid, docs int) error {
	s.mu.Lock()
	limit := s.volumeLimit
	s.mu.Unlock()
	v := SignatureValues(g, docs)
	if v <= limit {
		return nil
	}
	e := &VolumeError{Values: v, Limit: limit, Docs: docs, Representations: len(sweep.Requests(g.Specs))}
	for _, s := range g.Specs {
		e.MaxK = max(e.MaxK, s.Hashes)
	}
	return e
}

// Sweep is a stored sweep.
type Sweep struct {
	ID         int64
	CampaignID int64
	DatasetID  int64
	Name       string
	Notes      string
	Grid       sweep.Grid
	State      State
	Error      string // why it failed; "" otherwise
	// Done configurations of Total are stored.
	Done, Total int
	// LabelVersion is sweep.LabelSet.Version of the labels it was scored on.
	LabelVersion string
	CreatedBy    int64 // 0: the system or the command line
	CreatedAt    time.Time
	StartedAt    time.Time // the last start or resume; zero before the first
	FinishedAt   time.Time // zero while running or never finished
	// Summary holds what the sweep found beyond its results; nil until the first run
	// returned (a sweep killed before that has none until resumed).
	Summary *Summary
	// JobID is the job running it in this process, "" when none is.
	JobID string
}

// Summary is what a sweep found that is not one configuration's.
type Summary struct {
	Labels LabelCounts
	// Model is what the dataset estimates rest on (nil without one, ModelNote then
	// says why); Baseline exact-hash dedup alone (the raw texts' SHA-256).
	Model     *sweep.Model
	ModelNote string `json:",omitempty"`
	Baseline  *sweep.Scores
	// Declined are the shapes not scored for proposing too many candidate pairs
	// (sweep.Report.Declined), over every run of the sweep.
	Declined []sweep.Declined `json:",omitempty"`
}

// DeclinedConfigs counts the configurations of the declined shapes.
func (s *Summary) DeclinedConfigs() int {
	if s == nil {
		return 0
	}
	n := 0
	for _, d := range s.Declined {
		n += d.Configs
	}
	return n
}

// LabelCounts are the campaign's pairs under sweep.LabelRule when the sweep started.
type LabelCounts struct {
	Counted, Flagged, Skipped, Tied, Unlabeled int
	Adjudicated, Majority, RuleOnly            int
	// Gone counts the counted pairs that name a document no longer live (an export
	// removed it before the sweep started): they count for the model's bins only
	// (sweep.LabelSet.Gone; the model says how many it could use). Outside counts the
	// pairs naming a document the dataset does not hold, which cannot count.
	Gone    int `json:",omitempty"`
	Outside int `json:",omitempty"`
	Version string
}

// Result is one stored configuration's figures.
type Result struct {
	// ID is the sweep_results row (what a manifest proposed from it references).
	ID int64
	// Ordinal is the configuration's place in sweep.Grid.Configs() of the sweep's grid.
	Ordinal int
	sweep.Result
}

// Progress is a running sweep's progress, as its job reports it.
type Progress struct {
	SweepID int64
	// Phase says what is happening: "queued" (waiting for the sweep before it), "loading",
	// "signing" (signatures missing from the cache are being computed) or "scoring".
	Phase string
	// Position is the place in the queue while queued: 1 runs next.
	Position int
	// Done configurations of Total are stored or declined (those before a resume
	// included), Declined of them declined (sweep.Report.Declined); Signed documents of
	// ToSign while signing.
	Done, Total    int
	Declined       int
	Signed, ToSign int
	Rate           float64       // configurations per second since this run started
	ETA            time.Duration // at Rate; 0 when unknown
	Started        time.Time
}

// LabelDiff is how the campaign's resolved labels differ from a sweep's snapshot.
type LabelDiff struct {
	Added   int // counted now, not then (new labels)
	Changed int // counted both times with another category or duplicate decision
	Removed int // counted then, not now (retracted, flagged, tied)
	Version string
}

// N is the number of pairs that differ: "re-run to include N new labels".
func (d LabelDiff) N() int { return d.Added + d.Changed + d.Removed }

// Selection is one configuration of a sweep rescored at a threshold (the live slider).
type Selection struct {
	Result sweep.Result
	// Outcomes are the counted pairs' outcomes: false merges first, then misses, then the
	// rest; Misses and FalseMerges count the first two groups.
	Outcomes            []sweep.Outcome
	Misses, FalseMerges int
	// Collisions are the measured collision rates of the counted pairs per similarity
	// bin (CollisionBins bins of [0, 1]), for the S-curve.
	Collisions []sweep.BinRate
}

// CollisionBins is the number of similarity bins of Selection.Collisions.
const CollisionBins = 10

// Complete fills the axes g leaves empty from sweep.DefaultGrid (representations,
// thresholds, verifications, policies); empty shapes stay empty, which means the shapes
// worth trying for each k (sweep.ShapesFor). A grid file or form need only name what it
// changes.
func Complete(g sweep.Grid) sweep.Grid {
	d := sweep.DefaultGrid()
	if len(g.Specs) == 0 {
		g.Specs = d.Specs
	}
	if len(g.Thresholds) == 0 {
		g.Thresholds = d.Thresholds
	}
	if len(g.Verifications) == 0 {
		g.Verifications = d.Verifications
	}
	if len(g.Policies) == 0 {
		g.Policies = d.Policies
	}
	return g
}
