// Package labels holds what people say about pairs of documents: categories and their
// duplicate decisions, label validation, and (with the labeling workflow) sampling and
// agreement statistics.
package labels

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Decision says whether a category settles the duplicate question.
type Decision string

// Decisions.
const (
	Yes Decision = "yes" // a duplicate: remove one of the pair
	No  Decision = "no"  // not a duplicate: keep both
	Ask Decision = "ask" // the annotator decides per pair (y/n)
)

// Category is one answer an annotator can give about a pair.
type Category struct {
	Key       string   `json:"key"`
	Name      string   `json:"name"`
	Duplicate Decision `json:"duplicate"`
	Help      string   `json:"help,omitempty"`
}

// DefaultCategories is the default campaign list; its order gives the keyboard keys 1-7.
var DefaultCategories = []Category{
	{Key: "exact", Name: "exact copy", Duplicate: Yes, Help: "the same text, byte for byte or after whitespace"},
	{Key: "format", Name: "formatting change", Duplicate: Yes, Help: "the same content in another markup or layout (plain text vs Markdown, wrapped lines)"},
	{Key: "minor", Name: "minor edits", Duplicate: Yes, Help: "a changed date, name, footer or a few sentences"},
	{Key: "boilerplate", Name: "boilerplate-heavy", Duplicate: Ask, Help: "mostly shared boilerplate (license headers, templates) around different content"},
	{Key: "partial", Name: "partial overlap", Duplicate: Ask, Help: "one contains a large part of the other, or they share whole sections"},
	{Key: "translation", Name: "translation", Duplicate: No, Help: "the same content in another language"},
	{Key: "different", Name: "different", Duplicate: No, Help: "unrelated documents, or related but genuinely different"},
}

// Find looks a category up by key, name or 1-based position, ignoring case.
func Find(cats []Category, s string) (Category, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(cats) {
		return cats[n-1], true
	}
	for _, c := range cats {
		if strings.EqualFold(c.Key, s) || strings.EqualFold(c.Name, s) {
			return c, true
		}
	}
	return Category{}, false
}

// Keys lists the category keys, for messages.
func Keys(cats []Category) string {
	keys := make([]string, len(cats))
	for i, c := range cats {
		keys[i] = c.Key
	}
	return strings.Join(keys, ", ")
}

// ResolveDuplicate returns the duplicate decision for a label of category c with the
// given duplicate column (empty, or yes/no/true/false/1/0/y/n).
func ResolveDuplicate(c Category, given string) (bool, error) {
	given = strings.ToLower(strings.TrimSpace(given))
	var v, set bool
	switch given {
	case "":
	case "yes", "y", "true", "1":
		v, set = true, true
	case "no", "n", "false", "0":
		v, set = false, true
	default:
		return false, fmt.Errorf("%q is not yes or no", given)
	}
	switch {
	case set:
		return v, nil
	case c.Duplicate == Yes:
		return true, nil
	case c.Duplicate == No:
		return false, nil
	default:
		return false, fmt.Errorf("required for category %q (it does not settle the question)", c.Key)
	}
}

func nan() float64 { return math.NaN() }

// FormatCategories writes a category list one per line: key | name | duplicate | help.
func FormatCategories(cats []Category) string {
	var sb strings.Builder
	for _, c := range cats {
		fmt.Fprintf(&sb, "%s | %s | %s | %s\n", c.Key, c.Name, c.Duplicate, c.Help)
	}
	return sb.String()
}

// ParseCategories reads FormatCategories' text, naming the line at fault.
func ParseCategories(text string) ([]Category, error) {
	var cats []Category
	seen := map[string]bool{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, "|", 4)
		for j := range parts {
			parts[j] = strings.TrimSpace(parts[j])
		}
		if len(parts) < 3 {
			return nil, fmt.Errorf("categories line %d: want key | name | yes, no or ask | guideline", i+1)
		}
		c := Category{Key: parts[0], Name: parts[1], Duplicate: Decision(parts[2])}
		if len(parts) == 4 {
			c.Help = parts[3]
		}
		switch {
		case c.Key == "" || strings.ContainsAny(c.Key, " \t,") || len(c.Key) > 32:
			return nil, fmt.Errorf("categories line %d: the key must be one short word", i+1)
		case c.Duplicate != Yes && c.Duplicate != No && c.Duplicate != Ask:
			return nil, fmt.Errorf("categories line %d: duplicate must be yes, no or ask, not %q", i+1, parts[2])
		case seen[c.Key]:
			return nil, fmt.Errorf("categories line %d: key %q is there twice", i+1, c.Key)
		}
		if _, err := strconv.Atoi(c.Key); err == nil {
			return nil, fmt.Errorf("categories line %d: a key cannot be a number (numbers are the keyboard keys)", i+1)
		}
		if c.Name == "" {
			c.Name = c.Key
		}
		seen[c.Key] = true
		cats = append(cats, c)
	}
	if len(cats) < 2 || len(cats) > 9 {
		return nil, fmt.Errorf("a campaign needs 2 to 9 categories (keys 1-9); this list has %d", len(cats))
	}
	return cats, nil
}

// Overrides reports whether a label's duplicate answer contradicts what its category
// settles (an "exact copy" that is not a duplicate, a "different" pair that is): such a
// label is kept as given, and shown as an override.
func Overrides(c Category, duplicate bool) bool {
	return (c.Duplicate == Yes && !duplicate) || (c.Duplicate == No && duplicate)
}
