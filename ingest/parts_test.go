package ingest_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
)

var sourceField = regexp.MustCompile(`(?s)<source ([^>]*)>\n(.*?)\n</source>`)

// A model other than the offline engine is never sent a long source
// whole: the analysis prompt quotes its outline, and generation runs
// once per part, each prompt quoting one part within the prompt budget;
// the parts, in order, hold the whole text. The offline engine is still
// sent the whole source in one prompt.
func TestALongSourceIsShownToAModelPartByPart(t *testing.T) {
	_, w := newWiki(t)
	d := readDoc(t, "big.md", bigDoc("A closing sentence of chapter five.\n\n"))
	whole := d.Markdown()
	c := &capture{Model: silent{}}
	o := opts(c)
	o.Budget = 2000 // tokens: a quoted part holds about 4 KB
	if _, err := ingest.Ingest(context.Background(), w, []*source.Document{d}, o); err != nil {
		t.Fatal(err)
	}
	var outline string
	var parts []string
	for _, p := range c.prompts {
		for _, m := range sourceField.FindAllStringSubmatch(p, -1) {
			if len(m[2]) > 4096 {
				t.Errorf("a prompt quotes %d bytes of the source (attributes %s); the budget leaves 4096", len(m[2]), m[1])
			}
			switch {
			case strings.Contains(m[1], `outline="true"`):
				outline = m[2]
			case strings.Contains(m[1], ` part="`):
				parts = append(parts, m[2])
			default:
				t.Errorf("a prompt quotes the long source whole (%d bytes)", len(m[2]))
			}
		}
	}
	if !strings.Contains(outline, "## Chapter 12") || strings.Contains(outline, "lorem") {
		t.Errorf("the analysis prompt's outline lacks the last heading or holds the text:\n%.500s", outline)
	}
	if len(parts) < 10 {
		t.Fatalf("generation was shown %d parts of a %d-byte source", len(parts), len(whole))
	}
	joined := strings.Join(parts, "\n")
	for _, want := range []string{"# Big Manual", "The lead.", "## Install steps", "1. Fetch the tarball.", "A closing sentence of chapter five.", "## Chapter 12"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no part holds %q", want)
		}
	}
	if got, want := strings.Count(joined, "lorem"), strings.Count(whole, "lorem"); got != want {
		t.Errorf("the parts hold %d of the source's %d words \"lorem\"", got, want)
	}

	// The offline engine reads the whole source from one prompt.
	_, w2 := newWiki(t)
	c2 := &capture{Model: offline.Engine{}}
	o2 := opts(c2)
	o2.Budget = 2000
	if _, err := ingest.Ingest(context.Background(), w2, []*source.Document{d}, o2); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range c2.prompts {
		for _, m := range sourceField.FindAllStringSubmatch(p, -1) {
			found = found || m[2] == strings.TrimRight(whole, "\n")
		}
	}
	if !found {
		t.Error("the offline engine was not sent the whole source")
	}
}
