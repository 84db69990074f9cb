package incremental

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
)

// edit changes one word in every hundred of text: a near-duplicate (Jaccard of word
// 5-shingles about 0.9).
func edit(text string, seed int) string {
	words := strings.Fields(text)
	for i := seed % 100; i < len(words); i += 100 {
		words[i] = fmt.Sprintf("edited%d", seed)
	}
	return strings.Join(words, " ")
}

func config(exact bool) Config {
	return Config{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 4}, Threshold: 0.7, Exact: exact}
}

// memStore is a store that keeps what it is given, or fails when told to.
type memStore struct {
	mu      sync.Mutex
	entries []Entry
	fail    error
}

func (s *memStore) store(_ context.Context, es []Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.entries = append(s.entries, es...)
	return nil
}

func TestSearchInsertSemantics(t *testing.T) {
	t.Parallel()
	texts := realtext.Texts(t, 3, 250)
	for _, exact := range []bool{false, true} {
		t.Run(fmt.Sprintf("exact=%v", exact), func(t *testing.T) {
			t.Parallel()
			ix, err := New(config(exact))
			if err != nil {
				t.Fatal(err)
			}
			st := &memStore{}
			ctx := context.Background()
			// A batch: a, a near-duplicate of a, an unrelated b. a and b go in; a2 is
			// a's near-duplicate within the batch.
			res, err := ix.SearchInsert(ctx, []Doc{{"a", texts[0]}, {"a2", edit(texts[0], 7)}, {"b", texts[1]}}, st.store)
			if err != nil {
				t.Fatal(err)
			}
			if !res[0].Inserted || len(res[0].Duplicates) != 0 || res[1].Inserted || len(res[1].Duplicates) != 1 ||
				res[1].Duplicates[0].ID != "a" || !res[2].Inserted {
				t.Fatalf("first batch: %+v", res)
			}
			if m := res[1].Duplicates[0]; m.Estimate < 0.7 || exact != !math.IsNaN(m.Jaccard) || (exact && m.Jaccard < 0.7) {
				t.Errorf("a2's match %+v; want estimate (and Jaccard when exact) >= 0.7", m)
			}
			if len(st.entries) != 2 || ix.Len() != 2 {
				t.Fatalf("stored %d, indexed %d; want 2 and 2", len(st.entries), ix.Len())
			}
			if exact != (st.entries[0].Shingles != nil) {
				t.Errorf("shingles kept = %v; want %v", st.entries[0].Shingles != nil, exact)
			}
			// Search without insert: a2 finds a, c finds nothing, nothing changes.
			res = ix.Search([]Doc{{"a3", edit(texts[0], 11)}, {"c", texts[2]}})
			if len(res[0].Duplicates) != 1 || res[0].Duplicates[0].ID != "a" || len(res[1].Duplicates) != 0 || res[0].Inserted || res[1].Inserted {
				t.Errorf("search: %+v", res)
			}
			if ix.Len() != 2 {
				t.Errorf("a search inserted: %d documents", ix.Len())
			}
			// Again with the id a: idempotent, never its own duplicate.
			res, err = ix.SearchInsert(ctx, []Doc{{"a", texts[0]}}, st.store)
			if err != nil || !res[0].AlreadyIndexed || res[0].Inserted || len(res[0].Duplicates) != 0 || len(st.entries) != 2 {
				t.Errorf("re-insert a: %+v, %v; stored %d", res, err, len(st.entries))
			}
			// A batch naming an id twice is refused whole.
			if _, err := ix.SearchInsert(ctx, []Doc{{"x", texts[2]}, {"x", texts[2]}}, st.store); !errors.Is(err, ErrDuplicateID) {
				t.Errorf("duplicate ids: %v; want ErrDuplicateID", err)
			}
			// A failing store inserts nothing.
			st.fail = errors.New("disk full")
			if _, err := ix.SearchInsert(ctx, []Doc{{"c", texts[2]}}, st.store); err == nil || ix.Len() != 2 {
				t.Errorf("failed store: %v, %d documents; want the error and 2", err, ix.Len())
			}
			// Rebuilt from the store, the index answers the same.
			re, _ := New(config(exact))
			for _, e := range st.entries {
				if err := re.Add(e); err != nil {
					t.Fatal(err)
				}
			}
			if got := re.Search([]Doc{{"a3", edit(texts[0], 11)}}); len(got[0].Duplicates) != 1 || got[0].Duplicates[0].ID != "a" {
				t.Errorf("rebuilt index: %+v", got)
			}
		})
	}
}

// Many near-duplicates of one document sent at once, each asking to be inserted: exactly
// one gets in, and every other names a document that did.
func TestConcurrentInsertsKeepOne(t *testing.T) {
	t.Parallel()
	text := realtext.Texts(t, 1, 250)[0]
	ix, err := New(config(false))
	if err != nil {
		t.Fatal(err)
	}
	st := &memStore{}
	var inserted atomic.Int32
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			res, err := ix.SearchInsert(context.Background(), []Doc{{fmt.Sprint("d", i), edit(text, i)}}, st.store)
			if err != nil {
				t.Error(err)
				return
			}
			if res[0].Inserted {
				inserted.Add(1)
			} else if len(res[0].Duplicates) == 0 {
				t.Errorf("d%d: neither inserted nor a duplicate", i)
			}
			ix.Search([]Doc{{"q", text}})
		})
	}
	wg.Wait()
	if inserted.Load() != 1 || ix.Len() != 1 || len(st.entries) != 1 {
		t.Errorf("inserted %d, index holds %d, stored %d; want 1, 1, 1", inserted.Load(), ix.Len(), len(st.entries))
	}
}
