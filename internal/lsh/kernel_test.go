package lsh

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// permuteRef is the definition, as datasketch writes it with numpy uint64:
// (a*x + b) % P & 0xFFFFFFFF, with a*x + b wrapping mod 2^64.
func permuteRef(xs, a, b, acc []uint64) {
	for i := range a {
		for _, x := range xs {
			acc[i] = min(acc[i], (a[i]*x+b[i])%mersenne61&maxHash)
		}
	}
}

// edgeSums are values of t = a*x + b at the edges of the reduction: around P, 2P, 2^61,
// 2^62, and the top of uint64, where (t & P) + (t >> 61) reaches P..P+7.
var edgeSums = []uint64{
	0, 1, mersenne61 - 1, mersenne61, mersenne61 + 1, mersenne61 + 6, mersenne61 + 7,
	1 << 61, 1<<61 + 1, 2*mersenne61 - 1, 2 * mersenne61, 2*mersenne61 + 1, 1<<62 - 1, 1 << 62,
	3<<61 - 2, 3<<61 - 1, 1<<63 - 1, 1 << 63, 7<<61 - 1, 1<<64 - 8, 1<<64 - 2, 1<<64 - 1,
	0xFFFFFFFF, 1 << 32, mersenne61 + 0xFFFFFFFF,
}

func TestPermuteEdges(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(a, b, x uint64) {
		t.Helper()
		want := (a*x + b) % mersenne61 & maxHash
		if got := permute(a, b, x); uint64(got) != want {
			t.Errorf("permute(%#x, %#x, %#x) = %#x; want %#x", a, b, x, got, want)
		}
	}
	for _, s := range edgeSums {
		check(1, s, 0) // t = b
		check(s, 0, 1) // t = a
		for range 100 {
			// b chosen so that a*x + b lands exactly on s.
			a, x := rng.Uint64(), uint64(rng.Uint32())
			check(a, s-a*x, x)
		}
	}
	for range 100_000 {
		check(rng.Uint64(), rng.Uint64(), uint64(rng.Uint32()))
	}
}

// kernelCase builds k permutations and n shingle hashes with the edges planted: x = 0 and
// 2^32-1 among the xs, a = 1 and P-1 and 2^64-1 among the as, and b values that make
// a*0 + b each edge sum, in every lane position of a SIMD block. acc starts at values
// below 2^32, some already small, as after earlier calls.
func kernelCase(rng *rand.Rand, k, n int) (xs, a, b, acc []uint64) {
	xs = make([]uint64, n)
	for i := range xs {
		xs[i] = uint64(rng.Uint32())
	}
	xs[0] = 0
	xs[n-1] = maxHash
	a, b, acc = make([]uint64, k), make([]uint64, k), make([]uint64, k)
	for i := range a {
		a[i], b[i] = rng.Uint64(), rng.Uint64()
		if i%3 == 0 {
			a[i], b[i] = rng.Uint64()%(mersenne61-1)+1, rng.Uint64()%mersenne61 // in range, as generated
		}
		b[i] = edgeSums[(i+n)%len(edgeSums)]
		acc[i] = maxHash
		if i%5 == 1 {
			acc[i] = uint64(rng.Uint32() >> (i % 32))
		}
	}
	a[0] = 1
	if k > 1 {
		a[1] = mersenne61 - 1
		a[k-1] = 1<<64 - 1
	}
	return xs, a, b, acc
}

// requiredKernels are the kernels DEDUP_REQUIRE_KERNELS (comma-separated) says this machine
// must run: CI on a machine known to have AVX-512 sets it so a lost CPU feature fails loudly.
func requiredKernels() map[string]bool {
	req := map[string]bool{}
	for name := range strings.SplitSeq(os.Getenv("DEDUP_REQUIRE_KERNELS"), ",") {
		if name = strings.TrimSpace(name); name != "" {
			req[name] = true
		}
	}
	return req
}

// eachKernel runs f as a parallel subtest per kernel this machine runs; a kernel it cannot
// run is named with the reason (a skipped subtest, visible with -v), and fails the test
// when DEDUP_REQUIRE_KERNELS asks for it.
func eachKernel(t *testing.T, f func(t *testing.T, k *kernel, i int)) {
	t.Helper()
	req := requiredKernels()
	for i := range kernels {
		k := &kernels[i]
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			if k.missing != "" {
				if req[k.name] {
					t.Fatalf("kernel %s required by DEDUP_REQUIRE_KERNELS but not runnable: %s", k.name, k.missing)
				}
				t.Skipf("kernel %s not tested here: %s", k.name, k.missing)
			}
			f(t, k, i)
		})
	}
}

