package wiki

import (
	"strings"
	"testing"
)

// BenchmarkRenderPage renders one ingested concept page (meta, summary and
// body slots) with the built-in template: the per-page cost of a commit's
// rendering.
func BenchmarkRenderPage(b *testing.B) {
	ts, err := loadTemplates("")
	if err != nil {
		b.Fatal(err)
	}
	p := &Page{Meta: Meta{
		"created": "2026-01-31", "updated": "2026-01-31", "template": "concept", "title": "alerts rule 147-1",
		"origin": "term:alerts rule 147-1", "source_kind": "markdown", "source_mark": "from-6194566a",
		"source_section": "alerts part 1", "sources": []any{"blake3:e662f007e0e19a7a01f194635cf43047500c8facb0ead3094d62e5069c6fca31"},
		"tags": []any{"glossary", "definition"},
		"generated": map[string]any{"body": "blake3:14d2c7d03b7492dbb63f5b0b4c3e485f1d56937892457aaef3f4ec6b5c935add",
			"meta.title": "blake3:166b5a741a1933e60d3be085ea03746558cb342f668e00ac79930d5f820dba17"},
	}, Slots: []Slot{
		{ID: "summary", HTML: "<p>A rule the operators follow when the queue grows.</p>"},
		{ID: "body", HTML: strings.Repeat("<p>The service keeps a record of every request and answers within a budget.</p>\n", 20)},
	}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := render(ts["concept"], "glossary/alerts-rule-147-1.html", p, shell{}); err != nil {
			b.Fatal(err)
		}
	}
}
