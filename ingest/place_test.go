package ingest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/wiki"
)

// generated makes n small Markdown sources in one flat directory, their
// titles drawn from a few words, so that many share a topic: some with
// steps, some with a definition.
func generated(t testing.TB, n int) []*source.Document {
	t.Helper()
	areas := []string{"billing", "storage", "network", "compute", "identity", "logging", "metrics", "backup"}
	things := []string{"gateway", "scheduler", "cache", "queue", "database", "router", "agent", "proxy", "ledger", "indexer"}
	var docs []*source.Document
	for i := 0; i < n; i++ {
		a, th := areas[i%len(areas)], things[(i/len(areas))%len(things)]
		var sb strings.Builder
		fmt.Fprintf(&sb, "# %s %s %d\n\nThe %s %s keeps a record of every request and answers within a budget.\n\n", strings.ToUpper(a[:1])+a[1:], strings.ToUpper(th[:1])+th[1:], i, a, th)
		if i%3 == 0 {
			sb.WriteString("## Restart steps\n\n1. Drain the node.\n2. Restart the node.\n\n")
		}
		if i%4 == 1 {
			fmt.Fprintf(&sb, "## Glossary\n\n- %s lag %d: the delay before the %s catches up with writes\n\n", th, i, th)
		}
		docs = append(docs, readDoc(t, fmt.Sprintf("docs/doc-%03d.md", i), sb.String()))
	}
	return docs
}

