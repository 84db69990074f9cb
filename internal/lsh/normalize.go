package lsh

import (
	"slices"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize applies the steps of n to text and returns the result. Invalid UTF-8 bytes are
// replaced by U+FFFD so the output is always valid UTF-8 (importers reject invalid UTF-8
// before it gets here; this keeps the engine total).
func (n Norm) Normalize(text string) string {
	out, _ := n.appendNormalized(nil, nil, buildASCIITable(n), text)
	return string(out)
}

// appendNormalized appends the normalized text to dst. scratch is reused for the NFKC
// step; both are returned grown so a caller can keep them between documents.
// table is n's ASCII table (buildASCIITable), kept by the caller.
func (n Norm) appendNormalized(dst, scratch []byte, table *asciiTable, text string) ([]byte, []byte) {
	if n.NFKC && norm.NFKC.QuickSpanString(text) < len(text) {
		scratch = norm.NFKC.AppendString(scratch[:0], text)
		text = unsafeString(scratch)
	}
	if n == (Norm{NFKC: n.NFKC}) && utf8.ValidString(text) {
		return append(dst, text...), scratch
	}
	dst = slices.Grow(dst, len(text))
	pendingSpace := false
	wrote := false
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			// ASCII fast path: one table lookup says what the byte becomes.
			i++
			switch m := table[c]; m {
			case asciiDrop:
			case asciiSpace:
				pendingSpace = wrote
			default:
				if pendingSpace {
					dst = append(dst, ' ')
					pendingSpace = false
				}
				dst = append(dst, byte(m))
				wrote = true
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if n.CollapseSpace && isSpace(r) {
			pendingSpace = wrote
			continue
		}
		if n.StripPunct && isPunct(r) {
			continue
		}
		if n.FoldDigits && isDigit(r) {
			r = '0'
		}
		if n.Lower {
			r = toLower(r)
		}
		if pendingSpace {
			dst = append(dst, ' ')
			pendingSpace = false
		}
		dst = utf8.AppendRune(dst, r)
		wrote = true
	}
	return dst, scratch
}

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || (r >= '\t' && r <= '\r')
	}
	return unicode.IsSpace(r)
}

func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return (r >= '!' && r <= '/') || (r >= ':' && r <= '@') || (r >= '[' && r <= '`') || (r >= '{' && r <= '~')
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}

func isDigit(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '0' && r <= '9'
	}
	return unicode.IsDigit(r)
}

func toLower(r rune) rune {
	if r < utf8.RuneSelf {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

// asciiTable maps each ASCII byte to what it becomes under a Norm: a byte value, or one
// of the markers below.
type asciiTable [128]int16

const (
	asciiDrop  = -1
	asciiSpace = -2
)

// buildASCIITable maps each ASCII byte to its normalized form under n.
func buildASCIITable(n Norm) *asciiTable {
	var t asciiTable
	for c := range 128 {
		r := rune(c)
		switch {
		case n.CollapseSpace && isSpace(r):
			t[c] = asciiSpace
		case n.StripPunct && isPunct(r):
			t[c] = asciiDrop
		case n.FoldDigits && isDigit(r):
			t[c] = '0'
		case n.Lower:
			t[c] = int16(toLower(r))
		default:
			t[c] = int16(c)
		}
	}
	return &t
}
