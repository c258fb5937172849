package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/vault"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Aliases:   []string{"lint"},
		Usage:     "parse and wire contracts; print diagnostics as file:line:col: severity: code: message",
		ArgsUsage: "[PATH…]",
		Description: "Reads the *.prose.md files under each PATH (a file or a directory; default: the vault's src/),\n" +
			"checks them and wires ### Requires to ### Maintains. A PATH works outside any vault.\n" +
			"Diagnostics go to stdout, one per line; a summary goes to stderr. --quiet prints only errors;\n" +
			"--json prints {diagnostics, errors, warnings, infos, files}. Codes are documented in docs/diagnostics.md.\n" +
			"Exit status: 0 when there is no error diagnostic, 1 when there is one, 2 when a PATH does not exist.",
		Action: func(c *cli.Context) error {
			set, err := loadContracts(c, "check", c.Args().Slice())
			if err != nil {
				return err
			}
			defer set.close()
			_, diags := forme.Compile(set.project)
			out := newOutput(c)
			doc := newDiagnosticsDoc(set.project, diags)
			if out.json {
				if err := out.emit(doc); err != nil {
					return err
				}
			} else {
				printDiagnostics(&safeWriter{w: c.App.Writer}, diags, out.quiet)
				if !out.quiet {
					fmt.Fprintln(c.App.ErrWriter, doc.summary())
				}
			}
			if doc.Errors > 0 {
				return findings("check found %s", nounCount(doc.Errors, "error"))
			}
			return nil
		},
	}
}

// contractSet is what check, compile and graph read: a parsed project and,
// when its contracts live in a vault, that vault.
type contractSet struct {
	project *forme.Project
	vault   *vault.Vault // nil outside a vault
	// dir is the project directory: the vault root, else the directory
	// checked (its parent when it is named src). dist/ goes under it.
	dir string
}

func (s *contractSet) close() {
	if s.vault != nil {
		s.vault.Close()
	}
}

// loadContracts finds and parses the contracts a command reads. Without
// paths they are the vault's src/ (vault from --vault, $PROSE_VAULT or the
// working directory). Paths inside a vault are read with the vault's root
// and hash algorithm, so manifest paths are vault-relative; paths outside
// any vault are read on their own, with BLAKE3.
func loadContracts(c *cli.Context, cmd string, paths []string) (*contractSet, error) {
	if len(paths) == 0 {
		v, err := openVault(c)
		if err != nil {
			if c.String("vault") == "" && errors.Is(err, vault.ErrNotVault) {
				return nil, usageErrorf("%s: no PATH given and no vault here: give a contract file or directory (prose %s PATH), or run inside a vault (or pass --vault DIR)", cmd, cmd)
			}
			return nil, err
		}
		set := &contractSet{vault: v, dir: v.Root()}
		opts := forme.Options{Root: v.Root(), Hash: v.Algorithm()}
		src := filepath.Join(v.Root(), "src")
		if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
			set.project = forme.ParseSources(nil, opts) // reported as no_sources
			return set, nil
		}
		if set.project, err = forme.LoadProject([]string{displayPath(src)}, opts); err != nil {
			v.Close()
			return nil, err
		}
		return set, nil
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, usageErrorf("%s: %s does not exist: give a contract file or a directory of *.prose.md files", cmd, p)
			}
			return nil, fmt.Errorf("%s: %w", cmd, err)
		}
	}
	v, err := vaultHolding(c, paths)
	if err != nil {
		return nil, err
	}
	if v != nil {
		p, err := forme.LoadProject(paths, forme.Options{Root: v.Root(), Hash: v.Algorithm()})
		if err != nil {
			v.Close()
			return nil, err
		}
		return &contractSet{project: p, vault: v, dir: v.Root()}, nil
	}
	p, err := forme.LoadProject(paths, forme.Options{})
	if err != nil {
		return nil, err
	}
	dir := p.Root
	if filepath.Base(dir) == "src" {
		dir = filepath.Dir(dir)
	}
	return &contractSet{project: p, dir: dir}, nil
}

// vaultHolding opens the vault that contains every path: the one named by
// --vault or $PROSE_VAULT, else the one above the first path. It returns nil
// when the paths are not all inside it.
func vaultHolding(c *cli.Context, paths []string) (*vault.Vault, error) {
	root := c.String("vault")
	if root == "" {
		var err error
		if root, err = vault.Find(paths[0]); err != nil {
			return nil, nil
		}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		ap, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		if !isWithin(ap, abs) {
			return nil, nil
		}
	}
	return vault.Open(abs, vaultOptions(c))
}

// isWithin reports whether path is dir or below it.
func isWithin(path, dir string) bool {
	r, err := filepath.Rel(dir, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}

// displayPath names p relative to the working directory when it is below it,
// so diagnostics read src/x.prose.md:3:1 in a vault.
func displayPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if isWithin(p, wd) {
		if r, err := filepath.Rel(wd, p); err == nil {
			return r
		}
	}
	return p
}

// diagnosticsDoc is the JSON document of check, and the diagnostics part of
// compile's.
type diagnosticsDoc struct {
	Diagnostics []forme.Diagnostic `json:"diagnostics"`
	Errors      int                `json:"errors"`
	Warnings    int                `json:"warnings"`
	Infos       int                `json:"infos"`
	Files       int                `json:"files"`
}

func newDiagnosticsDoc(p *forme.Project, diags []forme.Diagnostic) diagnosticsDoc {
	d := diagnosticsDoc{Diagnostics: diags, Files: len(p.Files)}
	if d.Diagnostics == nil {
		d.Diagnostics = []forme.Diagnostic{}
	}
	for _, x := range diags {
		switch x.Severity {
		case forme.SeverityError:
			d.Errors++
		case forme.SeverityWarning:
			d.Warnings++
		default:
			d.Infos++
		}
	}
	return d
}

// summary is the one line printed after the diagnostics, on stderr.
func (d diagnosticsDoc) summary() string {
	return fmt.Sprintf("%s: %s, %s, %s", nounCount(d.Files, "contract file"), nounCount(d.Errors, "error"), nounCount(d.Warnings, "warning"), nounCount(d.Infos, "info"))
}

// printDiagnostics prints one diagnostic a line; quiet keeps only errors.
func printDiagnostics(w io.Writer, diags []forme.Diagnostic, quiet bool) {
	for _, d := range diags {
		if quiet && d.Severity != forme.SeverityError {
			continue
		}
		fmt.Fprintln(w, d.String())
	}
}

func nounCount(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
