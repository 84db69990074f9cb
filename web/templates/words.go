package templates

import "fmt"

// Plural writes a count with the words that agree with it: Plural(1, "bad record was",
// "bad records were") is "1 bad record was".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// capitalize puts the first letter of s in upper case (ASCII: role names).
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
