package plan

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLastLineIndexIsStringsLastIndex(t *testing.T) {
	cases := [][2]string{{"", ""}, {"a", ""}, {"", "a"}, {"aaa", "aa"}, {"abab", "ab"}, {"x\n</a>\n</a>", "\n</a>"}, {"\n</a", "\n</a>"}}
	r := rand.New(rand.NewPCG(1, 2))
	parts := []string{"a", "b", "\n", "</", "<", ">", "\n</source>", "/source>"}
	for range 5000 {
		var s, sub strings.Builder
		for k := r.IntN(20); k > 0; k-- {
			s.WriteString(parts[r.IntN(len(parts))])
		}
		for k := r.IntN(4); k > 0; k-- {
			sub.WriteString(parts[r.IntN(len(parts))])
		}
		cases = append(cases, [2]string{s.String(), sub.String()})
	}
	for _, c := range cases {
		tag := "<" + c[1]
		if got, want := lastLineIndex(c[0], tag), strings.LastIndex(c[0], "\n"+tag); got != want {
			t.Fatalf("lastLineIndex(%q, %q) = %d, strings.LastIndex gives %d", c[0], tag, got, want)
		}
	}
}

// BenchmarkExtract extracts a short field that comes before a long one,
// as a generation prompt's analysis comes before its source.
func BenchmarkExtract(b *testing.B) {
	prompt := Field("analysis", `{"pages":[]}`) + "\n" + Field("source", strings.Repeat("A line of the source's text.\n\n", 1<<19))
	b.SetBytes(int64(len(prompt)))
	for b.Loop() {
		if _, _, ok := Extract(prompt, "analysis"); !ok {
			b.Fatal("no analysis")
		}
	}
}
