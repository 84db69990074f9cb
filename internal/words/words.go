// Package words writes counts for people, the same way on every page, report and command:
// whole numbers with thousands separators (1,942) and a noun that agrees with its count
// ("1 removal", "0 removals", "2,136 documents"), never "removal(s)".
package words

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Thousands writes a whole number with thousands separators: 1,942; -12,345.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Count writes n with thousands separators and the words that agree with it:
// Count(1, "bad record was", "bad records were") is "1 bad record was", Count(14780,
// "more pair", "more pairs") "14,780 more pairs".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Thousands(n) + " " + many
}

// quoted matches a Go-quoted string ("...", with \" and other escapes inside), as
// strconv.Quote and %q write the values people typed into the messages they read.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// MaxQuoted is how much of a quoted value ClipQuoted keeps.
const MaxQuoted = 80

// ClipQuoted shortens every quoted value in msg longer than MaxQuoted bytes to its first
// MaxQuoted (whole characters and escapes) followed by `…" (N characters)`: a message that
// quotes what someone typed stays readable, and storing it (the audit log keeps refusals
// with their reasons, for good) costs a line, not the 900 kB someone posted.
func ClipQuoted(msg string) string {
	if len(msg) <= MaxQuoted+2 {
		return msg
	}
	return quoted.ReplaceAllStringFunc(msg, func(q string) string {
		body := q[1 : len(q)-1]
		if len(body) <= MaxQuoted {
			return q
		}
		cut := MaxQuoted
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		head := body[:cut]
		// Do not end inside an escape: drop a trailing run of an odd number of backslashes
		// and whatever part of \x.., \u.... or \U........ follows a backslash.
		if i := strings.LastIndexByte(head, '\\'); i >= 0 && len(head)-i < 10 {
			j := i
			for j > 0 && head[j-1] == '\\' {
				j--
			}
			if (i-j)%2 == 0 { // the backslash at i starts an escape
				head = head[:i]
			}
		}
		n := utf8.RuneCountInString(body)
		return `"` + head + `…" (` + Count(n, "character", "characters") + `)`
	})
}
