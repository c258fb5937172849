package spaces

import (
	"math/rand"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func reference(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestCollapseIsJoinFields(t *testing.T) {
	for _, s := range []string{"", " ", "a", " a", "a ", "a  b", "a b", "a\tb", "a\u00a0b", "\u3000a\u2028b\u0085", "a \xff b", "\xe2\x80", "x\xe2\x80 ", "a\vb\fc\r\n"} {
		if got, want := Collapse(s), reference(s); got != want {
			t.Errorf("Collapse(%q) = %q, want %q", s, got, want)
		}
	}
	parts := []string{"a", "bc", " ", "  ", "\t", "\n", "\u00a0", "\u2003", "é", "\xff", "\xe2", "\x80", "."}
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 20000; n++ {
		var sb strings.Builder
		for k := r.Intn(12); k > 0; k-- {
			sb.WriteString(parts[r.Intn(len(parts))])
		}
		s := sb.String()
		if got, want := Collapse(s), reference(s); got != want {
			t.Fatalf("Collapse(%q) = %q, want %q", s, got, want)
		}
		if got, want := Shared(s), reference(s); got != want {
			t.Fatalf("Shared(%q) = %q, want %q", s, got, want)
		}
	}
}

func BenchmarkCollapse(b *testing.B) {
	text := strings.Repeat("The worker drains the queue\n and answers  within a budget. ", 200)
	b.SetBytes(int64(len(text)))
	b.Run("Collapse", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Collapse(text)
		}
	})
	b.Run("Shared", func(b *testing.B) {
		clean := Collapse(text)
		for i := 0; i < b.N; i++ {
			Shared(clean)
		}
	})
	b.Run("JoinFields", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			reference(text)
		}
	})
}

// collapsedBefore is collapsed as it was before it read eight bytes at a
// time: the reference the word-at-a-time reading must match.
func collapsedBefore(s string) bool {
	prevSpace := true
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

func TestCollapsedIsByteWise(t *testing.T) {
	parts := []string{"a", "bc", " ", "  ", "\t", "\n", "\r", "\v", "\f", "\x1f", "\x7f", "\x00", "\u00a0", "\u2003", "é", "\xff", "\xe2", "\x80", ".", "word", "longer words ", "!~"}
	r := rand.New(rand.NewSource(2))
	for n := 0; n < 200000; n++ {
		var sb strings.Builder
		for k := r.Intn(24); k > 0; k-- {
			sb.WriteString(parts[r.Intn(len(parts))])
		}
		s := sb.String()
		if got, want := collapsed(s), collapsedBefore(s); got != want {
			t.Fatalf("collapsed(%q) = %v, want %v", s, got, want)
		}
		// The collapsed texts, the fast path's common case, at every
		// alignment.
		c := reference(s)
		for i := 0; i < 8 && i <= len(c); i++ {
			if got, want := collapsed(c[i:]), collapsedBefore(c[i:]); got != want {
				t.Fatalf("collapsed(%q) = %v, want %v", c[i:], got, want)
			}
		}
	}
}

func FuzzCollapsed(f *testing.F) {
	for _, s := range []string{"", " ", "abcdefgh ", "abcdefg  h", "abcdefgh\tijklmnop", "a b c d e f g h i"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := collapsed(s), collapsedBefore(s); got != want {
			t.Fatalf("collapsed(%q) = %v, want %v", s, got, want)
		}
	})
}
