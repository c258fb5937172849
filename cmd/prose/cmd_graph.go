package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/forme"
)

func graphCommand() *cli.Command {
	return &cli.Command{
		Name:      "graph",
		Usage:     "print the wired topology (Graphviz dot, Mermaid or JSON), even when there are errors",
		ArgsUsage: "[PATH]",
		Description: "Wires the contracts (default: the vault's src/; PATH may be a file or directory, inside or\n" +
			"outside a vault) and prints the graph on stdout: nodes, edges labelled with the facet read,\n" +
			"unresolved needs as dashed edges, nodes and edges in error in red, and the diagnostics as\n" +
			"comments. The diagnostics also go to stderr (only errors with --quiet), then a summary.\n" +
			"Render dot with `prose graph | dot -Tsvg > graph.svg`. --json is --format json.\n" +
			"Exit status: 1 when there is an error diagnostic (the graph is printed anyway), else 0.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "dot", Usage: "output `FORMAT`: " + strings.Join(forme.GraphFormats, ", ")},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageErrorf("graph takes at most one PATH, got %d (see prose graph --help)", c.NArg())
			}
			format := c.String("format")
			if !slices.Contains(forme.GraphFormats, format) {
				return usageErrorf("graph: --format must be one of %s, not %q", strings.Join(forme.GraphFormats, ", "), format)
			}
			out := newOutput(c)
			if out.json {
				if c.IsSet("format") && format != "json" {
					return usageErrorf("graph: --json prints JSON, but --format asks for %s: drop one of them", format)
				}
				format = "json"
			}
			set, err := loadContracts(c, "graph", c.Args().Slice())
			if err != nil {
				return err
			}
			defer set.close()
			m, diags := forme.Compile(set.project)
			g, err := forme.RenderGraph(m, format)
			if err != nil {
				return err
			}
			if _, err := (&safeWriter{w: c.App.Writer}).Write(g); err != nil {
				return err
			}
			doc := newDiagnosticsDoc(set.project, diags)
			if format != "json" && sameDestination(c.App.Writer, c.App.ErrWriter) {
				// The graph carries them as comments, and stdout and
				// stderr are one terminal (or one file): say them once.
				if doc.Errors > 0 {
					return findings("graph found %s", nounCount(doc.Errors, "error"))
				}
				return nil
			}
			printDiagnostics(c.App.ErrWriter, diags, out.quiet)
			if !out.quiet {
				fmt.Fprintln(c.App.ErrWriter, doc.summary())
			}
			if doc.Errors > 0 {
				return findings("graph found %s", nounCount(doc.Errors, "error"))
			}
			return nil
		},
	}
}
