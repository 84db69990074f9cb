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

// mt19937 is the 32-bit Mersenne Twister as numpy's legacy RandomState seeds it
// (init_genrand with a 32-bit integer seed).
type mt19937 struct {
	mt  [624]uint32
	pos int
}

func newMT19937(seed uint32) *mt19937 {
	m := &mt19937{pos: 624}
	m.mt[0] = seed
	for i := 1; i < 624; i++ {
		p := m.mt[i-1]
		m.mt[i] = 1812433253*(p^(p>>30)) + uint32(i)
	}
	return m
}

func (m *mt19937) next() uint32 {
	if m.pos >= 624 {
		const upper, lower = 0x80000000, 0x7fffffff
		for i := range 624 {
			y := m.mt[i]&upper | m.mt[(i+1)%624]&lower
			v := m.mt[(i+397)%624] ^ y>>1
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			m.mt[i] = v
		}
		m.pos = 0
	}
	y := m.mt[m.pos]
	m.pos++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// next64 is numpy's mt19937_next64: the first 32-bit draw is the high half.
func (m *mt19937) next64() uint64 {
	hi := uint64(m.next())
	return hi<<32 | uint64(m.next())
}

// boundedMasked is numpy's legacy bounded draw for uint64 (randint with dtype=np.uint64):
// rejection sampling under the smallest all-ones mask covering rng, giving a value in [0, rng].
func (m *mt19937) boundedMasked(rng uint64) uint64 {
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

// mt19937_64 is the 64-bit Mersenne Twister, C++'s std::mt19937_64.
type mt19937_64 struct {
	mt  [312]uint64
	pos int
}

func newMT19937_64(seed uint64) *mt19937_64 {
	m := &mt19937_64{pos: 312}
	m.mt[0] = seed
	for i := 1; i < 312; i++ {
		p := m.mt[i-1]
		m.mt[i] = 6364136223846793005*(p^(p>>62)) + uint64(i)
	}
	return m
}

func (m *mt19937_64) next() uint64 {
	if m.pos >= 312 {
		const upper, lower = 0xFFFFFFFF80000000, 0x7FFFFFFF
		for i := range 312 {
			y := m.mt[i]&upper | m.mt[(i+1)%312]&lower
			v := m.mt[(i+156)%312] ^ y>>1
			if y&1 != 0 {
				v ^= 0xB5026F5AA96619E9
			}
			m.mt[i] = v
		}
		m.pos = 0
	}
	y := m.mt[m.pos]
	m.pos++
	y ^= y >> 29 & 0x5555555555555555
	y ^= y << 17 & 0x71D67FFFEDA60000
	y ^= y << 37 & 0xFFF7EEE000000000
	y ^= y >> 43
	return y
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
