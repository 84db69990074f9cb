package web

import (
	"strconv"
)

// Numbers in a query or a form are read by one rule, whatever the parameter: decimal
// digits, a minus for a negative number, and for a fraction one decimal point. Spaces,
// a plus sign, exponents ("1e0"), "NaN", "Inf", hexadecimal and digit separators are
// refused, so that "t=+1" or " 1" is refused by every parameter rather than read by
// one and refused by the next. A minus sign comes before a number other than zero:
// "-0" (or "-0.0") is refused by every parameter, as "+0" is, rather than read as 0 by
// those that take 0 and refused by the others. Each caller names the parameter and its
// range in its own message (a 422).

// plainNumber reports whether s is written as the rule above says, with a decimal
// point allowed when fraction is set.
func plainNumber(s string, fraction bool) bool {
	negative := len(s) > 0 && s[0] == '-'
	if negative {
		s = s[1:]
	}
	digits, nonzero, point := 0, false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
			nonzero = nonzero || c != '0'
		case c == '.' && fraction && !point:
			point = true
		default:
			return false
		}
	}
	return digits > 0 && (nonzero || !negative)
}

// parseWhole reads a whole number written plainly ("12", "-1"); ok is false for
// anything else, or one out of int's range.
func parseWhole(s string) (n int, ok bool) {
	if !plainNumber(s, false) {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// parseDecimal reads a number written plainly ("0.05", "1", "-2.5"); ok is false for
// anything else, or one out of float64's range.
func parseDecimal(s string) (x float64, ok bool) {
	if !plainNumber(s, true) {
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	return x, err == nil
}

// parseID reads an id as pages write one: a positive whole number in its one spelling
// ("7", not "+7", "07" or " 7"), so that one thing has one address; 0 and false for
// anything else.
func parseID(s string) (id int64, ok bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != s {
		return 0, false
	}
	return id, true
}
