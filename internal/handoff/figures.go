package handoff

// Figures are what the studio measured of a manifest's configuration on the manifest's
// dataset, so that each file can say in numbers, not only in words, what its engine will
// do differently. internal/manifests measures them (MeasureHandoff); a zero Figures (Docs 0)
// leaves the numbers out and the files say how to get them.
type Figures struct {
	// Dataset names the dataset and version measured ("crawl version 2"), Docs its
	// documents.
	Dataset string
	Docs    int
	// Candidates are the candidate pairs of the calibrated banding over the studio's
	// signatures (buckets bounded as a run bounds them); AcceptedEstimate and
	// AcceptedExact how many each verification accepts at the threshold, EstimateOnly and
	// ExactOnly the pairs one accepts and the other does not.
	Candidates       int
	AcceptedEstimate int
	AcceptedExact    int
	EstimateOnly     int
	ExactOnly        int
	// ManifestRemovals is what the manifest removes as it stands (removals a reviewer
	// excluded left out).
	ManifestRemovals int
	// NoShingle counts the documents with no shingle under the representation (every
	// signature value 0xFFFFFFFF): each is a duplicate of every other, here and in every
	// engine.
	NoShingle int
	// Datasketch and Milvus are the handed-off programs' search before insert, simulated
	// over the dataset in import order with the signatures, banding and verification
	// each program uses; nil when not measured.
	Datasketch *SearchRun
	Milvus     *SearchRun
	// Datatrove is the exported datatrove pipeline's clustering, simulated with
	// datatrove's arithmetic over the studio tokenizer's n-grams; nil when the pipeline
	// does not use that tokenizer (scheme=milvus) or it was not measured.
	Datatrove *Components
}

// Measured reports whether f holds measurements.
func (f Figures) Measured() bool { return f.Docs > 0 }

// SearchRun is a search before insert simulated over a dataset in import order: each
// document is compared with the documents stored so far and either reported (it matched
// one at or above the threshold) or stored.
type SearchRun struct {
	// Reported is how many documents the program reports; Both of them the manifest
	// removes too.
	Reported int
	Both     int
	// EngineOnly are reported documents the manifest keeps; EngineOnlyKeepers of them are
	// keepers of the manifest's clusters (the manifest kept them by its keeper rule where
	// the program keeps the first document it sees).
	EngineOnly        int
	EngineOnlyKeepers int
	// ManifestOnly are documents the manifest removes and the program keeps: Order of
	// them because a later document matched them (the program keeps the first it sees and
	// reports the later one), KnockOn because every earlier document they match had been
	// reported before them (nothing stored to match), NoMatch because they match no
	// document at or above the threshold under the program's signatures, banding and
	// verification.
	ManifestOnly int
	Order        int
	KnockOn      int
	NoMatch      int
	// Crowded counts the documents that had more than 64 stored band candidates (the
	// Milvus search scores at most refine_k = 64 of them).
	Crowded int
}

// Components is datatrove's clustering simulated: every pair of documents that share a
// bucket joined into connected components, one document kept in each.
type Components struct {
	Clusters int
	Removals int
	// Pairs are the pairs of documents that share at least one bucket (in a bucket of
	// more than the run's bucket bound, the pairs among its first documents only);
	// BelowThreshold of them have an exact Jaccard under the calibrated threshold, which
	// datatrove removes all the same.
	Pairs          int
	BelowThreshold int
	// Short counts the documents with fewer tokens than the n-gram size: datatrove makes
	// no n-gram of them, so it never compares them.
	Short int
	// NotInManifest counts documents in a datatrove cluster that are in no cluster of the
	// manifest; NotInDatatrove, documents the manifest removes that are in no datatrove
	// cluster.
	NotInManifest  int
	NotInDatatrove int
}
