package manifests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// Nothing is lost between manifests, whatever people do in whatever order: random
// sequences of runs (and runs prepared again), decisions, keeper changes, requests for
// sign-off, approvals, exports, revocations and restores, over several manifests at once
// and two to four people, with the invariants checked after every step:
//
//   - every text that had a copy still has one unless a signed-off manifest removed it in
//     favour of a live keeper: each tombstoned document was removed by an exported
//     manifest whose sign-off stands, and the chain of keepers from it (the keeper, that
//     keeper's keeper if it is tombstoned too, ...) ends at a live document;
//   - no document is tombstoned twice: an export tombstones only live documents, exactly
//     its approved removals, and a standing tombstone is never taken over;
//   - a revocation restores exactly what its export tombstoned and is still standing;
//   - nothing is signed off on a dataset that changed since the run, and every refusal
//     is in the audit log with its reason;
//   - the audit chain verifies, and so does SQLite's integrity check.
//
// Whole-corpus results come back too (a file of pairs, some naming documents removed
// since). DEDUP_PROPERTY_SEQUENCES and DEDUP_PROPERTY_STEPS make the walk longer
// (defaults 6 and 100; go test -short: 2 and 30).
func TestNothingLostBetweenManifests(t *testing.T) {
	t.Parallel()
	sequences, steps := envInt("DEDUP_PROPERTY_SEQUENCES", 6), envInt("DEDUP_PROPERTY_STEPS", 100)
	if testing.Short() {
		sequences, steps = 2, 30
	}
	texts := familyTexts(t)
	for seq := range sequences {
		t.Run(fmt.Sprintf("seed=%d", seq+1), func(t *testing.T) {
			t.Parallel()
			w := newWalk(t, texts, uint64(seq+1), 2+seq%3)
			for step := range steps {
				what := w.step()
				w.log = append(w.log, fmt.Sprintf("%d: %s", step+1, what))
				w.check()
				if t.Failed() {
					t.Fatalf("after the steps:\n%s", strings.Join(w.log, "\n"))
				}
			}
			t.Logf("%d steps: %d runs, %d exports (%d documents tombstoned at most at once), %d revocations, %d restores, %d refusals",
				steps, w.runs, w.exports, w.mostTombstoned, w.revokes, w.restores, w.refusals)
			if os.Getenv("WALKLOG") != "" {
				t.Logf("%s", strings.Join(w.log, "\n"))
			}
			if (w.exports == 0 || w.runs < 2) && !testing.Short() { // a short walk (the race detector's) may not get that far
				t.Errorf("the walk exported %d time(s) over %d run(s): the sequence exercised too little:\n%s", w.exports, w.runs, strings.Join(w.log, "\n"))
			}
		})
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// familyTexts are families of real text: a document, near copies of it with 1% and 6%
// of its words changed, and an exact copy (upper case), so that runs at different
// thresholds and keeper rules cluster them differently and overlap.
func familyTexts(t *testing.T) []string {
	t.Helper()
	bases := realtext.Texts(t, 9, 180)
	r := rand.New(rand.NewPCG(7, 7))
	edit := func(text string, share float64) string {
		words := strings.Fields(text)
		for i := range words {
			if r.Float64() < share {
				words[i] = fmt.Sprintf("edit%d", r.IntN(1000))
			}
		}
		return strings.Join(words, " ")
	}
	var out []string
	for _, b := range bases {
		b = strings.Join(strings.Fields(b)[:180], " ")
		out = append(out, b, edit(b, 0.01), edit(b, 0.06), strings.ToUpper(b))
	}
	return out
}

// walk is one random sequence over one store.
type walk struct {
	t     *testing.T
	ctx   context.Context
	r     *rand.Rand
	store *db.DB
	sigs  *sigcache.Cache
	ds    db.Dataset
	users []db.User
	ms    []int64 // the manifests, in the order they were made
	log   []string

	ext map[int64]string // document id -> external id
	// live is the live set after the last step; standing the standing tombstones (doc ->
	// manifest).
	standing map[int64]int64

	// churn weighs revocations and restores (0 in some walks: a team that goes forward
	// without changing its mind meets other orders of events).
	churn int

	runs, exports, revokes, restores, refusals, mostTombstoned int
}

func newWalk(t *testing.T, texts []string, seed uint64, people int) *walk {
	t.Helper()
	ctx := context.Background()
	store := dbtest.Open(t)
	var lines []string
	for i, tx := range texts {
		b, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("d%02d", i), "text": tx, "source": []string{"a", "b"}[i%2],
			"date": fmt.Sprintf("2024-01-%02d", i%28+1)})
		lines = append(lines, string(b))
	}
	rd, err := corpus.NewReader(strings.NewReader(strings.Join(lines, "\n")), "walk.jsonl", corpus.JSONL, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ingest.Documents(ctx, store, rd, "walk.jsonl", ingest.Options{Dataset: "walk"})
	if err != nil {
		t.Fatal(err)
	}
	w := &walk{t: t, ctx: ctx, r: rand.New(rand.NewPCG(seed, 99)), store: store, sigs: sigcache.New(store), ds: rep.Dataset,
		ext: map[int64]string{}, standing: map[int64]int64{}, churn: int(seed % 2)}
	docs, err := store.DatasetDocs(ctx, w.ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		w.ext[d.ID] = d.ExtID
	}
	roles := []auth.Role{auth.Admin, auth.Approver, auth.Reviewer, auth.Approver}
	for i := range people {
		u, err := store.CreateUser(ctx, "test", fmt.Sprintf("u%d", i+1), roles[i], "x")
		if err != nil {
			t.Fatal(err)
		}
		w.users = append(w.users, u)
	}
	return w
}

func (w *walk) user() db.User { return w.users[w.r.IntN(len(w.users))] }

// manifest picks one of the manifests in one of the states (any when none given);
// ok is false when there is none.
func (w *walk) manifest(states ...review.State) (db.Manifest, bool) {
	var pick []db.Manifest
	for _, id := range w.ms {
		m, err := w.store.Manifest(w.ctx, id)
		if err != nil {
			w.t.Fatal(err)
		}
		if len(states) == 0 || slices.Contains(states, m.State) {
			pick = append(pick, m)
		}
	}
	if len(pick) == 0 {
		return db.Manifest{}, false
	}
	if w.r.IntN(10) < 7 { // mostly the newest ones: people finish what they started
		pick = pick[max(0, len(pick)-3):]
	}
	return pick[w.r.IntN(len(pick))], true
}

// outcome checks the error of a step: nil, or a refusal by the rules (counted, and
// expected in the audit log); anything else fails the test.
func (w *walk) outcome(what string, err error) string {
	w.t.Helper()
	if err == nil {
		return what
	}
	if !refuses(err) {
		w.t.Fatalf("%s: %v (not a refusal)", what, err)
	}
	w.refusals++
	return what + ": refused: " + err.Error()
}

// step does one random thing that applies in the state the store is in, and says what.
func (w *walk) step() string {
	count := map[review.State]int{}
	undecided, decided, holdsRemoved := 0, 0, 0
	for _, id := range w.ms {
		m, err := w.store.Manifest(w.ctx, id)
		if err != nil {
			w.t.Fatal(err)
		}
		count[m.State]++
		if m.State == review.Draft {
			c, err := w.store.CountManifest(w.ctx, id)
			if err != nil {
				w.t.Fatal(err)
			}
			if c.Proposed > 0 {
				undecided++
			} else {
				decided++
			}
		}
		if review.Open(m.State) && w.removesTombstoned(id) {
			holdsRemoved++
		}
	}
	open := count[review.Draft] + count[review.InReview] + count[review.SignedOff]
	type op struct {
		weight int
		do     func() string
	}
	// Weighed as a team works: what waits for someone gets done more often than not.
	ops := []op{{2, w.run}, {1, w.importPairs}}
	if open > 0 {
		ops = append(ops, op{1 + 5*min(undecided, 1), w.decide}, op{1, w.makeKeeper})
	}
	if holdsRemoved > 0 {
		ops = append(ops, op{3, w.excludeRemoved})
	}
	if count[review.Draft] > 0 {
		ops = append(ops, op{1 + 5*min(decided, 1), w.request})
	}
	if count[review.InReview] > 0 {
		ops = append(ops, op{6, w.approve})
	}
	if count[review.SignedOff] > 0 {
		ops = append(ops, op{6, w.export})
	}
	if count[review.SignedOff]+count[review.Exported] > 0 {
		ops = append(ops, op{w.churn, w.revoke})
	}
	if len(w.standing) > 0 {
		ops = append(ops, op{w.churn, w.restore})
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	k := w.r.IntN(total)
	for _, o := range ops {
		if k < o.weight {
			return o.do()
		}
		k -= o.weight
	}
	panic("unreachable")
}

// removesTombstoned reports whether manifest id proposes to remove a tombstoned
// document (with a decision other than an exclusion).
func (w *walk) removesTombstoned(id int64) bool {
	items, err := w.store.Items(w.ctx, id)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, it := range items {
		if _, gone := w.standing[it.Doc]; gone && it.Decision != review.Excluded {
			return true
		}
	}
	return false
}

// actor picks who does something: mostly someone the product would let do it and whose
// doing it makes progress (wants), now and then anyone, to meet the refusals too.
func (w *walk) actor(wants func(db.User) bool) db.User {
	if w.r.IntN(4) > 0 {
		var fit []db.User
		for _, u := range w.users {
			if wants(u) {
				fit = append(fit, u)
			}
		}
		if len(fit) > 0 {
			return fit[w.r.IntN(len(fit))]
		}
	}
	return w.user()
}

func prepares(u db.User) bool { return u.Role.Can(auth.PrepareManifests) }

// preparer is someone who may run a configuration (every walk has one).
func (w *walk) preparer() db.User {
	for {
		if u := w.user(); prepares(u) {
			return u
		}
	}
}

func (w *walk) run() string {
	rules := []string{"earliest", "longest", "shortest", "source(b,a)>longest"}
	rule, _ := cluster.ParseRule(rules[w.r.IntN(len(rules))])
	p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: []float64{0.5, 0.6, 0.75, 0.85}[w.r.IntN(4)],
		Verification: review.Exact, Policy: cluster.Policies()[w.r.IntN(3)], Rule: rule, CodeVersion: "walk"}
	req := Request{DatasetID: w.ds.ID, Params: p, By: w.preparer(), ApprovalsRequired: 1}
	if len(w.users) > 2 { // two may approve besides whoever prepares
		req.ApprovalsRequired += w.r.IntN(2)
	}
	what := fmt.Sprintf("run %s t=%g keeper %s by %s", p.Policy, p.Threshold, p.Rule, req.By.Name)
	// A stale manifest is prepared again now and then, carrying its decisions over.
	if old, ok := w.manifest(review.Draft, review.InReview, review.SignedOff); ok && w.r.IntN(3) == 0 {
		if st, err := w.store.Staleness(w.ctx, old); err == nil && st.Stale() {
			req.Params, req.CarryFrom, req.ApprovalsRequired = old.Params, old.ID, old.ApprovalsRequired
			what = fmt.Sprintf("prepare manifest %d again by %s", old.ID, req.By.Name)
		}
	}
	m, err := Run(w.ctx, w.store, w.sigs, req, nil)
	if err != nil {
		return w.outcome(what, err)
	}
	w.runs++
	w.ms = append(w.ms, m.ID)
	// The run proposed no tombstoned document and kept none.
	n := w.checkNoneGone("manifest", m.ID)
	return fmt.Sprintf("%s: manifest %d, %d removal(s)", what, m.ID, n)
}

// importPairs brings back what an engine that ran over the whole corpus decided: pairs
// of near copies, some of them documents exported manifests removed since.
func (w *walk) importPairs() string {
	ids := slices.Sorted(maps.Keys(w.ext))
	var b strings.Builder
	b.WriteString("id_a,id_b,score\n")
	for range 12 {
		f := w.r.IntN(len(ids) / 4) // a family: four documents in a row
		a, c := ids[4*f+w.r.IntN(4)], ids[4*f+w.r.IntN(4)]
		if a != c {
			fmt.Fprintf(&b, "%s,%s,0.9\n", w.ext[a], w.ext[c])
		}
	}
	rule, _ := cluster.ParseRule("earliest")
	p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: 0.5, Verification: review.Exact,
		Policy: cluster.Components, Rule: rule, CodeVersion: "walk"}
	by := w.preparer()
	m, err := ImportResults(w.ctx, w.store, ImportRequest{DatasetID: w.ds.ID, Format: results.Pairs, File: source("pairs.csv", []byte(b.String())),
		Params: &p, By: by, ByName: by.Name, Sample: -1, ApprovalsRequired: 1}, nil)
	if err != nil {
		return w.outcome("import pairs", err)
	}
	w.runs++
	w.ms = append(w.ms, m.ID)
	n := w.checkNoneGone("imported manifest", m.ID)
	return fmt.Sprintf("%s imports pairs: manifest %d, %d removal(s), %d left out (removed before)", by.Name, m.ID, n, m.Origin.AlreadyRemoved)
}

