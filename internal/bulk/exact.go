package bulk

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// eachDoc calls fn with every line of docs.jsonl, in document order.
func (r *run) eachDoc(fn func(i int, d *docLine) error) error {
	f, err := os.Open(r.path(docsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	i := 0
	for sc.Scan() {
		var d docLine
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return fmt.Errorf("%s line %d: %w", docsFile, i+1, err)
		}
		if err := fn(i, &d); err != nil {
			return err
		}
		i++
	}
	return sc.Err()
}

// DuplicateIDError is a corpus in which two documents have one id: a manifest names
// documents by id, so the run refuses it.
type DuplicateIDError struct {
	ID           string
	Place, First string
	Field        string
}

func (e *DuplicateIDError) Error() string {
	return fmt.Sprintf("%s: field %s: duplicate id %q (first at %s)", e.Place, e.Field, e.ID, e.First)
}

// exact is stage 2: groups of documents with equal normalized text (by SHA-256), written
// to exact.jsonl one group a line, members in input order, groups by first member; and
// the check that no id is used twice.
func (r *run) exact(ctx context.Context) error {
	if err := os.RemoveAll(r.path(chunkDir)); err != nil {
		return err
	}
	type entry struct {
		key [16]byte
		doc int32
	}
	keys := make([]entry, 0, r.sum.Docs)
	ids := make([]string, 0, r.sum.Docs)
	err := r.eachDoc(func(i int, d *docLine) error {
		var e entry
		if _, err := hex.Decode(e.key[:], []byte(d.Norm[:32])); err != nil {
			return fmt.Errorf("%s line %d: norm: %w", docsFile, i+1, err)
		}
		e.doc = int32(i)
		keys = append(keys, e)
		ids = append(ids, d.ID)
		if i%65536 == 0 {
			r.report(int64(i), int64(r.sum.Docs), "docs", false, false)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := r.checkIDs(ids); err != nil {
		return err
	}
	ids = nil
	slices.SortFunc(keys, func(a, b entry) int {
		if c := slices.Compare(a.key[:], b.key[:]); c != 0 {
			return c
		}
		return int(a.doc - b.doc)
	})
	var groups [][]int32
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j].key == keys[i].key {
			j++
		}
		if j-i > 1 {
			g := make([]int32, j-i)
			for x := range g {
				g[x] = keys[i+x].doc
			}
			groups = append(groups, g)
		}
		i = j
	}
	slices.SortFunc(groups, func(a, b []int32) int { return int(a[0] - b[0]) })
	r.sum.ExactGroups = len(groups)
	return writeFile(r.path(exactFile), func(w *bufio.Writer) error {
		for _, g := range groups {
			b, _ := json.Marshal(g)
			w.Write(append(b, '\n'))
		}
		return nil
	})
}

// checkIDs refuses a corpus with an id used twice, naming both places.
func (r *run) checkIDs(ids []string) error {
	order := make([]int32, len(ids))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := strings.Compare(ids[a], ids[b]); c != 0 {
			return c
		}
		return int(a - b)
	})
	for x := 1; x < len(order); x++ {
		if ids[order[x]] == ids[order[x-1]] {
			first, dup := int(order[x-1]), int(order[x])
			e := &DuplicateIDError{ID: ids[dup], Field: r.opt.Corpus.IDFieldName()}
			_ = r.eachDoc(func(i int, d *docLine) error {
				switch i {
				case first:
					e.First = d.Place
				case dup:
					e.Place = d.Place
				}
				return nil
			})
			return e
		}
	}
	return nil
}

// readExact reads exact.jsonl.
func (r *run) readExact() ([][]int, error) {
	f, err := os.Open(r.path(exactFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]int
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<30)
	for sc.Scan() {
		var g []int
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", exactFile, len(out)+1, err)
		}
		out = append(out, g)
	}
	return out, sc.Err()
}

// follower maps every document to its exact group's first member (itself when alone):
// a document that is not its own first takes no part in LSH.
func follower(n int, groups [][]int) (rep []int32) {
	rep = make([]int32, n)
	for i := range rep {
		rep[i] = int32(i)
	}
	for _, g := range groups {
		for _, d := range g[1:] {
			rep[d] = int32(g[0])
		}
	}
	return rep
}
