package spaces

import (
	"math/rand"
	"strings"
	"testing"
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