// Every kernel this machine runs must agree bit for bit with the definition; the kernels
// it cannot run are named with the reason (a skipped subtest, visible with -v).
func TestKernelsMatchReference(t *testing.T) {
	t.Parallel()
	eachKernel(t, func(t *testing.T, k *kernel, i int) {
		rng := rand.New(rand.NewPCG(1, uint64(i)))
		for _, size := range []int{1, 3, 4, 7, 15, 16, 17, 31, 32, 33, 40, 64, 96, 128, 256, 257, 1024} {
			for _, n := range []int{1, 2, 3, 7, 100, 1000} {
				xs, a, b, acc := kernelCase(rng, size, n)
				want := slices.Clone(acc)
				permuteRef(xs, a, b, want)
				k.permuteMin(xs, a, b, acc)
				if !slices.Equal(acc, want) {
					for j := range acc {
						if acc[j] != want[j] {
							t.Fatalf("k=%d n=%d: kernel %s gives acc[%d] = %#x; want %#x (a=%#x b=%#x)", size, n, k.name, j, acc[j], want[j], a[j], b[j])
						}
					}
				}
			}
		}
	})
}

// Whole signatures of real documents must not depend on the kernel. Not parallel: it
// switches the package's kernel.
func TestSignaturesSameOnEveryKernel(t *testing.T) {
	defer UseKernel(Kernel())
	texts, _ := benchCorpus(t)
	texts = texts[:300]
	spec := mustSpec(t, "size=5 k=200") // 200 = 6*32 + 8: every kernel plus the generic tail
	var want []Signature
	for i := range kernels {
		k := &kernels[i]
		if k.missing != "" {
			t.Logf("kernel %s not tested here: %s", k.name, k.missing)
			continue
		}
		if err := UseKernel(k.name); err != nil {
			t.Fatal(err)
		}
		got, err := spec.Signatures(texts)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = got
			continue
		}
		for j := range got {
			if !slices.Equal(got[j], want[j]) {
				t.Fatalf("document %d: kernel %s signature differs from kernel %s", j, k.name, kernels[0].name)
			}
		}
	}
}

func TestUseKernel(t *testing.T) {
	defer UseKernel(Kernel())
	if err := UseKernel("generic"); err != nil || Kernel() != "generic" {
		t.Errorf("UseKernel(generic) = %v, Kernel() = %s; want nil, generic", err, Kernel())
	}
	if err := UseKernel("neon2"); err == nil || !strings.Contains(err.Error(), `unknown kernel "neon2"`) {
		t.Errorf("UseKernel(neon2) = %v; want an unknown-kernel error", err)
	}
	if Kernel() != "generic" {
		t.Errorf("a failed UseKernel changed the kernel to %s", Kernel())
	}
	for _, k := range kernels {
		if k.missing == "" {
			continue
		}
		if err := UseKernel(k.name); err == nil || !strings.Contains(err.Error(), k.missing) {
			t.Errorf("UseKernel(%s) = %v; want the reason %q", k.name, err, k.missing)
		}
	}
	if err := UseKernel(""); err != nil || active.Load() != nil {
		t.Errorf(`UseKernel("") = %v and chose %v before the first use; want the choice left to the first use`, err, active.Load())
	}
	if Kernel() != fastest(calibration()).name {
		t.Errorf(`after UseKernel(""), Kernel() = %s; want the calibration's fastest, %s`, Kernel(), fastest(calibration()).name)
	}
	if KernelReason() != "fastest measured at start" {
		t.Errorf(`after UseKernel(""), KernelReason() = %q; want "fastest measured at start"`, KernelReason())
	}
	if err := UseKernel("generic"); err != nil || KernelReason() != "named by the caller" {
		t.Errorf(`after UseKernel("generic"), KernelReason() = %q, %v; want "named by the caller"`, KernelReason(), err)
	}
}

