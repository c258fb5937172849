package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/program"
)

func programsCommand() *cli.Command {
	return &cli.Command{
		Name:  "programs",
		Usage: "the programs an agent may call through the program tool, with their parameters",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list the registered programs",
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usageErrorf("programs list takes no arguments")
					}
					out := newOutput(c)
					list := programs().List()
					if len(list) == 0 {
						out.printf("no programs are registered\n")
					}
					for _, p := range list {
						out.printf("%-10s %s  %s\n", p.Name, signature(p), p.Description)
					}
					return out.emit(list)
				},
			},
			{
				Name:      "show",
				Usage:     "print one program's parameters and schema",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf("programs show needs one NAME (see prose programs list)")
					}
					p, err := programs().Get(c.Args().First())
					if err != nil {
						return usageErrorf("%v", err)
					}
					out := newOutput(c)
					out.printf("%s%s\n", p.Name, signature(p))
					if p.Description != "" {
						out.printf("  %s\n", p.Description)
					}
					for _, prm := range p.Params {
						req := "optional"
						if prm.Required {
							req = "required"
						}
						out.printf("  %-12s %-10s %s  %s\n", prm.Name, prm.Type, req, prm.Description)
					}
					return out.emit(p)
				},
			},
		},
	}
}

func signature(p program.Info) string {
	parts := make([]string, len(p.Params))
	for i, prm := range p.Params {
		parts[i] = fmt.Sprintf("%s: %s", prm.Name, prm.Type)
		if !prm.Required {
			parts[i] += "?"
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
