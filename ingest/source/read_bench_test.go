package source

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// noteText is a Markdown note of about size bytes like the scale
// benchmark's (internal/cmd/wikicorpus): sections of paragraphs of
// words, numbered steps, and "- **term**: meaning" lists.
func noteText(size int) string {
	words := strings.Fields("the service keeps a record of every request and answers within budget queue depth grows operators watch nightly restarts node team review incidents")
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	sb.WriteString("# Queue note\n\n")
	sentence := func(n int) string {
		var w []string
		for range n {
			w = append(w, words[r.IntN(len(words))])
		}
		s := strings.Join(w, " ")
		return strings.ToUpper(s[:1]) + s[1:] + "."
	}
	for sec := 0; sb.Len() < size; sec++ {
		fmt.Fprintf(&sb, "## queue part %d\n\n", sec)
		for range 3 {
			for range 4 {
				sb.WriteString(sentence(12) + " ")
			}
			sb.WriteString("\n\n")
		}
		if sec%2 == 0 {
			for i := 1; i <= 4; i++ {
				fmt.Fprintf(&sb, "%d. %s\n", i, sentence(8))
			}
		} else {
			for i := range 3 {
				fmt.Fprintf(&sb, "- **queue rule %d-%d**: %s\n", sec, i, sentence(9))
			}
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// BenchmarkReadMarkdown reads one note of 8 kB.
func BenchmarkReadMarkdown(b *testing.B) {
	data := []byte(noteText(8000))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read("notes/queue.md", data, ""); err != nil {
			b.Fatal(err)
		}
	}
}
