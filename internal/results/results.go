// Package results reads what production deduplication engines write, so that a run at
// scale can be brought back and reviewed like a manifest computed here: datatrove's
// cluster ids (its MinhashDedupCluster output folder, remove_ids in datatrove's example:
// a .clusters and a .remove file per task, or the documents its MinhashDedupFilter wrote
// with their cluster ids in the metadata), text-dedup's cluster column, a Milvus
// search-result dump (pairs with MHJACCARD scores), what the handed-off datasketch
// program writes (every stored match of each document it reports), a plain table of
// pairs with scores, and the manifest files of the review format (review.WriteJSONL,
// review.WriteCSV: what the dedup command and a manifest's export write).
//
// Reading gives a Read: pairs of documents with scores, or cluster memberships with
// the keeper where the engine says which document it kept. Build turns either into
// clusters: pairs become connected components (what every one of these engines does),
// each cluster keeping its weakest link, the bottleneck of its maximum spanning tree (the
// lowest score that still holds it together), and its keeper is the engine's when the
// file gives it and the configuration's keeper rule otherwise.
//
// Bad input is a *BadInputError listing each bad record by file, line (or byte offset,
// or Parquet row) and field; a document id the dataset does not have is refused the same
// way (an *UnknownIDsError), unless the caller asks to skip and count such records. The
// package does no SQL: internal/manifests stores what Build returns.
package results

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Format is a kind of results file.
type Format string

// Formats.
const (
	// Datatrove is datatrove's MinHash output: a .clusters file of MinhashDedupCluster
	// (save_cluster_id=True), with its .remove file for the keepers, or JSONL documents
	// written by MinhashDedupFilter(load_cluster_ids=True) with metadata
	// minhash_cluster_id (minhash_cluster in older datatrove).
	Datatrove Format = "datatrove"
	// TextDedup is text-dedup's minhash output kept unfiltered with its cluster column
	// (__CLUSTER__; __cluster__ in older text-dedup) and index column, as JSONL, CSV or Parquet.
	TextDedup Format = "text-dedup"
	// Milvus is the dump the handed-off Milvus scripts write: JSON lines
	// {"id": query, "hits": [{"id": hit, "distance": MHJACCARD score}, ...]}.
	Milvus Format = "milvus"
	// Datasketch is what the handed-off datasketch program writes: JSON lines
	// {"id": reported document, "matches": [{"id": stored document, "jaccard": score}, ...]},
	// every stored document at or above the threshold. The tab-separated lines of the
	// program exported before (id, "duplicate of", stored document, "jaccard estimate",
	// score: the best match only) are read too.
	Datasketch Format = "datasketch"
	// Pairs is a table of id_a, id_b, score (CSV, TSV or JSONL).
	Pairs Format = "pairs"
	// Manifest is removals.jsonl or removals.csv of the review format.
	Manifest Format = "manifest"
)

// Formats lists the formats in the order pages show them.
var Formats = []Format{Datatrove, TextDedup, Milvus, Datasketch, Pairs, Manifest}

// SearchBeforeInsert reports whether f is the output of a search before insert (the
// handed-off Milvus and datasketch programs): each line a document the engine did not
// store and the stored documents it matched, so the stored ones are what it kept.
func (f Format) SearchBeforeInsert() bool { return f == Milvus || f == Datasketch }

// ParseFormat returns the format named s.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", &InputError{Field: "format", Msg: fmt.Sprintf("unknown format %q (want %s)", s, formatList())}
}

func formatList() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// InputError is an option or a file that cannot be used at all, naming the field.
type InputError struct {
	Field string
	Msg   string
}

