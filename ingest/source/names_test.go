package source

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func collectNames(t *testing.T, args []string, stdin, stdinName string) []string {
	t.Helper()
	inputs, _, err := Collect(args, strings.NewReader(stdin), stdinName)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range inputs {
		names = append(names, in.Name)
	}
	return names
}

// Two inputs of one run never share a name: each takes as many trailing
// components of its path as makes it distinct; names that do not collide
// stay as they were; a file given twice is read once.
func TestCollectNamesAreDistinct(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"s/a/README.md":            "# Deploy Notes\n\nAlpha.\n",
		"s/b/README.md":            "# Billing Overview\n\nBilling.\n",
		"s/c/x/README.md":          "# C\n",
		"s/d/x/README.md":          "# D\n",
		"s/solo.md":                "# Solo\n",
		"one/docs/intro.md":        "# One\n",
		"two/docs/intro.md":        "# Two\n",
		"two/docs/unique.md":       "# Unique\n",
		"three/docs/other.md":      "# Other\n",
		"pkg-a/html/index.html":    "<h1>A</h1>",
		"pkg-b/html/en/intro.html": "<h1>B</h1>",
	})
	p := func(rel string) string { return filepath.Join(root, rel) }
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{p("s/a/README.md"), p("s/b/README.md")}, []string{"a/README.md", "b/README.md"}},
		{[]string{p("s/a/README.md"), p("s/solo.md")}, []string{"README.md", "solo.md"}},
		{[]string{p("s/c/x/README.md"), p("s/d/x/README.md"), p("s/a/README.md")}, []string{"c/x/README.md", "d/x/README.md", "a/README.md"}},
		// the same file twice, once through a path with "..": read once
		{[]string{p("s/a/README.md"), p("s/b/../a/README.md"), p("s/solo.md")}, []string{"README.md", "solo.md"}},
		// a file named and found in a directory named too: read once, first name kept
		{[]string{p("s/solo.md"), p("s")}, []string{"solo.md", "s/a/README.md", "s/b/README.md", "s/c/x/README.md", "s/d/x/README.md"}},
		// two directories of one base name are two collections, each in a
		// folder of its own, even where no file name clashes
		{[]string{p("one/docs"), p("two/docs")}, []string{"one/docs/intro.md", "two/docs/intro.md", "two/docs/unique.md"}},
		{[]string{p("one/docs"), p("three/docs")}, []string{"one/docs/intro.md", "three/docs/other.md"}},
		// a generic directory name (html, en) gives way to the one above it
		{[]string{p("pkg-a/html"), p("pkg-b/html/en")}, []string{"pkg-a/index.html", "pkg-b/intro.html"}},
		{[]string{p("one/docs")}, []string{"docs/intro.md"}},
	}
	for _, tt := range tests {
		got := collectNames(t, tt.args, "", "")
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Collect(%q) names %q, want %q", tt.args, got, tt.want)
		}
	}

	// Standard input keeps its name; a file of that name takes its folder.
	got := collectNames(t, []string{"-", p("s/a/README.md")}, "# Piped\n", "README.md")
	if want := []string{"README.md", "a/README.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("stdin beside a file of its name: %q, want %q", got, want)
	}

	// A symbolic link to a file given too is that file.
	link := p("s/link.md")
	if err := os.Symlink(p("s/solo.md"), link); err == nil {
		got := collectNames(t, []string{p("s/solo.md"), link}, "", "")
		if want := []string{"solo.md"}; !reflect.DeepEqual(got, want) {
			t.Errorf("file and a link to it: %q, want %q", got, want)
		}
	}
}