func crowded(t *testing.T, w *wiki.Wiki) []string {
	t.Helper()
	rep, err := w.Lint(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range rep.Findings {
		if f.Kind == "crowded-folder" {
			out = append(out, f.Page+": "+f.Detail)
		}
	}
	return out
}

func allPaths(t *testing.T, w *wiki.Wiki) []string {
	t.Helper()
	pages, err := w.Pages()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pages {
		out = append(out, p.Path)
	}
	slices.Sort(out)
	return out
}

// Two hundred sources from one directory leave no folder crowded, in one
// run or in several, and the same sources always land in the same
// folders.
func TestManySourcesLeaveNoCrowdedFolder(t *testing.T) {
	docs := generated(t, 200)
	_, w := newWiki(t)
	res, err := ingest.Ingest(context.Background(), w, docs, opts(offline.Engine{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) < 317 { // 200 source pages, 67 procedures, 50 terms
		t.Fatalf("only %d pages created", len(res.Created))
	}
	if c := crowded(t, w); len(c) > 0 {
		t.Errorf("crowded after one run:\n%s", strings.Join(c, "\n"))
	}
	lintClean(t, w)

	// The second wiki repeats the first run to show placement is
	// deterministic; -short leaves that repeat to the full run.
	if !testing.Short() {
		_, w2 := newWiki(t)
		if _, err := ingest.Ingest(context.Background(), w2, docs, opts(offline.Engine{})); err != nil {
			t.Fatal(err)
		}
		if a, b := allPaths(t, w), allPaths(t, w2); !slices.Equal(a, b) {
			t.Errorf("the same sources landed elsewhere in a second wiki")
		}
	}

	_, w3 := newWiki(t)
	for i := 0; i < len(docs); i += 50 {
		if _, err := ingest.Ingest(context.Background(), w3, docs[i:i+50], opts(offline.Engine{})); err != nil {
			t.Fatal(err)
		}
	}
	if c := crowded(t, w3); len(c) > 0 {
		t.Errorf("crowded after four runs:\n%s", strings.Join(c, "\n"))
	}
}

// collectionDoc reads a source as one found in a directory given to
// ingest (its page mirrors its path).
func collectionDoc(t testing.TB, name, text string) *source.Document {
	t.Helper()
	d := readDoc(t, name, text)
	d.Collection = true
	return d
}

// A directory's sources mirror it: each source page at its own path (the
// collection's folder and sub-folders kept, the file's name), the pages
// of its sections beside it, terms in glossary/ at the root, a file named
// on its own in notes/ (or the folder given); no folder is made to keep
// a page count down, and the same sources give the same paths.
func TestCollectionsMirrorTheirSources(t *testing.T) {
	run := func(into string) (*wiki.Wiki, *ingest.Result) {
		_, w := newWiki(t)
		docs := []*source.Document{
			collectionDoc(t, "docs/ops/runbook.md", "# Gateway Runbook\n\nThe gateway answers first.\n\n## Restart steps\n\n1. Drain the gateway.\n2. Restart the gateway.\n\n## Glossary\n\n- Gateway lag: the delay before the gateway catches up\n"),
			collectionDoc(t, "docs/ops/deep/er/still.md", "# Still Deeper\n\nA page four folders down.\n"),
			collectionDoc(t, "docs/intro.md", "# Introduction\n\nWhat the docs are about.\n"),
			readDoc(t, "alone.md", "# Alone\n\nA file named on its own.\n"),
		}
		for i := 0; i < 30; i++ {
			docs = append(docs, collectionDoc(t, fmt.Sprintf("docs/many/item-%02d.md", i), fmt.Sprintf("# Item %d\n\nThe item number %d keeps a record.\n", i, i)))
		}
		o := opts(offline.Engine{})
		o.Into = into
		res, err := ingest.Ingest(context.Background(), w, docs, o)
		if err != nil {
			t.Fatal(err)
		}
		return w, res
	}
	w, res := run("")
	for _, want := range []string{"docs/ops/runbook.html", "docs/ops/runbook/restart-steps.html", "glossary/gateway-lag.html",
		"docs/ops/deep/er/still.html", "docs/intro.html", "notes/alone.html", "docs/many/item-29.html"} {
		if !slices.Contains(res.Created, want) {
			t.Errorf("%s not created: %v", want, res.Created)
		}
	}
	for _, p := range allPaths(t, w) {
		if strings.HasSuffix(p, "/README.html") || p == "README.html" {
			continue
		}
		// Deepest input: docs/ops/deep/er/still.md, four folders; a
		// section's page is one deeper than its source page.
		if d := strings.Count(p, "/"); d > 4 {
			t.Errorf("%s is %d folders deep, deeper than its source", p, d)
		}
		if strings.HasPrefix(p, "docs/many/") && strings.Count(p, "/") != 2 {
			t.Errorf("%s: a full folder was split into sub-folders", p)
		}
	}
	if c := crowded(t, w); len(c) > 0 {
		t.Errorf("a mirrored collection is reported crowded:\n%s", strings.Join(c, "\n"))
	}
	lintClean(t, w)
	w2, _ := run("")
	if a, b := allPaths(t, w), allPaths(t, w2); !slices.Equal(a, b) {
		t.Errorf("the same sources landed elsewhere:\n%v\n%v", a, b)
	}
	_, res = run("ops/inbox")
	if !slices.Contains(res.Created, "ops/inbox/alone.html") || !slices.Contains(res.Created, "docs/intro.html") {
		t.Errorf("--into ops/inbox: created %v", res.Created)
	}
}

// A collection a vault holds under the name an earlier prose gave it
// (its "html" directory) keeps that name when ingested again under the
// name it has now (the package above it): its pages stay where they
// are, none is made again beside them; a vault that never held it takes
// the new name.
func TestCollectionKeepsItsEarlierName(t *testing.T) {
	_, w := newWiki(t)
	text := "# Closures\n\nA closure wraps a function.\n"
	first := collectionDoc(t, "html/closures.md", text)
	if _, err := ingest.Ingest(context.Background(), w, []*source.Document{first}, opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	again := collectionDoc(t, "libffi-dev/closures.md", text+"\nIt is called like the function.\n")
	again.Earlier = "html/closures.md"
	res, err := ingest.Ingest(context.Background(), w, []*source.Document{again}, opts(offline.Engine{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) != 0 || !slices.Contains(res.Updated, "html/closures.html") {
		t.Errorf("the collection did not keep its earlier name: created %q, updated %q", res.Created, res.Updated)
	}
	_, w2 := newWiki(t)
	fresh := collectionDoc(t, "libffi-dev/closures.md", text)
	fresh.Earlier = "html/closures.md"
	res, err = ingest.Ingest(context.Background(), w2, []*source.Document{fresh}, opts(offline.Engine{}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Created, "libffi-dev/closures.html") {
		t.Errorf("a new vault did not take the collection's name: created %q", res.Created)
	}
}
