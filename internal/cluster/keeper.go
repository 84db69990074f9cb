package cluster

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Doc is what the keeper rule knows about a document. Its position in Input.Docs is its
// index, and the index is its import order: the lower, the earlier imported.
type Doc struct {
	Len    int       // text length in bytes (Longest, Shortest)
	Date   time.Time // a date from the metadata (Earliest); zero when the document has none
	Source string    // Source ranking
	Lang   string    // Language preference
}

// ParseDate reads a document's metadata field "date" for Doc.Date: RFC 3339 or
// YYYY-MM-DD; anything else is no date (the zero time), so a malformed date never wins
// Earliest. The studio's runs and the dedup command both read dates with it, so they
// choose the same keepers.
func ParseDate(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// DocOf returns what keeper rules read of a stored document: its length in bytes, its
// source and language, and the date in its metadata's "date" field (ParseDate), a JSON
// object. The studio's runs and sweeps read documents with it, so they keep the same
// documents.
func DocOf(bytes int, source, lang, meta string) Doc {
	d := Doc{Len: bytes, Source: source, Lang: lang}
	if strings.Contains(meta, `"date"`) {
		var m struct {
			Date string `json:"date"`
		}
		if json.Unmarshal([]byte(meta), &m) == nil {
			d.Date = ParseDate(m.Date)
		}
	}
	return d
}

// Criterion is one way of preferring one document of a cluster as its keeper.
type Criterion string

// Criteria of a Rule, registered in criteria.go (CriterionInfo). Each puts documents in
// an order; the first in that order is kept.
const (
	// Longest keeps the longest text. Long superset documents (bundled license files, a
	// README that includes its license) then become keepers and pull in the shorter texts
	// they contain, which is how single linkage turns them into hubs.
	Longest Criterion = "longest"
	// Shortest keeps the shortest text: the least content removed from the corpus is the
	// keeper's, the most is its duplicates'.
	Shortest Criterion = "shortest"
	// Earliest keeps the document with the earliest Doc.Date; documents without a date
	// come after every dated one. With no dates at all it is import order.
	Earliest Criterion = "earliest"
	// Source keeps the document whose Doc.Source comes first in Rule.Sources; sources not
	// listed come after every listed one.
	Source Criterion = "source"
	// Language keeps the document whose Doc.Lang comes first in Rule.Languages; languages
	// not listed come after every listed one.
	Language Criterion = "language"
)

// Rule chooses a cluster's keeper: the criteria are applied in order, each breaking the
// ties of the one before, and the lowest index (the earliest imported) breaks what ties
// remain, so every rule is a total order and the keeper never depends on input order.
// Its String form is what a manifest records.
type Rule struct {
	By        []Criterion
	Sources   []string // preference order for Source, best first
	Languages []string // preference order for Language, best first
}

// Validate reports why r cannot choose keepers: no criterion, an unknown or repeated
// criterion, or an empty or malformed ranking for Source or Language.
func (r Rule) Validate() error {
	if len(r.By) == 0 {
		return &InputError{Field: "rule", Msg: "no criterion (want " + criterionNames() + ")"}
	}
	for i, c := range r.By {
		if _, ok := CriterionOf(c); !ok {
			return &InputError{Field: "rule", Msg: "unknown criterion " + strconv.Quote(string(c))}
		}
		if slices.Contains(r.By[:i], c) {
			return &InputError{Field: "rule", Msg: "criterion " + string(c) + " given twice"}
		}
	}
	for _, info := range criteria {
		if !info.Ranked() {
			continue
		}
		c, names := info.Name, *info.ranking(&r)
		if !slices.Contains(r.By, c) {
			if len(names) > 0 {
				return &InputError{Field: "rule", Msg: string(c) + " ranking given but " + string(c) + " is not a criterion"}
			}
			continue
		}
		if len(names) == 0 {
			return &InputError{Field: "rule", Msg: string(c) + " needs a ranking, best first"}
		}
		for i, name := range names {
			if name == "" || strings.ContainsAny(name, ",()>") || strings.TrimSpace(name) != name {
				return &InputError{Field: "rule", Msg: string(c) + " name " + strconv.Quote(name) + " is empty or holds , ( ) > or outer spaces"}
			}
			if slices.Contains(names[:i], name) {
				return &InputError{Field: "rule", Msg: string(c) + " " + strconv.Quote(name) + " ranked twice"}
			}
		}
	}
	return nil
}

// String returns the rule's text form, the criteria joined by ">" with the rankings in
// parentheses, e.g. "source(debian,spdx)>longest". ParseRule reads it back.
func (r Rule) String() string {
	var b strings.Builder
	for i, c := range r.By {
		if i > 0 {
			b.WriteByte('>')
		}
		b.WriteString(string(c))
		if info, ok := CriterionOf(c); ok && info.Ranked() {
			b.WriteString("(" + strings.Join(*info.ranking(&r), ",") + ")")
		}
	}
	return b.String()
}

// ParseRule reads the form written by Rule.String; spaces around the separators are
// allowed.
func ParseRule(s string) (Rule, error) {
	var r Rule
	for part := range strings.SplitSeq(s, ">") {
		part = strings.TrimSpace(part)
		name, list, hasList := strings.Cut(part, "(")
		name = strings.TrimSpace(name)
		if hasList {
			var ok bool
			if list, ok = strings.CutSuffix(list, ")"); !ok {
				return Rule{}, &InputError{Field: "rule", Msg: "unclosed ( in " + strconv.Quote(part)}
			}
			var names []string
			for n := range strings.SplitSeq(list, ",") {
				names = append(names, strings.TrimSpace(n))
			}
			info, ok := CriterionOf(Criterion(name))
			if !ok || !info.Ranked() {
				return Rule{}, &InputError{Field: "rule", Msg: "criterion " + strconv.Quote(name) + " takes no ranking"}
			}
			*info.ranking(&r) = names
		}
		r.By = append(r.By, Criterion(name))
	}
	if err := r.Validate(); err != nil {
		return Rule{}, err
	}
	return r, nil
}

// Keeper returns the member of members that r keeps. docs holds every member's Doc at the
// member's index. It panics on an empty members list.
func (r Rule) Keeper(docs []Doc, members []int) int {
	o := newOrder(r, docs)
	best := members[0]
	for _, m := range members[1:] {
		if o.less(m, best) {
			best = m
		}
	}
	return best
}

// Order is a Rule compiled over documents: Less(a, b) reports whether a is kept rather
// than b. A cluster's keeper is its least member under Less, so the keeper of two
// clusters merged is the lesser of their keepers: a sweep follows keepers as clusters
// grow without looking at every member again.
type Order struct{ o *order }

// Order compiles r over docs (indexes are document indexes).
func (r Rule) Order(docs []Doc) Order { return Order{newOrder(r, docs)} }

// RankedOrder is Order with every document's place in the rule's order computed up
// front (one sort of the documents): Less is then one comparison of two places. For a
// sweep, which orders the same documents under the same rules in thousands of
// clusterings (Config.Order). docs must not change afterwards.
func (r Rule) RankedOrder(docs []Doc) Order { return Order{rankedOrder(r, docs)} }

// Less reports whether document a is kept rather than document b.
func (o Order) Less(a, b int) bool { return o.o.less(a, b) }

// order is a compiled Rule: less(a, b) reports whether a is kept rather than b.
type order struct {
	by      []func(o *order, a, b *Doc) int // the criteria's compare, in order
	docs    []Doc
	sources map[string]int
	langs   map[string]int
	// rank, when set, is each document's place in the order (rankedOrder).
	rank []int32
}

func rankedOrder(r Rule, docs []Doc) *order {
	o := newOrder(r, docs)
	byPlace := make([]int32, len(docs))
	for i := range byPlace {
		byPlace[i] = int32(i)
	}
	slices.SortFunc(byPlace, func(a, b int32) int {
		switch {
		case a == b:
			return 0
		case o.less(int(a), int(b)):
			return -1
		}
		return 1 // a total order (ties go by index)
	})
	o.rank = make([]int32, len(docs))
	for place, d := range byPlace {
		o.rank[d] = int32(place)
	}
	o.docs = nil // less reads the places only
	return o
}

func newOrder(r Rule, docs []Doc) *order {
	o := &order{docs: docs, by: make([]func(o *order, a, b *Doc) int, 0, len(r.By))}
	for _, c := range r.By {
		if info, ok := CriterionOf(c); ok {
			o.by = append(o.by, info.compare)
		}
	}
	if len(r.Sources) > 0 {
		o.sources = make(map[string]int, len(r.Sources))
		for i, s := range r.Sources {
			o.sources[s] = i
		}
	}
	if len(r.Languages) > 0 {
		o.langs = make(map[string]int, len(r.Languages))
		for i, s := range r.Languages {
			o.langs[s] = i
		}
	}
	return o
}

func rank(m map[string]int, s string) int {
	if i, ok := m[s]; ok {
		return i
	}
	return len(m)
}

func (o *order) less(a, b int) bool {
	if o.rank != nil {
		return o.rank[a] < o.rank[b]
	}
	da, db := &o.docs[a], &o.docs[b]
	for _, compare := range o.by {
		if c := compare(o, da, db); c != 0 {
			return c < 0
		}
	}
	return a < b
}
