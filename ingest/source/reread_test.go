package source

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRereadGivesTheSameDocument: a released document of every kind,
// boilerplate left out of an HTML one, reads back the sections and links
// it was read with; one whose file changed is refused with ErrChanged and
// stays released; one never released is left as it is.
func TestRereadGivesTheSameDocument(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"notes.md":  "# Notes\n\nSee [the guide](guide.md#setup).\n\n## Setup\n\n1. One.\n2. Two.\n\n- **term**: a meaning\n",
		"plain.txt": "Plain text\n\nA paragraph of it.\n",
		"chat.json": `{"messages":[{"role":"user","content":"How do I deploy?"},{"role":"assistant","content":"Run the script."}]}`,
	}
	for _, in := range collection(t, "libffi", strings.NewReplacer(`class="header"`, `class="x-top"`)) {
		files[in.Name] = string(in.Data) // a manual whose pages share a bar
	}
	var inputs []Input
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		coll := "."
		if i := strings.IndexByte(name, '/'); i > 0 {
			coll = name[:i]
		}
		inputs = append(inputs, Input{Name: name, Data: []byte(text), Path: p, Found: true, Collection: coll})
	}
	chrome := FindBoilerplate(inputs)
	for _, in := range inputs {
		d, err := ReadWith(in.Name, in.Data, "", chrome[in.Collection])
		if err != nil {
			t.Fatal(err)
		}
		want := *d
		if d.Release() {
			t.Fatalf("%s: released without a Reload", d.Name)
		}
		p := in.Path
		d.Reload = func() ([]byte, error) { return os.ReadFile(p) }
		if !d.Release() || d.Sections != nil || d.Links != nil || !d.Released() {
			t.Fatalf("%s: not released", d.Name)
		}
		if err := d.Reread(); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if d.Released() || !reflect.DeepEqual(d.Sections, want.Sections) || !reflect.DeepEqual(d.Links, want.Links) {
			t.Errorf("%s: read again as %+v, %+v; first %+v, %+v", d.Name, d.Sections, d.Links, want.Sections, want.Links)
		}
		if d.Kind == HTML && d.Boilerplate == nil {
			t.Errorf("%s: no boilerplate found (the test reads none again)", d.Name)
		}
		before := d.Sections
		if err := d.Reread(); err != nil || !reflect.DeepEqual(d.Sections, before) {
			t.Errorf("%s: a document not released changed on Reread: %v", d.Name, err)
		}

		d.Release()
		if err := os.WriteFile(p, []byte(files[in.Name]+"\n\nChanged."), 0o644); err != nil {
			t.Fatal(err)
		}
		err = d.Reread()
		if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), d.Name) {
			t.Errorf("%s changed: Reread gave %v, want ErrChanged naming it", d.Name, err)
		}
		if !d.Released() || d.Sections != nil {
			t.Errorf("%s: a refused Reread gave sections", d.Name)
		}
	}
}
