package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/mergefile"
)

// driverResult is what the file merge of a path gave: the merged bytes,
// the conflicts left (each described for a person), and whether prose
// knows the path at all (else git's text merge takes it).
type driverResult struct {
	Merged    []byte
	Conflicts []string
	Handled   bool
}

// mergeFile is prose's three-way merge of one file (package mergefile:
// wiki pages slot by slot, the review queue and the catalog by rule).
var mergeFile = func(path string, base, ours, theirs []byte) (driverResult, error) {
	if len(base) == 0 {
		base = nil // git passes an empty file when the base lacks the path
	}
	res, err := mergefile.Merge(path, base, ours, theirs)
	if err != nil || !res.Handled {
		return driverResult{}, err
	}
	if res.Removed {
		// Both sides hold the file when git runs a driver; a removal is
		// git's own to show.
		return driverResult{Handled: true, Conflicts: []string{path + ": the merge removes the file"}}, nil
	}
	out := driverResult{Merged: res.Merged, Handled: true}
	for _, c := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, c.String())
	}
	return out, nil
}

// mergeDriverLimit bounds each of the three versions the driver reads: a
// page or a catalog file never comes near it (published files are bounded
// far lower), and a file past it is merged by git's own text merge.
const mergeDriverLimit = 64 << 20

func mergeDriverCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge-driver",
		Usage:     "git's merge driver for a vault (merge.prose.driver): merge one file three-way the way prose pull does, wiki pages slot by slot; exit 0 merged, 1 a conflict git shows",
		ArgsUsage: "BASE OURS THEIRS PATH",
		Description: "Git runs it as `prose merge-driver %O %A %B %P` for the paths .gitattributes gives merge=prose " +
			"(prose init, prose clone, prose remote add and prose pull register it; prose doctor checks it). " +
			"The merged file is written over OURS. A conflict is left in OURS with conflict markers git shows; " +
			"settle it, `git add` and `git commit`, then run `prose pull --continue`. " +
			"Paths prose does not merge itself go to git's text merge (git merge-file).",
		Action: func(c *cli.Context) error {
			if c.NArg() != 4 {
				return usageErrorf("merge-driver needs BASE OURS THEIRS PATH (git passes %%O %%A %%B %%P), got %s", nounCount(c.NArg(), "argument"))
			}
			basePath, oursPath, theirsPath, path := c.Args().Get(0), c.Args().Get(1), c.Args().Get(2), c.Args().Get(3)
			read := func(p string) ([]byte, bool, error) {
				f, err := os.Open(p)
				if err != nil {
					return nil, false, fmt.Errorf("merge-driver %s: %w", path, err)
				}
				defer f.Close()
				var b bytes.Buffer
				n, err := b.ReadFrom(io.LimitReader(f, mergeDriverLimit+1))
				if err != nil {
					return nil, false, fmt.Errorf("merge-driver %s: read %s: %w", path, p, err)
				}
				return b.Bytes(), n <= mergeDriverLimit, nil
			}
			base, okB, err := read(basePath)
			if err != nil {
				return err
			}
			ours, okO, err := read(oursPath)
			if err != nil {
				return err
			}
			theirs, okT, err := read(theirsPath)
			if err != nil {
				return err
			}
			if mergeFile != nil && okB && okO && okT {
				res, err := mergeFile(path, base, ours, theirs)
				if err != nil {
					fmt.Fprintf(c.App.ErrWriter, "prose merge-driver: %s: %v; merging it as text instead\n", path, err)
				} else if res.Handled {
					if res.Merged != nil {
						if err := writeOver(oursPath, res.Merged); err != nil {
							return err
						}
					}
					if len(res.Conflicts) > 0 {
						// The merge holds ours' side of each conflict and
						// every change merged by rule: git's text merge of
						// it against theirs puts the diff3 markers around
						// what is left, the slot both sides changed.
						return textMerge(c, basePath, oursPath, theirsPath, path, res.Conflicts)
					}
					return nil
				}
			}
			return textMerge(c, basePath, oursPath, theirsPath, path, nil)
		},
	}
}

// textMerge is git's own three-way text merge of the file, written over
// ours (conflict markers in the diff3 form where the sides differ).
func textMerge(c *cli.Context, basePath, oursPath, theirsPath, path string, why []string) error {
	cmd := exec.Command("git", "merge-file", "--diff3", "-L", path+" (ours)", "-L", path+" (base)", "-L", path+" (theirs)", oursPath, basePath, theirsPath)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil && len(why) > 0:
		// The text merges, but prose's rules found a conflict (a meta
		// key both sides set): still a conflict, named on stderr.
		return driverConflict(c, path, why)
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128:
		if len(why) == 0 {
			why = []string{nounCount(ee.ExitCode(), "text conflict")}
		}
		return driverConflict(c, path, why)
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("merge-driver %s: git is not on PATH, so git's text merge cannot run; install git", path)
	}
	return fmt.Errorf("merge-driver %s: git merge-file failed: %v %s", path, err, strings.TrimSpace(errb.String()))
}

// driverConflict tells git (exit 1) and the person what is left to settle.
func driverConflict(c *cli.Context, path string, conflicts []string) error {
	for _, k := range conflicts {
		fmt.Fprintf(c.App.ErrWriter, "prose merge-driver: %s: conflict: %s\n", path, k)
	}
	fmt.Fprintf(c.App.ErrWriter, "prose merge-driver: %s holds conflict markers: edit it to the text you want, `git add %s`, `git commit`, then `prose pull --continue`\n", path, path)
	return &exitError{code: 1, err: fmt.Errorf("merge-driver %s: %s", path, nounCount(len(conflicts), "conflict")), silent: true}
}

// writeOver replaces the file at p (git's scratch copy of ours) with data,
// through a temporary file beside it so a stop leaves either version.
func writeOver(p string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".prose-merge-*")
	if err != nil {
		return fmt.Errorf("merge-driver: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("merge-driver: write the merged file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("merge-driver: write the merged file: %w", err)
	}
	if fi, err := os.Stat(p); err == nil {
		_ = os.Chmod(tmp.Name(), fi.Mode().Perm())
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("merge-driver: %w", err)
	}
	return nil
}
