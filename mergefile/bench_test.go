package mergefile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prose-store/prose/wiki"
)

// benchPages are a base page of n slots of about 2 KiB each and two sides
// that changed different slots.
func benchPages(n int) (base, ours, theirs []byte) {
	text := func(i int, side string) string {
		return "<p>" + strings.Repeat(fmt.Sprintf("Slot %d of the %s page says a little more. ", i, side), 40) + "</p>"
	}
	mk := func(changed int, side string) []byte {
		var slots []string
		var g []string
		for i := range n {
			id := fmt.Sprintf("s%d", i)
			t := text(i, "base")
			if i == changed {
				t = text(i, side)
			}
			slots = append(slots, id, t)
			g = append(g, id, t)
		}
		return page("created: \"2026-01-02\"\nsources:\n  - a\ntemplate: concept\ntitle: A\n"+gen(g...), slots...)
	}
	return mk(-1, "base"), mk(0, "ours"), mk(n-1, "theirs")
}

// BenchmarkMergePage merges two sides of a 12-slot page that changed
// different slots. Its baseline is BenchmarkParseThreePages: the three
// parses any merge must do.
func BenchmarkMergePage(b *testing.B) {
	base, ours, theirs := benchPages(12)
	b.SetBytes(int64(len(base) + len(ours) + len(theirs)))
	for b.Loop() {
		r, err := Merge(pagePath, base, ours, theirs)
		if err != nil || len(r.Conflicts) > 0 {
			b.Fatal(err, r.Conflicts)
		}
	}
}

func BenchmarkParseThreePages(b *testing.B) {
	base, ours, theirs := benchPages(12)
	b.SetBytes(int64(len(base) + len(ours) + len(theirs)))
	for b.Loop() {
		for _, p := range [][]byte{base, ours, theirs} {
			if _, err := wiki.Parse(p); err != nil {
				b.Fatal(err)
			}
		}
	}
}
