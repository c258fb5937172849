package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/ingest"
)

func wikiReviewCommand() *cli.Command {
	return &cli.Command{
		Name:  "review",
		Usage: "work the review queue: items a model asked a person to check (list, resolve ID)",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list the open review items",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "all", Usage: "list resolved items too"}},
				Action: func(c *cli.Context) error {
					v, err := openVault(c)
					if err != nil {
						return err
					}
					defer v.Close()
					q, err := ingest.ReadReview(v)
					if err != nil {
						return err
					}
					items := q.Open(c.Bool("all"))
					out := newOutput(c)
					for _, it := range items {
						state := "open"
						if it.Resolved != "" {
							state = "resolved " + it.Resolved
						}
						out.printf("%s  %-8s %s  %s (%s)\n", it.ID, it.Kind, it.Page, it.Detail, state)
					}
					if len(items) == 0 {
						out.printf("no open review items\n")
					}
					return out.emit(map[string]any{"items": items})
				},
			},
			{
				Name:      "resolve",
				Usage:     "mark review item ID resolved (one commit)",
				ArgsUsage: "ID",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf("review resolve needs one ID (see prose wiki review list)")
					}
					v, err := openVault(c)
					if err != nil {
						return err
					}
					defer v.Close()
					it, err := ingest.Resolve(c.Context, v, c.Args().First(), time.Now().UTC().Format("2006-01-02"))
					if err != nil {
						return &exitError{code: 1, err: err}
					}
					out := newOutput(c)
					out.printf("resolved %s: %s\n", it.ID, it.Detail)
					return out.emit(it)
				},
			},
		},
	}
}
