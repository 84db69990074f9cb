package bulk

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"io"
	"os"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// bandEntry is one band of one document: the band's key and the document.
type bandEntry struct {
	key uint64
	doc uint32
}

func cmpBand(a, b bandEntry) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.doc, b.doc)
}

// sigReader reads signatures from signatures.bin; safe for concurrent use (ReadAt).
type sigReader struct {
	f *os.File
	k int
}

func (s *sigReader) read(doc int, dst lsh.Signature, buf []byte) (lsh.Signature, []byte, error) {
	n := s.k * 4
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := s.f.ReadAt(buf, int64(doc)*int64(n)); err != nil {
		return dst, buf, err
	}
	dst = dst[:0]
	for j := range s.k {
		dst = append(dst, binary.LittleEndian.Uint32(buf[j*4:]))
	}
	return dst, buf, nil
}

// candidates is stage 3: band keys to sorted runs, merged bucket by bucket into pairs,
// the pairs to sorted runs, merged into candidates.bin (a, b as one little-endian uint64
// a<<32|b, a < b, sorted, unique).
func (r *run) candidates(ctx context.Context) error {
	if err := os.RemoveAll(r.path(runsDir)); err != nil {
		return err
	}
	if err := os.MkdirAll(r.path(runsDir), 0o755); err != nil {
		return err
	}
	groups, err := r.readExact()
	if err != nil {
		return err
	}
	rep := follower(r.sum.Docs, groups)
	sh := r.opt.Params.Shape
	n := r.sum.Docs
	bands := &sorter[bandEntry]{dir: r.path(runsDir), prefix: "bands", max: max(1024, r.opt.RunBytes/16), cmp: cmpBand, size: 12,
		enc: func(b []byte, e bandEntry) {
			binary.LittleEndian.PutUint64(b, e.key)
			binary.LittleEndian.PutUint32(b[8:], e.doc)
		},
		dec: func(b []byte) bandEntry {
			return bandEntry{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint32(b[8:])}
		},
		onRun: func(n int) error { return r.crashAt(StageCandidates, n) }}
	f, err := os.Open(r.path(sigFile))
	if err != nil {
		return err
	}
	defer f.Close()
	k := r.opt.Params.Spec.Hashes
	const block = 4096
	raw := make([]byte, block*k*4)
	keys := make([]uint64, block*sh.Bands)
	br := bufio.NewReaderSize(f, 1<<20)
	for lo := 0; lo < n; lo += block {
		if err := ctx.Err(); err != nil {
			return err
		}
		m := min(block, n-lo)
		if _, err := io.ReadFull(br, raw[:m*k*4]); err != nil {
			return err
		}
		var wg sync.WaitGroup
		per := (m + r.opt.Workers - 1) / r.opt.Workers
		for w := 0; w < m; w += per {
			wg.Go(func() {
				sig := make(lsh.Signature, k)
				var tmp []uint64
				for i := w; i < min(w+per, m); i++ {
					for j := range k {
						sig[j] = binary.LittleEndian.Uint32(raw[(i*k+j)*4:])
					}
					tmp = sh.BandKeys(sig, tmp[:0])
					copy(keys[i*sh.Bands:], tmp)
				}
			})
		}
		wg.Wait()
		for i := range m {
			if rep[lo+i] != int32(lo+i) { // a follower of an exact group
				continue
			}
			for _, key := range keys[i*sh.Bands : (i+1)*sh.Bands] {
				if err := bands.add(bandEntry{key, uint32(lo + i)}); err != nil {
					return err
				}
			}
		}
		r.report(int64(lo+m), int64(n), "docs", false, false)
	}

	pairs := &sorter[uint64]{dir: r.path(runsDir), prefix: "pairs", max: max(1024, r.opt.RunBytes/8), cmp: cmp.Compare[uint64], size: 8,
		enc: func(b []byte, p uint64) { binary.LittleEndian.PutUint64(b, p) }, dec: binary.LittleEndian.Uint64, unique: true,
		onRun: func(n int) error { return r.crashAt(StageCandidates, 1000+n) }}
	total := bands.written + int64(len(bands.buf))
	var seen int64
	var bucket []uint32
	var key uint64
	var skipped int64
	emit := func() error {
		m := len(bucket)
		if m > MaxBucket {
			all, kept := int64(m)*int64(m-1)/2, int64(MaxBucket)*int64(MaxBucket-1)/2
			skipped += all - kept
			m = MaxBucket
		}
		for x := 0; x < m; x++ {
			for y := x + 1; y < m; y++ {
				if bucket[x] == bucket[y] { // two bands' keys collided: 2^-64
					continue
				}
				if err := pairs.add(uint64(bucket[x])<<32 | uint64(bucket[y])); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err = bands.merge(func(e bandEntry) error {
		if seen++; seen%(1<<20) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			r.report(seen, total, "records", false, false)
		}
		if len(bucket) > 0 && e.key != key {
			if err := emit(); err != nil {
				return err
			}
			bucket = bucket[:0]
		}
		key = e.key
		bucket = append(bucket, e.doc)
		return nil
	})
	if err != nil {
		return err
	}
	if err := emit(); err != nil {
		return err
	}
	r.sum.BucketSkipped = skipped
	var count int64
	err = writeFile(r.path(candFile), func(w *bufio.Writer) error {
		var b [8]byte
		return pairs.merge(func(p uint64) error {
			binary.LittleEndian.PutUint64(b[:], p)
			w.Write(b[:])
			count++
			return nil
		})
	})
	if err != nil {
		return err
	}
	r.sum.Candidates = count
	return os.RemoveAll(r.path(runsDir))
}

// eachCandidate calls fn with blocks of candidate pairs, in order.
func (r *run) eachCandidate(fn func(pairs []uint64) error) error {
	f, err := os.Open(r.path(candFile))
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	const block = 1 << 16
	raw := make([]byte, block*8)
	pairs := make([]uint64, 0, block)
	for {
		n, err := io.ReadFull(br, raw)
		if n%8 != 0 {
			return io.ErrUnexpectedEOF
		}
		pairs = pairs[:0]
		for i := 0; i < n; i += 8 {
			pairs = append(pairs, binary.LittleEndian.Uint64(raw[i:]))
		}
		if len(pairs) > 0 {
			if err := fn(pairs); err != nil {
				return err
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
