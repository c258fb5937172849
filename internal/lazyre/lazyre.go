// Package lazyre compiles a package's regular expressions on first use
// rather than while the program starts.
//
// Every prose command runs the initializers of every package linked into
// the binary, so a regular expression compiled at package level is paid for
// by `prose publish` though only `prose check` or an ingest uses it. A
// package declares
//
//	var wordRe = lazyre.New(`\pL[\pL\pN]*`)
//
// and calls wordRe().FindAllString(…). The expression is a constant, so a
// mistake in it is a programming error: the first use panics, and the
// package's tests, which use it, find it.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr the first time it is called
// and returns the same *regexp.Regexp ever after. It is safe for
// concurrent use.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
