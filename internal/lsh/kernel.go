package lsh

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxHash is the value of an empty signature position: datasketch's _max_hash.
const maxHash = 0xFFFFFFFF

// KernelEnv names the environment variable that forces a permutation kernel by name
// (see Kernels), so a machine can measure and test the paths it would not choose by
// itself. Empty or unset: the fastest kernel, measured at start (at the first use, in a
// program that does not ask for Kernel before it signs).
const KernelEnv = "DEDUP_KERNEL"

// kernel is one implementation of the classic schemes' permutation step: for every i,
// acc[i] = min(acc[i], ((a[i]*x + b[i]) mod 2^61-1) & 0xFFFFFFFF) over every x in xs. The
// xs are 32-bit values in uint64 lanes and every acc value is below 2^32.
type kernel struct {
	name string
	fn   func(xs, a, b, acc []uint64) // any len(a), len(xs) > 0
	// missing says why this CPU or build cannot run the kernel; empty when it can.
	missing string
}

// generic is the pure-Go kernel, which every machine runs.
var generic = kernel{name: "generic", fn: permuteMinGeneric}

// kernels lists every kernel, the architecture's own (archKernels, kernel_amd64.go)
// first. The order says nothing about speed: which is fastest differs from CPU to CPU
// (on a Zen 4 EPYC an earlier AVX-512 kernel lost to the AVX2 one, which declaration
// order had put second), so the kernel in use is the fastest measured on this CPU
// (calibrate).
var kernels = append(archKernels(), generic)

// choice is a kernel in use and why it is the one.
type choice struct {
	k   *kernel
	why string
}

// active is the kernel in use; nil until the first use or UseKernel, when the
// calibration picks the fastest (unless KernelEnv named one at start).
var active atomic.Pointer[choice]

func init() {
	// A kernel named by the environment is taken without measuring; a name the CPU cannot
	// run is left to whoever set the variable to report (UseKernel in the commands), and
	// the fastest is measured instead.
	if name := os.Getenv(KernelEnv); name != "" {
		if k, err := kernelNamed(name); err == nil {
			active.Store(&choice{k, "named by " + KernelEnv})
		}
	}
}

// current is the kernel in use, measured and chosen on first use.
func current() *choice {
	if c := active.Load(); c != nil {
		return c
	}
	active.CompareAndSwap(nil, fastestChoice())
	return active.Load()
}

// Kernel returns the name of the permutation kernel the classic schemes run on (one of
// Kernels). Every kernel computes the same signatures; only the speed differs.
func Kernel() string { return current().k.name }

// KernelReason says in a few words why Kernel is the kernel in use: the fastest measured
// at start, or named by KernelEnv or UseKernel.
func KernelReason() string { return current().why }

// KernelCalibration is what the calibration measured on this CPU: each kernel's time
// per shingle and permutation, and the kernels the CPU or build cannot run, with the
// reason. It calibrates if that has not happened yet (a kernel named by KernelEnv skips
// it at start); it takes a millisecond or two.
func KernelCalibration() string { return calibReport(calibration()) }

// Kernels returns the names of the kernels this CPU and build run, in no order of
// speed; the last is always "generic".
func Kernels() []string {
	var names []string
	for _, k := range kernels {
		if k.missing == "" {
			names = append(names, k.name)
		}
	}
	return names
}

// UseKernel selects the permutation kernel by name, "" for the fastest measured on this
// CPU. The measuring happens when Kernel is first asked or a classic signature first
// permutes, so that a run that never permutes (the fast scheme's) does not wait for it;
// the commands ask Kernel at start when they will permute. It fails, keeping the current
// kernel, for an unknown name or a kernel the CPU or build cannot run. It is meant for
// start-up (the DEDUP_KERNEL variable) and benchmarks, not for use while signatures are
// being computed elsewhere.
func UseKernel(name string) error {
	if name == "" {
		active.Store(nil)
		return nil
	}
	k, err := kernelNamed(name)
	if err != nil {
		return err
	}
	why := "named by the caller"
	if os.Getenv(KernelEnv) == name {
		why = "named by " + KernelEnv
	}
	active.Store(&choice{k, why})
	return nil
}

// kernelNamed is the kernel of that name if this CPU and build run it.
func kernelNamed(name string) (*kernel, error) {
	var names []string
	for i := range kernels {
		k := &kernels[i]
		names = append(names, k.name)
		if k.name == name {
			if k.missing != "" {
				return nil, fmt.Errorf("kernel %s: %s", name, k.missing)
			}
			return k, nil
		}
	}
	return nil, fmt.Errorf("unknown kernel %q (want %s)", name, strings.Join(names, ", "))
}

// The calibration: calibRounds rounds, each timing every runnable kernel once, in turn,
// on the same calibShingles shingles x calibK permutations; a kernel's figure is its
// best round, so a round slowed by another process or a context switch does not count,
// and interleaving the kernels spreads a slow spell of the machine over all of them.
// It takes about 1 ms on a 2-core Zen 5 EPYC, most of it the generic kernel.
const (
	calibK        = 256
	calibShingles = 400
	calibRounds   = 7
)

// kernelTime is a kernel's best time per shingle and permutation in the calibration.
type kernelTime struct {
	k  *kernel
	ns float64
}

// calibration is measured once per process, at the first need.
var calibration = sync.OnceValue(calibrate)

