package review

import (
	"math"
	"strconv"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
)

// PolicyStats is what one cluster policy does with a run's verified pairs: the numbers a
// run shows side by side for every policy, on the same edges.
type PolicyStats struct {
	Policy       cluster.Policy `json:"policy"`
	Removed      int            `json:"removed"`
	RemovedExact int            `json:"removed_exact"`
	Clusters     int            `json:"clusters"`
	Chained      int            `json:"chained"`
	Largest      int            `json:"largest"`
	SimCalls     int            `json:"sim_calls"`
	Limited      int            `json:"limited"`
	// Labeled pairs (where the dataset has a campaign): duplicates that end in one
	// cluster, and non-duplicates that do (false merges: one of the two is removed
	// because of the other's cluster).
	LabeledDuplicates    int `json:"labeled_duplicates"`
	DuplicatesTogether   int `json:"duplicates_together"`
	LabeledNonDuplicates int `json:"labeled_non_duplicates"`
	FalseMerges          int `json:"false_merges"`
}

// Interval is an estimate with its 95% interval and the number of labeled pairs it
// rests on; NaN (null in JSON) where there is none.
type Interval struct {
	Value Number `json:"value"`
	Lo    Number `json:"lo"`
	Hi    Number `json:"hi"`
	N     int    `json:"n"`
}

// Number is a float64 written to JSON as null when it is NaN or infinite (no estimate),
// which encoding/json cannot write, and read back from null as NaN.
type Number float64

