package canon

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// collapseByRune is collapseSpace's first implementation, rune by rune:
// the reference its byte-wise loop must match.
func collapseByRune(s string) string {
	var b strings.Builder
	pending := false
	for _, r := range s {
		if isSpace(r) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func FuzzCollapseSpace(f *testing.F) {
	for _, s := range []string{"", " ", "a  b", "\t a\n\r b \v", "x\u00a0\u2003y", "\u3000z\u3000", "é  \u0301", "a\u2028b\u2029"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // reduce refuses such strings before normalizing them
		}
		if got, want := collapseSpace(s), collapseByRune(s); got != want {
			t.Fatalf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
	})
}

func TestCollapseSpaceAsByRune(t *testing.T) {
	parts := []string{"a", "bc", " ", "  ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u2003", "\u3000", "\u2028", "\ufeff", "\u0085", "é", "字", ".", "word"}
	r := rand.New(rand.NewSource(6))
	for n := 0; n < 50000; n++ {
		var sb strings.Builder
		for k := r.Intn(14); k > 0; k-- {
			sb.WriteString(parts[r.Intn(len(parts))])
		}
		s := sb.String()
		if got, want := collapseSpace(s), collapseByRune(s); got != want {
			t.Fatalf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
	}
}
