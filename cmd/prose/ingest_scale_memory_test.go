//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// noteTopics are the folders of writeNotes' notes.
var noteTopics = strings.Fields("billing search storage network identity payments deploys alerts backups caching")

// writeNotes writes n Markdown notes of about 8 KB into dir, shaped as
// internal/cmd/wikicorpus writes them for scripts/bench-ingest-scale.sh:
// a folder per topic, headings, paragraphs, numbered steps and two
// definitions every other part (a term page each, linked from the notes
// that mention it).
func writeNotes(t *testing.T, dir string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		topic := noteTopics[i%len(noteTopics)]
		var sb strings.Builder
		fmt.Fprintf(&sb, "# %s note %d\n\n", strings.ToUpper(topic[:1])+topic[1:], i)
		for sec := 0; sb.Len() < 8000; sec++ {
			fmt.Fprintf(&sb, "## %s part %d\n\n", topic, sec)
			for p := 0; p < 3; p++ {
				sentences(&sb, 300, i*100+sec*10+p)
				sb.WriteString("\n\n")
			}
			if sec%2 == 0 {
				for s := 1; s <= 4; s++ {
					fmt.Fprintf(&sb, "%d. ", s)
					sentences(&sb, 40, i+s)
					sb.WriteString("\n")
				}
				sb.WriteString("\n")
			} else {
				fmt.Fprintf(&sb, "- **%s term %d-%d**: ", topic, i, sec)
				sentences(&sb, 40, i+sec)
				fmt.Fprintf(&sb, "\n- **%s rule %d-%d**: ", topic, i, sec)
				sentences(&sb, 40, i+sec+1)
				sb.WriteString("\n\n")
			}
		}
		p := filepath.Join(dir, topic, fmt.Sprintf("note-%04d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// liveHeapOfIngest ingests n notes of 8 KB into a fresh vault in a child
// process and returns the largest live heap the child's collector found.
func liveHeapOfIngest(t *testing.T, n int) int64 {
	t.Helper()
	tmp := t.TempDir()
	notes := filepath.Join(tmp, "notes")
	writeNotes(t, notes, n)
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	heapFile := filepath.Join(tmp, "heap")
	t.Setenv("PROSE_TEST_LIVE_HEAP_FILE", heapFile)
	// A cycle four times as often as by default: the largest heap a cycle
	// marks live is near what the run held at its peak, not what it held
	// plus what it let go of while the cycle ran (at the default, the
	// figure a note of the same run moved by ± 25 KB).
	t.Setenv("GOGC", "25")
	res := runChild(t, 0, "--vault", vdir, "ingest", notes)
	if res.code != 0 || !strings.Contains(res.stdout, "wiki: rendered") {
		t.Fatalf("%d notes: exit %d:\n%.2000s%.2000s", n, res.code, res.stdout, res.stderr)
	}
	data, err := os.ReadFile(heapFile)
	if err != nil {
		t.Fatal(err)
	}
	live, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil || live <= 0 {
		t.Fatalf("live heap %q: %v", data, err)
	}
	t.Logf("%d notes: live heap at most %.1f MB, peak RSS %.1f MB", n, float64(live)/1e6, float64(res.peakRSS)/1e6)
	return live
}

// TestIngestMemoryDoesNotGrowWithTheSources: the largest live heap of an
// ingest of 400 notes of 8 KB is within maxHeapPerSource a note of that of
// 100 notes: the rendered pages are staged in the object store as they are
// rendered (never all held at the commit), the checkout reads them back
// without keeping them, the wiki transaction spills the pages it wrote
// past 4 MiB to a file, and each source lets go of its sections after its
// turn (checked at 32–38 KB a note). Holding every written page and every
// source's sections until the commit, as prose did before, grew by 73–77 KB
// a note; rendering every page into memory at the commit as well, and the
// checkout keeping what it read back in the object cache, by 162 KB.
func TestIngestMemoryDoesNotGrowWithTheSources(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests 500 notes")
	}
	t.Setenv("PROSE_NOW", "2026-01-31")
	small, large := liveHeapOfIngest(t, 100), liveHeapOfIngest(t, 400)
	per := float64(large-small) / 300
	t.Logf("%.1f KB of live heap more a note", per/1e3)
	if per > maxHeapPerSource {
		t.Errorf("the live heap grew by %.1f KB a note from 100 to 400 notes of 8 KB (%.1f → %.1f MB); the bound is %.0f KB", per/1e3, float64(small)/1e6, float64(large)/1e6, maxHeapPerSource/1e3)
	}
}

// maxHeapPerSource bounds what an ingest's live heap may grow by for each
// more note of 8 KB: what the run still holds of each source until its
// commit (its catalog and guard records, its pages' links and places in
// the spill file, the anchors other sources may link to), not its pages
// or its sections.
const maxHeapPerSource = 55e3
