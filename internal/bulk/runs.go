package bulk

import (
	"bufio"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// sorter sorts more records than memory holds: records collect in a buffer of at most
// max; a full buffer is sorted and written to disk as a run; merge reads all runs back
// in one ordered stream (a k-way merge). Records are fixed-size.
type sorter[T any] struct {
	dir, prefix string
	max         int
	buf         []T
	runs        []string
	cmp         func(a, b T) int
	size        int
	enc         func(b []byte, t T)
	dec         func(b []byte) T
	unique      bool // drop records equal to the one before
	written     int64
	onRun       func(n int) error
}

func (s *sorter[T]) add(t T) error {
	s.buf = append(s.buf, t)
	if len(s.buf) >= s.max {
		return s.flush()
	}
	return nil
}

// flush writes the buffer as a sorted run.
func (s *sorter[T]) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	slices.SortFunc(s.buf, s.cmp)
	if s.unique {
		s.buf = slices.CompactFunc(s.buf, func(a, b T) bool { return s.cmp(a, b) == 0 })
	}
	name := filepath.Join(s.dir, fmt.Sprintf("%s-%05d.run", s.prefix, len(s.runs)))
	err := writeFile(name, func(w *bufio.Writer) error {
		b := make([]byte, s.size)
		for _, t := range s.buf {
			s.enc(b, t)
			w.Write(b)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.written += int64(len(s.buf))
	s.runs = append(s.runs, name)
	s.buf = s.buf[:0]
	if s.onRun != nil {
		return s.onRun(len(s.runs))
	}
	return nil
}

type cursor[T any] struct {
	r   *bufio.Reader
	f   *os.File
	cur T
	b   []byte
}

func (c *cursor[T]) next(dec func([]byte) T) (bool, error) {
	if _, err := io.ReadFull(c.r, c.b); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("%s: %w", c.f.Name(), err)
	}
	c.cur = dec(c.b)
	return true, nil
}

type cursorHeap[T any] struct {
	cs  []*cursor[T]
	cmp func(a, b T) int
}

func (h *cursorHeap[T]) Len() int           { return len(h.cs) }
func (h *cursorHeap[T]) Less(i, j int) bool { return h.cmp(h.cs[i].cur, h.cs[j].cur) < 0 }
func (h *cursorHeap[T]) Swap(i, j int)      { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *cursorHeap[T]) Push(x any)         { h.cs = append(h.cs, x.(*cursor[T])) }
func (h *cursorHeap[T]) Pop() any {
	c := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	return c
}

// merge calls fn with every record of every run in order (equal records once when
// unique), then removes the runs.
func (s *sorter[T]) merge(fn func(T) error) error {
	if err := s.flush(); err != nil {
		return err
	}
	h := &cursorHeap[T]{cmp: s.cmp}
	defer func() {
		for _, c := range h.cs {
			c.f.Close()
		}
	}()
	for _, name := range s.runs {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		c := &cursor[T]{r: bufio.NewReaderSize(f, 256<<10), f: f, b: make([]byte, s.size)}
		ok, err := c.next(s.dec)
		if err != nil {
			f.Close()
			return err
		}
		if !ok {
			f.Close()
			continue
		}
		h.cs = append(h.cs, c)
	}
	heap.Init(h)
	var last T
	first := true
	for h.Len() > 0 {
		c := h.cs[0]
		t := c.cur
		if !s.unique || first || s.cmp(t, last) != 0 {
			if err := fn(t); err != nil {
				return err
			}
			last, first = t, false
		}
		ok, err := c.next(s.dec)
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			c.f.Close()
			heap.Pop(h)
		}
	}
	for _, name := range s.runs {
		if err := os.Remove(name); err != nil {
			return err
		}
	}
	s.runs = nil
	return nil
}