// MarshalJSON writes n, or null.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON reads a number, or null as NaN.
func (n *Number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Number(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*n = Number(f)
	return err
}

// CategoryRate is one label category's recall (of its duplicates) or false-merge rate
// (of its non-duplicates).
type CategoryRate struct {
	Category    string   `json:"category"`
	Duplicate   bool     `json:"duplicate"`
	Recall      Interval `json:"recall"`
	FalseMerges Interval `json:"false_merges"`
}

// Estimates are a manifest's configuration scored against a campaign's labels as a grid
// of one configuration: on the labeled pairs, and over the whole dataset where the
// labels carry their sampling design.
type Estimates struct {
	Campaign     int64  `json:"campaign"`
	CampaignName string `json:"campaign_name"`
	LabelRule    string `json:"label_rule"`
	LabelVersion string `json:"label_version"`
	Counted      int    `json:"counted_pairs"`
	Left         int    `json:"left_out_pairs"`
	Alpha        Number `json:"alpha"` // Krippendorff's alpha of the campaign's labels
	AlphaUnits   int    `json:"alpha_units"`
	// On the labeled pairs.
	Recall        Interval       `json:"recall"`
	ClusterRecall Interval       `json:"cluster_recall"`
	FalseMerges   Interval       `json:"false_merges"`
	Precision     Interval       `json:"precision"`
	Categories    []CategoryRate `json:"categories"`
	// Over the whole dataset: Design names where the labels behind the estimates come
	// from ("" when none can be used: the rates then describe the labeled pairs only),
	// DesignPairs how many labeled pairs it uses; the false removals are under KeeperRule,
	// the manifest's, with the assumption the estimates add (Assumption).
	Design           string   `json:"design"`
	DesignPairs      int      `json:"design_pairs"`
	KeeperRule       string   `json:"keeper_rule,omitempty"`
	Removals         int      `json:"removals,omitempty"`
	Certain          int      `json:"certain_removals,omitempty"`
	DatasetRecall    Interval `json:"dataset_recall"`
	FalseRemovals    Interval `json:"dataset_false_removals"`
	FalseRemovalRate Interval `json:"dataset_false_removal_rate"`
	Replicates       int      `json:"replicates"`
	Assumption       string   `json:"assumption,omitempty"`
	Notes            []string `json:"notes"`
}

// Person is someone in the sign-off record, with the role they acted in.
type Person struct {
	Name    string    `json:"name"`
	Role    string    `json:"role"`
	At      time.Time `json:"at"`
	Verdict string    `json:"decision,omitempty"`
	Comment string    `json:"comment,omitempty"`
	Hash    string    `json:"manifest_hash,omitempty"`
}

// Count is a key and a number.
type Count struct {
	Key string `json:"key"`
	N   int    `json:"n"`
}

// GroupRow is one group of the impact tables in the record.
type GroupRow struct {
	Key       string `json:"key"`
	Docs      int    `json:"documents"`
	Removed   int    `json:"removed"`
	Rate      Number `json:"rate"`
	Ratio     Number `json:"rate_ratio"`
	RatioLo   Number `json:"rate_ratio_lo"`
	RatioHi   Number `json:"rate_ratio_hi"`
	PAdjusted Number `json:"p_holm"`
	Flag      string `json:"flag,omitempty"`
}

// Record is the sign-off record: everything a later reader needs to know what was
// approved, on what, by whom and on which evidence. It is written once when a manifest is
// signed off, shown as a page and exported as signoff.json.
type Record struct {
	Manifest          int64         `json:"manifest"`
	ManifestHash      string        `json:"manifest_hash"`
	DatasetHash       string        `json:"dataset_snapshot_hash"`
	Dataset           DatasetRecord `json:"dataset"`
	Params            Params        `json:"parameters"`
	CodeVersion       string        `json:"signed_with_code_version"`
	Labels            *Estimates    `json:"labels,omitempty"`
	Removals          int           `json:"removals"`
	Excluded          int           `json:"excluded"`
	Clusters          int           `json:"clusters"`
	ByReason          []Count       `json:"by_reason"`
	BySize            []Count       `json:"by_cluster_size"`
	ByGroup           GroupTables   `json:"by_group"`
	Comparison        []PolicyStats `json:"policies_compared"`
	Preparer          Person        `json:"preparer"`
	ApprovalsRequired int           `json:"approvals_required"`
	// ApprovalsLowered is set when the manifest asked for fewer than DefaultApprovals.
	ApprovalsLowered *Lowering `json:"approvals_lowered,omitempty"`
	// Deciders are the people who made its review decisions (approved or excluded
	// removals, changed keepers, cut chains); at least one approver is none of them.
	Deciders []string `json:"deciders"`
	// LabelMark is the newest label event when the run read its labels: a label event
	// after it makes the record's label figures stale (the record page says so).
	LabelMark int64 `json:"label_mark,omitempty"`
	// CarriedOver says what a manifest prepared again took from the one it replaced.
	CarriedOver   *CarriedOver `json:"carried_over,omitempty"`
	Approvals     []Person     `json:"approvals"`
	Reviews       []Person     `json:"reviews"` // every verdict and comment, dismissed ones included
	BulkApprovals []Bulk       `json:"bulk_approvals"`
	// Origin is where an imported manifest came from (nil for a run's). When its
	// Sample is set, people reviewed that sample of the clusters, not every one:
	// ReviewedSample says so, and the sample says how it was drawn.
	Origin         *Origin   `json:"origin,omitempty"`
	ReviewedSample bool      `json:"reviewed_a_sample"`
	SignedAt       time.Time `json:"signed_at"`
	// Audit is the manifest's own audit when it was signed off (nil: none was requested),
	// and AuditGate the team's rule on audits then (Target 0: none).
	Audit     *Audit     `json:"audit,omitempty"`
	AuditGate *AuditGate `json:"audit_gate,omitempty"`
	// AuditHead is the audit log's chain head when the manifest was signed off (the
	// approval that signed it is its last entry): kept with the record, away from the
	// database, it lets "audit verify -head" show that no entry up to it was cut off or
	// rewritten since. Nil in records sealed before it was published.
	AuditHead *AuditHead `json:"audit_head,omitempty"`
}

// AuditHead is the head of the audit log's hash chain: the hash of its last entry and
// how many entries the chain held up to it.
type AuditHead struct {
	Hash    string `json:"hash"`
	Entries int    `json:"entries"`
}

// String reads "<hash> (948 entries)".
func (h AuditHead) String() string { return h.Hash + " (" + strconv.Itoa(h.Entries) + " entries)" }

// DatasetRecord names the dataset in the record.
type DatasetRecord struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Version     int    `json:"version"`
	ContentHash string `json:"content_hash"`
	Documents   int    `json:"documents"`
}

// GroupTables are the impact tables by metadata group.
type GroupTables struct {
	Source   []GroupRow `json:"source"`
	Domain   []GroupRow `json:"domain"`
	Language []GroupRow `json:"language"`
}

// Bulk is one bulk approval: who approved how many removals at which bar.
type Bulk struct {
	Name  string    `json:"name"`
	At    time.Time `json:"at"`
	Bar   float64   `json:"bar"`
	Items int       `json:"items"`
	// OutsideSample is true for the approval of the removals outside a review sample,
	// given on the strength of the sample's review (Bar is then 0).
	OutsideSample bool `json:"outside_sample,omitempty"`
}

// GroupRows turns an Impact into the record's rows.
func GroupRows(imp Impact) []GroupRow {
	out := make([]GroupRow, len(imp.Groups))
	for i, g := range imp.Groups {
		out[i] = GroupRow{Key: g.Key, Docs: g.Docs, Removed: g.Removed, Rate: Number(g.Rate), Ratio: Number(g.Ratio),
			RatioLo: Number(g.RatioLo), RatioHi: Number(g.RatioHi), PAdjusted: Number(g.PAdjusted), Flag: string(g.Flag)}
	}
	return out
}
