package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A source that stops defining a term takes its paragraph off the term's
// page; a retitled source keeps its pages (found by origin), with no stale
// item.
func TestIngestChangedSourceLetsGoThroughTheCLI(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeFiles(t, src, map[string]string{
		"a.md": "# Network Basics\n\nThe network carries traffic between services.\n\n## Glossary\n\nGateway: the entry point that routes outside traffic to services.\n",
		"b.md": "# Setup Guide\n\nSet up the worker before anything else.\n\n## Glossary\n\nGateway: the host that terminates TLS for workers.\n",
	})
	b := filepath.Join(src, "b.md")
	mustProse(t, "--vault", dir, "ingest", filepath.Join(src, "a.md"))
	mustProse(t, "--vault", dir, "ingest", b)
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "glossary/gateway", "body"); !strings.Contains(s, "terminates TLS") {
		t.Fatalf("b's definition was not added: %s", s)
	}
	write := func(text string) {
		if err := os.WriteFile(b, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# Setup Guide\n\nSet up the worker before anything else. The worker runs jobs.\n")
	if out := mustProse(t, "--vault", dir, "ingest", b); !strings.Contains(out, "updated  glossary/gateway.html") {
		t.Errorf("the ingest does not say it changed the term's page:\n%s", out)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "glossary/gateway", "body"); strings.Contains(s, "terminates TLS") || !strings.Contains(mustProse(t, "--vault", dir, "wiki", "slot", "glossary/gateway", "summary"), "routes outside traffic") {
		t.Errorf("glossary/gateway body after b stopped defining Gateway: %s", s)
	}
	// A retitled source keeps its pages: a page is found by its origin.
	write("# Worker Setup Guide\n\nSet up the worker before anything else. The worker runs jobs.\n")
	out := mustProse(t, "--vault", dir, "ingest", b)
	if strings.Contains(out, "created") || !strings.Contains(out, "updated  notes/b.html") {
		t.Errorf("a retitled source:\n%s", out)
	}
	if list := mustProse(t, "--vault", dir, "wiki", "review", "list"); strings.Contains(list, " stale ") {
		t.Errorf("a retitled source's page is flagged stale:\n%s", list)
	}
}

// A page is found by its origin, never its title (issue: a retitle made a
// second page): a person retitles the source's page, the source changes
// its own title and text, and the next ingest updates the same page —
// no second page, no stale item, the person's title kept.
func TestIngestFindsAPageByItsOriginThroughTheCLI(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "docs")
	writeFiles(t, src, map[string]string{"ops/runbook.md": "# Runbook\n\nRestart things carefully.\n\n## Restart steps\n\n1. Drain the node.\n2. Restart it.\n"})
	out := mustProse(t, "--vault", dir, "ingest", src)
	if !strings.Contains(out, "created  docs/ops/runbook.html") || !strings.Contains(out, "created  docs/ops/runbook/restart-steps.html") {
		t.Fatalf("first ingest:\n%s", out)
	}
	if meta := mustProse(t, "--vault", dir, "wiki", "meta", "docs/ops/runbook"); !strings.Contains(meta, "origin: docs/ops/runbook.md\n") {
		t.Fatalf("no origin in the page's meta:\n%s", meta)
	}
	pages := func() string { return mustProse(t, "--vault", dir, "wiki", "tree") }
	before := pages()
	mustProse(t, "--vault", dir, "wiki", "set-meta", "docs/ops/runbook", "title=Our Restart Runbook")
	mustProse(t, "--vault", dir, "wiki", "set-meta", "docs/ops/runbook/restart-steps", "title=Restarting a node")
	writeFiles(t, src, map[string]string{"ops/runbook.md": "# Node Runbook\n\nRestart things carefully, one node at a time.\n\n## Restart steps\n\n1. Drain the node.\n2. Restart it.\n3. Watch the logs.\n"})
	out = mustProse(t, "--vault", dir, "ingest", src)
	if strings.Contains(out, "created") || !strings.Contains(out, "updated  docs/ops/runbook.html") || !strings.Contains(out, "updated  docs/ops/runbook/restart-steps.html") {
		t.Errorf("the changed source did not update its pages where they are:\n%s", out)
	}
	if strings.Count(pages(), ".html") != strings.Count(before, ".html") {
		t.Errorf("pages before:\n%s\nafter:\n%s", before, pages())
	}
	if list := mustProse(t, "--vault", dir, "wiki", "review", "list"); strings.Contains(list, " stale ") {
		t.Errorf("the person's page is flagged stale:\n%s", list)
	}
	if meta := mustProse(t, "--vault", dir, "wiki", "meta", "docs/ops/runbook"); !strings.Contains(meta, "title: Our Restart Runbook\n") {
		t.Errorf("the person's title was not kept:\n%s", meta)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "docs/ops/runbook", "abstract"); !strings.Contains(s, "one node at a time") {
		t.Errorf("the source page was not updated: %s", s)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "docs/ops/runbook/restart-steps", "steps"); !strings.Contains(s, "Watch the logs") {
		t.Errorf("the steps page was not updated: %s", s)
	}
	if lint := mustProse(t, "--vault", dir, "wiki", "lint"); !strings.Contains(lint, "0 errors, 0 warnings") {
		t.Errorf("lint:\n%s", lint)
	}
}
