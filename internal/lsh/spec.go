package lsh

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Level says what a shingle is made of.
type Level string

// Token levels.
const (
	// Word shingles are n consecutive whitespace-separated tokens joined by one space
	// (the milvus profile joins them with nothing, as Milvus does).
	Word Level = "word"
	// Char shingles are n consecutive runes (bytes in the milvus profile).
	Char Level = "char"
)

// HashFunc names the base hash applied to a shingle's bytes.
type HashFunc string

// Base hashes. Every one is reduced to the 32-bit x that the permutations take.
const (
	XXHash HashFunc = "xxhash" // low 32 bits of XXH64 (seed 0); the default
	SHA1   HashFunc = "sha1"   // first 4 bytes of SHA-1, little-endian (datasketch's sha1_hash32)
	XXH3   HashFunc = "xxh3"   // low 32 bits of XXH3-64 (seed 0), as Milvus does
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
	// Milvus is Classic with Milvus's parameter generator (C++ std::mt19937_64) and shingling
	// (tokens joined with no separator, char shingles over bytes, the "standard" analyzer).
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

// SpecVersion is the version of the canonical text form and of the computation behind it.
// Bump it when a change to this package would change any signature for an unchanged Spec.
const SpecVersion = 1

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
//
// ParseSpec(s.String()) returns s.
func (s Spec) String() string {
	return fmt.Sprintf("v%d scheme=%s norm=%s level=%s size=%d k=%d hash=%s seed=%d",
		SpecVersion, s.Scheme, s.Norm, s.Level, s.Size, s.Hashes, s.Hash, s.Seed)
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
		return &SpecError{Field: "hash", Msg: "the milvus scheme supports hash=xxh3 or hash=sha1"}
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

// ParseSpec reads the text form written by Spec.String. Fields may come in any order and
// any omitted field keeps its DefaultSpec value, so "level=char size=5" is a valid spec;
// the profiles' defaults follow the scheme (datasketch: hash=sha1, no normalization,
// seed=1; milvus: hash=xxh3, seed=1234) unless given.
func ParseSpec(text string) (Spec, error) {
	s := DefaultSpec()
	fields := strings.Fields(text)
	seen := map[string]bool{}
	// The scheme decides the defaults of other fields, so it is read first.
	for _, f := range fields {
		if v, ok := strings.CutPrefix(f, "scheme="); ok {
			s.Scheme = Scheme(v)
			switch s.Scheme {
			case Datasketch:
				s.Hash, s.Norm, s.Seed = SHA1, Norm{}, 1
			case Milvus:
				s.Hash, s.Norm, s.Seed = XXH3, Norm{Lower: true}, 1234
			}
		}
	}
	for _, f := range fields {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			if strings.HasPrefix(f, "v") {
				if f != "v"+strconv.Itoa(SpecVersion) {
					return Spec{}, &SpecError{Field: "version", Msg: fmt.Sprintf("spec version %q is not supported by this build (want v%d)", f, SpecVersion)}
				}
				continue
			}
			return Spec{}, &SpecError{Field: f, Msg: "want key=value"}
		}
		if seen[key] {
			return Spec{}, &SpecError{Field: key, Msg: "given twice"}
		}
		seen[key] = true
		var err error
		switch key {
		case "scheme":
		case "norm":
			s.Norm, err = parseNorm(val)
		case "level":
			s.Level = Level(val)
		case "size":
			s.Size, err = strconv.Atoi(val)
		case "k":
			s.Hashes, err = strconv.Atoi(val)
		case "hash":
			s.Hash = HashFunc(val)
		case "seed":
			s.Seed, err = strconv.ParseUint(val, 10, 64)
		default:
			return Spec{}, &SpecError{Field: key, Msg: "unknown field (want scheme, norm, level, size, k, hash, seed)"}
		}
		if err != nil {
			return Spec{}, &SpecError{Field: key, Msg: err.Error()}
		}
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}
