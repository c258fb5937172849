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
			&cli.BoolFlag{Name: "allow-empty", Usage: "publish DIR even when it holds no files (this removes every file of the node)"},
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
			res, err := v.Publish(c.Context, node, dir, vault.PublishOptions{Spec: spec, ContractFingerprint: c.String("contract-fingerprint"), AllowEmpty: c.Bool("allow-empty")})
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
			if r.Status == "rendered" {
				out.printf("%s: rendered %s (moved %s)\n", r.Node, short(res.Commit.String()), strings.Join(res.Moved, ", "))
			} else {
				out.printf("%s: skipped (no material change)\n", r.Node)
			}
			out.printf("  receipt  %s\n  version  %s\n", r.ContentHash, res.Version)
			for _, f := range sortedKeys(r.Fingerprints) {
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

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
