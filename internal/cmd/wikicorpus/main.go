// Command wikicorpus writes a deterministic corpus of Markdown notes for
// the ingest benchmark: N files of about SIZE bytes, each with headings,
// paragraphs, numbered steps and a few definitions, over a shared
// vocabulary of topics so pages link to each other.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

var topics = []string{"billing", "search", "storage", "network", "identity", "payments", "deploys", "alerts", "backups", "caching",
	"queues", "metrics", "logging", "tracing", "schemas", "migrations", "releases", "oncall", "capacity", "security"}

var words = strings.Fields(`the service keeps a record of every request and answers within a budget that the team sets
each quarter while the operators watch dashboards and review incidents with care so that nothing important is lost
when a node restarts or a disk fills up and the queue grows beyond its usual depth during the nightly batch`)

func main() {
	n := flag.Int("n", 500, "number of files")
	size := flag.Int("size", 10_000, "approximate bytes per file")
	out := flag.String("out", "corpus", "output directory")
	flag.Parse()
	r := rand.New(rand.NewPCG(1, 2))
	sentence := func() string {
		k := 8 + r.IntN(10)
		ws := make([]string, k)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		s := strings.Join(ws, " ")
		return strings.ToUpper(s[:1]) + s[1:] + "."
	}
	for i := 0; i < *n; i++ {
		topic := topics[i%len(topics)]
		var b strings.Builder
		fmt.Fprintf(&b, "# %s note %d\n\n", strings.ToUpper(topic[:1])+topic[1:], i)
		for sec := 0; b.Len() < *size; sec++ {
			fmt.Fprintf(&b, "## %s part %d\n\n", topic, sec)
			for p := 0; p < 3; p++ {
				for s := 0; s < 4; s++ {
					b.WriteString(sentence() + " ")
				}
				b.WriteString("\n\n")
			}
			if sec%2 == 0 {
				for s := 1; s <= 4; s++ {
					fmt.Fprintf(&b, "%d. %s\n", s, sentence())
				}
				b.WriteString("\n")
			} else {
				fmt.Fprintf(&b, "- **%s term %d-%d**: %s\n", topic, i, sec, sentence())
				fmt.Fprintf(&b, "- **%s rule %d-%d**: %s\n\n", topic, i, sec, sentence())
			}
		}
		p := filepath.Join(*out, topic, fmt.Sprintf("note-%03d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
