package source

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quotedSources are the documents whose quotation is read back: the
// fixtures, the real documents of testdata and Go's own docs when here.
func quotedSources(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"../../fixtures/sources/*", "testdata/libffi/*.html", "testdata/lmdb/*.html", "testdata/lmdb/*.md", "testdata/*/*.txt"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 6 {
		t.Fatalf("found %d sources: %v", len(files), files)
	}
	return files
}

// sameOutline says where two documents' titles, sections and blocks
// first differ, or "" when they agree. An empty list and none are alike;
// blocks are compared only when blocks is true.
func sameOutline(a, b *Document, blocks bool) string {
	if a.Title != b.Title {
		return fmt.Sprintf("title %q, read back %q", a.Title, b.Title)
	}
	if len(a.Sections) != len(b.Sections) {
		return fmt.Sprintf("%d sections, read back %d", len(a.Sections), len(b.Sections))
	}
	for i := range a.Sections {
		s, r := a.Sections[i], b.Sections[i]
		if s.Level != r.Level || s.Heading != r.Heading {
			return fmt.Sprintf("section %d: level %d %q, read back level %d %q", i, s.Level, s.Heading, r.Level, r.Heading)
		}
		if !blocks {
			continue
		}
		if len(s.Blocks) != len(r.Blocks) {
			return fmt.Sprintf("section %d %q: %d blocks, read back %d", i, s.Heading, len(s.Blocks), len(r.Blocks))
		}
		for j := range s.Blocks {
			if x, y := fmt.Sprintf("%+v", s.Blocks[j]), fmt.Sprintf("%+v", r.Blocks[j]); x != y {
				return fmt.Sprintf("section %d %q block %d:\n%s\nread back\n%s", i, s.Heading, j, x, y)
			}
		}
	}
	return ""
}

// quotedOutline is d's outline as its quotation reads back, by the rules
// of Markdown: the quotation opens with the title as a level-1 heading
// (the heading of a leading section without one, else a section of its
// own unless the first section is that heading already), and writes
// every other heading at level 2 to 6.
func quotedOutline(d *Document) *Document {
	out := &Document{Title: d.Title}
	for i, s := range d.Sections {
		if i == 0 && !(s.Level == 1 && s.Heading == d.Title) {
			if s.Heading == "" {
				s.Level, s.Heading = 1, d.Title
			} else {
				out.Sections = append(out.Sections, Section{Level: 1, Heading: d.Title})
				s.Level = min(max(s.Level, 2), 6)
			}
		} else if !(i == 0 && s.Level == 1) {
			s.Level = min(max(s.Level, 2), 6)
		}
		out.Sections = append(out.Sections, s)
	}
	return out
}

// The quotation of a document, read back, is the document but for its
// outline (quotedOutline) and, for a conversation, its turns, which read
// back as the paragraphs, lists and code of their text: the offline
// engine cannot take the run's document for its quotation as it is.
func TestQuotationReadsBackTheDocument(t *testing.T) {
	for _, f := range quotedSources(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Read(filepath.Base(f), data, "")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		back, err := ReadQuoted("source.md", []byte(strings.TrimRight(d.Markdown(), "\n")+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if diff := sameOutline(quotedOutline(d), back, d.Kind != Conversation); diff != "" {
			t.Errorf("%s: %s", f, diff)
		}
	}
}
