package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/vault"
)

func publishCommand() *cli.Command {
	return &cli.Command{
		Name:      "publish",
		Usage:     "run the publish pass on a world-model a render wrote to DIR; print the receipt",
		ArgsUsage: "NODE DIR",
		Description: "Collects DIR, canonicalizes and fingerprints it, and compares it with the node's last receipt.\n" +
			"A material change commits the new world-model under published/<node>/ with a rendered receipt;\n" +
			"no material change appends a skipped receipt to the ledger and commits nothing.\n" +
			"A render or script that knows what it wrote names it: --changed PATH (repeatable) or\n" +
			"--changed-from FILE (one path per line; - reads standard input), paths relative to DIR. Only those\n" +
			"paths are looked at; every other file is taken as the last publish from DIR left it.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "spec", Usage: "canonicalization spec `FILE` (JSON or YAML); stored with the node and used by later publishes"},
			&cli.StringFlag{Name: "contract-fingerprint", Usage: "contract `FINGERPRINT` to record (default: from the active manifest, else \"none\")"},
			&cli.StringSliceFlag{Name: "changed", Usage: "the only `PATH` (relative to DIR; a file or a directory, written or removed) that changed since the last publish from DIR; repeat for each"},
			&cli.StringFlag{Name: "changed-from", Usage: "read the changed paths from `FILE`, one per line (- for standard input)"},
			&cli.BoolFlag{Name: "allow-empty", Usage: "publish DIR even when it holds no files (this removes every file of the node)"},
			&cli.BoolFlag{Name: "verbose", Usage: "print every facet's token, however many facets the node has"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usageErrorf("publish needs NODE and DIR, got %s (see prose publish --help)", nounCount(c.NArg(), "argument"))
			}
			node, dir := c.Args().Get(0), c.Args().Get(1)
			var spec *canon.Spec
			if f := c.String("spec"); f != "" {
				data, err := os.ReadFile(f)
				if err != nil {
					return usageErrorf("--spec: %v", err)
				}
				if spec, err = canon.ParseSpec(data); err != nil {
					return usageErrorf("--spec %s: %v", f, err)
				}
			}
			changed, err := changedPaths(c, dir)
			if err != nil {
				return err
			}
			v, err := openVault(c)
			if err != nil {
				return err
			}
			defer v.Close()
			bar, stop := spinner(c, "publish "+node)
			res, err := v.Publish(c.Context, node, dir, vault.PublishOptions{Spec: spec, ContractFingerprint: c.String("contract-fingerprint"),
				Changed: changed, AllowEmpty: c.Bool("allow-empty"),
				Progress: func(phase string) { bar.Describe("publish " + node + ": " + phase + " done"); bar.Add(1) }})
			stop()
			if err != nil {
				return err
			}
			out := newOutput(c)
			if os.Getenv("PROSE_TIMINGS") == "1" {
				for _, ph := range res.Phases {
					fmt.Fprintf(c.App.ErrWriter, "%-16s %s\n", ph.Name, ph.Duration)
				}
			}
			for _, what := range res.Repaired {
				fmt.Fprintf(c.App.ErrWriter, "prose: repaired: %s\n", what)
			}
			for _, e := range res.HandEdits {
				fmt.Fprintf(c.App.ErrWriter, "prose: warning: %s was edited during the publish and left as it is (%s); see prose fsck\n", e.Path, e.Reason)
			}
			r := res.Receipt
			verbose := c.Bool("verbose")
			switch {
			case r.Status == "rendered" && len(res.Moved) == 0:
				// A repair publish: the render is the last receipt's, put
				// back on the branch.
				out.printf("%s: rendered %s (nothing moved; restored the published truth)\n", r.Node, short(res.Commit.String()))
			case r.Status == "rendered":
				out.printf("%s: rendered %s (moved %s)\n", r.Node, short(res.Commit.String()), listed(res.Moved, verbose))
			default:
				out.printf("%s: skipped (no material change)\n", r.Node)
			}
			out.printf("  receipt  %s\n  version  %s\n", r.ContentHash, res.Version)
			facets := sortedKeys(r.Fingerprints)
			if len(facets) > maxListed && !verbose {
				out.printf("  %-8s %s\n", "@atomic", r.Fingerprints["@atomic"])
				out.printf("  and %s (--verbose prints every token)\n", nounCount(len(facets)-1, "facet token"))
				facets = nil
			}
			for _, f := range facets {
				out.printf("  %-8s %s\n", f, r.Fingerprints[f])
			}
			moved := res.Moved
			if moved == nil {
				moved = []string{}
			}
			doc := map[string]any{"receipt": r.ToValue(), "moved": moved, "version": res.Version}
			if !res.Commit.IsZero() {
				doc["commit"] = res.Commit.String()
			}
			if len(res.Repaired) > 0 {
				doc["repaired"] = res.Repaired
			}
			return out.emit(doc)
		},
	}
}

// maxListed is how many names (moved facets, facet tokens) a summary prints
// before it counts the rest.
const maxListed = 8

// listed joins names for a summary line: all of them when verbose or few,
// else the first maxListed and a count of the others.
func listed(names []string, verbose bool) string {
	if verbose || len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// changedPaths gathers --changed and --changed-from into the paths of an
// informed publish, relative to dir; nil when neither is given (a full
// scan). An absolute path must lie inside dir.
func changedPaths(c *cli.Context, dir string) ([]string, error) {
	var paths []string
	given := c.IsSet("changed") || c.IsSet("changed-from")
	paths = append(paths, c.StringSlice("changed")...)
	if f := c.String("changed-from"); f != "" {
		var data []byte
		var err error
		if f == "-" {
			data, err = io.ReadAll(c.App.Reader)
		} else {
			data, err = os.ReadFile(f)
		}
		if err != nil {
			return nil, usageErrorf("--changed-from: %v", err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSuffix(line, "\r"); strings.TrimSpace(line) != "" {
				paths = append(paths, line)
			}
		}
	}
	if !given {
		return nil, nil
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if filepath.IsAbs(p) {
			rel, err := filepath.Rel(absDir, p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return nil, usageErrorf("--changed %s lies outside %s; name paths inside the directory being published", p, dir)
			}
			p = rel
		}
		out = append(out, filepath.ToSlash(p))
	}
	return out, nil
}
