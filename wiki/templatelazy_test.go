package wiki

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Opening a wiki parses none of the built-in templates: each is parsed at
// its first use, once, and listing the templates parses them all. A
// vault's own template is still parsed (and refused when broken) at Open.
func TestBuiltinTemplatesParseAtFirstUse(t *testing.T) {
	w := newWiki(t)
	if n := w.templates.parsed.Load(); n != 0 {
		t.Fatalf("Open parsed %d built-in templates, want 0", n)
	}
	for range 2 {
		tpl, err := w.Template("concept")
		if err != nil || tpl.Name != "concept" || !tpl.Declares("body") {
			t.Fatalf("concept: %+v, %v", tpl, err)
		}
	}
	if n := w.templates.parsed.Load(); n != 1 {
		t.Fatalf("%d built-in templates parsed after using one twice, want 1", n)
	}
	newPage(t, w, "a/x", "note", map[string]string{"body": "<p>x</p>"})
	if _, data, err := w.ReadFile("a/x"); err != nil || !strings.Contains(string(data), "<p>x</p>") {
		t.Fatalf("page rendered with a lazily parsed template: %v\n%s", err, data)
	}
	all := w.Templates()
	files, _ := builtinTemplateFiles()
	if len(all) != len(files) || int(w.templates.parsed.Load()) != len(files) {
		t.Fatalf("Templates listed %d, parsed %d; want %d", len(all), w.templates.parsed.Load(), len(files))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Fatalf("templates not sorted: %s before %s", all[i-1].Name, all[i].Name)
		}
	}
	if _, err := w.Template("nosuch"); err == nil || !strings.Contains(err.Error(), "concept") {
		t.Fatalf("unknown template: %v, want an error listing the templates", err)
	}

	// A broken template of the vault's own fails Open, naming its file.
	dir := filepath.Join(w.Vault().Root(), filepath.FromSlash(TemplateDir))
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "note.html"), []byte("{{/* prose:template\nslots: []\n*/}}{{define \"body\"}}{{.Nope"), 0o644)
	if _, err := Open(w.Vault()); err == nil || !strings.Contains(err.Error(), "templates/wiki/note.html") {
		t.Fatalf("Open with a broken vault template: %v, want an error naming templates/wiki/note.html", err)
	}
}
