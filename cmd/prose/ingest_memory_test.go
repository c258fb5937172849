//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest/source"
)

// ingestWords are the words the generated sources are written in.
var ingestWords = strings.Fields(`the service keeps a record of every request and answers within a budget
that the team sets each quarter while operators watch dashboards review incidents restart nodes rotate keys
drain queues replay logs compare releases and write down what they learned for the next person on call`)

// sentences writes n bytes or so of sentences into sb, seeded by seed.
func sentences(sb *strings.Builder, n, seed int) {
	for end := sb.Len() + n; sb.Len() < end; seed++ {
		k := 8 + seed%9
		for i := 0; i < k; i++ {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(ingestWords[(seed*7+i*13)%len(ingestWords)])
		}
		sb.WriteString(". ")
	}
}

// TestIngestMemoryStaysBounded ingests, with the offline engine, in a
// child process under an address-space cap, each into a fresh vault: 300
// notes of 8 KB, a 16 MiB HTML manual of thousands of headings, two 16 MiB
// texts of a heading every 4 MiB (long paragraphs, and short ones as real
// text has: a block per 170 bytes) and a 16 MiB text of one paragraph: each
// peaks under the goal, peakRSSGoal (a 16 MiB paragraph once held
// gigabytes, and a long source 350–375 MB while the offline engine held
// its words and prompts), and no page of the long ones passes the size a
// vault's text file may hold (the commit would refuse it).
func TestIngestMemoryStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests 48 MiB")
	}
	tmp := t.TempDir()
	t.Setenv("PROSE_NOW", "2026-01-31")
	notes := filepath.Join(tmp, "notes")
	os.MkdirAll(notes, 0o755)
	for i := 0; i < 300; i++ {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Note %d\n\n", i)
		for s := 0; s < 4; s++ {
			fmt.Fprintf(&sb, "## Part %d of note %d\n\n", s, i)
			sentences(&sb, 1900, i*10+s)
			sb.WriteString("\n\n")
		}
		if err := os.WriteFile(filepath.Join(notes, fmt.Sprintf("note-%03d.md", i)), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	limit := int(source.MaxSize) - 4096
	var manual strings.Builder
	manual.WriteString("<!DOCTYPE html><html><head><title>Manual</title></head><body><h1>Manual</h1>\n")
	for c := 0; manual.Len() < limit; c++ {
		fmt.Fprintf(&manual, "<h2>Chapter %d</h2>\n<p>", c)
		sentences(&manual, 2500, c)
		fmt.Fprintf(&manual, "</p>\n<h3>Details of chapter %d</h3>\n<ul><li><code>option_%d</code> sets it</li><li>", c, c)
		sentences(&manual, 1500, c+1)
		manual.WriteString("</li></ul>\n<pre>step one\nstep two\n</pre>\n")
	}
	manual.WriteString("</body></html>\n")
	var few strings.Builder
	few.WriteString("Few Headings\n\n")
	for p := 0; few.Len() < limit; p++ {
		if p%2000 == 1999 {
			fmt.Fprintf(&few, "Part %d\n=======\n\n", p/2000+2)
		}
		sentences(&few, 2000, p)
		few.WriteString("\n\n")
	}
	// Real-shaped text: short paragraphs (≈ 170 bytes, as the real
	// documents of scripts/bench-ingest-scale.sh give: ≈ 100,000 blocks,
	// each a Block beside its text), a list now and then, a heading every
	// 4 MiB.
	var short strings.Builder
	short.Grow(limit + 4096)
	short.WriteString("Real Shaped Text\n\n")
	for p, next := 0, 4<<20; short.Len() < limit-512; p++ {
		if short.Len() >= next {
			fmt.Fprintf(&short, "Part %d\n=======\n\n", next>>22+1)
			next += 4 << 20
		}
		if p%50 == 49 {
			for i := 0; i < 3; i++ {
				fmt.Fprintf(&short, "- item %d of list %d\n", i, p)
			}
			short.WriteString("\n")
			continue
		}
		sentences(&short, 40+p%9*30, p)
		short.WriteString("\n\n")
	}
	var one strings.Builder
	one.WriteString("One Paragraph\n\n")
	sentences(&one, limit-one.Len(), 3)
	one.WriteString("\n")
	files := map[string]string{"manual.html": manual.String(), "few.txt": few.String(), "short.txt": short.String(), "one.txt": one.String()}
	for name, text := range files {
		if len(text) > int(source.MaxSize) {
			t.Fatalf("%s is %d bytes, past the limit", name, len(text))
		}
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, input := range []string{"notes", "manual.html", "few.txt", "short.txt", "one.txt"} {
		t.Run(input, func(t *testing.T) {
			vdir := filepath.Join(tmp, "v-"+input)
			mustProse(t, "init", vdir)
			res := runChild(t, addressMB, "--vault", vdir, "ingest", filepath.Join(tmp, input))
			t.Logf("%s: exit %d, peak RSS %.1f MB", input, res.code, float64(res.peakRSS)/1e6)
			if res.code != 0 || !strings.Contains(res.stdout, "wiki: rendered") {
				t.Fatalf("exit %d:\n%.2000s%.2000s", res.code, res.stdout, res.stderr)
			}
			if res.peakRSS <= 0 || res.peakRSS > peakRSSGoal {
				t.Errorf("peak RSS %d bytes; the bound is %d", res.peakRSS, peakRSSGoal)
			}
			created := strings.Count(res.stdout, "  created  ")
			if input != "notes" && created < 16 {
				t.Errorf("a 16 MiB source made %d pages; its sections should each have one", created)
			}
		})
	}
}
