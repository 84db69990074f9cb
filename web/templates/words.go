package templates

import (
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/words"
)

// Plural writes a count with the words that agree with it, with thousands separators:
// Plural(1, "bad record was", "bad records were") is "1 bad record was" (words.Count).
func Plural(n int, one, many string) string { return words.Count(n, one, many) }

// capitalize puts the first letter of s in upper case (ASCII: role names).
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// joinNames joins names as "a", "a and b", "a, b and c".
func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	out := names[0]
	for _, n := range names[1 : len(names)-1] {
		out += ", " + n
	}
	return out + " and " + names[len(names)-1]
}

// liveText says over which documents a run goes: the live ones, of how many.
func liveText(f RunForm) string {
	if len(f.Removed) == 0 {
		if f.Docs == 1 {
			return "Over the 1 document"
		}
		return "Over all " + Num(f.Docs) + " documents"
	}
	return fmt.Sprintf("Over the %s of %s (the others were removed by exported manifests: they are neither proposed for removal nor kept)",
		Plural(f.Live, "live document", "live documents"), Num(f.Docs))
}

// Num writes a whole number for people, with thousands separators: 14,780.
func Num[T ~int | ~int64 | ~int32](n T) string { return words.Thousands(int(n)) }

// ShapeWords writes an LSH shape for people, the nouns agreeing with the numbers:
// "37 bands × 3 rows", "128 bands × 1 row".
func ShapeWords(bands, rows int) string {
	return Plural(bands, "band", "bands") + " × " + Plural(rows, "row", "rows")
}
