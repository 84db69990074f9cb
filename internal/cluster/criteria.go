package cluster

import (
	"cmp"
	"strings"
)

// CriterionInfo is a registered keeper criterion, as PolicyInfo is a registered policy:
// its name, what pages say of it, the ranking it reads from a Rule (none for most), and
// how it orders two documents. Rule's Validate, String, ParseRule and Keeper read the
// registry, so a new criterion is one registration (and, if it takes a ranking, the
// Rule field that holds it).
type CriterionInfo struct {
	Name  Criterion
	Title string // "longest text"
	// ranking returns the Rule's preference list the criterion reads, best first (nil
	// for a criterion that takes none).
	ranking func(r *Rule) *[]string
	// compare is negative when a is kept rather than b, positive when b is, and 0 when
	// the criterion does not tell them apart.
	compare func(o *order, a, b *Doc) int
}

// Ranked reports whether the criterion takes a ranking: "source(debian,spdx)".
func (c CriterionInfo) Ranked() bool { return c.ranking != nil }

var criteria []CriterionInfo

// registerCriterion adds a criterion; the order of registration is the order messages
// and pages list them in.
func registerCriterion(c CriterionInfo) {
	if _, ok := CriterionOf(c.Name); ok {
		panic("cluster: keeper criterion " + string(c.Name) + " registered twice")
	}
	criteria = append(criteria, c)
}

func init() {
	registerCriterion(CriterionInfo{Name: Longest, Title: "longest text",
		compare: func(_ *order, a, b *Doc) int { return cmp.Compare(b.Len, a.Len) }})
	registerCriterion(CriterionInfo{Name: Shortest, Title: "shortest text",
		compare: func(_ *order, a, b *Doc) int { return cmp.Compare(a.Len, b.Len) }})
	registerCriterion(CriterionInfo{Name: Earliest, Title: "earliest date, then import order",
		compare: func(_ *order, a, b *Doc) int {
			if za, zb := a.Date.IsZero(), b.Date.IsZero(); za != zb {
				if zb {
					return -1 // the dated one first
				}
				return 1
			}
			return a.Date.Compare(b.Date)
		}})
	registerCriterion(CriterionInfo{Name: Source, Title: "source, in the order given",
		ranking: func(r *Rule) *[]string { return &r.Sources },
		compare: func(o *order, a, b *Doc) int {
			return cmp.Compare(rank(o.sources, a.Source), rank(o.sources, b.Source))
		}})
	registerCriterion(CriterionInfo{Name: Language, Title: "language, in the order given",
		ranking: func(r *Rule) *[]string { return &r.Languages },
		compare: func(o *order, a, b *Doc) int { return cmp.Compare(rank(o.langs, a.Lang), rank(o.langs, b.Lang)) }})
}

// Criteria returns every registered keeper criterion, in the order messages list them.
func Criteria() []Criterion { return names(criteria, CriterionInfo.name) }

// CriterionOf returns the registered criterion c.
func CriterionOf(c Criterion) (CriterionInfo, bool) { return find(criteria, c, CriterionInfo.name) }

func (c CriterionInfo) name() Criterion { return c.Name }

// names lists the names of a registry's entries (policies, criteria), in its order.
func names[E any, N any](entries []E, name func(E) N) []N {
	out := make([]N, len(entries))
	for i, e := range entries {
		out[i] = name(e)
	}
	return out
}

// find returns the entry of a registry named n.
func find[E any, N comparable](entries []E, n N, name func(E) N) (E, bool) {
	for _, e := range entries {
		if name(e) == n {
			return e, true
		}
	}
	var none E
	return none, false
}

// criterionNames lists the registered criteria for a message: "a, b or c".
func criterionNames() string {
	known := names(criteria, func(c CriterionInfo) string { return string(c.Name) })
	if len(known) < 2 {
		return strings.Join(known, "")
	}
	return strings.Join(known[:len(known)-1], ", ") + " or " + known[len(known)-1]
}
