package receipt

import (
	"strings"
	"testing"
)

// BenchmarkRedactTextOneLine redacts a 1 MB text of one line (a single
// paragraph) holding a URL and "disk-", the hints of two provider-key
// patterns that hold no blank.
func BenchmarkRedactTextOneLine(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("See https://www.gnu.org/licenses/ for the disk-space terms. ")
	for sb.Len() < 1<<20 {
		sb.WriteString("The deploy guide explains how the canary stage rolls out to every region in turn. ")
	}
	doc := sb.String()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		RedactText(doc)
	}
}

// BenchmarkRedactTextOneLineNamed is a 1 MB text of one line that says
// "key" (no value follows): the named values' expression read all of it.
func BenchmarkRedactTextOneLineNamed(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("The key to the canary stage is patience. ")
	for sb.Len() < 1<<20 {
		sb.WriteString("The deploy guide explains how the canary stage rolls out to every region in turn. ")
	}
	doc := sb.String()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		RedactText(doc)
	}
}
