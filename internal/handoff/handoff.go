// Package handoff writes a calibrated configuration for the engines that deduplicate at
// scale, as programs that run as they are: Milvus (a collection with a MINHASH_LSH index
// and a search before insert, as a pymilvus script and as a Go program for the official
// Go client), datasketch (a program that computes datasketch MinHash signatures over the
// studio's own tokenization, written out in Python, and searches MinHashLSH before it
// inserts), datatrove (a pipeline of its four MinHash stages) and a plain JSON
// description of the versioned representation for anything else. Each program's output
// reads back with import-results (internal/results).
//
// Every file says what carries over and what does not, per engine: bit-identical
// signatures where the engine computes the representation the way the studio does
// (Milvus's MinHash function for scheme=milvus with norm=none, datasketch's MinHash for
// scheme=datasketch), the same shape where the engine bands the same values (datasketch
// always; Milvus when rows = floor(k/bands)), and the rest said plainly: verification,
// search before insert against the calibrated policy, datatrove's own hashing and its
// lack of a threshold. Where the studio can measure a difference on the manifest's
// dataset (Figures, measured by internal/manifests), the file gives the number.
package handoff

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"io"
	"math"
	"regexp"
	"strings"
	"text/template"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Format is an engine a configuration is written for.
type Format string

// Formats.
const (
	Milvus     Format = "milvus"
	Datasketch Format = "datasketch"
	Datatrove  Format = "datatrove"
	JSON       Format = "json"
)

// Formats lists every format, in the order pages show them.
var Formats = []Format{Milvus, Datasketch, Datatrove, JSON}

// ParseFormat reads a format's name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q (want milvus, datasketch, datatrove or json)", s)
}

// Source says where a configuration comes from: a manifest, its dataset and its state
// (a configuration from a manifest that is not signed off is written all the same, and
// every file says so).
type Source struct {
	Manifest int64
	// Sweep and Config name a sweep result instead (Manifest 0): the sweep's id and the
	// configuration's ordinal in it.
	Sweep, Config int64
	Dataset       review.Dataset
	State         review.State
}

// SignedOff reports whether the manifest was signed off (and perhaps exported since).
func (s Source) SignedOff() bool { return s.State == review.SignedOff || s.State == review.Exported }

// Settings is a configuration and where it comes from.
type Settings struct {
	Params review.Params
	Source Source
	// Generated is when the files are written (the zero time leaves it out, for files
	// that compare equal byte for byte).
	Generated time.Time
	// Figures are the differences measured on the manifest's dataset; the zero value
	// leaves the numbers out, and the files say how to get them.
	Figures Figures
}

// File is one file of a hand-off, its name relative to the output folder.
type File struct {
	Name string
	Body []byte
}

// Files writes the files of format f for s.
func Files(s Settings, f Format) ([]File, error) {
	if err := s.Params.Validate(); err != nil {
		return nil, err
	}
	v := newView(s)
	switch f {
	case Milvus:
		py, err := run(milvusPy, v)
		if err != nil {
			return nil, err
		}
		goSrc, err := run(milvusGo, v)
		if err != nil {
			return nil, err
		}
		if goSrc, err = format.Source(goSrc); err != nil {
			return nil, fmt.Errorf("handoff: generated Go program: %w", err)
		}
		readme, err := run(milvusReadme, v)
		if err != nil {
			return nil, err
		}
		return []File{{"milvus/README.md", readme}, {"milvus/milvus_setup.py", py}, {"milvus/go/main.go", goSrc}}, nil
	case Datasketch:
		py, err := run(datasketchPy, v)
		if err != nil {
			return nil, err
		}
		return []File{{"datasketch/datasketch_lsh.py", py}}, nil
	case Datatrove:
		py, err := run(datatrovePy, v)
		if err != nil {
			return nil, err
		}
		return []File{{"datatrove/datatrove_minhash.py", py}}, nil
	case JSON:
		b, err := json.MarshalIndent(describe(s), "", "  ")
		if err != nil {
			return nil, err
		}
		return []File{{"settings.json", append(b, '\n')}}, nil
	}
	return nil, fmt.Errorf("unknown format %q", f)
}

// JSON is s's settings.json: Files(s, JSON)'s one file.
func (s Settings) JSON() ([]byte, error) {
	files, err := Files(s, JSON)
	if err != nil {
		return nil, err
	}
	return files[0].Body, nil
}

