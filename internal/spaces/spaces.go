// Package spaces collapses white space without splitting a text into
// words first.
package spaces

import (
	"encoding/binary"
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
		n := spaceAt(s, i)
		if n > 0 {
			pending = true
			i += n
			continue
		}
		// A word: its bytes up to the next space, as they are (an
		// invalid one too), written at once.
		j := i + 1
		for j < len(s) && spaceAt(s, j) == 0 {
			j++
		}
		if pending && sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		pending = false
		sb.WriteString(s[i:j])
		i = j
	}
	return sb.String()
}

// spaceAt is the length of the white space (unicode.IsSpace) starting at
// s[i], 0 when what starts there is not.
func spaceAt(s string, i int) int {
	c := s[i]
	if c < utf8.RuneSelf {
		if asciiSpace[c] {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if unicode.IsSpace(r) {
		return n
	}
	return 0
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

// collapsed reports whether Collapse(s) is s. It reads eight bytes at
// a time while they are ASCII without a control byte (below 0x20, where
// the ASCII white space other than the space is), checking only that no
// space follows a space or starts the text; any other word is read byte
// by byte (collapsedBytes).
func collapsed(s string) bool {
	if s == "" {
		return true
	}
	const (
		highs  = 0x8080808080808080
		lows   = 0x7f7f7f7f7f7f7f7f
		blanks = 0x2020202020202020
	)
	prevSpace := true // no space at the start
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		// A byte of 0x80 or more, or one below 0x20 (w-0x20.. borrows
		// into the high bit of the first such byte).
		if (w|(w-blanks))&highs != 0 {
			break
		}
		// The spaces' high bits: a byte of w^blanks is zero where w has a
		// space, and adding 0x7f to its low seven bits sets the high bit
		// of every other byte, without a carry into the next.
		t := w ^ blanks
		sp := ^(((t & lows) + lows) | t) & highs
		if sp&(sp<<8) != 0 || (prevSpace && sp&0x80 != 0) {
			return false
		}
		prevSpace = sp>>63 != 0
	}
	return collapsedBytes(s[i:], prevSpace)
}

// collapsedBytes is collapsed(s) read byte by byte, for s following a
// text that ends in a space when prevSpace (or starting a text that is
// not empty).
func collapsedBytes(s string, prevSpace bool) bool {
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
	return !prevSpace
}

// asciiSpace are the ASCII bytes unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}
