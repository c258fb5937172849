package prompt

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

//go:embed builtin/*.md
var builtinFS embed.FS

// OverrideDir is the directory, relative to a vault's root, whose NAME.md
// files replace the built-in prompt NAME.
const OverrideDir = "prompts"

// Names lists the built-in prompts.
func Names() []string {
	entries, _ := fs.ReadDir(builtinFS, "builtin")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".md"))
	}
	sort.Strings(names)
	return names
}

// Builtin returns the built-in prompt name.
func Builtin(name string) (*Template, error) {
	data, err := builtinFS.ReadFile("builtin/" + name + ".md")
	if err != nil {
		return nil, fmt.Errorf("no built-in prompt %q; the prompts are %s", name, strings.Join(Names(), ", "))
	}
	return Parse(name, "built-in", data)
}

// Load returns prompt name as a vault sees it: the override at
// ROOT/prompts/NAME.md when there is one, else the built-in. An override
// keeps the built-in's fields (it may leave "fields" out; if it lists
// them, the lists must match) and may choose its dialect. root "" means no
// vault.
func Load(root, name string) (*Template, error) {
	base, err := Builtin(name)
	if err != nil {
		return nil, err
	}
	if root == "" {
		return base, nil
	}
	path := filepath.Join(root, OverrideDir, name+".md")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return base, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read prompt override: %w", err)
	}
	t, err := Parse(name, filepath.ToSlash(filepath.Join(OverrideDir, name+".md")), data)
	if err != nil {
		return nil, err
	}
	if t.Fields == nil {
		t.Fields = base.Fields
	}
	if !sameSet(t.Fields, base.Fields) {
		return nil, fmt.Errorf("%s declares fields %s but prompt %s has %s; remove the fields line or list exactly those", t.Source, strings.Join(t.Fields, ", "), name, strings.Join(base.Fields, ", "))
	}
	if t.Description == "" {
		t.Description = base.Description
	}
	return t, nil
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
