package clidocs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func sampleApp() *cli.App {
	return &cli.App{
		Name:  "tool",
		Usage: "a sample",
		Flags: []cli.Flag{&cli.StringFlag{Name: "dir", Usage: "work in `DIR`"}},
		Commands: []*cli.Command{
			{Name: "put", Usage: "store *.md files under refs/x/*", ArgsUsage: "FILE…",
				Description: "Reads <p> text.\n.starts with a dot\n  indented — a table\n\nExamples:\n  # a comment\n  tool put a.md",
				Flags: []cli.Flag{
					&cli.DurationFlag{Name: "wait", Usage: "how long"},
					&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "say less"},
				}},
			{Name: "secret", Hidden: true, Usage: "never shown"},
			{Name: "group", Usage: "a group", Subcommands: []*cli.Command{{Name: "leaf", Usage: "a leaf"}}},
		},
	}
}

func TestMarkdownEscapesAndListsEveryVisibleCommand(t *testing.T) {
	md := Markdown(sampleApp(), "make docs")
	for _, want := range []string{
		"## tool put\n", "## tool group leaf\n", "`make docs`",
		`store \*.md files under refs/x/\*`, "Reads &lt;p> text.",
		"```\nindented — a table\n```", "- `--wait DURATION` — how long", "- `--quiet, -q` — say less",
		"```sh\n# a comment\ntool put a.md\n```", "- `--dir DIR` — work in DIR",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "secret") {
		t.Error("the Markdown shows a hidden command")
	}
	if Markdown(sampleApp(), "make docs") != md {
		t.Error("two renderings differ")
	}
}

func TestManPagesEscapeForRoff(t *testing.T) {
	pages := ManPages(sampleApp(), "tool manual")
	if len(pages) != 3 || pages["tool.1"] == "" || pages["tool-put.1"] == "" || pages["tool-group.1"] == "" {
		t.Fatalf("pages %v; want tool.1, tool-put.1, tool-group.1", keys(pages))
	}
	put := pages["tool-put.1"]
	for _, want := range []string{"\\&.starts with a dot", `indented \[u2014] a table`, `\fB\-\-wait DURATION\fR`, "tool put a.md"} {
		if !strings.Contains(put, want) {
			t.Errorf("tool-put.1 lacks %q:\n%s", want, put)
		}
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		return
	}
	dir := t.TempDir()
	for name, page := range pages {
		f := filepath.Join(dir, name)
		os.WriteFile(f, []byte(page), 0o644)
		out, err := exec.Command(groff, "-ww", "-man", "-z", f).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff warns on %s: %v\n%s", name, err, out)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestCompletionRefusesAnUnknownShell(t *testing.T) {
	if _, err := Completion(sampleApp(), "tcsh"); err == nil || !strings.Contains(err.Error(), "bash, fish, zsh") {
		t.Errorf("Completion(tcsh) = %v; want an error naming the shells", err)
	}
	for _, sh := range Shells {
		s, err := Completion(sampleApp(), sh)
		if err != nil || strings.Contains(s, "secret") || !strings.Contains(s, "leaf") {
			t.Errorf("%s script: %v; want the visible commands only:\n%s", sh, err, s)
		}
	}
}
