package main

import (
	"fmt"
	"os"
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
			"no material change appends a skipped receipt to the ledger and commits nothing.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "spec", Usage: "canonicalization spec `FILE` (JSON or YAML); stored with the node and used by later publishes"},
			&cli.StringFlag{Name: "contract-fingerprint", Usage: "contract fingerprint to record (default: from the active manifest, else \"none\")"},
			&cli.BoolFlag{Name: "verbose", Usage: "print every facet's token, however many facets the node has"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usageErrorf("publish needs NODE and DIR, got %d arguments (see prose publish --help)", c.NArg())
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
			v, err := openVault(c)
			if err != nil {
				return err
			}
			defer v.Close()
			bar, stop := spinner(c, "publish "+node)
			res, err := v.Publish(c.Context, node, dir, vault.PublishOptions{Spec: spec, ContractFingerprint: c.String("contract-fingerprint"),
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
			for _, e := range res.HandEdits {
				fmt.Fprintf(c.App.ErrWriter, "prose: warning: %s was edited during the publish and left as it is (%s); see prose fsck\n", e.Path, e.Reason)
			}
			r := res.Receipt
			verbose := c.Bool("verbose")
			if r.Status == "rendered" {
				out.printf("%s: rendered %s (moved %s)\n", r.Node, short(res.Commit.String()), listed(res.Moved, verbose))
			} else {
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
