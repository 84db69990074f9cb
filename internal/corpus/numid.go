package corpus

import (
	"fmt"
	"strconv"
	"strings"
)

// NumberID turns an id written as a JSON number into the one text every import uses for
// it, documents and labels alike: the decimal integer form when the value is a whole
// number (2, 2.0, 2e0 and 20e-1 are all "2"; -0 is "0"), so that a label file saying 2
// finds the document whose id was written 2.0. A number that is not whole (2.5, 1e-3) is
// refused: ids are names, and a fraction read through a float would not name one thing.
// Ids written as text (JSON strings, CSV cells) are never passed here: "007" stays "007".
// raw must be a JSON number as written; the value is exact (no float conversion), so
// 12345678901234567890 stays itself.
func NumberID(raw string) (string, error) {
	s := raw
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp, hasExp := s, "", false
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp, hasExp = s[:i], s[i+1:], true
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) || (strings.Contains(mant, ".") && frac == "") {
		return "", fmt.Errorf("%q is not a number", raw)
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	scale := -len(frac)
	if hasExp {
		sign, ed := 1, exp
		if strings.HasPrefix(ed, "-") {
			sign = -1
		}
		if strings.HasPrefix(ed, "+") || strings.HasPrefix(ed, "-") {
			ed = ed[1:]
		}
		if ed == "" || !allDigits(ed) {
			return "", fmt.Errorf("%q is not a number", raw)
		}
		ed = strings.TrimLeft(ed, "0")
		if len(ed) > 7 {
			return "", fmt.Errorf("the number %s is too large or too small for an id", raw)
		}
		e, _ := strconv.Atoi("0" + ed)
		scale += sign * e
	}
	if digits == "" {
		return "0", nil // 0, -0, 0.0, 0e5
	}
	if scale < 0 {
		cut := len(digits) + scale // digits before the decimal point
		if cut <= 0 || strings.TrimRight(digits[cut:], "0") != "" {
			return "", fmt.Errorf("the number %s is not a whole number: ids written as numbers must be integers (write %q as a string to keep it)", raw, raw)
		}
		digits = digits[:cut]
	} else {
		if len(digits)+scale > maxIDBytes {
			return "", fmt.Errorf("the number %s has more than %d digits", raw, maxIDBytes)
		}
		digits += strings.Repeat("0", scale)
	}
	if neg {
		digits = "-" + digits
	}
	return digits, nil
}

// maxIDBytes is the longest id accepted.
const maxIDBytes = 1024

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
