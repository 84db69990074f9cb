package lsh

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Level says what a shingle is made of.
type Level string

// Token levels.
const (
	// Word shingles are n consecutive whitespace-separated tokens joined by one space.
	// The milvus profile takes the tokens of Milvus's default analyzer instead (runs of
	// letters and digits, lowercased) and joins them with nothing, as Milvus's code does.
	Word Level = "word"
	// Char shingles are n consecutive runes (bytes in the milvus profile, as in Milvus).
	Char Level = "char"
)

// HashFunc names the base hash applied to a shingle's bytes.
type HashFunc string

// Base hashes. Every one is reduced to the 32-bit x that the permutations take.
const (
	XXHash HashFunc = "xxhash" // low 32 bits of XXH64 (seed 0); the default
	SHA1   HashFunc = "sha1"   // first 4 bytes of SHA-1, little-endian (datasketch's sha1_hash32); sign-extended from bit 31 in the milvus profile, as Milvus does
	XXH3   HashFunc = "xxh3"   // low 32 bits of XXH3-64 (seed 0): what Milvus calls hash_function=xxhash
)

// Scheme names how a signature is computed from the base hashes.
type Scheme string

// Signature schemes.
const (
	// Classic is Broder's MinHash with k permutations h(x) = ((a*x+b) mod 2^61-1) & 0xFFFFFFFF,
	// a and b drawn from a SplitMix64 generator seeded with Spec.Seed.
	Classic Scheme = "classic"
	// Datasketch is Classic with datasketch's parameter generator (numpy's legacy RandomState).
	// With hash=sha1 its signatures are bit-identical to datasketch.MinHash.
	Datasketch Scheme = "datasketch"
	// Milvus is Classic with Milvus's parameter generator (C++ std::mt19937_64), shingling
	// (the default analyzer's tokens joined with nothing, char shingles over raw bytes) and
	// base hashes; its signatures are bit-identical to Milvus's MinHash function.
	Milvus Scheme = "milvus"
	// Fast is one-permutation hashing with optimal densification (Shrivastava, ICML 2017):
	// one hash per shingle instead of k, with the same collision probability as Classic.
	Fast Scheme = "fast"
)

// Norm is a set of normalization steps, applied in a fixed order (NFKC, lowercase, strip
// punctuation, fold digits, collapse whitespace) whatever order they are listed in.
type Norm struct {
	NFKC          bool // Unicode compatibility composition: full-width letters, ligatures
	Lower         bool // Unicode lowercase
	StripPunct    bool // remove Unicode punctuation and symbols
	FoldDigits    bool // every decimal digit becomes 0
	CollapseSpace bool // runs of Unicode white space become one space; leading/trailing trimmed
}

