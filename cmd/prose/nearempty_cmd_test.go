package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var tagsRe = regexp.MustCompile(`<[^>]*>`)

// plainText is slot HTML as text: tags dropped, white space one space.
func plainText(h string) string {
	return strings.Join(strings.Fields(tagsRe.ReplaceAllString(h, " ")), " ")
}

// TestIngestMakesNoNearEmptyOrRepeatedParts: what the example sources
// become says each thing once. A term's page does not repeat its summary
// as its body's first paragraph; the conversation's source page quotes no
// excerpts of the turns it renders in full below; a source with no steps
// or definitions (a plain file of paragraphs and a list) gets its source
// page and no "Notes on" twin, its list kept on the source page.
func TestIngestMakesNoNearEmptyOrRepeatedParts(t *testing.T) {
	dir := newIngestVault(t)
	src := t.TempDir()
	for _, f := range []string{"canary-debugging.json", "deploy-guide.md", "incident-glossary.html"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "sources", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plain := "On-call handbook\n\nThe on-call engineer keeps the pager for a week. Handover happens on Monday.\n\n- check the dashboards\n- read the open incidents\n- update the rota\n"
	if err := os.WriteFile(filepath.Join(src, "oncall.txt"), []byte(plain), 0o644); err != nil {
		t.Fatal(err)
	}
	mustProse(t, "--vault", dir, "ingest", src)

	for _, page := range []string{"glossary/canary", "glossary/rollback", "glossary/sev1", "glossary/incident-commander"} {
		summary := plainText(mustProse(t, "--vault", dir, "wiki", "slot", page, "summary"))
		var body string
		for _, slot := range []string{"body", "description"} {
			if out, _, code := prose(t, "--vault", dir, "wiki", "slot", page, slot); code == 0 {
				body += out
			}
		}
		if summary == "" || strings.Contains(plainText(body), summary) {
			t.Errorf("%s says its summary %q again in its body:\n%s", page, summary, body)
		}
	}

	conv := filepath.Base(src) + "/canary-debugging"
	if ex := mustProse(t, "--vault", dir, "wiki", "slot", conv, "excerpts"); strings.TrimSpace(ex) != "" {
		t.Errorf("the conversation's source page quotes excerpts above the whole source:\n%s", ex)
	}
	if doc := mustProse(t, "--vault", dir, "wiki", "slot", conv, "document"); !strings.Contains(doc, `class="turn`) {
		t.Errorf("the conversation's source page does not render its turns:\n%s", doc)
	}

	var found struct {
		Pages []struct {
			Path, Title, Template string
		}
	}
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", dir, "--json", "wiki", "find", "**")), &found); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range found.Pages {
		paths = append(paths, p.Path)
		if p.Template == "note" || strings.HasPrefix(p.Title, "Notes on") {
			t.Errorf("a note was made beside a source page: %s (%s)", p.Path, p.Title)
		}
	}
	oncall := filepath.Base(src) + "/oncall.html"
	if !slices.Contains(paths, oncall) {
		t.Fatalf("no source page %s among %v", oncall, paths)
	}
	doc := mustProse(t, "--vault", dir, "wiki", "slot", strings.TrimSuffix(oncall, ".html"), "document")
	for _, item := range []string{"<li>check the dashboards</li>", "<li>read the open incidents</li>", "<li>update the rota</li>"} {
		if !strings.Contains(doc, item) {
			t.Errorf("the source page lacks %s:\n%s", item, doc)
		}
	}
}

// copyFiles copies the regular files of dir (not below it) into a new
// folder named name under a temporary directory, and returns its path.
func copyFiles(t *testing.T, dir, name string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// runLists are the pages a run (or a dry run) says it creates, updates and
// moves, from its --json output.
func runLists(t *testing.T, out string) (created, updated []string, moved []any) {
	t.Helper()
	var r struct {
		Created []string `json:"created"`
		Updated []string `json:"updated"`
		Moved   []any    `json:"moved"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return r.Created, r.Updated, r.Moved
}

// TestRealDocumentsIngestThenEnrichCommitsNothing: on real documents (an
// excerpt of libffi's texinfo manual and Debian READMEs, with their
// licences) --dry-run lists exactly the pages the run then creates,
// updates and moves, and enrich --all after the ingest commits nothing,
// nor does it run again; after one file changes the same holds.
func TestRealDocumentsIngestThenEnrichCommitsNothing(t *testing.T) {
	dir := newIngestVault(t)
	ffi := copyFiles(t, filepath.Join("..", "..", "ingest", "source", "testdata", "libffi"), "libffi")
	readmes := copyFiles(t, filepath.Join("testdata", "debian-readmes"), "readmes")
	run := func(what string) {
		t.Helper()
		before := headOf(t, dir)
		dc, du, dm := runLists(t, mustProse(t, "--vault", dir, "--json", "ingest", "--dry-run", ffi, readmes))
		if headOf(t, dir) != before {
			t.Fatalf("%s: --dry-run committed", what)
		}
		rc, ru, rm := runLists(t, mustProse(t, "--vault", dir, "--json", "ingest", ffi, readmes))
		if !slices.Equal(dc, rc) || !slices.Equal(du, ru) || len(dm) != len(rm) {
			t.Errorf("%s: --dry-run planned created %v updated %v moved %v; the run created %v updated %v moved %v", what, dc, du, dm, rc, ru, rm)
		}
		if len(rc)+len(ru) == 0 {
			t.Fatalf("%s: the ingest wrote no page", what)
		}
		head := headOf(t, dir)
		for i := 1; i <= 2; i++ {
			if out := mustProse(t, "--vault", dir, "enrich", "--all"); !strings.Contains(out, "wiki: skipped") || headOf(t, dir) != head {
				t.Fatalf("%s: enrich --all number %d after the ingest committed:\n%s", what, i, out)
			}
		}
	}
	run("the first ingest")
	bc := filepath.Join(readmes, "bc-README.txt")
	data, err := os.ReadFile(bc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bc, append(data, "\nExtra notes:\n\n\tThe timetest step is optional on fast machines.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	run("an ingest after bc-README.txt changed")
	mustProse(t, "--vault", dir, "wiki", "lint")
}
