// Package spaces collapses white space without splitting a text into
// words first.
package spaces

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Collapse is strings.Join(strings.Fields(s), " "): the runs of white
// space (unicode.IsSpace) of s made one space, none at either end, in a
// string of its own, without splitting s into a slice of its words
// first: source reading collapses every block of a document, and the
// words' slices were a seventh of reading a 16 MiB manual.
func Collapse(s string) string {
	if collapsed(s) {
		// A copy, as strings.Join makes: a block's text that shared the
		// memory of what it was cut from would keep all of it alive.
		return strings.Clone(s)
	}
	var sb strings.Builder
	sb.Grow(len(s))
	pending := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				pending = true
				i++
				continue
			}
			if pending && sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			pending = false
			sb.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			pending = true
		} else {
			if pending && sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			pending = false
			sb.WriteString(s[i : i+n]) // the bytes as they are, an invalid one too
		}
		i += n
	}
	return sb.String()
}

// Shared is Collapse(s), but s itself, not a copy, when s is collapsed
// already: for a text used at once and let go (the Markdown a document's
// blocks are written as), whose copy would only be more garbage.
func Shared(s string) string {
	if collapsed(s) {
		return s
	}
	return Collapse(s)
}

// collapsed reports whether Collapse(s) is s.
func collapsed(s string) bool {
	prevSpace := true // no space at the start
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				if c != ' ' || prevSpace {
					return false
				}
				prevSpace = true
			} else {
				prevSpace = false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			return false
		}
		prevSpace = false
		i += n
	}
	return !prevSpace || s == ""
}

// asciiSpace are the ASCII bytes unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}
