package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/vault"
)

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "the material change of world-models between two receipts or commits",
		ArgsUsage: "[REV [REV]]",
		Description: "With no REV: the last commit against its parent. With one: REV against the branch tip.\n" +
			"A REV is a commit (or prefix), BRANCH~N, HEAD~N, or a receipt content hash (or hex prefix).\n" +
			"Both sides are reduced by the node's canonicalization spec, so immaterial churn is hidden.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "node", Usage: "only `NODE`"},
			&cli.StringFlag{Name: "facet", Usage: "only changes under `FACET`"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, markdown or json"},
		},
		Action: func(c *cli.Context) error {
			format := c.String("format")
			if c.Bool("json") {
				format = "json"
			}
			switch format {
			case "text", "markdown", "json":
			default:
				return usageErrorf("--format %q: use text, markdown or json", format)
			}
			if c.NArg() > 2 {
				return usageErrorf("diff takes at most two revisions")
			}
			v, err := openVault(c)
			if err != nil {
				return err
			}
			defer v.Close()
			var from, to plumbing.Hash
			switch c.NArg() {
			case 0:
				if to, err = v.Resolve("HEAD"); err == nil {
					from, err = v.Resolve("HEAD~1")
				}
			case 1:
				if from, err = v.Resolve(c.Args().Get(0)); err == nil {
					to, err = v.Resolve("HEAD")
				}
			case 2:
				if from, err = v.Resolve(c.Args().Get(0)); err == nil {
					to, err = v.Resolve(c.Args().Get(1))
				}
			}
			if err != nil {
				return err
			}
			res, err := v.Diff(from, to, vault.DiffOptions{Node: c.String("node"), Facet: c.String("facet")})
			if err != nil {
				return err
			}
			w := &safeWriter{w: c.App.Writer}
			switch format {
			case "json":
				return printJSON(c, res)
			case "markdown":
				fmt.Fprint(w, diffMarkdown(res))
			default:
				fmt.Fprint(w, diffText(res))
			}
			return nil
		},
	}
}

func valueText(v any) string {
	b, err := canon.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func diffText(res *vault.DiffResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "material changes %s..%s: %d\n", short(res.From), short(res.To), len(res.Changes))
	node := ""
	for _, ch := range res.Changes {
		if ch.Node != node {
			node = ch.Node
			fmt.Fprintf(&b, "\n%s\n", node)
		}
		switch ch.Op {
		case "added":
			fmt.Fprintf(&b, "  + %s [%s] = %s\n", ch.Path, ch.Facet, valueText(ch.New))
		case "removed":
			fmt.Fprintf(&b, "  - %s [%s] (was %s)\n", ch.Path, ch.Facet, valueText(ch.Old))
		default:
			fmt.Fprintf(&b, "  ~ %s [%s]: %s -> %s\n", ch.Path, ch.Facet, valueText(ch.Old), valueText(ch.New))
		}
	}
	return b.String()
}

func diffMarkdown(res *vault.DiffResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### World-model changes `%s..%s`\n\n", short(res.From), short(res.To))
	if len(res.Changes) == 0 {
		b.WriteString("No material change.\n")
		return b.String()
	}
	b.WriteString("| node | facet | path | change | before | after |\n|---|---|---|---|---|---|\n")
	cell := func(v any) string {
		if v == nil {
			return ""
		}
		s := strings.ReplaceAll(valueText(v), "|", "\\|")
		return "`" + strings.ReplaceAll(s, "`", "'") + "`"
	}
	for _, ch := range res.Changes {
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s |\n", ch.Node, ch.Facet, ch.Path, ch.Op, cell(ch.Old), cell(ch.New))
	}
	return b.String()
}

var _ = json.Marshal
