package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Text prose prints for people — titles, page names, source names, review
// details, errors — may come from a source or a model: a title such as
// "\x1b]0;pwned\a" would retitle the terminal, an ESC sequence repaint or
// hide lines, a bidi control (U+202E) reverse what follows. Everything
// human-readable goes through terminalSafe (output.printf does it, and
// stderr is a safeWriter), so such characters are shown escaped, never
// sent raw. --json output is JSON: its encoder escapes C0 controls, and
// jsonSafe the rest (DEL, C1 and bidi controls) as \uHHHH escapes, which
// read back as the same characters.

// terminalSafe returns s with every character a terminal would act on
// escaped: C0 controls but newline and tab (a carriage return only before
// a newline stays), DEL, C1 controls, the bidirectional controls, and
// bytes that are not UTF-8 (a lone 0x9b is CSI to an 8-bit terminal). A
// C0 or invalid byte is written \xHH, any other character \uHHHH. Text
// with nothing to escape is returned as it is.
func terminalSafe(s string) string {
	i := unsafeAt(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			b.WriteByte('\r')
		case r < 0x20 && r != '\n' && r != '\t' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeAt is the index of the first byte terminalSafe would change, or
// -1.
func unsafeAt(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' && !(c == '\r' && strings.HasPrefix(s[i+1:], "\n")) || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune reports a C1 control or a bidirectional control (the
// embeddings, overrides, isolates and marks a "Trojan Source" text uses).
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// safeWriter writes what it is given through terminalSafe: prose's stderr,
// where errors, warnings and progress lines quote names and titles. A
// UTF-8 sequence cut between two writes is held until the next.
type safeWriter struct {
	w    io.Writer
	tail []byte
}

func (s *safeWriter) Write(p []byte) (int, error) {
	data := append(s.tail, p...)
	s.tail = nil
	// Hold back an incomplete sequence at the end (at most 3 bytes).
	for k := 1; k <= 3 && k <= len(data); k++ {
		c := data[len(data)-k]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(data[len(data)-k:]) {
				s.tail = append([]byte(nil), data[len(data)-k:]...)
				data = data[:len(data)-k]
			}
			break
		}
	}
	if _, err := io.WriteString(s.w, terminalSafe(string(data))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Raw is the writer under s: a progress bar draws, with carriage returns
// of its own, on the terminal itself (internal/progress).
func (s *safeWriter) Raw() io.Writer { return s.w }

// jsonSafe escapes, in encoded JSON, the characters encoding/json leaves
// raw that a terminal acts on: DEL, C1 and bidi controls, as \uHHHH. In
// valid JSON they stand only inside strings, where the escape means the
// same character.
func jsonSafe(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == 0x7f || unsafeRune(r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == 0x7f || unsafeRune(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
