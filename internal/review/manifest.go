package review

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// InputError is a configuration or value that a manifest cannot use, naming the field at
// fault. Its text is written for the person who entered it.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Msg }

// Verification says how a candidate pair's similarity is measured before it is accepted.
type Verification string

// Verifications.
const (
	// Estimate accepts a candidate when the MinHash estimate (the share of agreeing
	// signature positions) reaches the threshold: cheap, with a standard error of about
	// sqrt(s(1-s)/k).
	Estimate Verification = "estimate"
	// Exact accepts a candidate when the exact Jaccard similarity of the two shingle sets
	// reaches the threshold: reads both texts again, never wrong about the similarity.
	Exact Verification = "exact"
)

// ParseVerification returns the verification named s.
func ParseVerification(s string) (Verification, error) {
	switch v := Verification(s); v {
	case Estimate, Exact:
		return v, nil
	}
	return "", &InputError{Field: "verification", Msg: "unknown verification " + strconv.Quote(s) + " (want estimate or exact)"}
}

// Params is everything that decides what a manifest removes: the representation, the
// banding, the threshold, the verification, the cluster policy and the keeper rule. A
// manifest records them with the code version that ran them.
type Params struct {
	Spec         lsh.Spec
	Shape        lsh.Shape
	Threshold    float64
	Verification Verification
	Policy       cluster.Policy
	Rule         cluster.Rule
	// Budget is cluster.Config.Budget (0 for cluster.DefaultBudget).
	Budget      int
	CodeVersion string
}