// Error names the field; a file's error is its name and the message (the Msg begins
// with the file's name), as a bad record's is, so every error about a file starts with it.
func (e *InputError) Error() string {
	if e.Field == "file" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// MaxListed is how many bad records an error lists; it counts them all.
const MaxListed = 20

// BadInputError is a file with bad records: each one's place, field and reason.
type BadInputError struct {
	File   string
	Errors []*corpus.RecordError // the first MaxListed
	Total  int
}

func (e *BadInputError) Error() string {
	return listError(e.File, "bad record", "bad records", e.Errors, e.Total)
}

// UnknownIDsError is a file that names documents the dataset does not have: each one
// where the file first names it.
type UnknownIDsError struct {
	File    string
	Dataset string
	Errors  []*corpus.RecordError // the first MaxListed
	Total   int                   // documents
}

func (e *UnknownIDsError) Error() string {
	what := " that dataset " + strconv.Quote(e.Dataset) + " does not have (import them there, or skip them)"
	return listError(e.File, "document"+what, "documents"+what, e.Errors, e.Total)
}

// documents is a count of documents in words: "1 document", "2,000 documents".
func documents(n int) string { return review.Quantity(n, "document", "documents") }

// RowsError is a file with more rows than the cap on one import (Options.MaxRows),
// refused at the first row past it.
type RowsError struct {
	Place corpus.Place
	Max   int
}

func (e *RowsError) Error() string {
	return fmt.Sprintf("%s: more than %d rows, the cap on one results import (split the file, or raise the cap: -max-rows of import-results, -max-result-rows of the server)", e.Place, e.Max)
}

// listError is the message of an error about file: the count of its total bad records or
// ids, in words (one and many are the noun), and each of errs on a line of its own.
func listError(file, one, many string, errs []*corpus.RecordError, total int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", file, review.Quantity(total, one, many))
	for _, e := range errs {
		b.WriteString("\n  ")
		b.WriteString(e.Error())
	}
	if total > len(errs) {
		fmt.Fprintf(&b, "\n  ... and %d more", total-len(errs))
	}
	return b.String()
}

// badList collects bad records.
type badList struct {
	errs  []*corpus.RecordError
	total int
}

func (b *badList) add(e *corpus.RecordError) {
	b.total++
	if len(b.errs) < MaxListed {
		b.errs = append(b.errs, e)
	}
}

// Ref is a document as a file names it: by external id, or (datatrove's binary files)
// by its position in the order the engine read the documents; Place and Field say where
// the file names it first.
type Ref struct {
	ID    string
	Index int // >= 0: by position; -1: by ID
	Place corpus.Place
	Field string
}

func (r Ref) String() string {
	if r.Index >= 0 {
		return "#" + strconv.Itoa(r.Index)
	}
	return strconv.Quote(r.ID)
}

// Pair is two documents an engine found similar (indexes into Read.Docs), with its
// score (a similarity in [0, 1]; NaN when the file gives none). A pair the file gives
// in several rows is one Pair with the highest of their scores; Rows counts them.
type Pair struct {
	A, B  int
	Score float64
	Rows  int
}

// Member is a document (an index into Read.Docs) in a cluster the engine named Group;
// Keeper when the file says the engine kept it. A membership the file gives in several
// rows is one Member; Rows counts them.
type Member struct {
	Doc    int
	Group  string
	Keeper bool
	// Size is the cluster size the file claims for the group (datatrove's
	// minhash_cluster_size), 0 when it claims none.
	Size int
	// Place is the row that gives it first.
	Place corpus.Place
	Rows  int
}

// Read is what a results file says, each document, pair and membership once: its
// size grows with what is distinct in the file, not with its rows (a file of one pair
// repeated a hundred million times reads as one pair).
type Read struct {
	Format  Format
	File    string
	SHA256  string
	Records int
	// Docs are the documents the file names, each once, in the order it first names
	// them; Pairs and Members point into it.
	Docs    []Ref
	Pairs   []Pair
	Members []Member
	// KeeperGiven is true when the file says which member of each cluster the engine
	// kept.
	KeeperGiven bool
	// Params is the configuration a manifest file names (Manifest format); nil for the
	// others, whose configuration the caller names.
	Params *review.Params
	// Dataset is the dataset a manifest file's rows name (their dataset column), and
	// DatasetAt the first row that names it; "" for the other formats.
	Dataset   string
	DatasetAt corpus.Place
}

// DefaultMaxRows caps the rows (records, lines of a Milvus dump) one results file may
// hold: collapsed as they stream, duplicate rows cost no memory, but every row costs
// time, and the 4 GiB cap on decompressed data alone admits some 90 million rows.
const DefaultMaxRows = 10_000_000

// Options are the choices a file's format leaves open.
type Options struct {
	// IDField is the column of document ids (text-dedup, datatrove JSONL); default "id".
	IDField string
	// ClusterField is text-dedup's cluster column; default __CLUSTER__ or __cluster__.
	ClusterField string
	// IndexField is text-dedup's index column; default __INDEX__ or __index__.
	IndexField string
	// TextField is the text column a Parquet file must have (it is not read into the
	// results); default "text".
	TextField string
	// MaxInputBytes caps the data read once decompressed; 0 for no cap.
	MaxInputBytes int64
	// MaxRows caps the rows read, good or bad (a *RowsError past it); 0 is
	// DefaultMaxRows, negative no cap.
	MaxRows int
}

func (o *Options) defaults() {
	if o.IDField == "" {
		o.IDField = "id"
	}
	if o.TextField == "" {
		o.TextField = "text"
	}
	if o.MaxRows == 0 {
		o.MaxRows = DefaultMaxRows
	}
}

// hashingReader hashes what is read through it (an io.TeeReader into SHA-256).
type hashingReader struct {
	io.Reader
	h hash.Hash
}

func newHashing(r io.Reader) *hashingReader {
	h := sha256.New()
	return &hashingReader{Reader: io.TeeReader(r, h), h: h}
}

func (h *hashingReader) sum() string { return hex.EncodeToString(h.h.Sum(nil)) }

// Source is a results file to read: its name (for errors and the record) and its bytes.
// Parquet needs random access (ReaderAt and Size).
type Source struct {
	Name   string
	Reader io.Reader
	At     io.ReaderAt
	Size   int64
}

// ReadFile reads src as format f. remove is datatrove's .remove file beside a .clusters
// file, or the exclusion writer's JSONL beside the filter's kept output (its Reader nil
// when there is none): it gives datatrove's own keepers.
func ReadFile(src Source, f Format, remove Source, opt Options) (*Read, error) {
	opt.defaults()
	switch f {
	case Datatrove:
		lower := strings.ToLower(src.Name)
		switch {
		case strings.HasSuffix(lower, ".clusters"):
			return readDatatroveClusters(src, remove, opt)
		case strings.HasSuffix(lower, ".remove"):
			return nil, &InputError{Field: "file", Msg: src.Name + ": a .remove file lists the documents to remove but not what each duplicates; " +
				"run MinhashDedupCluster with save_cluster_id=True and import its .clusters file (with this .remove file beside it for the keepers), " +
				"or the JSONL documents MinhashDedupFilter(load_cluster_ids=True) writes"}
		}
		return readDatatroveJSONL(src, remove, opt)
	case TextDedup:
		return readTextDedup(src, opt)
	case Milvus:
		return readMilvus(src, opt)
	case Datasketch:
		return readDatasketch(src, opt)
	case Pairs:
		return readPairs(src, opt)
	case Manifest:
		return readManifest(src, opt)
	}
	return nil, &InputError{Field: "format", Msg: fmt.Sprintf("unknown format %q (want %s)", f, formatList())}
}

// finish returns r, or the bad records as a *BadInputError.
func finish(r *Read, bad *badList) (*Read, error) {
	if bad.total > 0 {
		return nil, &BadInputError{File: r.File, Errors: bad.errs, Total: bad.total}
	}
	if len(r.Pairs) == 0 && len(r.Members) == 0 {
		return nil, &InputError{Field: "file", Msg: r.File + ": no duplicates in it: nothing to review"}
	}
	return r, nil
}

// idValue reads an id cell: a string as written, a JSON number as documents' ids are
// read (corpus.NumberID).
func idValue(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", errors.New("missing")
	case string:
		if v == "" {
			return "", errors.New("empty")
		}
		return v, nil
	case interface{ String() string }: // json.Number
		return corpus.NumberID(v.String())
	case int64:
		return strconv.FormatInt(v, 10), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	}
	return "", fmt.Errorf("want a string or a whole number, not %T", v)
}

// scoreValue reads a similarity in [0, 1].
func scoreValue(v any) (float64, error) {
	var f float64
	var err error
	switch v := v.(type) {
	case nil:
		return 0, errors.New("missing")
	case string:
		f, err = strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", v)
		}
	case interface{ Float64() (float64, error) }: // json.Number
		if f, err = v.Float64(); err != nil {
			return 0, err
		}
	case float64:
		f = v
	case float32:
		f = float64(v)
	default:
		return 0, fmt.Errorf("want a number, not %T", v)
	}
	if !(f >= 0 && f <= 1) {
		return 0, fmt.Errorf("%v is not a similarity in [0, 1]", v)
	}
	return f, nil
}

// groupValue reads a cluster id as text: a number or a string.
func groupValue(v any) (string, bool, error) {
	switch v := v.(type) {
	case nil:
		return "", false, nil
	case string:
		return v, v != "", nil
	case interface{ String() string }:
		return v.String(), true, nil
	case int64:
		return strconv.FormatInt(v, 10), true, nil
	case int32:
		return strconv.FormatInt(int64(v), 10), true, nil
	case uint64:
		return strconv.FormatUint(v, 10), true, nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true, nil
	}
	return "", false, fmt.Errorf("want a number or a string, not %T", v)
}
