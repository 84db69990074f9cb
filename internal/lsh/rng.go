package lsh

// The three parameter generators. Each yields the (a, b) pairs of the k permutations
// h_i(x) = ((a_i*x + b_i) mod P) with P = 2^61-1, 1 <= a_i < P, 0 <= b_i < P.

// mersenne61 is the Mersenne prime 2^61-1 that both datasketch and Milvus reduce by.
const mersenne61 = 1<<61 - 1

// splitMix64 is Vigna's SplitMix64, the generator of the classic and fast schemes.
type splitMix64 uint64

func (s *splitMix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	return mix64(uint64(*s))
}

// mix64 is SplitMix64's finalizer, a bijection with full avalanche.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// mersenneTwister is the Mersenne Twister of Matsumoto and Nishimura (1998): one algorithm
// over w-bit words whose variants differ only in their constants, as C++'s
// std::mersenne_twister_engine is one template.
type mersenneTwister[T uint32 | uint64] struct {
	mtConsts[T]
	mt  []T
	pos int
}

// mtConsts are a Mersenne Twister's constants, named as in the paper and the C++ standard:
// word size w, n words of state, middle offset m, r bits in the lower mask, twist matrix a,
// tempering shifts and masks (u, d), (s, b), (t, c) and l, and the seeding multiplier f.
type mtConsts[T uint32 | uint64] struct {
	w, n, m, r, u, s, t, l int
	a, d, b, c, f          T
}

// mt19937 is the 32-bit Mersenne Twister as numpy's legacy RandomState seeds it
// (init_genrand with a 32-bit integer seed).
type mt19937 struct{ *mersenneTwister[uint32] }

func newMT19937(seed uint32) mt19937 {
	return mt19937{newMersenneTwister(mtConsts[uint32]{w: 32, n: 624, m: 397, r: 31, a: 0x9908b0df,
		u: 11, d: 0xffffffff, s: 7, b: 0x9d2c5680, t: 15, c: 0xefc60000, l: 18, f: 1812433253}, seed)}
}

// newMT19937_64 returns the 64-bit Mersenne Twister, C++'s std::mt19937_64.
func newMT19937_64(seed uint64) *mersenneTwister[uint64] {
	return newMersenneTwister(mtConsts[uint64]{w: 64, n: 312, m: 156, r: 31, a: 0xB5026F5AA96619E9,
		u: 29, d: 0x5555555555555555, s: 17, b: 0x71D67FFFEDA60000, t: 37, c: 0xFFF7EEE000000000, l: 43,
		f: 6364136223846793005}, seed)
}

func newMersenneTwister[T uint32 | uint64](k mtConsts[T], seed T) *mersenneTwister[T] {
	g := &mersenneTwister[T]{mtConsts: k, mt: make([]T, k.n), pos: k.n}
	g.mt[0] = seed
	for i := 1; i < k.n; i++ {
		p := g.mt[i-1]
		g.mt[i] = k.f*(p^(p>>(k.w-2))) + T(i)
	}
	return g
}

func (g *mersenneTwister[T]) next() T {
	if g.pos >= g.n {
		lower := T(1)<<g.r - 1
		for i := range g.n {
			y := g.mt[i]&^lower | g.mt[(i+1)%g.n]&lower
			v := g.mt[(i+g.m)%g.n] ^ y>>1
			if y&1 != 0 {
				v ^= g.a
			}
			g.mt[i] = v
		}
		g.pos = 0
	}
	y := g.mt[g.pos]
	g.pos++
	y ^= y >> g.u & g.d
	y ^= y << g.s & g.b
	y ^= y << g.t & g.c
	return y ^ y>>g.l
}

// next64 is numpy's mt19937_next64: the first 32-bit draw is the high half.
func (m mt19937) next64() uint64 {
	hi := uint64(m.next())
	return hi<<32 | uint64(m.next())
}

// boundedMasked is numpy's legacy bounded draw for uint64 (randint with dtype=np.uint64):
// rejection sampling under the smallest all-ones mask covering rng, giving a value in [0, rng].
func (m mt19937) boundedMasked(rng uint64) uint64 {
	mask := rng
	mask |= mask >> 1
	mask |= mask >> 2
	mask |= mask >> 4
	mask |= mask >> 8
	mask |= mask >> 16
	mask |= mask >> 32
	for {
		if v := m.next64() & mask; v <= rng {
			return v
		}
	}
}

// permutations holds the k (a, b) parameters of a classic-family scheme.
type permutations struct {
	a, b []uint64
	// bExt[i] = b[i] - a[i]<<32 (wrapping), set for base hashes that are sign-extended
	// from bit 31 (the milvus profile with SHA-1). Such an x is lo + 2^64 - 2^32 for its
	// low 32 bits lo, so a*x + b = a*lo + bExt in uint64 arithmetic: the permutation of x
	// under (a, b) is that of the 32-bit lo under (a, bExt), and the kernels keep taking
	// 32-bit values.
	bExt []uint64
}

// signExtend fills p.bExt.
func (p *permutations) signExtend() {
	p.bExt = make([]uint64, len(p.a))
	for i, a := range p.a {
		p.bExt[i] = p.b[i] - a<<32
	}
}

func newPermutations(scheme Scheme, seed uint64, k int) permutations {
	p := permutations{a: make([]uint64, k), b: make([]uint64, k)}
	switch scheme {
	case Datasketch:
		// datasketch: gen = np.random.RandomState(seed); for each i:
		// a = gen.randint(1, P, dtype=np.uint64); b = gen.randint(0, P, dtype=np.uint64).
		g := newMT19937(uint32(seed))
		for i := range k {
			p.a[i] = 1 + g.boundedMasked(mersenne61-2)
			p.b[i] = g.boundedMasked(mersenne61 - 1)
		}
	case Milvus:
		g := newMT19937_64(seed)
		for i := range k {
			p.a[i] = g.next()%(mersenne61-1) + 1
			p.b[i] = g.next() % mersenne61
		}
	default:
		g := splitMix64(seed)
		for i := range k {
			p.a[i] = g.next()%(mersenne61-1) + 1
			p.b[i] = g.next() % mersenne61
		}
	}
	return p
}