// Validate reports the first parameter that cannot be used, as an *InputError (or the
// *lsh.SpecError of the representation).
func (p Params) Validate() error {
	if err := p.Spec.Validate(); err != nil {
		return err
	}
	if err := p.Shape.Validate(p.Spec.Hashes); err != nil {
		return &InputError{Field: "bands × rows", Msg: err.Error()}
	}
	if math.IsNaN(p.Threshold) || p.Threshold <= 0 || p.Threshold > 1 {
		return &InputError{Field: "threshold", Msg: fmt.Sprintf("%v is not in (0, 1]", p.Threshold)}
	}
	if _, err := ParseVerification(string(p.Verification)); err != nil {
		return err
	}
	if p.Budget < 0 {
		return &InputError{Field: "budget", Msg: fmt.Sprintf("%d is negative", p.Budget)}
	}
	for _, err := range []error{policyErr(p.Policy), p.Rule.Validate()} {
		var ie *cluster.InputError
		if errors.As(err, &ie) {
			return &InputError{Field: ie.Field, Msg: ie.Msg}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func policyErr(p cluster.Policy) error {
	_, err := cluster.ParsePolicy(string(p))
	return err
}

// Config is the clustering configuration of p.
func (p Params) Config() cluster.Config {
	return cluster.Config{Threshold: p.Threshold, Policy: p.Policy, Rule: p.Rule, Budget: p.Budget}
}

// paramsJSON is the stored (and exported) form of Params: the representation and the
// rule in their text forms.
type paramsJSON struct {
	Spec         string  `json:"spec"`
	SpecID       string  `json:"spec_id"`
	Bands        int     `json:"bands"`
	Rows         int     `json:"rows"`
	Threshold    float64 `json:"threshold"`
	Verification string  `json:"verification"`
	Policy       string  `json:"policy"`
	KeeperRule   string  `json:"keeper_rule"`
	Budget       int     `json:"budget"`
	CodeVersion  string  `json:"code_version"`
}

// MarshalJSON writes the parameters with the representation and the keeper rule as text.
func (p Params) MarshalJSON() ([]byte, error) {
	return json.Marshal(paramsJSON{
		Spec: p.Spec.String(), SpecID: p.Spec.ID(), Bands: p.Shape.Bands, Rows: p.Shape.Rows, Threshold: p.Threshold,
		Verification: string(p.Verification), Policy: string(p.Policy), KeeperRule: p.Rule.String(), Budget: p.Budget,
		CodeVersion: p.CodeVersion,
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Params) UnmarshalJSON(b []byte) error {
	var j paramsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	spec, err := lsh.ParseSpec(j.Spec)
	if err != nil {
		return err
	}
	rule, err := cluster.ParseRule(j.KeeperRule)
	if err != nil {
		return err
	}
	pol, err := cluster.ParsePolicy(j.Policy)
	if err != nil {
		return err
	}
	ver, err := ParseVerification(j.Verification)
	if err != nil {
		return err
	}
	*p = Params{Spec: spec, Shape: lsh.Shape{Bands: j.Bands, Rows: j.Rows}, Threshold: j.Threshold, Verification: ver,
		Policy: pol, Rule: rule, Budget: j.Budget, CodeVersion: j.CodeVersion}
	return nil
}

// canonical is the parameters' line in the content hash: every field, in a fixed order.
func (p Params) canonical() string {
	return strings.Join([]string{
		"spec=" + p.Spec.String(),
		"shape=" + p.Shape.String(),
		"threshold=" + fmtFloat(p.Threshold),
		"verification=" + string(p.Verification),
		"policy=" + string(p.Policy),
		"keeper=" + p.Rule.String(),
		"budget=" + strconv.Itoa(p.Budget),
		"code=" + p.CodeVersion,
	}, "\t")
}

// Dataset names the dataset a manifest was computed on.
type Dataset struct {
	ID          int64
	Name        string
	Version     int
	ContentHash string // the import's content hash
}

// Decision is a reviewer's word on one proposed removal.
type Decision string

// Decisions.
const (
	Proposed Decision = "proposed" // nobody has decided yet: the run proposes the removal
	Approved Decision = "approved" // a reviewer approved the removal (kept the proposal)
	Excluded Decision = "excluded" // a reviewer excluded the document from removal: it stays
)

// ParseDecision returns the decision named s.
func ParseDecision(s string) (Decision, error) {
	switch d := Decision(s); d {
	case Proposed, Approved, Excluded:
		return d, nil
	}
	return "", &InputError{Field: "decision", Msg: "unknown decision " + strconv.Quote(s) + " (want proposed, approved or excluded)"}
}

// Removes reports whether a row with decision d is in the removal set: a proposal until
// someone excludes it, and an approved removal.
func (d Decision) Removes() bool { return d != Excluded }

// Row is one proposed removal: the document, the document kept in its place, why, and
// how similar the two are. Doc and Keeper are the store's document ids (for links); the
// rest is what the content hash and the exports read.
type Row struct {
	Doc, Keeper int64
	ExtID       string
	KeeperExtID string
	Cluster     int64
	Reason      cluster.Reason
	// Estimate is the MinHash estimate of the similarity to the keeper under the
	// manifest's representation, Exact the exact Jaccard similarity of the shingle sets.
	Estimate, Exact float64
	ContentHash     string // the removed document's content hash
	Decision        Decision
}

// Hash returns the row's hash: SHA-256 (hex) of its fields in a fixed order, tab
// separated, numbers in their shortest exact decimal form.
func (r Row) Hash() string {
	sum := sha256.Sum256([]byte(strings.Join([]string{
		r.ExtID, r.KeeperExtID, strconv.FormatInt(r.Cluster, 10), string(r.Reason),
		fmtFloat(r.Estimate), fmtFloat(r.Exact), r.ContentHash, string(r.Decision),
	}, "\t")))
	return hex.EncodeToString(sum[:])
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// HashBuckets is the number of buckets a manifest's rows are hashed in (see
// ManifestHash): a change to one row rehashes its bucket and the bucket list, not every
// row, so deciding on a removal costs the same in a manifest of 100 rows or 100,000.
const HashBuckets = 256

// Bucket returns the hash bucket of the row of document doc (the store's id).
func Bucket(doc int64) int { return int(uint64(doc) % HashBuckets) }

// BucketHash is the hash of one bucket: SHA-256 (hex) over the hashes of its rows
// (Row.Hash) in import order, one per line; "" for an empty bucket.
func BucketHash(rowHashes []string) string {
	if len(rowHashes) == 0 {
		return ""
	}
	h := sha256.New()
	for _, rh := range rowHashes {
		h.Write([]byte(rh))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ManifestHashOf is a manifest's content hash from its bucket hashes: SHA-256 over a
// version line, the dataset's identity, the parameters, and the HashBuckets bucket
// hashes in order ("-" for an empty one), one per line; "m" and 64 hex digits.
func ManifestHashOf(ds Dataset, p Params, buckets *[HashBuckets]string) string {
	h := sha256.New()
	fmt.Fprintf(h, "dedupstudio manifest v1\ndataset\t%s\t%d\t%s\nparams\t%s\n", ds.Name, ds.Version, ds.ContentHash, p.canonical())
	for _, b := range buckets {
		if b == "" {
			b = "-"
		}
		h.Write([]byte(b))
		h.Write([]byte{'\n'})
	}
	return "m" + hex.EncodeToString(h.Sum(nil))
}

// ManifestHash is the content hash of a manifest of ds computed with p whose rows are
// rows (in import order): each row hashed (Row.Hash), the row hashes of each bucket
// (Bucket of the row's document) hashed together (BucketHash), and the bucket hashes
// with the dataset and the parameters (ManifestHashOf). Any change to a row, a decision,
// a parameter or the dataset's identity changes it.
func ManifestHash(ds Dataset, p Params, rows []Row) string {
	var per [HashBuckets][]string
	for _, r := range rows {
		b := Bucket(r.Doc)
		per[b] = append(per[b], r.Hash())
	}
	var buckets [HashBuckets]string
	for b, hs := range per {
		buckets[b] = BucketHash(hs)
	}
	return ManifestHashOf(ds, p, &buckets)
}

// DatasetHasher computes a dataset snapshot hash: SHA-256 over a version line and the
// external id and content hash of every live document (not tombstoned), in import order.
type DatasetHasher struct {
	h hash.Hash
	n int
}

// NewDatasetHasher starts a snapshot hash.
func NewDatasetHasher() *DatasetHasher {
	h := sha256.New()
	h.Write([]byte("dedupstudio dataset v1\n"))
	return &DatasetHasher{h: h}
}

// Add adds the next live document.
func (d *DatasetHasher) Add(extID, contentHash string) {
	d.h.Write([]byte(extID))
	d.h.Write([]byte{'\t'})
	d.h.Write([]byte(contentHash))
	d.h.Write([]byte{'\n'})
	d.n++
}

// Sum returns the snapshot hash, "d" followed by 64 hex digits; the number of documents
// is part of it.
func (d *DatasetHasher) Sum() string {
	fmt.Fprintf(d.h, "documents\t%d\n", d.n)
	return "d" + hex.EncodeToString(d.h.Sum(nil))
}

// Short returns the first 12 characters of a hash, for pages; the full hash is in the
// sign-off record.
func Short(h string) string {
	if len(h) > 13 {
		return h[:13]
	}
	return h
}
