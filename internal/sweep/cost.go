package sweep

import "github.com/dedupstudio/dedupstudio/internal/lsh"

// IndexSize is the memory an LSH index of one shape needs at a number of documents:
// BandBytes = Docs × Bands × 16 (each band stores an 8-byte band key and an 8-byte
// document id per document; hash-table overhead not counted), SignatureBytes =
// Docs × 4k (the signatures, when they are kept for verification or re-banding).
type IndexSize struct {
	Docs           int64
	BandBytes      int64
	SignatureBytes int64
}

// IndexScales are the dataset sizes IndexSizes reports.
var IndexScales = []int64{1_000_000, 100_000_000, 1_000_000_000}

// IndexSizes returns the index size of sh with k-value signatures at each of
// IndexScales.
func IndexSizes(sh lsh.Shape, k int) []IndexSize {
	out := make([]IndexSize, len(IndexScales))
	for i, n := range IndexScales {
		out[i] = IndexSize{Docs: n, BandBytes: n * int64(sh.Bands) * 16, SignatureBytes: n * 4 * int64(k)}
	}
	return out
}