// checkNoneGone checks that manifest id (what: "manifest", "imported manifest") neither
// proposes nor keeps a document an exported manifest tombstoned, and returns how many
// removals it proposes.
func (w *walk) checkNoneGone(what string, id int64) int {
	items, err := w.store.Items(w.ctx, id)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, it := range items {
		if mm, gone := w.standing[it.Doc]; gone {
			w.t.Errorf("%s %d proposes %s, tombstoned by manifest %d", what, id, w.ext[it.Doc], mm)
		}
		if mm, gone := w.standing[it.Keeper]; gone {
			w.t.Errorf("%s %d keeps %s, tombstoned by manifest %d", what, id, w.ext[it.Keeper], mm)
		}
	}
	return len(items)
}

// decide gives every undecided removal of a manifest a decision (mostly approvals), or
// one removal another decision.
func (w *walk) decide() string {
	m, ok := w.manifest(review.Draft, review.InReview, review.SignedOff)
	if !ok {
		return "decide: no open manifest"
	}
	if d, ok := w.manifest(review.Draft); ok && w.r.IntN(3) > 0 {
		m = d // drafts wait for decisions most
	}
	by := w.actor(func(u db.User) bool { return prepares(u) && (u.ID == m.PreparedBy || w.r.IntN(3) == 0) })
	rows, err := w.store.Clusters(w.ctx, m.ID, db.ClusterFilter{})
	if err != nil {
		w.t.Fatal(err)
	}
	if len(rows) == 0 {
		return fmt.Sprintf("decide: manifest %d has no cluster", m.ID)
	}
	if w.r.IntN(3) == 0 {
		c, err := w.store.Cluster(w.ctx, m.ID, rows[w.r.IntN(len(rows))].ID)
		if err != nil {
			w.t.Fatal(err)
		}
		it := c.Items[w.r.IntN(len(c.Items))]
		d := []review.Decision{review.Approved, review.Excluded}[w.r.IntN(2)]
		return w.outcome(fmt.Sprintf("%s decides %s on %s in manifest %d", by.Name, d, w.ext[it.Doc], m.ID), DecideItem(w.ctx, w.store, by, m, c, it.ID, d))
	}
	n := 0
	for _, row := range rows {
		c, err := w.store.Cluster(w.ctx, m.ID, row.ID)
		if err != nil {
			w.t.Fatal(err)
		}
		d := review.Approved
		if w.r.IntN(6) == 0 {
			d = review.Excluded
		}
		m, err := w.store.Manifest(w.ctx, m.ID)
		if err != nil {
			w.t.Fatal(err)
		}
		k, err := DecideCluster(w.ctx, w.store, by, m, c, d, Scope{Chained: ChainedUndecided(c, m.Params.Threshold)})
		if err != nil {
			return w.outcome(fmt.Sprintf("%s decides manifest %d", by.Name, m.ID), err)
		}
		n += k
	}
	return fmt.Sprintf("%s decides %d removal(s) of manifest %d", by.Name, n, m.ID)
}

