package plan

import (
	"strings"
	"testing"
)

// fenceSeeds are texts around every choice of jsonFence: no fence, an
// unclosed one, "json" or not, blanks and several line ends after the
// opening, an empty body, four backticks, a close indented or right
// after the opening's line end, two blocks.
var fenceSeeds = []string{
	"", "```", "``````", "```json", "```\n```", "```\n\n```", "```\n\n\n```", "```json\n{}\n```", "```json \n {} \n  ```",
	"x ```json\n{\"a\":1}\n``` y ```\nb\n```", "````\n{}\n```", "```jso\n{}\n```", "```json{}\n```", "```\r\n{}\r\n```",
	"```\n \n\t\n```", "```\n\n \n```", "```\nabc", "```\nabc\n", "```\nabc\n``", "a\n```\n```\n```", "```\n\n```\n\n```",
	"```json\n\n\n", "```\n{\n```x\n```", "``` \n\f\n```", "text ``` more\n```json\n[1]\n```", strings.Repeat("\n", 50) + "```",
	"```" + strings.Repeat("\n", 50), "```\n" + strings.Repeat("\n ", 30) + "```",
}

func checkFence(t *testing.T, text string) {
	t.Helper()
	m := jsonFence().FindStringSubmatch(text)
	got, ok := fencedJSON(text)
	if (m != nil) != ok || m != nil && m[1] != got {
		t.Fatalf("text %q: fencedJSON gives %q, %v; the expression %q", text, got, ok, m)
	}
}

// TestFencedJSON: the scan gives the expression's submatch, or none when
// it has none, on every seed.
func TestFencedJSON(t *testing.T) {
	found := 0
	for _, s := range fenceSeeds {
		checkFence(t, s)
		if _, ok := fencedJSON(s); ok {
			found++
		}
	}
	if found < 10 {
		t.Fatalf("only %d seeds hold a fenced block", found)
	}
}

func FuzzFencedJSON(f *testing.F) {
	for _, s := range fenceSeeds {
		f.Add(s)
	}
	f.Fuzz(checkFence)
}

// BenchmarkFencedJSON finds the fenced plan of an answer of about 20 kB
// with the expression and with the scan (the ratio of the two).
func BenchmarkFencedJSON(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("```json\n{\n  \"pages\": [\n")
	for sb.Len() < 20000 {
		sb.WriteString("    {\"action\": \"create\", \"path\": \"glossary/queue-depth.html\", \"template\": \"concept\", \"title\": \"queue depth\"},\n")
	}
	sb.WriteString("  ]\n}\n```")
	text := sb.String()
	b.Run("expression", func(b *testing.B) {
		for b.Loop() {
			jsonFence().FindStringSubmatch(text)
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			fencedJSON(text)
		}
	})
}
