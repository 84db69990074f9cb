package web

import (
	"errors"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
)

// Words for messages.

// whoCan names the roles that have p, as a page says who can take a step the viewer
// cannot: "reviewers and admins".
func whoCan(p auth.Permission) string {
	var names []string
	for _, r := range auth.RolesWith(p) {
		names = append(names, string(r)+"s")
	}
	return joinList(names, "and")
}

// capitalize puts the first letter of s in upper case (ASCII: role names).
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// orList joins names as "a", "a or b", "a, b or c".
func orList(names []string) string { return joinList(names, "or") }

func joinList(names []string, conj string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}

// keeperRules says what a keeper rule may be, for a refused one.
const keeperRules = "criteria joined by >, each breaking the ties of the one before: longest, shortest, earliest, " +
	"source(a,b,…), language(en,de,…); e.g. source(debian,spdx)>longest"

// keeperProblem is what is wrong with a keeper rule cluster.ParseRule refused, in words
// (without the package's prefix), and what a rule may be.
func keeperProblem(err error) string {
	msg := err.Error()
	if in, ok := errors.AsType[*cluster.InputError](err); ok {
		msg = in.Msg
	}
	return msg + "; a keeper rule is " + keeperRules
}