// All writes the files of every format.
func All(s Settings) ([]File, error) {
	var out []File
	for _, f := range Formats {
		files, err := Files(s, f)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

// Zip writes files as a zip archive under the folder name dir.
func Zip(w io.Writer, dir string, files []File, modified time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range files {
		h := &zip.FileHeader{Name: dir + "/" + f.Name, Method: zip.Deflate, Modified: modified}
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.Body); err != nil {
			return err
		}
	}
	return zw.Close()
}

// MilvusFunction returns the params of Milvus's MinHash function (Milvus 3.0) that
// compute spec's signatures bit for bit, or, when no such params exist, why not.
func MilvusFunction(spec lsh.Spec) (params map[string]any, why string) {
	if spec.Scheme != lsh.Milvus {
		return nil, fmt.Sprintf("the representation uses scheme=%s; Milvus's MinHash function computes scheme=milvus signatures only", spec.Scheme)
	}
	if spec.Norm != (lsh.Norm{}) {
		return nil, fmt.Sprintf("the representation normalizes the text (norm=%s) before shingling; Milvus's MinHash function shingles the analyzer's tokens (word level) or the raw bytes (char level) and has no such step", spec.Norm)
	}
	hash := "xxhash"
	if spec.Hash == lsh.SHA1 {
		hash = "sha1"
	}
	return map[string]any{
		"num_hashes":    spec.Hashes,
		"shingle_size":  spec.Size,
		"hash_function": hash,
		"token_level":   string(spec.Level),
		"seed":          spec.Seed,
	}, ""
}

// Description is the plain JSON description of a configuration (settings.json).
type Description struct {
	Format         string         `json:"format"` // "dedupstudio-settings/1"
	Source         DescSource     `json:"source"`
	Spec           string         `json:"spec"`
	SpecID         string         `json:"spec_id"`
	Representation DescRep        `json:"representation"`
	Bands          int            `json:"bands"`
	Rows           int            `json:"rows"`
	Threshold      float64        `json:"threshold"`
	SCurveMidpoint float64        `json:"s_curve_threshold"` // (1/b)^(1/r)
	Verification   string         `json:"verification"`
	Policy         string         `json:"cluster_policy"`
	KeeperRule     string         `json:"keeper_rule"`
	Budget         int            `json:"budget,omitempty"` // cluster.Config.Budget; absent for the default
	CodeVersion    string         `json:"code_version,omitempty"`
	MilvusFunction map[string]any `json:"milvus_function,omitempty"`
	MilvusNote     string         `json:"milvus_function_unavailable,omitempty"`
}

// DescSource is Description's source.
type DescSource struct {
	Manifest       int64  `json:"manifest"`
	Sweep          int64  `json:"sweep,omitempty"`
	SweepConfig    int64  `json:"sweep_config,omitempty"`
	Dataset        string `json:"dataset"`
	DatasetVersion int    `json:"dataset_version"`
	State          string `json:"state"`
	SignedOff      bool   `json:"signed_off"`
}

// DescRep is the representation field by field.
type DescRep struct {
	Scheme string `json:"scheme"`
	Norm   string `json:"norm"`
	Level  string `json:"level"`
	Size   int    `json:"size"`
	K      int    `json:"k"`
	Hash   string `json:"hash"`
	Seed   uint64 `json:"seed"`
}

func describe(s Settings) Description {
	p := s.Params
	d := Description{
		Format: "dedupstudio-settings/1",
		Source: DescSource{Manifest: s.Source.Manifest, Sweep: s.Source.Sweep, SweepConfig: s.Source.Config, Dataset: s.Source.Dataset.Name, DatasetVersion: s.Source.Dataset.Version,
			State: string(s.Source.State), SignedOff: s.Source.SignedOff()},
		Spec: p.Spec.String(), SpecID: p.Spec.ID(),
		Representation: DescRep{Scheme: string(p.Spec.Scheme), Norm: p.Spec.Norm.String(), Level: string(p.Spec.Level),
			Size: p.Spec.Size, K: p.Spec.Hashes, Hash: string(p.Spec.Hash), Seed: p.Spec.Seed},
		Bands: p.Shape.Bands, Rows: p.Shape.Rows, Threshold: p.Threshold, SCurveMidpoint: round4(midpoint(p.Shape)),
		Verification: string(p.Verification), Policy: string(p.Policy), KeeperRule: p.Rule.String(), Budget: p.Budget, CodeVersion: p.CodeVersion,
	}
	d.MilvusFunction, d.MilvusNote = MilvusFunction(p.Spec)
	return d
}

func midpoint(sh lsh.Shape) float64 {
	return math.Pow(1/float64(sh.Bands), 1/float64(sh.Rows))
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// view is what the templates read.
type view struct {
	Scheme                             lsh.Scheme
	Norm                               string
	PyNFKC, PyLower, PyPunct, PyDigits bool
	PySpace                            bool
	Computes                           bool   // the Python programs compute the representation's shingles (not scheme=milvus)
	DSSeed                             uint64 // the seed numpy's RandomState takes: the representation's, its low 32 bits
	NeedsXXHash                        bool
	OneBand                            bool // datasketch's MinHashLSH refuses fewer than 2 bands
	StudioTokenizer                    bool // the datatrove pipeline uses the studio's tokens
	DTHash, DTHashName                 string
	MilvusRows, MilvusUsed             int
	ImportConfig                       string // how import-results names this configuration
	MilvusNotes, DatasketchNotes       []string
	DatatroveNotes                     []string
	S                                  Settings
	Spec                               string
	SpecID                             string
	K, Dim                             int
	Bands, Rows                        int
	Used                               int // bands*rows: the hash values the index reads
	Threshold                          string
	Midpoint                           string
	Exact                              bool
	Policy, Rule                       string
	Origin                             string
	Draft                              bool
	Generated                          string
	Collection                         string
	FnParams                           string // Python dict literal, "" when Milvus cannot compute the signatures
	FnWhy                              string
	Level                              string
	Size                               int
	Seed                               uint64
	Hash                               string
	Datasketch                         bool   // the permutations are datasketch's
	SignCmd                            string // the signatures command that makes what the scripts read
	SignCmdJSONL                       string
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_]+`)

func newView(s Settings) view {
	p := s.Params
	v := view{S: s, Spec: p.Spec.String(), SpecID: p.Spec.ID(), K: p.Spec.Hashes, Dim: 32 * p.Spec.Hashes,
		Bands: p.Shape.Bands, Rows: p.Shape.Rows, Used: p.Shape.Bands * p.Shape.Rows,
		Threshold: fmt.Sprintf("%g", p.Threshold), Midpoint: fmt.Sprintf("%.4f", midpoint(p.Shape)),
		Exact: p.Verification == review.Exact, Policy: string(p.Policy), Rule: p.Rule.String(),
		Level: string(p.Spec.Level), Size: p.Spec.Size, Seed: p.Spec.Seed, Hash: string(p.Spec.Hash),
		Datasketch: p.Spec.Scheme == lsh.Datasketch}
	src := s.Source
	v.Origin = fmt.Sprintf("manifest %d of dataset %s version %d (%s)", src.Manifest, src.Dataset.Name, src.Dataset.Version, src.State.Label())
	if src.Manifest == 0 && src.Sweep != 0 {
		v.Origin = fmt.Sprintf("configuration %d of sweep %d over dataset %s version %d (a sweep result, not a reviewed manifest)",
			src.Config, src.Sweep, src.Dataset.Name, src.Dataset.Version)
	}
	v.Draft = !src.SignedOff()
	if !s.Generated.IsZero() {
		v.Generated = s.Generated.UTC().Format(time.RFC3339)
	}
	name := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(src.Dataset.Name), "_"), "_")
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		name = "d_" + name
	}
	v.Collection = fmt.Sprintf("dedup_%s_v%d", name, src.Dataset.Version)
	if params, why := MilvusFunction(p.Spec); params != nil {
		v.FnParams = fmt.Sprintf(`{"num_hashes": %d, "shingle_size": %d, "hash_function": %q, "token_level": %q, "seed": %d}`,
			params["num_hashes"], params["shingle_size"], params["hash_function"], params["token_level"], params["seed"])
	} else {
		v.FnWhy = why
	}
	spec := shellQuote(p.Spec.String())
	v.SignCmd = "go run ./cmd/server signatures -spec " + spec + " -in corpus.jsonl.gz -out sigs.bin -format binary"
	v.SignCmdJSONL = "go run ./cmd/server signatures -spec " + spec + " -in corpus.jsonl.gz -out sigs.jsonl"
	n := p.Spec.Norm
	v.Scheme, v.Norm = p.Spec.Scheme, n.String()
	v.PyNFKC, v.PyLower, v.PyPunct, v.PyDigits, v.PySpace = n.NFKC, n.Lower, n.StripPunct, n.FoldDigits, n.CollapseSpace
	v.Computes = p.Spec.Scheme != lsh.Milvus
	v.StudioTokenizer = v.Computes
	v.DSSeed = p.Spec.Seed & 0xFFFFFFFF
	v.NeedsXXHash = v.Computes && p.Spec.Hash != lsh.SHA1
	v.OneBand = p.Shape.Bands < 2
	v.DTHash, v.DTHashName = "xxhash", "xxhash64 of the n-gram's text"
	switch p.Spec.Hash {
	case lsh.SHA1:
		v.DTHash, v.DTHashName = "sha1", "the first 8 bytes of the n-gram's SHA-1"
	case lsh.XXH3:
		v.DTHashName += "; datatrove has no XXH3"
	}
	ms := MilvusBanding(p.Spec.Hashes, p.Shape.Bands)
	v.MilvusRows, v.MilvusUsed = ms.Rows, ms.Bands*ms.Rows
	v.ImportConfig = fmt.Sprintf("-manifest %d", src.Manifest)
	if src.Manifest == 0 {
		v.ImportConfig = "-config settings.json"
	}
	v.MilvusNotes, v.DatasketchNotes, v.DatatroveNotes = v.milvusNotes(), v.datasketchNotes(), v.datatroveNotes()
	return v
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func run(t *template.Template, v view) ([]byte, error) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return nil, fmt.Errorf("handoff: %s: %w", t.Name(), err)
	}
	return buf.Bytes(), nil
}
