package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/internal/durable"
)

// maxIDCount bounds --count so a typo cannot flood the terminal.
const maxIDCount = 100000

func idCommand() *cli.Command {
	return &cli.Command{
		Name:      "id",
		Usage:     "mint responsibility ids (UUIDv7, 26 uppercase Crockford base32 characters); --write adds a missing id: to contracts",
		ArgsUsage: "[--write FILE…]",
		Description: "Without --write, prints --count new ids, one a line (--json: an array), each greater than the last.\n" +
			"With --write, adds `id: <new id>` after the kind line of each kind: responsibility FILE whose\n" +
			"frontmatter has no id (or an empty one), replacing the file crash-safely and keeping its line\n" +
			"endings; it prints `FILE: added id X` or `FILE: already has an id`. Other kinds take no id and\n" +
			"are left as they are. A FILE that is not a contract (no frontmatter, invalid frontmatter, no\n" +
			"known kind) is reported on stderr and the exit status is 1; a FILE that does not exist is a\n" +
			"usage error (2) and nothing is written.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "write", Aliases: []string{"w"}, Usage: "add a missing id: to the frontmatter of each FILE"},
			&cli.IntFlag{Name: "count", Aliases: []string{"n"}, Value: 1, Usage: "print `N` ids (without --write)"},
		},
		Action: func(c *cli.Context) error {
			gen := &forme.IDGenerator{}
			out := newOutput(c)
			if !c.Bool("write") {
				if c.NArg() > 0 {
					return usageErrorf("id: files given without --write: use `prose id --write FILE…` to add ids to them")
				}
				n := c.Int("count")
				if n < 1 || n > maxIDCount {
					return usageErrorf("id: --count must be between 1 and %d, not %d", maxIDCount, n)
				}
				ids := make([]string, n)
				for i := range ids {
					id, err := gen.Next()
					if err != nil {
						return fmt.Errorf("id: %w", err)
					}
					ids[i] = id
					if !out.json { // the ids are the result: --quiet does not hide them
						fmt.Fprintln(c.App.Writer, id)
					}
				}
				return out.emit(ids)
			}
			if c.IsSet("count") {
				return usageErrorf("id: --count applies to printed ids, not to --write (each FILE gets one id)")
			}
			if c.NArg() == 0 {
				return usageErrorf("id: --write needs at least one FILE")
			}
			for _, f := range c.Args().Slice() {
				if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
					return usageErrorf("id: %s does not exist: give the contract files to add ids to", f)
				}
			}
			type result struct {
				File   string `json:"file"`
				ID     string `json:"id,omitempty"`
				Added  bool   `json:"added"`
				Kind   string `json:"kind,omitempty"`
				Reason string `json:"error,omitempty"`
			}
			var results []result
			failed := 0
			for _, f := range c.Args().Slice() {
				r := result{File: f}
				kind, id, added, err := writeID(f, gen)
				r.Kind, r.ID, r.Added = kind, id, added
				switch {
				case err != nil:
					failed++
					r.Reason = err.Error()
					if !out.json {
						fmt.Fprintf(c.App.ErrWriter, "prose: id: %s: %v\n", f, err)
					}
				case added:
					out.printf("%s: added id %s\n", f, id)
				case kind != string(forme.KindResponsibility):
					out.printf("%s: kind: %s takes no id (only responsibilities have one)\n", f, kind)
				default:
					out.printf("%s: already has an id\n", f)
				}
				results = append(results, r)
			}
			if err := out.emit(results); err != nil {
				return err
			}
			if failed > 0 {
				return findings("id: %d files could not be given ids", failed)
			}
			return nil
		},
	}
}

// writeID adds a missing id to one contract file. It returns the file's
// kind, its id (new or existing) and whether it wrote the file.
func writeID(file string, gen *forme.IDGenerator) (kind, id string, added bool, err error) {
	target, err := filepath.EvalSymlinks(file) // replace the file, not a link to it
	if err != nil {
		return "", "", false, err
	}
	st, err := os.Stat(target)
	if err != nil {
		return "", "", false, err
	}
	if !st.Mode().IsRegular() {
		return "", "", false, errors.New("not a regular file: give a *.prose.md contract file")
	}
	src, err := os.ReadFile(target)
	if err != nil {
		return "", "", false, err
	}
	f := forme.ParseFile(file, src)
	kind = strings.ToLower(f.Frontmatter["kind"])
	if kind == "" {
		for _, d := range f.Diagnostics {
			if d.Code == forme.CodeFrontmatterMissing || d.Code == forme.CodeFrontmatterInvalid {
				return "", "", false, fmt.Errorf("not a contract: %s", d.Message)
			}
		}
		return "", "", false, errors.New("not a contract: the frontmatter has no kind; add `kind: responsibility` first")
	}
	if kind != string(forme.KindResponsibility) {
		if !knownKind(kind) {
			return kind, "", false, fmt.Errorf("not a contract: kind %q is not a Contract Markdown kind; use kind: responsibility", kind)
		}
		return kind, "", false, nil
	}
	if existing := f.Frontmatter["id"]; existing != "" {
		return kind, existing, false, nil
	}
	if id, err = gen.Next(); err != nil {
		return kind, "", false, err
	}
	updated, changed, err := forme.InsertID(src, id)
	if err != nil {
		return kind, "", false, err
	}
	if !changed {
		return kind, "", false, nil
	}
	if err := durable.WriteFile(target, updated, st.Mode().Perm()); err != nil {
		return kind, "", false, fmt.Errorf("write: %w", err)
	}
	return kind, id, true, nil
}

// knownKind reports whether kind is an authored kind, current or retired
// (service and system, which forme reads with a warning).
func knownKind(kind string) bool {
	switch forme.Kind(kind) {
	case forme.KindResponsibility, forme.KindFunction, forme.KindGateway, forme.KindPattern, forme.KindTest:
		return true
	}
	return kind == "service" || kind == "system"
}
