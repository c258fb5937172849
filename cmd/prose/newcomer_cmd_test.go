package main

import (
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// wiki meta prints the meta as YAML, as the meta block stores it, never Go
// map syntax; what it prints parses back to the meta --json gives.
func TestWikiMetaPrintsYAML(t *testing.T) {
	needGit(t)
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	mustProse(t, "--vault", vdir, "wiki", "new", "ops/a", "--template", "note", "--tag", "x", "--tag", "y", "--meta", `obj:={"a":"b"}`)
	out := mustProse(t, "--vault", vdir, "wiki", "meta", "ops/a")
	if strings.Contains(out, "map[") || strings.Contains(out, "[x y]") || !strings.Contains(out, "tags:\n  - x\n  - y\n") || !strings.Contains(out, "obj:\n  a: b\n") {
		t.Fatalf("wiki meta:\n%s", out)
	}
	var got map[string]any
	if err := yaml.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("wiki meta is not YAML: %v\n%s", err, out)
	}
	want := jsonOf(t, mustProse(t, "--vault", vdir, "--json", "wiki", "meta", "ops/a"))["meta"].(map[string]any)
	if len(got) != len(want) || got["title"] != want["title"] {
		t.Fatalf("wiki meta YAML %v, --json %v", got, want)
	}
}