// The kernel is chosen by its measured time, not by where it stands in the list: each
// kernel in turn is made the fastest, first, last and in between.
func TestFastestIsLeastTime(t *testing.T) {
	t.Parallel()
	ks := []*kernel{{name: "a"}, {name: "b"}, {name: "c"}}
	for i := range ks {
		times := make([]kernelTime, len(ks))
		for j, k := range ks {
			times[j] = kernelTime{k, 0.5 + float64(j)/10}
		}
		times[i].ns = 0.1
		if got := fastest(times); got != ks[i] {
			t.Errorf("fastest(%v) = %s; want %s", times, got.name, ks[i].name)
		}
	}
}

// The calibration times every kernel this CPU runs, with a figure a benchmark could
// confirm (positive, finite, and for the generic kernel above every SIMD one's floor),
// and its report names each of them and every kernel it could not run.
func TestCalibration(t *testing.T) {
	t.Parallel()
	times := calibration()
	if got, want := len(times), len(Kernels()); got != want {
		t.Fatalf("calibration timed %d kernels; want the %d this CPU runs", got, want)
	}
	why := calibReport(times)
	for i, kt := range times {
		if kt.k.name != Kernels()[i] {
			t.Errorf("calibration's kernel %d is %s; want %s", i, kt.k.name, Kernels()[i])
		}
		if !(kt.ns > 0 && kt.ns < 1000) {
			t.Errorf("calibration: kernel %s took %v ns per shingle and permutation; want a time", kt.k.name, kt.ns)
		}
		if !strings.Contains(" "+why, " "+kt.k.name+" ") {
			t.Errorf("calibReport = %q; want it to name %s", why, kt.k.name)
		}
	}
	for _, k := range kernels {
		if k.missing != "" && !strings.Contains(why, k.name+" not run: "+k.missing) {
			t.Errorf("calibReport = %q; want it to say why %s was not run", why, k.name)
		}
	}
}

// The calibration's choice holds up against a longer measurement: with
// DEDUP_CHECK_KERNEL_CHOICE=1 (a quiet machine; it takes about 15 s), each kernel runs
// as BenchmarkKernel does and the chosen one must be within 10% of the fastest.
func TestKernelChoiceHoldsUp(t *testing.T) {
	if os.Getenv("DEDUP_CHECK_KERNEL_CHOICE") == "" {
		t.Skip("set DEDUP_CHECK_KERNEL_CHOICE=1 on a quiet machine to check the calibration against benchmarks")
	}
	chosen := fastest(calibration())
	p := newPermutations(Classic, 1, 256)
	xs := make([]uint64, 1000)
	for i := range xs {
		xs[i] = mix64(uint64(i)) & maxHash
	}
	acc := make([]uint64, 256)
	best, bestName, chosenNs := math.Inf(1), "", 0.0
	for _, name := range Kernels() {
		k, _ := kernelNamed(name)
		ns := math.Inf(1)
		for range 3 {
			r := testing.Benchmark(func(b *testing.B) {
				for b.Loop() {
					k.permuteMin(xs, p.a, p.b, acc)
				}
			})
			ns = min(ns, float64(r.NsPerOp())/float64(len(xs)*len(acc)))
		}
		t.Logf("kernel %s: %.4f ns per shingle and permutation (best of 3 benchmarks)", name, ns)
		if ns < best {
			best, bestName = ns, name
		}
		if k == chosen {
			chosenNs = ns
		}
	}
	t.Logf("calibration: %s", KernelCalibration())
	if chosenNs > 1.1*best {
		t.Errorf("the calibration chose %s (%.4f ns); %s is faster (%.4f ns)", chosen.name, chosenNs, bestName, best)
	}
}

// suspectSums are values of t = a*x + b whose permuted value a kernel's shortcut may get
// wrong: every t whose reduction needs the final subtraction of P ((t & P) + (t >> 61) >=
// P), the smallest values (0 to 9) on either side of the AVX2 fast pass's threshold, and
// values whose low 32 bits after the reduction are all ones.
func suspectSums() []uint64 {
	var sums []uint64
	for h := range uint64(8) {
		for j := range h + 1 {
			sums = append(sums, h<<61|(mersenne61-j))
		}
		sums = append(sums, h<<61|(mersenne61-h-1)) // one below the subtraction
	}
	for v := range uint64(10) {
		sums = append(sums, v, mersenne61+v, 1<<61+v)
	}
	return append(sums, maxHash, mersenne61+maxHash, 1<<61+maxHash-1, 1<<64-1-mersenne61+maxHash)
}

