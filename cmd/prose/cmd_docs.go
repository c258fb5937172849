package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/internal/clidocs"
)

// regenDocs is the one command that remakes the generated reference.
const regenDocs = "go run ./cmd/prose __docs docs"

// completionCommand is `prose completion SHELL`: the shell's completion
// script on stdout, made from the command tree.
func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "SHELL",
		Description: "The script completes command and subcommand names, and each command's flags after a \"-\";\n" +
			"elsewhere (arguments, flag values) the shell completes file names. Install it once:\n" +
			"  bash: echo 'source <(prose completion bash)' >> ~/.bashrc\n" +
			"  zsh:  prose completion zsh > \"${fpath[1]}/_prose\"   (then start a new shell)\n" +
			"  fish: prose completion fish > ~/.config/fish/completions/prose.fish\n" +
			"The same scripts are in docs/completions/ of the source tree.",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("completion needs one SHELL: %s (see prose completion --help)", strings.Join(clidocs.Shells, ", "))
			}
			// A fresh tree: running a command adds urfave/cli's help to it.
			script, err := clidocs.Completion(newApp(io.Discard, io.Discard), c.Args().First())
			if err != nil {
				return usageErrorf("%v", err)
			}
			_, err = fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}

// docsCommand is the hidden `prose __docs DIR`: it writes the generated
// reference (DIR/cli.md, DIR/man/*.1, DIR/completions/*) from the command
// tree, removing the man pages of commands that are gone. DIR is the
// source tree's docs/.
func docsCommand() *cli.Command {
	return &cli.Command{
		Name:      "__docs",
		Hidden:    true,
		Usage:     "write docs/cli.md, the man pages and the completion scripts from the command tree",
		ArgsUsage: "DIR",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("__docs needs the DIR to write into: %s", regenDocs)
			}
			dir := c.Args().First()
			files, err := generatedDocs(newApp(io.Discard, io.Discard))
			if err != nil {
				return err
			}
			if old, _ := filepath.Glob(filepath.Join(dir, "man", "*.1")); len(old) > 0 {
				for _, f := range old {
					rel, _ := filepath.Rel(dir, f)
					if _, keep := files[filepath.ToSlash(rel)]; !keep {
						if err := os.Remove(f); err != nil {
							return err
						}
					}
				}
			}
			for _, name := range sortedKeys(files) {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
					return err
				}
			}
			fmt.Fprintf(c.App.ErrWriter, "wrote %d files under %s\n", len(files), dir)
			return nil
		},
	}
}

// generatedDocs is every generated file, keyed by its path under docs/.
func generatedDocs(app *cli.App) (map[string]string, error) {
	files := map[string]string{"cli.md": clidocs.Markdown(app, regenDocs)}
	for name, page := range clidocs.ManPages(app, "prose manual") {
		files["man/"+name] = page
	}
	for _, sh := range clidocs.Shells {
		script, err := clidocs.Completion(app, sh)
		if err != nil {
			return nil, err
		}
		name := map[string]string{"bash": "prose.bash", "zsh": "_prose", "fish": "prose.fish"}[sh]
		files["completions/"+name] = script
	}
	return files, nil
}

// subHelpCommand is the hidden `help` of a command with subcommands, so
// `prose wiki help search` shows what `prose help wiki search` does.
func subHelpCommand(path string) *cli.Command {
	return &cli.Command{
		Name:      "help",
		Hidden:    true,
		Usage:     "show the subcommands, or one subcommand's help",
		ArgsUsage: "[SUBCOMMAND]",
		Action: func(c *cli.Context) error {
			args := append(strings.Fields(path), c.Args().Slice()...)
			return showHelp(c, args)
		},
	}
}
