package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A source that stops defining a term takes its paragraph off the term's
// page; a retitled source's old pages are listed for review as stale, not
// credited to the new version.
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
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "network/gateway", "body"); !strings.Contains(s, "terminates TLS") {
		t.Fatalf("b's definition was not added: %s", s)
	}
	write := func(text string) {
		if err := os.WriteFile(b, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# Setup Guide\n\nSet up the worker before anything else. The worker runs jobs.\n")
	if out := mustProse(t, "--vault", dir, "ingest", b); !strings.Contains(out, "updated  network/gateway.html") {
		t.Errorf("the ingest does not say it changed the term's page:\n%s", out)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "network/gateway", "body"); strings.Contains(s, "terminates TLS") || !strings.Contains(s, "routes outside traffic") {
		t.Errorf("network/gateway body after b stopped defining Gateway: %s", s)
	}
	write("# Worker Setup Guide\n\nSet up the worker before anything else. The worker runs jobs.\n")
	mustProse(t, "--vault", dir, "ingest", b)
	list := mustProse(t, "--vault", dir, "wiki", "review", "list")
	for _, page := range []string{"setup/setup-guide.html", "setup/notes-on-setup-guide.html"} {
		found := false
		for _, line := range strings.Split(list, "\n") {
			found = found || strings.Contains(line, " stale ") && strings.Contains(line, page) && strings.Contains(line, "b.md")
		}
		if !found {
			t.Errorf("no stale item for %s naming b.md:\n%s", page, list)
		}
	}
}
