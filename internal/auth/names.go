package auth

import (
	"errors"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"strings"
	"unicode"

	"golang.org/x/text/secure/precis"
)

// Account names are what people and the audit log know each other by, so a name must
// not be able to pass for another: not for another account's ("аlice" with a Cyrillic
// а, "alice" with a zero-width space inside), and not for the names the program gives
// to what no account did (the command line's "cli:root", the audit log's "system").
// A name is stored as PRECIS's Nickname profile (RFC 8266) enforces it: NFKC (so
// full-width "ａｌｉｃｅ" is "alice"), spaces trimmed and runs of them made one, and
// control, format and default-ignorable characters (zero-width spaces and joiners,
// bidirectional overrides, soft hyphens) refused. Beyond that, a name may not hold a
// colon (the program's actor names are "cli:…" and "import:…"), may not mix the
// alphabets whose letters look alike (Latin, Greek, Cyrillic, Armenian, Cherokee),
// and may not look like another: NameSkeleton maps the characters people confuse to
// one of them, and two names with the same skeleton are the same name to a reader.

// ErrLookalikeName refuses a name that looks like an existing account's name.
var ErrLookalikeName = errkind.New(errkind.Conflict, "the name looks like the name of an existing account: choose another")

// reservedNames are the names the program shows for what no account did.
var reservedNames = []string{"system"}

// NormalizeName returns the form an account name is stored in, or why it cannot be
// one (an error whose text a person can act on).
func NormalizeName(name string) (string, error) {
	out, err := precis.Nickname.String(name)
	switch {
	case err != nil && strings.TrimSpace(name) == "":
		return "", errors.New("the name needs 1 to 64 characters")
	case err != nil:
		return "", errors.New("the name cannot contain control, format or invisible characters (such as zero-width spaces or direction marks)")
	case len(out) > 64:
		return "", errors.New("the name needs 1 to 64 characters")
	case strings.Contains(NameSkeleton(out), ":"):
		return "", errors.New(`the name cannot contain a colon: names like "cli:…" and "import:…" are the program's`)
	case mixesAlphabets(out):
		return "", errors.New("the name mixes alphabets whose letters look alike (Latin, Greek, Cyrillic): write it in one")
	}
	for _, r := range reservedNames {
		if NameSkeleton(out) == NameSkeleton(r) {
			return "", errors.New(`the name is reserved: "` + r + `" is what the audit log shows for the program itself`)
		}
	}
	return out, nil
}

// CheckName validates an account name (see NormalizeName).
func CheckName(name string) error {
	_, err := NormalizeName(name)
	return err
}

// lookalikeAlphabets are the scripts whose letters are confused with each other's.
var lookalikeAlphabets = []*unicode.RangeTable{unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Armenian, unicode.Cherokee}

// mixesAlphabets reports whether name has letters of two of lookalikeAlphabets.
func mixesAlphabets(name string) bool {
	seen := -1
	for _, r := range name {
		for i, t := range lookalikeAlphabets {
			if unicode.Is(t, r) {
				if seen >= 0 && seen != i {
					return true
				}
				seen = i
			}
		}
	}
	return false
}

// NameSkeleton is what a name looks like, in the spirit of Unicode TR39's skeleton:
// the name in NFKC, lowercased, each character people confuse with another replaced by
// one of them (Cyrillic and Greek letters by the Latin ones they look like, 0 by o,
// 1, I, i and | by l, dashes and colons by - and :), "rn" by "m" and "vv" by "w", and
// spaces dropped. Two names with the same skeleton read as the same name.
func NameSkeleton(name string) string {
	n, err := precis.Nickname.String(name)
	if err != nil {
		n = name
	}
	var b strings.Builder
	for _, r := range strings.ToLower(n) {
		if unicode.IsSpace(r) {
			continue
		}
		if p, ok := confusables[r]; ok {
			b.WriteString(p)
			continue
		}
		b.WriteRune(r)
	}
	s := b.String()
	for _, m := range [][2]string{{"rn", "m"}, {"vv", "w"}} {
		s = strings.ReplaceAll(s, m[0], m[1])
	}
	return s
}

// confusables maps lowercase characters to the character they are mistaken for: a
// small part of TR39's confusables.txt, the letters of the alphabets next to Latin and
// the digits and marks that pass for letters.
var confusables = map[rune]string{
	// Latin and digits.
	'0': "o", '1': "l", 'i': "l", 'ı': "l", '|': "l", 'ǀ': "l", 'ɩ': "l",
	// Cyrillic.
	'а': "a", 'в': "b", 'е': "e", 'ё': "e", 'з': "3", 'і': "l", 'ї': "l", 'ј': "j", 'к': "k",
	'м': "m", 'н': "h", 'о': "o", 'р': "p", 'с': "c", 'т': "t", 'у': "y", 'х': "x", 'ѕ': "s",
	'ԁ': "d", 'һ': "h", 'ӏ': "l", 'ԛ': "q", 'ԝ': "w", 'ь': "b", 'ɡ': "g", 'ү': "y", 'ә': "e",
	// Greek.
	'α': "a", 'β': "b", 'γ': "y", 'ε': "e", 'η': "n", 'ι': "l", 'κ': "k", 'ν': "v", 'ο': "o",
	'ρ': "p", 'τ': "t", 'υ': "u", 'χ': "x", 'ω': "w", 'ζ': "z", 'μ': "u",
	// Armenian.
	'օ': "o", 'ս': "u", 'հ': "h", 'ո': "n", 'զ': "q",
	// Marks that pass for a colon, a hyphen or a dot.
	'꞉': ":", '∶': ":", 'ː': ":", '˸': ":", '׃': ":", '︰': ":",
	'‐': "-", '‑': "-", '‒': "-", '–': "-", '—': "-", '―': "-", '−': "-", '˗': "-",
	'·': ".", '․': ".", '‧': ".", '∙': ".",
}
