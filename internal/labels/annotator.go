package labels

import (
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/errkind"
)

// Annotator names are how labels are keyed (a pair's standing label is per annotator
// name), so a name that stands for something other than a person's account must never
// be one an account can take: otherwise an account named like a rule, or an import
// naming a colleague, would overwrite or pass for their labels.

// RuleAnnotator is the name the program's own rule-made labels carry (the demo's,
// internal/demo's Annotator). No account may take it, and a person's import that
// names it is stored as an import source like any other.
const RuleAnnotator = "demo-rules"

// ImportPrefix begins the annotator name of every label a person imports: a row naming
// "alice" is stored as "import:alice", which no account can be called, so it never
// counts or shows as alice's own label.
const ImportPrefix = "import:"

// ImportedAnnotator is the annotator name an imported label of source (the row's
// annotator, or the import's default) is stored under. A source that carries the
// prefix already (a file exported from here and imported again) keeps its name.
func ImportedAnnotator(source string) string {
	if _, ok := ImportSource(source); ok {
		return source
	}
	return ImportPrefix + source
}

// ImportSource returns the source named by an imported label's annotator name, and
// whether the name is one.
func ImportSource(annotator string) (string, bool) {
	if len(annotator) < len(ImportPrefix) || !strings.EqualFold(annotator[:len(ImportPrefix)], ImportPrefix) {
		return "", false
	}
	return annotator[len(ImportPrefix):], true
}

// ErrReservedName refuses an account name that labels not made by that account carry.
var ErrReservedName = errkind.New(errkind.Invalid, `the name is reserved: "`+RuleAnnotator+`" and names starting with "`+ImportPrefix+`" belong to rule-made and imported labels`)

// CheckAccountName refuses the names reserved for rule-made and imported labels
// (compared as account names are, ignoring case).
func CheckAccountName(name string) error {
	if strings.EqualFold(strings.TrimSpace(name), RuleAnnotator) {
		return ErrReservedName
	}
	if _, ok := ImportSource(strings.TrimSpace(name)); ok {
		return ErrReservedName
	}
	return nil
}
