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
			sb.WriteString("## Restart\n\n1. Drain the node.\n2. Restart the node.\n\n")
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
	if len(res.Created) < 400 {
		t.Fatalf("only %d pages created", len(res.Created))
	}
	if c := crowded(t, w); len(c) > 0 {
		t.Errorf("crowded after one run:\n%s", strings.Join(c, "\n"))
	}
	lintClean(t, w)

	_, w2 := newWiki(t)
	if _, err := ingest.Ingest(context.Background(), w2, docs, opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	if a, b := allPaths(t, w), allPaths(t, w2); !slices.Equal(a, b) {
		t.Errorf("the same sources landed elsewhere in a second wiki")
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

// A source whose pages do not all fit in the folder they were planned
// into keeps them together: every page it creates goes to one folder,
// and the same wiki and sources give the same folder again.
func TestSourcePagesStayTogetherWhenAFolderFills(t *testing.T) {
	run := func() (*wiki.Wiki, *source.Document) {
		_, w := newWiki(t)
		docs := []*source.Document{readDoc(t, "docs/item-0.md", "# Gateway Item 0\n\nThe gateway item zero answers first.\n\n## Restart\n\n1. Drain the gateway.\n2. Restart the gateway.\n\n## Glossary\n\n- Gateway lag: the delay before the gateway catches up\n")}
		for i := 1; i <= 3; i++ {
			docs = append(docs, readDoc(t, fmt.Sprintf("docs/item-%d.md", i), fmt.Sprintf("# Gateway Item %d\n\nThe gateway item number %d keeps a record of requests.\n", i, i)))
		}
		ingestDocs(t, w, docs...)
		last := readDoc(t, "docs/item-4.md", "# Gateway Item 4\n\nThe gateway item number four keeps a record of requests.\n")
		ingestDocs(t, w, last)
		return w, last
	}
	w, last := run()
	if n := len(slices.DeleteFunc(allPaths(t, w), func(p string) bool {
		return !strings.HasPrefix(p, "gateway/") || strings.Count(p, "/") != 1 || strings.HasSuffix(p, "/README.html")
	})); n > wiki.MaxFolderPages {
		t.Fatalf("gateway/ holds %d pages: %v", n, allPaths(t, w))
	}
	var dirs []string
	for _, tmpl := range []string{"source", "note"} {
		p := pageOf(t, w, last.ID, tmpl)
		dirs = append(dirs, p[:strings.LastIndex(p, "/")])
	}
	if dirs[0] != dirs[1] {
		t.Errorf("the source's pages split across folders: %v", dirs)
	}
	w2, _ := run()
	if a, b := allPaths(t, w), allPaths(t, w2); !slices.Equal(a, b) {
		t.Errorf("the same sources landed elsewhere:\n%v\n%v", a, b)
	}
	lintClean(t, w)
}
