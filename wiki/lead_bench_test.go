package wiki

import (
	"strings"
	"testing"
)

// BenchmarkLead is the lead sentence of a section page whose slot holds
// long paragraphs (a manual's), as a folder index lists it.
func BenchmarkLead(b *testing.B) {
	para := "<p>" + strings.Repeat("The worker drains the queue and answers within a budget, nightly and in turn ", 60) + ".</p>\n"
	p := &Page{Meta: Meta{"title": "Queue part 1"}, Slots: []Slot{{ID: "body", HTML: strings.Repeat(para, 4)}}}
	b.ReportAllocs()
	for b.Loop() {
		Lead(p)
	}
}