// excludeRemoved does what people did when an export was refused because some of its
// removals were removed already: exclude those and go on (the refusal's way out, which
// removed every copy of many texts when the product let runs propose tombstoned
// documents).
func (w *walk) excludeRemoved() string {
	m, ok := w.manifest(review.Draft, review.InReview, review.SignedOff)
	if !ok {
		return "exclude the removed: no open manifest"
	}
	for _, id := range w.ms {
		if om, err := w.store.Manifest(w.ctx, id); err == nil && review.Open(om.State) && w.removesTombstoned(id) {
			m = om
		}
	}
	items, err := w.store.Items(w.ctx, m.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	var ids []int64
	for _, it := range items {
		if _, gone := w.standing[it.Doc]; gone && it.Decision != review.Excluded {
			ids = append(ids, it.ID)
		}
	}
	if len(ids) == 0 {
		return fmt.Sprintf("exclude the removed: manifest %d removes none", m.ID)
	}
	by := w.preparer()
	_, err = w.store.Decide(w.ctx, by, m.ID, db.Decision{Items: ids, Decision: review.Excluded, Action: "decide", Summary: "excluded the removed"})
	return w.outcome(fmt.Sprintf("%s excludes %d removal(s) of manifest %d removed elsewhere", by.Name, len(ids), m.ID), err)
}

func (w *walk) makeKeeper() string {
	m, ok := w.manifest(review.Draft, review.InReview, review.SignedOff)
	if !ok {
		return "make keeper: no open manifest"
	}
	rows, err := w.store.Clusters(w.ctx, m.ID, db.ClusterFilter{})
	if err != nil || len(rows) == 0 {
		return fmt.Sprintf("make keeper: manifest %d has no cluster (%v)", m.ID, err)
	}
	c, err := w.store.Cluster(w.ctx, m.ID, rows[w.r.IntN(len(rows))].ID)
	if err != nil {
		w.t.Fatal(err)
	}
	doc := c.Items[w.r.IntN(len(c.Items))].Doc
	by := w.actor(prepares)
	_, err = MakeKeeper(w.ctx, w.store, by, m, c, doc, "the walk prefers it")
	return w.outcome(fmt.Sprintf("%s makes %s the keeper of cluster %d of manifest %d", by.Name, w.ext[doc], c.ID, m.ID), err)
}

func (w *walk) request() string {
	m, ok := w.manifest(review.Draft)
	if !ok {
		return "request sign-off: no draft"
	}
	for _, id := range w.ms { // a draft whose every removal is decided, if there is one
		d, err := w.store.Manifest(w.ctx, id)
		if err != nil {
			w.t.Fatal(err)
		}
		if c, err := w.store.CountManifest(w.ctx, id); err == nil && d.State == review.Draft && c.Proposed == 0 && w.r.IntN(4) > 0 {
			m = d
		}
	}
	by := w.actor(prepares)
	st, err := w.store.Staleness(w.ctx, m)
	if err != nil {
		w.t.Fatal(err)
	}
	err = RequestSignOff(w.ctx, w.store, by, m)
	var outdated *review.OutdatedError
	if errors.As(err, &outdated) && !st.Stale() || err == nil && st.Stale() {
		w.t.Errorf("request sign-off of manifest %d, stale %v: %v", m.ID, st.Stale(), err)
	}
	return w.outcome(fmt.Sprintf("%s requests sign-off of manifest %d", by.Name, m.ID), err)
}

func (w *walk) approve() string {
	m, ok := w.manifest(review.InReview)
	if !ok {
		return "approve: nothing in review"
	}
	decided, _, err := w.store.Deciders(w.ctx, m.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	by := w.actor(func(u db.User) bool { return u.Role.Can(auth.Approve) && u.ID != m.PreparedBy && !decided[u.ID] })
	st, err := w.store.Staleness(w.ctx, m)
	if err != nil {
		w.t.Fatal(err)
	}
	res, err := Review(w.ctx, w.store, by, m, review.Approve, "", m.ContentHash, "walk")
	what := fmt.Sprintf("%s approves manifest %d", by.Name, m.ID)
	var outdated *review.OutdatedError
	if errors.As(err, &outdated) && !st.Stale() || err == nil && st.Stale() {
		w.t.Errorf("approval of manifest %d, stale %v: %v", m.ID, st.Stale(), err)
	}
	if err == nil && res.Signed {
		// Signed off on the documents it was computed on.
		snap, err := w.store.DatasetSnapshot(w.ctx, m.DatasetID, m.ID)
		if err != nil {
			w.t.Fatal(err)
		}
		if snap != m.DatasetHash {
			w.t.Errorf("manifest %d signed off on a dataset that changed since its run", m.ID)
		}
		what += ": signed off"
	}
	return w.outcome(what, err)
}

func (w *walk) export() string {
	m, ok := w.manifest(review.SignedOff)
	if !ok {
		return "export: nothing signed off"
	}
	before := w.liveSet()
	by := w.actor(func(u db.User) bool { return u.Role.Can(auth.Approve) })
	n, err := Export(w.ctx, w.store, by, m, m.ContentHash)
	what := w.outcome(fmt.Sprintf("%s exports manifest %d", by.Name, m.ID), err)
	if err != nil {
		if after := w.liveSet(); len(after) != len(before) {
			w.t.Errorf("a refused export of manifest %d changed the live documents (%d then, %d now)", m.ID, len(before), len(after))
		}
		return what
	}
	w.exports++
	rows, err := w.store.ManifestRows(w.ctx, m.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	after := w.liveSet()
	approved := review.ApprovedRows(rows)
	for _, r := range approved {
		if !before[r.Doc] {
			w.t.Errorf("export of manifest %d tombstoned %s, which was tombstoned already", m.ID, r.ExtID)
		}
		if after[r.Doc] {
			w.t.Errorf("export of manifest %d left %s live", m.ID, r.ExtID)
		}
	}
	if len(before)-len(after) != len(approved) || n != len(approved) {
		w.t.Errorf("export of manifest %d: %d live before, %d after, %d approved removals, %d reported", m.ID, len(before), len(after), len(approved), n)
	}
	return fmt.Sprintf("%s: %d tombstoned", what, n)
}

func (w *walk) revoke() string {
	m, ok := w.manifest(review.SignedOff, review.Exported)
	if !ok {
		return "revoke: nothing signed off or exported"
	}
	mine := map[int64]bool{}
	for doc, mm := range w.standing {
		if mm == m.ID {
			mine[doc] = true
		}
	}
	before := w.liveSet()
	by := w.actor(func(u db.User) bool { return u.Role.Can(auth.Approve) })
	n, err := Revoke(w.ctx, w.store, by, m, "the walk changed its mind")
	what := w.outcome(fmt.Sprintf("%s revokes manifest %d", by.Name, m.ID), err)
	if err != nil {
		return what
	}
	w.revokes++
	after := w.liveSet()
	for doc := range after {
		if !before[doc] && !mine[doc] {
			w.t.Errorf("revoking manifest %d restored %s, which it had not tombstoned", m.ID, w.ext[doc])
		}
	}
	for doc := range mine {
		if !after[doc] {
			w.t.Errorf("revoking manifest %d left %s tombstoned", m.ID, w.ext[doc])
		}
	}
	if n != len(mine) || len(after) != len(before)+len(mine) {
		w.t.Errorf("revoking manifest %d restored %d; it held %d (live %d then, %d now)", m.ID, n, len(mine), len(before), len(after))
	}
	return fmt.Sprintf("%s: %d restored", what, n)
}

func (w *walk) restore() string {
	var docs []int64
	for doc := range w.standing {
		docs = append(docs, doc)
	}
	if len(docs) == 0 {
		return "restore: nothing tombstoned"
	}
	slices.Sort(docs)
	doc := docs[w.r.IntN(len(docs))]
	m, err := w.store.Manifest(w.ctx, w.standing[doc])
	if err != nil {
		w.t.Fatal(err)
	}
	by := w.actor(func(u db.User) bool { return u.Role.Can(auth.Approve) })
	err = Restore(w.ctx, w.store, by, m, doc)
	if err == nil {
		w.restores++
	}
	return w.outcome(fmt.Sprintf("%s restores %s from manifest %d", by.Name, w.ext[doc], m.ID), err)
}

// liveSet is the dataset's live documents now: those under no standing tombstone.
func (w *walk) liveSet() map[int64]bool {
	tomb, err := w.store.Tombstoned(w.ctx, w.ds.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	out := make(map[int64]bool, len(w.ext))
	for doc := range w.ext {
		if _, gone := tomb[doc]; !gone {
			out[doc] = true
		}
	}
	return out
}

// check verifies the invariants after a step.
func (w *walk) check() {
	w.t.Helper()
	standing, err := w.store.Tombstoned(w.ctx, w.ds.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	// No standing tombstone is taken over by another manifest.
	for doc, m := range w.standing {
		if now, ok := standing[doc]; ok && now != m {
			w.t.Errorf("%s was tombstoned by manifest %d and now is by manifest %d", w.ext[doc], m, now)
		}
	}
	w.standing = standing
	w.mostTombstoned = max(w.mostTombstoned, len(standing))
	// Each tombstone: an exported manifest whose sign-off stands removed it, approved, in
	// favour of a keeper whose chain ends at a live document.
	keeperOf := map[int64]map[int64]int64{} // manifest -> document -> keeper
	for _, m := range standing {
		if keeperOf[m] != nil {
			continue
		}
		man, err := w.store.Manifest(w.ctx, m)
		if err != nil {
			w.t.Fatal(err)
		}
		sos, err := w.store.SignOffs(w.ctx, m)
		if err != nil {
			w.t.Fatal(err)
		}
		if man.State != review.Exported || len(sos) == 0 || !sos[0].Current() {
			w.t.Errorf("manifest %d holds tombstones but is %s (sign-offs %d)", m, man.State.Label(), len(sos))
		}
		items, err := w.store.Items(w.ctx, m)
		if err != nil {
			w.t.Fatal(err)
		}
		keeperOf[m] = map[int64]int64{}
		for _, it := range items {
			if it.Decision == review.Approved {
				keeperOf[m][it.Doc] = it.Keeper
			}
		}
	}
	for doc, m := range standing {
		seen := map[int64]bool{}
		d := doc
		for {
			k, ok := keeperOf[standing[d]][d]
			if !ok {
				w.t.Errorf("%s is tombstoned by manifest %d, which does not remove it as an approved removal", w.ext[d], standing[d])
				break
			}
			if _, gone := standing[k]; !gone {
				break // a live copy
			}
			if seen[k] {
				w.t.Errorf("the text of %s (tombstoned by manifest %d) has no live copy: its keepers go round in a circle through %s", w.ext[doc], m, w.ext[k])
				break
			}
			seen[k], d = true, k
		}
	}
	// Every refusal is in the audit log.
	events, err := w.store.AuditLog(w.ctx, 100000)
	if err != nil {
		w.t.Fatal(err)
	}
	refused := 0
	for _, e := range events {
		if e.Action == "manifest.refused" {
			refused++
		}
	}
	if refused != w.refusals {
		w.t.Errorf("%d refusal(s) in the audit log; %d refused", refused, w.refusals)
	}
	if c, err := w.store.VerifyAudit(w.ctx, review.AuditHead{}); err != nil || !c.Intact() {
		w.t.Errorf("audit verify: %+v, %v", c, err)
	}
	if ok, err := w.store.IntegrityCheck(w.ctx); err != nil || !ok {
		w.t.Errorf("integrity check: %v, %v", ok, err)
	}
}
