package ingest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
)

var natoWords = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")

func boundTerm(i int) string {
	w := natoWords[i%26]
	return fmt.Sprintf("%s %s %d", strings.ToUpper(w[:1])+w[1:], natoWords[(i/26)%26], i)
}

// definitionsDoc is one Markdown file of n definitions.
func definitionsDoc(t testing.TB, n int) *source.Document {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# Glossary of %d terms\n\nA long glossary.\n\n## Glossary\n\n", n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "- %s: the meaning of term number %d, used by the system\n", boundTerm(i), i)
	}
	return collectionDoc(t, "kb/glossary.md", sb.String())
}

// proceduresDoc is one Markdown file of n procedures.
func proceduresDoc(t testing.TB, n int) *source.Document {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# Runbook of %d procedures\n\nMany procedures.\n\n", n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "## Procedure %s\n\n1. Drain node %d.\n2. Restart node %d.\n\n", boundTerm(i), i, i)
	}
	return collectionDoc(t, "kb/runbook.md", sb.String())
}

// ingestMeasured ingests d into a fresh wiki and returns the bytes
// allocated per source byte and the deepest page's folder depth.
func ingestMeasured(t *testing.T, d *source.Document) (perByte float64, depth int, created int) {
	t.Helper()
	_, w := newWiki(t)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := ingest.Ingest(context.Background(), w, []*source.Document{d}, opts(offline.Engine{}))
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	for _, p := range res.Created {
		depth = max(depth, strings.Count(p, "/"))
	}
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(len(d.Data)), depth, len(res.Created)
}

// Issue: 5,000 definitions in one Markdown file took 111 s and 1.65 GB,
// filed into a chain of folders 251 deep. Ingest work is linear in the
// source: the bytes allocated per source byte at 4N are within a constant
// of those at N, for definitions and for procedures, and pages sit no
// deeper than their source (plus the folder of a source's sections).
// The runbook is past render.SplitAt at both sizes (a section page per
// procedure beside it), so the two are measured in one regime.
func TestLargeSourcesIngestLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests 5,000 pages")
	}
	for _, tc := range []struct {
		name string
		doc  func(testing.TB, int) *source.Document
		n    int
	}{{"definitions", definitionsDoc, 300}, {"procedures", proceduresDoc, 800}} {
		small, d1, c1 := ingestMeasured(t, tc.doc(t, tc.n))
		large, d4, c4 := ingestMeasured(t, tc.doc(t, 4*tc.n))
		t.Logf("%s: %d pages %.0f B/B, %d pages %.0f B/B (ratio %.2f)", tc.name, c1, small, c4, large, large/small)
		if c1 <= tc.n || c4 <= 4*tc.n {
			t.Errorf("%s: %d and %d pages created", tc.name, c1, c4)
		}
		if large > 1.15*small {
			t.Errorf("%s: %.0f bytes allocated per source byte at %d, %.0f at %d: superlinear", tc.name, small, tc.n, large, 4*tc.n)
		}
		// kb/glossary.md is one folder deep; its sections' pages two.
		if d1 > 2 || d4 > 2 {
			t.Errorf("%s: pages %d and %d folders deep", tc.name, d1, d4)
		}
	}
}