// calibrate times every kernel this CPU runs (see calibRounds).
func calibrate() []kernelTime {
	p := newPermutations(Classic, 1, calibK)
	xs := make([]uint64, calibShingles)
	for i := range xs {
		xs[i] = mix64(uint64(i)) & maxHash
	}
	acc := make([]uint64, calibK)
	var times []kernelTime
	for i := range kernels {
		if k := &kernels[i]; k.missing == "" {
			k.permuteMin(xs, p.a, p.b, acc) // warm up: code, data, the vector units
			times = append(times, kernelTime{k, math.Inf(1)})
		}
	}
	for range calibRounds {
		for i := range times {
			for j := range acc {
				acc[j] = maxHash
			}
			start := time.Now()
			times[i].k.permuteMin(xs, p.a, p.b, acc)
			ns := float64(time.Since(start).Nanoseconds()) / (calibK * calibShingles)
			times[i].ns = min(times[i].ns, ns)
		}
	}
	return times
}

// fastestChoice is the fastest kernel of the calibration, with its reason.
func fastestChoice() *choice {
	return &choice{fastest(calibration()), "fastest measured at start"}
}

// fastest is the kernel of least time; the order of times breaks ties.
func fastest(times []kernelTime) *kernel {
	best := times[0]
	for _, t := range times[1:] {
		if t.ns < best.ns {
			best = t
		}
	}
	return best.k
}

// calibReport says what the calibration measured, and which kernels it could not run.
func calibReport(times []kernelTime) string {
	var b strings.Builder
	for i, t := range times {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.3f", t.k.name, t.ns)
	}
	b.WriteString(" ns per shingle and permutation")
	for _, k := range kernels {
		if k.missing != "" {
			fmt.Fprintf(&b, "; %s not run: %s", k.name, k.missing)
		}
	}
	return b.String()
}

// permuteMin runs the kernel in use.
func permuteMin(xs, a, b, acc []uint64) { current().k.permuteMin(xs, a, b, acc) }

// permuteMin runs k, for any xs.
func (k *kernel) permuteMin(xs, a, b, acc []uint64) {
	if len(xs) > 0 {
		k.fn(xs, a, b, acc)
	}
}

// permuteMinGeneric is the pure-Go kernel. Four permutations per pass over xs keep each x
// in a register for four independent multiply chains. Each chain takes the shortcut of
// the AVX2 kernel (see permuteQuick), and the four are computed again exactly (permute,
// branch-free) in the rare pass whose minimum the shortcut cannot vouch for. Slicing b
// and acc to len(a) up front lets the compiler drop the bounds checks inside the loop.
func permuteMinGeneric(xs, a, b, acc []uint64) {
	b = b[:len(a)]
	acc = acc[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		a0, a1, a2, a3 := a[i], a[i+1], a[i+2], a[i+3]
		b0, b1, b2, b3 := b[i]+1, b[i+1]+1, b[i+2]+1, b[i+3]+1
		w0, w1, w2, w3 := uint32(maxHash), uint32(maxHash), uint32(maxHash), uint32(maxHash)
		for _, x := range xs {
			w0 = min(w0, permuteQuick(a0, b0, x))
			w1 = min(w1, permuteQuick(a1, b1, x))
			w2 = min(w2, permuteQuick(a2, b2, x))
			w3 = min(w3, permuteQuick(a3, b3, x))
		}
		if min(w0, w1, w2, w3) >= 8 {
			acc[i] = min(acc[i], uint64(w0-1))
			acc[i+1] = min(acc[i+1], uint64(w1-1))
			acc[i+2] = min(acc[i+2], uint64(w2-1))
			acc[i+3] = min(acc[i+3], uint64(w3-1))
			continue
		}
		permuteMinExact(xs, a[i:i+4], b[i:i+4], acc[i:i+4])
	}
	permuteMinExact(xs, a[i:], b[i:], acc[i:])
}

// permuteQuick is the shortcut of permute that the kernels take, with b1 = b+1: the low
// 32 bits of t + (t >> 61) for t = a*x + b1, without the mask and the final subtraction.
// It is permute(a, b, x) + 1 (mod 2^32) whenever the reduction needs no subtraction;
// where it needs one, permute is 0 to 7 and so is permuteQuick; so over a run of xs
// whose minimum permuteQuick is 8 or more, the minimum of permute is that minus one.
// (It is 0 where permute is 2^32-1, which also leaves the minimum below 8.)
func permuteQuick(a, b1, x uint64) uint32 {
	t := a*x + b1
	return uint32(t + t>>61)
}

// permuteMinExact is the generic kernel without the shortcut, one permutation at a time.
func permuteMinExact(xs, a, b, acc []uint64) {
	b = b[:len(a)]
	acc = acc[:len(a)]
	for i := range a {
		m := uint32(acc[i])
		for _, x := range xs {
			m = min(m, permute(a[i], b[i], x))
		}
		acc[i] = uint64(m)
	}
}

// permute is ((a*x + b) mod 2^61-1) & 0xFFFFFFFF. The product wraps in uint64 before the
// reduction, as datasketch (numpy uint64) and Milvus (C++ uint64_t) both do. With t the
// wrapped sum, r = (t & P) + (t >> 61) is t mod P or t mod P + P (r < P+8). Where r >= P
// the result is the low 32 bits of r-P = r+1-2^61, which are those of r+1; r >= P exactly
// when bit 61 of r+1 is set, so adding (r+1)>>61 subtracts P without a branch.
func permute(a, b, x uint64) uint32 {
	t := a*x + b
	r := (t & mersenne61) + (t >> 61)
	return uint32(r + (r+1)>>61)
}
