package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// collection reads the fixture files of dir as one collection, with
// replace applied to their bytes.
func collection(t *testing.T, dir string, replace *strings.Replacer) []Input {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.html"))
	if err != nil || len(files) < 3 {
		t.Fatalf("fixtures of %s: %v %v", dir, files, err)
	}
	var ins []Input
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, Input{Name: dir + "/" + filepath.Base(f), Data: []byte(replace.Replace(string(data))), Found: true, Collection: dir})
	}
	return ins
}

// Boilerplate is found by comparing the documents of a collection, not by
// knowing the generator: texinfo's "Next: … Previous: … Up:" bar (real
// pages of libffi's manual, its class renamed so that no element rule
// knows it) differs in its links on every page and is still found, and
// left out; the text stays. A file read alone keeps the bar (the element
// rules alone cannot tell it).
func TestCollectionBoilerplateIsFoundByComparing(t *testing.T) {
	ins := collection(t, "libffi", strings.NewReplacer(`class="header"`, `class="x-top"`))
	found := FindBoilerplate(ins)
	b := found["libffi"]
	if b == nil || b.Documents != len(ins) || b.Collection != "libffi" {
		t.Fatalf("boilerplate %+v", b)
	}
	bar := false
	for _, k := range b.Blocks {
		bar = bar || strings.HasPrefix(k, "next: #, previous: #, up: #")
	}
	if !bar {
		t.Fatalf("the navigation bar was not found: %q", b.Blocks)
	}
	for _, in := range ins {
		d, err := ReadWith(in.Name, in.Data, "", b)
		if err != nil {
			t.Fatal(err)
		}
		md := d.Markdown()
		if strings.Contains(md, "Next:") || strings.Contains(md, "Previous:") || strings.Contains(md, "Up:") {
			t.Errorf("%s keeps its navigation bar:\n%s", in.Name, md)
		}
		if !strings.Contains(md, "\n#") || strings.Count(md, "\n") < 4 || d.Boilerplate != b {
			t.Errorf("%s lost its text (or its boilerplate record):\n%s", in.Name, md)
		}
	}
	alone, err := Read(ins[0].Name, ins[0].Data, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(alone.Markdown(), "Previous:") {
		t.Errorf("a file read alone lost the bar the element rules do not know")
	}
	// Fewer than three documents are no collection.
	if found := FindBoilerplate(ins[:2]); len(found) != 0 {
		t.Errorf("two documents gave boilerplate %+v", found["libffi"])
	}
	// The same documents give the same boilerplate whatever their order.
	rev := append([]Input{}, ins...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if FindBoilerplate(rev)["libffi"].Token() != b.Token() {
		t.Errorf("the order of the documents changed the boilerplate")
	}
}

// Doxygen (real pages of LMDB's reference, with its copyright file): the
// project banner every page opens with is found and left out.
func TestDoxygenBannerIsBoilerplate(t *testing.T) {
	ins := collection(t, "lmdb", strings.NewReplacer())
	b := FindBoilerplate(ins)["lmdb"]
	if b == nil || !strings.Contains(strings.Join(b.Blocks, "|"), "lmdb") {
		t.Fatalf("boilerplate %+v", b)
	}
	d, err := ReadWith(ins[0].Name, ins[0].Data, "", b)
	if err != nil {
		t.Fatal(err)
	}
	if md := d.Markdown(); strings.Contains(md, "| LMDB |") || !strings.Contains(md, "mdb") {
		t.Errorf("the banner stayed, or the text went:\n%s", md)
	}
}
