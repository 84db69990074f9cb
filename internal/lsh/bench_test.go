package lsh

import (
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	benchOnce  sync.Once
	benchTexts []string
	benchBytes int64

	wholeOnce  sync.Once
	wholeTexts []string
	wholeBytes int64
)

// benchCorpus is testdata/corpus5000.jsonl.gz: the first 5,000 documents of the shared
// corpus (Debian books in 17 languages, SPDX licenses, npm READMEs), each cut to its first
// 2,000 bytes. For tests and the candidate benchmarks; signature speed is measured on
// wholeCorpus.
func benchCorpus(b testing.TB) ([]string, int64) {
	benchOnce.Do(func() {
		for _, d := range readJSONLGz[struct{ ID, Text string }](b, "testdata/corpus5000.jsonl.gz") {
			benchTexts = append(benchTexts, d.Text)
			benchBytes += int64(len(d.Text))
		}
	})
	return benchTexts, benchBytes
}

// wholeCorpus is testdata/corpus-whole.jsonl.gz: 1,273 whole real documents (every fourth
// of the shared corpus), 10 MB of text, none cut.
func wholeCorpus(b testing.TB) ([]string, int64) {
	wholeOnce.Do(func() {
		for _, d := range readJSONLGz[struct{ ID, Text string }](b, "testdata/corpus-whole.jsonl.gz") {
			wholeTexts = append(wholeTexts, d.Text)
			wholeBytes += int64(len(d.Text))
		}
	})
	return wholeTexts, wholeBytes
}

func reportDocs(b *testing.B, docs int) {
	b.ReportMetric(float64(docs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// withKernel runs f as a sub-benchmark "kernel=NAME" for every kernel this machine runs.
func withKernel(b *testing.B, f func(b *testing.B)) {
	defer UseKernel(Kernel())
	for _, name := range Kernels() {
		b.Run("kernel="+name, func(b *testing.B) {
			if err := UseKernel(name); err != nil {
				b.Fatal(err)
			}
			f(b)
		})
	}
}

// BenchmarkShingles measures normalization, tokenizing, shingling, base hashing and
// deduplication on one core: everything before the permutations. word5-fast is what the
// fast scheme does (every shingle's hash, no deduplication).
func BenchmarkShingles(b *testing.B) {
	texts, n := wholeCorpus(b)
	for _, name := range []string{"word5", "word5-fast", "char5"} {
		spec := mustSpec(b, "size=5 level="+name[:4])
		b.Run(name, func(b *testing.B) {
			withTextPaths(b, func(b *testing.B) {
				h, _ := NewHasher(spec)
				b.SetBytes(n)
				b.ReportAllocs()
				for b.Loop() {
					for _, t := range texts {
						if name == "word5-fast" {
							h.hashAllShingles(t)
						} else {
							h.hashShingles(t)
						}
					}
				}
				reportDocs(b, len(texts))
			})
		})
	}
}

// BenchmarkNormalize measures normalization alone on one core, for the default steps
// (nfkc+lower+space) and all of them, over the whole real documents.
func BenchmarkNormalize(b *testing.B) {
	texts, n := wholeCorpus(b)
	for _, norm := range []string{"nfkc+lower+space", "nfkc+lower+punct+digits+space"} {
		spec := mustSpec(b, "norm="+norm)
		b.Run(norm, func(b *testing.B) {
			withTextPaths(b, func(b *testing.B) {
				z := NewNormalizer(spec.Norm)
				b.SetBytes(n)
				b.ReportAllocs()
				for b.Loop() {
					for _, t := range texts {
						z.buf = spec.Norm.appendNormalized(z.buf[:0], &z.iter, z.table, t)
					}
				}
				reportDocs(b, len(texts))
			})
		})
	}
}

// withTextPaths runs f as the sub-benchmark simd=avx512, with the AVX-512 paths of text
// preparation (the normalizer's 64-byte blocks, shingles hashed eight at a time) where
// the CPU has them, and as simd=none without them.
func withTextPaths(b *testing.B, f func(b *testing.B)) {
	blocks, hash := wideBlocks, wideHash
	defer func() { wideBlocks, wideHash = blocks, hash }()
	if blocks || hash {
		b.Run("simd=avx512", func(b *testing.B) {
			wideBlocks, wideHash = blocks, hash
			f(b)
		})
	}
	b.Run("simd=none", func(b *testing.B) {
		wideBlocks, wideHash = false, false
		f(b)
	})
}

// BenchmarkSignatures measures text in, signatures out, on all cores (Spec.Signatures),
// over whole real documents held in memory; the classic scheme once per kernel the
// machine runs (kernel=avx512, avx2, generic). Run with -cpu 1 for the single-core figure.
// The end-to-end figure (file in, file out) is cmd/server's BenchmarkSignaturesCommand.
func BenchmarkSignatures(b *testing.B) {
	texts, n := wholeCorpus(b)
	for _, k := range []int{128, 256} {
		for _, scheme := range []string{"classic", "fast"} {
			spec := mustSpec(b, "size=5 k="+itoa(k)+" scheme="+scheme)
			run := func(b *testing.B) {
				b.SetBytes(n)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := spec.Signatures(texts); err != nil {
						b.Fatal(err)
					}
				}
				reportDocs(b, len(texts))
			}
			b.Run("word5-k"+itoa(k)+"-"+scheme, func(b *testing.B) {
				if scheme == "fast" {
					run(b) // one hash per shingle: no permutation kernel
					return
				}
				withKernel(b, run)
			})
		}
	}
}

// BenchmarkKernel compares the permutation kernels on one document's worth of hashes.
func BenchmarkKernel(b *testing.B) {
	p := newPermutations(Classic, 1, 256)
	xs := make([]uint64, 1000)
	for i := range xs {
		xs[i] = uint64(i) * 2654435761 & maxHash
	}
	acc := make([]uint64, 256)
	for _, k := range kernels {
		if k.missing != "" {
			continue
		}
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				k.permuteMin(xs, p.a, p.b, acc)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(xs)*len(acc)), "ns/op-perm")
		})
	}
}

