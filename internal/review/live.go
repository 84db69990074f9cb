package review

import (
	"fmt"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/words"
)

// # Live documents, staleness and conflicts between manifests
//
// A dataset's live documents are those under no standing tombstone. Runs propose
// removals among the live documents only, and keep only live documents. An export
// tombstones; a revocation, or a restore of one document, brings documents back: each
// is a LiveChange of the dataset, logged in order. A manifest remembers the newest
// change when its run read the documents and the newest label event when it read the
// labels. Any change or label after them (but the labels of manifests' audits, which are
// their audits' live figures) makes the manifest stale (Staleness): its
// removals were computed on documents or labels that are no longer those of the
// dataset. A stale manifest is not sent to review nor approved (OutdatedError); its
// page offers to prepare a new run, which carries over the decisions that still apply.
//
// Nothing is lost between manifests when every tombstoned document has a live copy at
// the end of its chain of keepers: each export refuses (ConflictError) a removal whose
// document is already tombstoned, or whose keeper is, so the keeper of a document
// tombstoned now is live now, and a later export may remove that keeper only in favour
// of a document live then.

// DefaultApprovals is how many approvals sign a manifest off unless its preparer asks
// for fewer: two people besides whoever prepared it. It is never lowered for want of
// people: a team with fewer approvers than that may prepare a manifest (it is a report
// until signed off) and is told whom to invite; lowering it is a choice someone makes
// and the manifest records (Lowering).
const DefaultApprovals = 2

// MaxApprovals is the most approvals a manifest may ask.
const MaxApprovals = 20

// CheckApprovals says whether a manifest may ask n approvals: at least one person
// besides its preparer (whose approval never counts), at most MaxApprovals. More than
// the team has approvers is allowed: the manifest waits for them.
func CheckApprovals(n int) error {
	if n < 1 || n > MaxApprovals {
		return &InputError{Field: "approvals", Msg: fmt.Sprintf("want a whole number from 1 to %d (approvals from people other than the preparer)", MaxApprovals)}
	}
	return nil
}

// Lowering records that a manifest asks for fewer approvals than DefaultApprovals: who
// asked, when and why. It is written to the audit log and to the sign-off record.
type Lowering struct {
	From int       `json:"from"`
	To   int       `json:"to"`
	By   string    `json:"by"`
	At   time.Time `json:"at"`
	Why  string    `json:"why"`
}

// Lowered returns the Lowering of a manifest set to n approvals by by at at, or nil when
// n is not under DefaultApprovals. why says what the team looked like.
func Lowered(n int, by string, at time.Time, why string) *Lowering {
	if n >= DefaultApprovals {
		return nil
	}
	return &Lowering{From: DefaultApprovals, To: n, By: by, At: at.UTC(), Why: why}
}

// Text is the lowering as the record and the pages say it.
func (l Lowering) Text() string {
	s := fmt.Sprintf("lowered from %d to %s by %s on %s", l.From, Quantity(l.To, "approval", "approvals"), l.By, l.At.Format("2006-01-02 15:04 UTC"))
	if l.Why != "" {
		s += ": " + l.Why
	}
	return s
}

// RestoredError refuses the restore of a document that is back already: another
// restore of it (a second click, another tab, another person, the manifest's revocation)
// came first, and this one changed nothing.
type RestoredError struct {
	Doc string    // the document's external id
	By  string    // who restored it
	At  time.Time // when
}

func (e *RestoredError) Error() string {
	by := ""
	if e.By != "" {
		by = " by " + e.By
	}
	return fmt.Sprintf("document %s was already restored%s on %s: nothing changed", e.Doc, by, e.At.UTC().Format("2006-01-02 15:04:05 UTC"))
}

// Live change kinds.
const (
	ChangeExport  = "export"  // a manifest's approved removals were tombstoned
	ChangeRevoke  = "revoke"  // a manifest's tombstones were restored by its revocation
	ChangeRestore = "restore" // one tombstoned document was restored
)

