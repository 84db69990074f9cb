package review

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Origin says where a manifest that was not computed here came from: the results of a
// production engine (datatrove, text-dedup, a Milvus search, a CSV of pairs, the dedup
// command's manifest) imported for review. A manifest computed by a run has none.
type Origin struct {
	Format string `json:"format"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"` // of the file as read
	// Records is how many rows, pairs or documents the file held; Pairs how many
	// distinct pairs of documents among them (pair formats), Members how many distinct
	// cluster memberships (cluster formats).
	Records int `json:"records"`
	Pairs   int `json:"pairs,omitempty"`
	Members int `json:"members,omitempty"`
	// Skipped counts the records that named a document the dataset does not have,
	// skipped on request (refused otherwise); SkippedIDs lists the first of them.
	Skipped    int      `json:"skipped_unknown_ids"`
	SkippedIDs []string `json:"skipped_examples,omitempty"`
	Clusters   int      `json:"clusters"`
	Removals   int      `json:"removals"`
	// AlreadyRemoved counts the documents of the file's clusters that exported manifests
	// had removed (under a standing tombstone): left out, neither proposed for removal
	// nor kept; AlreadyRemovedIDs names the first. Rekept counts the clusters whose
	// keeper was among them and that keep, by the configuration's rule, a live member.
	AlreadyRemoved    int      `json:"already_removed,omitempty"`
	AlreadyRemovedIDs []string `json:"already_removed_examples,omitempty"`
	Rekept            int      `json:"rekept_clusters,omitempty"`
	// Keepers says who chose each cluster's keeper: "file" (the engine's own choice,
	// as the file gives it) or "rule" (the configuration's keeper rule).
	Keepers string `json:"keepers"`
	// Policy says how the engine formed its clusters, as the record states it: the
	// policy a manifest file's rows name, or what the engine did (connected components
	// of its pairs) for formats that carry no policy; "" in origins stored before it.
	Policy     string    `json:"policy,omitempty"`
	ImportedBy string    `json:"imported_by"`
	ImportedAt time.Time `json:"imported_at"`
	// Sample is the clusters drawn for review when the import has more than a sample's
	// worth; nil when every cluster is reviewed.
	Sample *Sample `json:"sample,omitempty"`
}

// Sample is a stratified random sample of a manifest's clusters, drawn for review
// because a run at scale has more clusters than people can read: strata by cluster size
// (SizeBin) and weakest link (LinkBin), each stratum given an equal share of the sample
// first (so rare strata, large clusters and weak links, are seen at all), the rest in
// proportion to the clusters left, and clusters drawn within a stratum by simple random
// sampling without replacement from a seeded generator (PCG), so the same seed over the
// same import draws the same clusters. A cluster in stratum h stands for
// Clusters/Drawn of them.
type Sample struct {
	Method   string    `json:"method"`
	Seed     uint64    `json:"seed"`
	Target   int       `json:"target"`   // clusters asked for
	Clusters int       `json:"clusters"` // clusters in the manifest
	Drawn    int       `json:"drawn"`
	Strata   []Stratum `json:"strata"`
}

// Stratum is one stratum of a Sample: its size and weakest-link bins, the clusters in
// it and how many were drawn.
type Stratum struct {
	Key      string `json:"key"` // "size=3-4 link=0.8-0.9"
	Size     string `json:"size"`
	Link     string `json:"weakest_link"`
	Clusters int    `json:"clusters"`
	Drawn    int    `json:"drawn"`
}

// SampleMethod is the Sample's Method text.
const SampleMethod = "stratified by cluster size and weakest link; an equal share per stratum, the rest in proportion; simple random sampling without replacement within each stratum (PCG seeded)"

// LinkBins lists the bins of LinkBin in order, weakest first.
var LinkBins = []string{"<0.5", "0.5-0.7", "0.7-0.8", "0.8-0.9", "0.9-1", "1"}