// A kernel that takes a shortcut for most values must still be exact when one lane of a
// block meets a suspect sum and every other lane is ordinary: each suspect sum is planted
// alone, as the only shingle and as one of several, in every lane position of a block.
func TestKernelsExactOnSuspectSums(t *testing.T) {
	t.Parallel()
	eachKernel(t, func(t *testing.T, k *kernel, i int) {
		rng := rand.New(rand.NewPCG(7, uint64(i)))
		const size = 80 // avx2: 64 vector lanes, 16 scalar; avx512: a pass of 4 vectors, one of 1
		for _, s := range suspectSums() {
			for _, n := range []int{1, 5} {
				for lane := range size {
					xs := make([]uint64, n)
					for j := range xs {
						xs[j] = uint64(rng.Uint32())
					}
					a, b, acc := make([]uint64, size), make([]uint64, size), make([]uint64, size)
					for j := range a {
						a[j], b[j], acc[j] = rng.Uint64()%(mersenne61-1)+1, rng.Uint64()%mersenne61, maxHash
					}
					x := xs[rng.IntN(n)]
					b[lane] = s - a[lane]*x // a*x + b == s
					want := slices.Clone(acc)
					permuteRef(xs, a, b, want)
					k.permuteMin(xs, a, b, acc)
					if acc[lane] != want[lane] {
						t.Fatalf("t=%#x n=%d lane %d: kernel %s gives %#x; want %#x", s, n, lane, k.name, acc[lane], want[lane])
					}
					if !slices.Equal(acc, want) {
						t.Fatalf("t=%#x n=%d lane %d: kernel %s differs from the definition in another lane", s, n, lane, k.name)
					}
				}
			}
		}
	})
}

// The avx2 kernel orders each permutation's shingles by the low 32 bits L of a*x + b, and
// the true value is L plus 0 to 7; so two shingles whose L are within 7 of each other,
// or equal, can come out in either order. Each is planted at the bottom of one lane, the
// other shingles random, in every lane position (avx2's vector and scalar lanes and
// generic tail: 85 = 5 passes of 16 vector and 1 scalar lanes, 41 = 2 passes of 16 and 4,
// then 1 generic; avx512's passes of 4 vectors and of 2 and 3 vectors with masked lanes:
// 85 = 64 + 21, 41), with L apart by 0 to 9 and the top bits of both sums random, so
// that every order of the true values comes up.
func TestKernelsExactOnNearTies(t *testing.T) {
	t.Parallel()
	eachKernel(t, func(t *testing.T, k *kernel, i int) {
		rng := rand.New(rand.NewPCG(11, uint64(i)))
		for _, size := range []int{85, 41} {
			for lane := range size {
				for d := range uint32(10) {
					for range 20 {
						xs := make([]uint64, 30)
						for j := range xs {
							xs[j] = uint64(rng.Uint32())
						}
						a, b, acc := make([]uint64, size), make([]uint64, size), make([]uint64, size)
						for j := range a {
							a[j], b[j], acc[j] = rng.Uint64()%(mersenne61-1)+1, rng.Uint64()%mersenne61, maxHash
						}
						// x1 lands on t1 = (random top bits) + L1, L1 small; x2's L is L1+d.
						x1 := xs[0]
						l1 := uint32(rng.IntN(64))
						t1 := rng.Uint64()&^maxHash | uint64(l1)
						var x2 uint64
						if d == 0 {
							// An equal L needs a*x2 = a*x1 mod 2^32: a with its lowest bit 0, x2 = x1 + 2^31.
							a[lane] &^= 1
							x2 = (x1 + 1<<31) & maxHash
						} else {
							a[lane] |= 1
							lo := uint32(a[lane])
							inv := lo
							for range 4 {
								inv *= 2 - lo*inv
							}
							b[lane] = t1 - a[lane]*x1
							x2 = uint64((l1 + d - uint32(b[lane])) * inv)
						}
						b[lane] = t1 - a[lane]*x1
						xs[1] = x2
						want := slices.Clone(acc)
						permuteRef(xs, a, b, want)
						k.permuteMin(xs, a, b, acc)
						if !slices.Equal(acc, want) {
							t.Fatalf("k=%d lane %d d=%d: kernel %s gives %#x; want %#x", size, lane, d, k.name, acc[lane], want[lane])
						}
					}
				}
			}
		}
	})
}