// LiveChange is one change of a dataset's live documents, as a manifest computed before
// it reads it: which manifest made it, how, when, by whom, and how many of the reading
// manifest's documents (removals or keepers) it touched.
type LiveChange struct {
	ID        int64     `json:"id"`
	Manifest  int64     `json:"manifest"`
	Kind      string    `json:"kind"`
	Documents int       `json:"documents"`
	Document  string    `json:"document,omitempty"` // the external id a restore brought back
	By        string    `json:"by"`
	At        time.Time `json:"at"`
	// Touched is how many of the reading manifest's documents the change took away or
	// brought back; Examples names the first of them.
	Touched  int      `json:"touched"`
	Examples []string `json:"examples,omitempty"`
}

// Text says what the change was, for a person.
func (c LiveChange) Text() string {
	var what string
	switch c.Kind {
	case ChangeExport:
		what = fmt.Sprintf("manifest %d was exported (%s tombstoned)", c.Manifest, documents(c.Documents))
	case ChangeRevoke:
		what = fmt.Sprintf("manifest %d was revoked (%s restored)", c.Manifest, documents(c.Documents))
	default:
		what = fmt.Sprintf("document %s was restored from manifest %d", c.Document, c.Manifest)
	}
	what += " on " + c.At.UTC().Format("2006-01-02 15:04 UTC")
	if c.By != "" {
		what += " by " + c.By
	}
	switch {
	case c.Touched > 0:
		what += fmt.Sprintf("; %d of this manifest's documents among them (%s)", c.Touched, examples(c.Examples, c.Touched))
	case c.Kind != ChangeRestore:
		what += "; none of this manifest's documents among them"
	}
	return what
}

func examples(ex []string, n int) string {
	s := strings.Join(ex, ", ")
	if n > len(ex) {
		s += fmt.Sprintf(" and %d more", n-len(ex))
	}
	return s
}

// Staleness is what changed under a manifest since its run read the dataset: changes of
// the live documents by other manifests, and label events of its campaign. Its run's
// removals no longer describe the dataset as it is; the zero value is a fresh manifest.
type Staleness struct {
	Changes []LiveChange `json:"changes,omitempty"`
	// LabelEvents label events on LabelPairs pairs of the manifest's campaign were
	// appended after the run read its labels, the last at LabelsAt.
	LabelEvents int       `json:"label_events,omitempty"`
	LabelPairs  int       `json:"label_pairs,omitempty"`
	LabelsAt    time.Time `json:"labels_at,omitzero"`
	Campaign    string    `json:"campaign,omitempty"`
}

// Stale reports whether anything changed under the manifest.
func (s Staleness) Stale() bool { return len(s.Changes) > 0 || s.LabelEvents > 0 }

// Dataset reports whether the dataset's live documents changed (not only the labels).
func (s Staleness) Dataset() bool { return len(s.Changes) > 0 }

// Reasons are the changes in words, one per line, oldest first.
func (s Staleness) Reasons() []string {
	var out []string
	for _, c := range s.Changes {
		out = append(out, "the dataset changed since the run: "+c.Text())
	}
	if s.LabelEvents > 0 {
		out = append(out, fmt.Sprintf("the labels changed since the run: %s on %s of campaign %s, the last on %s; "+
			"the estimates on this page were computed before them", Quantity(s.LabelEvents, "label event", "label events"),
			Quantity(s.LabelPairs, "pair", "pairs"), s.Campaign,
			s.LabelsAt.UTC().Format("2006-01-02 15:04 UTC")))
	}
	return out
}

// OutdatedError refuses to send a stale manifest to review, or to approve one: it would
// sign off removals computed on documents or labels that are no longer the dataset's.
type OutdatedError struct {
	Action string // "request sign-off", "approve", "export"
	Staleness
}

func (e *OutdatedError) Error() string {
	return fmt.Sprintf("%s refused: %s; prepare a new run (it carries over the decisions that still apply)", e.Action,
		strings.Join(e.Reasons(), "; "))
}

// Conflict is a removal that another manifest's export makes impossible: its document,
// or the document kept in its place, is tombstoned already.
type Conflict struct {
	Doc      string    `json:"document"`
	Keeper   string    `json:"keeper"`
	Role     string    `json:"tombstoned"` // "document" or "keeper": which of the two is tombstoned
	Manifest int64     `json:"manifest"`   // the manifest whose export tombstoned it
	At       time.Time `json:"at"`
}