// LinkBin names the bin of a cluster whose weakest link has similarity s (NaN, no score
// known, goes with the weakest).
func LinkBin(s float64) string {
	switch {
	case math.IsNaN(s) || s < 0.5:
		return LinkBins[0]
	case s < 0.7:
		return LinkBins[1]
	case s < 0.8:
		return LinkBins[2]
	case s < 0.9:
		return LinkBins[3]
	case s < 1:
		return LinkBins[4]
	}
	return LinkBins[5]
}

// StratumKey names the stratum of a cluster of size documents whose weakest link is s.
func StratumKey(size int, s float64) string { return "size=" + SizeBin(size) + " link=" + LinkBin(s) }

// SampleUnit is what the sample knows of a cluster.
type SampleUnit struct {
	Size    int
	Weakest float64
}

// DrawSample draws a Sample of target clusters of units (in a stable order: the caller's
// order is part of what the seed reproduces). It returns the design and each unit's
// stratum key when drawn, "" when not. With target <= 0 or at least as many as there are
// units, every unit is reviewed and the Sample is nil.
func DrawSample(units []SampleUnit, target int, seed uint64) (*Sample, []string) {
	drawn := make([]string, len(units))
	if target <= 0 || target >= len(units) {
		return nil, drawn
	}
	byKey := map[string][]int{}
	for i, u := range units {
		k := StratumKey(u.Size, u.Weakest)
		byKey[k] = append(byKey[k], i)
	}
	s := &Sample{Method: SampleMethod, Seed: seed, Target: target, Clusters: len(units)}
	for _, size := range SizeBins {
		for _, link := range LinkBins {
			k := "size=" + size + " link=" + link
			if n := len(byKey[k]); n > 0 {
				s.Strata = append(s.Strata, Stratum{Key: k, Size: size, Link: link, Clusters: n})
			}
		}
	}
	// An equal share first, then what is left in proportion to the clusters not yet
	// drawn (largest remainders; ties to the earlier stratum).
	share := target / len(s.Strata)
	left := target
	for i := range s.Strata {
		st := &s.Strata[i]
		st.Drawn = min(st.Clusters, share)
		left -= st.Drawn
	}
	for left > 0 {
		rest := 0
		for _, st := range s.Strata {
			rest += st.Clusters - st.Drawn
		}
		if rest == 0 {
			break
		}
		type quota struct {
			i    int
			frac float64
		}
		var qs []quota
		give := left
		for i := range s.Strata {
			st := &s.Strata[i]
			exact := float64(give) * float64(st.Clusters-st.Drawn) / float64(rest)
			whole := min(int(exact), st.Clusters-st.Drawn)
			st.Drawn += whole
			left -= whole
			qs = append(qs, quota{i, exact - float64(whole)})
		}
		slices.SortStableFunc(qs, func(a, b quota) int { return cmp.Compare(b.frac, a.frac) })
		for _, q := range qs {
			if left == 0 {
				break
			}
			if st := &s.Strata[q.i]; st.Drawn < st.Clusters {
				st.Drawn++
				left--
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5a4d504c45)) // "ZMPLE": a fixed stream
	for _, st := range s.Strata {
		members := byKey[st.Key]
		// A partial Fisher-Yates shuffle: the first Drawn are a simple random sample.
		for i := range st.Drawn {
			j := i + rng.IntN(len(members)-i)
			members[i], members[j] = members[j], members[i]
			drawn[members[i]] = st.Key
		}
		s.Drawn += st.Drawn
	}
	return s, drawn
}

// String says in one line what the sample is, for pages and commands.
func (s *Sample) String() string {
	strata := "strata"
	if len(s.Strata) == 1 {
		strata = "stratum"
	}
	return fmt.Sprintf("a stratified sample of %d of %d clusters (%d %s by size and weakest link, seed %d)",
		s.Drawn, s.Clusters, len(s.Strata), strata, s.Seed)
}