// BenchmarkCandidates measures batch candidate generation over 5,000 real documents
// (word 5-shingle, k=128 signatures) for a few shapes.
func BenchmarkCandidates(b *testing.B) {
	texts, _ := benchCorpus(b)
	sigs, err := mustSpec(b, "size=5 k=128").Signatures(texts)
	if err != nil {
		b.Fatal(err)
	}
	for _, sh := range []Shape{{20, 5}, {9, 13}, {32, 4}} {
		b.Run("docs5000-"+sh.String(), func(b *testing.B) {
			var pairs int
			for b.Loop() {
				c, err := Candidates(sigs, sh)
				if err != nil {
					b.Fatal(err)
				}
				pairs = len(c)
			}
			b.ReportMetric(float64(pairs), "pairs")
			reportDocs(b, len(sigs))
		})
	}
}

// BenchmarkBandKeys measures the keys of every band of a document's signature, for a
// shape of many short bands and one of a few long ones: BandKeys' XXH64 definition
// (what indexes store) against the in-memory keys candidate generation buckets by.
func BenchmarkBandKeys(b *testing.B) {
	texts, _ := benchCorpus(b)
	sigs, err := mustSpec(b, "size=5 k=256").Signatures(texts)
	if err != nil {
		b.Fatal(err)
	}
	for _, sh := range []Shape{{64, 4}, {5, 51}} {
		for _, kind := range []string{"xxh64", "bucket"} {
			b.Run(sh.String()+"-"+kind, func(b *testing.B) {
				var dst []uint64
				for b.Loop() {
					for _, sig := range sigs {
						if kind == "xxh64" {
							dst = sh.BandKeys(sig, dst[:0])
						} else {
							dst = sh.bucketKeys(sig, dst[:0])
						}
					}
				}
				reportDocs(b, len(sigs))
			})
		}
	}
}

// BenchmarkExactJaccard measures the merge intersection of two shingle sets of real
// documents (the pair of the sample's two longest texts).
func BenchmarkExactJaccard(b *testing.B) {
	texts, _ := benchCorpus(b)
	h, _ := NewHasher(mustSpec(b, "size=5"))
	sets := make([][]uint64, 0, 2)
	var bytes int64
	for _, i := range []int{0, 1} {
		sets = append(sets, h.ShingleSet(texts[i]))
		bytes += int64(len(texts[i]))
	}
	b.SetBytes(bytes)
	for b.Loop() {
		ExactJaccard(sets[0], sets[1])
	}
}

// BenchmarkShingleSet measures what exact Jaccard pays per document and representation:
// the sorted distinct shingle hashes (Hasher.ShingleSet) of the sample's real documents,
// cut to 2,000 bytes as a sweep's large benchmarks cut them, on one core.
func BenchmarkShingleSet(b *testing.B) {
	texts, n := benchCorpus(b)
	for _, spec := range []string{"size=1", "size=5", "level=char size=3", "level=char size=7"} {
		b.Run(strings.NewReplacer("level=", "", "size=", "", " ", "").Replace(spec), func(b *testing.B) {
			h, _ := NewHasher(mustSpec(b, spec))
			b.SetBytes(n)
			for b.Loop() {
				for _, t := range texts {
					h.ShingleSet(t)
				}
			}
			reportDocs(b, len(texts))
		})
	}
}

// BenchmarkSetKernels measures the comparisons a sweep's clustering makes per pair of
// documents, with the set kernels and without: the overlap of character 3-shingle sets
// (64-bit hashes, and the same sets numbered as 32-bit ids, as a sweep numbers them) and
// the equal positions of two k=256 signatures, over pairs of neighbouring real documents
// of the sample (cut to 2,000 bytes, as a sweep's large benchmarks cut them).
func BenchmarkSetKernels(b *testing.B) {
	texts, _ := benchCorpus(b)
	texts = texts[:1000]
	h, _ := NewHasher(mustSpec(b, "level=char size=3 k=256"))
	var sets64 [][]uint64
	var sets32 [][]uint32
	var sigs []Signature
	ids := map[uint64]uint32{}
	for _, t := range texts {
		t = t[:min(len(t), 2000)]
		s := h.ShingleSet(t)
		sets64 = append(sets64, s)
		var s32 []uint32
		for _, v := range s {
			id, ok := ids[v]
			if !ok {
				id = uint32(len(ids))
				ids[v] = id
			}
			s32 = append(s32, id)
		}
		slices.Sort(s32)
		sets32 = append(sets32, s32)
		sigs = append(sigs, h.Signature(t, nil))
	}
	was := setsAVX2
	defer func() { setsAVX2 = was }()
	for _, on := range []bool{false, true} {
		if on && !was {
			continue
		}
		name := map[bool]string{false: "generic", true: "avx2"}[on]
		setsAVX2 = on
		pairs := func(b *testing.B, f func(i int)) {
			for b.Loop() {
				for i := range len(texts) - 1 {
					f(i)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(len(texts)-1)), "ns/pair")
		}
		b.Run("overlap64/"+name, func(b *testing.B) { pairs(b, func(i int) { Overlap64(sets64[i], sets64[i+1], 0) }) })
		b.Run("overlap32/"+name, func(b *testing.B) { pairs(b, func(i int) { Overlap32(sets32[i], sets32[i+1], 0) }) })
		b.Run("estimate256/"+name, func(b *testing.B) { pairs(b, func(i int) { Estimate(sigs[i], sigs[i+1]) }) })
	}
}