// Text is the conflict in words.
func (c Conflict) Text() string {
	when := c.At.UTC().Format("2006-01-02 15:04 UTC")
	if c.Role == "keeper" {
		return fmt.Sprintf("%s would be removed in favour of %s, which manifest %d tombstoned on %s", c.Doc, c.Keeper, c.Manifest, when)
	}
	return fmt.Sprintf("%s was tombstoned by manifest %d on %s", c.Doc, c.Manifest, when)
}

// ConflictError refuses an export that would tombstone a document twice, or remove one
// in favour of a document that is gone: nothing is tombstoned.
type ConflictError struct {
	Conflicts []Conflict // the first MaxConflicts
	Total     int
}

// MaxConflicts is how many conflicts an error names.
const MaxConflicts = 10

func (e *ConflictError) Error() string {
	parts := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		parts[i] = c.Text()
	}
	s := fmt.Sprintf("%s with other manifests' exports: %s", Quantity(e.Total, "removal conflicts", "removals conflict"), strings.Join(parts, "; "))
	if e.Total > len(e.Conflicts) {
		s += fmt.Sprintf("; and %d more", e.Total-len(e.Conflicts))
	}
	return s + ": nothing was exported; prepare a new run, which works on the live documents"
}

// CrossConflict is a document one manifest keeps and another open manifest proposes to
// remove: exporting both could leave the keeper's cluster with no copy. Both manifests
// flag it.
type CrossConflict struct {
	Doc      int64  `json:"doc"`
	ExtID    string `json:"ext_id"`
	Cluster  int64  `json:"cluster"` // the cluster of this manifest it is in
	Other    int64  `json:"other"`   // the other manifest
	OtherCl  int64  `json:"other_cluster"`
	KeptHere bool   `json:"kept_here"` // this manifest keeps it (the other removes it); else the reverse
	State    State  `json:"state"`     // the other manifest's
}

// Text is the conflict in words, from this manifest's side.
func (c CrossConflict) Text() string {
	if c.KeptHere {
		return fmt.Sprintf("%s is kept here (cluster %d) but manifest %d (%s) proposes to remove it (cluster %d)", c.ExtID, c.Cluster,
			c.Other, c.State.Label(), c.OtherCl)
	}
	return fmt.Sprintf("%s is removed here (cluster %d) but manifest %d (%s) keeps it in cluster %d", c.ExtID, c.Cluster,
		c.Other, c.State.Label(), c.OtherCl)
}

// Open reports whether a manifest in state s may still be exported: its removals are
// proposals that could become tombstones.
func Open(s State) bool { return s == Draft || s == InReview || s == SignedOff }

// SeparationError refuses a sign-off whose approvals all come from people who made the
// manifest's review decisions: whoever decided must not be its only approver.
type SeparationError struct {
	Deciders []string
}

func (e *SeparationError) Error() string {
	return fmt.Sprintf("whoever made the review decisions on a manifest (%s) cannot be its only approver: "+
		"an approver who made none of its decisions must approve it too", strings.Join(e.Deciders, ", "))
}

// CarriedOver says what a manifest prepared again took from the one it replaces.
type CarriedOver struct {
	From int64 `json:"from"`
	// Decisions is how many approvals and exclusions applied again (the same document
	// removed in favour of the same keeper); NotApplying how many did not (the document
	// or its keeper was tombstoned, or the run now keeps or clusters it otherwise).
	Decisions   int `json:"decisions"`
	NotApplying int `json:"not_applying"`
	// Overrides is how many keepers chosen by hand were not carried over.
	Overrides int `json:"overrides"`
}

// documents is a count of documents in words: "1 document", "1,234 documents".
func documents(n int) string { return Quantity(n, "document", "documents") }

// Quantity writes n with thousands separators and the noun's number: "1 mistake", "0 mistakes"
// (words.Count).
func Quantity(n int, one, many string) string { return words.Count(n, one, many) }