// String lists the enabled steps joined by "+", or "none".
func (n Norm) String() string {
	var parts []string
	if n.NFKC {
		parts = append(parts, "nfkc")
	}
	if n.Lower {
		parts = append(parts, "lower")
	}
	if n.StripPunct {
		parts = append(parts, "punct")
	}
	if n.FoldDigits {
		parts = append(parts, "digits")
	}
	if n.CollapseSpace {
		parts = append(parts, "space")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

func parseNorm(s string) (Norm, error) {
	var n Norm
	if s == "none" || s == "" {
		return n, nil
	}
	for p := range strings.SplitSeq(s, "+") {
		switch p {
		case "nfkc":
			n.NFKC = true
		case "lower":
			n.Lower = true
		case "punct":
			n.StripPunct = true
		case "digits":
			n.FoldDigits = true
		case "space":
			n.CollapseSpace = true
		default:
			return Norm{}, fmt.Errorf("unknown normalization step %q (want nfkc, lower, punct, digits, space or none)", p)
		}
	}
	return n, nil
}

// SpecVersion is the newest version of the canonical text form and of the computations
// behind it. Each scheme's canonical text names the version at which that scheme's
// computation last changed (Spec.Version); when a change to this package would change any
// signature of an unchanged Spec, that scheme moves to a new version, so a stored ID never
// stands for two computations.
const SpecVersion = 2

// Version returns the version s is computed and written with: 1 for classic, fast and
// datasketch, unchanged since the first release; 2 for milvus, whose word tokens, default
// normalization and SHA-1 base hash became Milvus's own (bit-identical) in version 2.
func (s Spec) Version() int {
	if s.Scheme == Milvus {
		return 2
	}
	return 1
}

// MaxHashes bounds the number of hashes in a signature.
const MaxHashes = 4096

// MaxShingleSize bounds the shingle size.
const MaxShingleSize = 64

// Spec is everything that changes a similarity score: a representation of documents.
// Two Specs that differ in anything have different IDs; the zero value is not valid, start
// from DefaultSpec.
type Spec struct {
	Scheme Scheme
	Norm   Norm
	Level  Level
	Size   int // shingle size in tokens (word) or runes/bytes (char)
	Hashes int // k, the number of values in a signature
	Hash   HashFunc
	Seed   uint64
}

// DefaultSpec is the representation most teams start from: NFKC + lowercase + collapsed
// whitespace, word 5-shingles, 128 classic MinHash values over XXH64.
func DefaultSpec() Spec {
	return Spec{
		Scheme: Classic,
		Norm:   Norm{NFKC: true, Lower: true, CollapseSpace: true},
		Level:  Word,
		Size:   5,
		Hashes: 128,
		Hash:   XXHash,
		Seed:   1,
	}
}

// String returns the canonical text form, e.g.
//
//	v1 scheme=classic norm=nfkc+lower+space level=word size=5 k=128 hash=xxhash seed=1
//	v2 scheme=milvus norm=none level=word size=3 k=128 hash=xxh3 seed=1234
//
// ParseSpec(s.String()) returns s.
func (s Spec) String() string {
	return fmt.Sprintf("v%d scheme=%s norm=%s level=%s size=%d k=%d hash=%s seed=%d",
		s.Version(), s.Scheme, s.Norm, s.Level, s.Size, s.Hashes, s.Hash, s.Seed)
}

// ID returns a short stable identifier of the canonical form: "r" and 12 hex digits of its SHA-256.
func (s Spec) ID() string {
	sum := sha256.Sum256([]byte(s.String()))
	return "r" + hex.EncodeToString(sum[:6])
}

// Validate reports the first field that makes s unusable.
func (s Spec) Validate() error {
	switch s.Scheme {
	case Classic, Datasketch, Milvus, Fast:
	default:
		return &SpecError{Field: "scheme", Msg: fmt.Sprintf("unknown scheme %q (want classic, fast, datasketch or milvus)", s.Scheme)}
	}
	switch s.Level {
	case Word, Char:
	default:
		return &SpecError{Field: "level", Msg: fmt.Sprintf("unknown level %q (want word or char)", s.Level)}
	}
	switch s.Hash {
	case XXHash, SHA1, XXH3:
	default:
		return &SpecError{Field: "hash", Msg: fmt.Sprintf("unknown hash %q (want xxhash, sha1 or xxh3)", s.Hash)}
	}
	if s.Scheme == Milvus && s.Hash == XXHash {
		return &SpecError{Field: "hash", Msg: "the milvus scheme takes hash=xxh3 (Milvus's hash_function=xxhash, XXH3-64) or hash=sha1"}
	}
	if s.Size < 1 || s.Size > MaxShingleSize {
		return &SpecError{Field: "size", Msg: fmt.Sprintf("shingle size %d out of range 1..%d", s.Size, MaxShingleSize)}
	}
	if s.Hashes < 1 || s.Hashes > MaxHashes {
		return &SpecError{Field: "k", Msg: fmt.Sprintf("number of hashes %d out of range 1..%d", s.Hashes, MaxHashes)}
	}
	if s.Scheme == Datasketch && s.Seed > 1<<32-1 {
		return &SpecError{Field: "seed", Msg: "the datasketch scheme takes a seed in 0..4294967295 (numpy RandomState)"}
	}
	return nil
}

// SpecError is a Spec that cannot be used or parsed, naming the field at fault.
type SpecError struct {
	Field string
	Msg   string
}

func (e *SpecError) Error() string { return "spec " + e.Field + ": " + e.Msg }

// milvusParams maps the parameter names of Milvus's MinHash function to the Spec fields
// they set, so a function definition's params can be pasted as they are.
var milvusParams = map[string]string{
	"num_hashes":    "k",
	"shingle_size":  "size",
	"hash_function": "hash",
	"token_level":   "level",
}

// specField is one key=value of a spec text, key lowercased.
type specField struct{ key, val string }

// ParseSpec reads the text form written by Spec.String. Fields may come in any order and
// any omitted field keeps its default, so "level=char size=5" is a valid spec. The
// profiles' defaults follow the scheme unless given: datasketch hash=sha1 norm=none
// seed=1; milvus hash=xxh3 norm=none size=3 seed=1234, Milvus's own.
//
// Milvus's MinHash function parameters are accepted too, under Milvus's names and with
// Milvus's values: num_hashes, shingle_size, hash_function (xxhash or sha1), token_level
// (word or char) and seed (negative seeds wrap to uint64, as Milvus passes them to C++).
// They imply scheme=milvus, and the text may be the params as a JSON object, e.g.
//
//	{"num_hashes": 128, "shingle_size": 3, "hash_function": "xxhash", "token_level": "word", "seed": 1234}
//
// Milvus derives num_hashes from the output field's dim (dim/32) when it is omitted;
// here it defaults to k=128, so give it.
//
// A version prefix (v1, v2) is optional and any version up to SpecVersion is read as the
// current computation of its scheme: a v1 milvus text, written before that profile
// matched Milvus bit for bit, parses to the v2 spec, whose ID differs.
func ParseSpec(text string) (Spec, error) {
	var fields []specField
	var err error
	trimmed := strings.TrimSpace(text)
	isJSON := strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[")
	if isJSON {
		fields, err = jsonSpecFields(text)
	} else {
		fields, err = textSpecFields(text)
	}
	if err != nil {
		return Spec{}, err
	}
	// The scheme decides the defaults of other fields, so it is settled first.
	s := DefaultSpec()
	milvusKey := ""
	for _, f := range fields {
		if _, ok := milvusParams[f.key]; ok && milvusKey == "" {
			milvusKey = f.key
		}
	}
	if isJSON || milvusKey != "" {
		s.Scheme = Milvus
	}
	for _, f := range fields {
		if f.key == "scheme" {
			s.Scheme = Scheme(f.val)
		}
	}
	if milvusKey != "" && s.Scheme != Milvus {
		return Spec{}, &SpecError{Field: milvusKey, Msg: fmt.Sprintf("%s is a parameter of Milvus's MinHash function, for scheme=milvus only", milvusKey)}
	}
	switch s.Scheme {
	case Datasketch:
		s.Hash, s.Norm, s.Seed = SHA1, Norm{}, 1
	case Milvus:
		s.Hash, s.Norm, s.Size, s.Seed = XXH3, Norm{}, 3, 1234
	}
	seen := map[string]string{}
	for _, f := range fields {
		field := f.key
		if p, ok := milvusParams[f.key]; ok {
			field = p
		}
		if first, dup := seen[field]; dup {
			msg := "given twice"
			if first != f.key {
				msg = fmt.Sprintf("given twice (%s and %s set the same field)", first, f.key)
			}
			return Spec{}, &SpecError{Field: f.key, Msg: msg}
		}
		seen[field] = f.key
		if err := s.set(f); err != nil {
			return Spec{}, &SpecError{Field: f.key, Msg: err.Error()}
		}
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// set applies one field to s; the caller names the field in the error.
func (s *Spec) set(f specField) error {
	var err error
	switch f.key {
	case "scheme": // settled by ParseSpec
	case "norm":
		s.Norm, err = parseNorm(f.val)
	case "level":
		s.Level = Level(f.val)
	case "size", "shingle_size":
		if s.Size, err = strconv.Atoi(f.val); err != nil {
			return fmt.Errorf("%q is not a whole number (want 1 to %d)", f.val, MaxShingleSize)
		}
	case "k", "num_hashes":
		if s.Hashes, err = strconv.Atoi(f.val); err != nil {
			return fmt.Errorf("%q is not a whole number (want 1 to %d)", f.val, MaxHashes)
		}
	case "hash":
		s.Hash = HashFunc(f.val)
	case "hash_function":
		switch strings.ToLower(f.val) {
		case "xxhash", "xxhash64": // Milvus's names for the low 32 bits of XXH3-64
			s.Hash = XXH3
		case "sha1":
			s.Hash = SHA1
		default:
			return fmt.Errorf("unknown hash function %q (Milvus takes xxhash or sha1)", f.val)
		}
	case "token_level":
		switch strings.ToLower(f.val) {
		case "word":
			s.Level = Word
		case "char", "character":
			s.Level = Char
		default:
			return fmt.Errorf("unknown token level %q (Milvus takes word or char)", f.val)
		}
	case "seed":
		if s.Scheme == Milvus {
			// Milvus reads the seed as an int64 and hands it to C++ as uint64_t.
			if v, perr := strconv.ParseInt(f.val, 10, 64); perr == nil {
				s.Seed = uint64(v)
				return nil
			}
		}
		if s.Seed, err = strconv.ParseUint(f.val, 10, 64); err != nil {
			return fmt.Errorf("%q is not a whole number from 0 to %d", f.val, uint64(math.MaxUint64))
		}
	default:
		return fmt.Errorf("unknown field (want scheme, norm, level, size, k, hash, seed, or Milvus's num_hashes, shingle_size, hash_function, token_level)")
	}
	return err
}

// textSpecFields splits "key=value key=value" text, with an optional version prefix.
func textSpecFields(text string) ([]specField, error) {
	var out []specField
	for _, f := range strings.Fields(text) {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			if v, isVersion := strings.CutPrefix(f, "v"); isVersion {
				if n, err := strconv.Atoi(v); err != nil || n < 1 || n > SpecVersion {
					return nil, &SpecError{Field: "version", Msg: fmt.Sprintf("spec version %q is not supported by this build (want v1 to v%d)", f, SpecVersion)}
				}
				continue
			}
			return nil, &SpecError{Field: f, Msg: "want key=value"}
		}
		out = append(out, specField{strings.ToLower(key), val})
	}
	return out, nil
}

// jsonSpecFields reads a JSON object of string or number values, such as the params of a
// Milvus function definition, keeping duplicate keys so ParseSpec can refuse them.
func jsonSpecFields(text string) ([]specField, error) {
	bad := func(msg string) error { return &SpecError{Field: "json", Msg: msg} }
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, bad("want one JSON object of parameters")
	}
	var out []specField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad(err.Error())
		}
		key, _ := tok.(string)
		if tok, err = dec.Token(); err != nil {
			return nil, bad(err.Error())
		}
		var val string
		switch v := tok.(type) {
		case string:
			val = v
		case json.Number:
			val = v.String()
		default:
			return nil, &SpecError{Field: key, Msg: "want a string or a number"}
		}
		out = append(out, specField{strings.ToLower(key), val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad(err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("text after the JSON object")
	}
	return out, nil
}
