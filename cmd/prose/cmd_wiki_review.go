package main

import (
	"fmt"
	"github.com/prose-store/prose/model"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/wiki"
)

func wikiReviewCommand() *cli.Command {
	return &cli.Command{
		Name:  "review",
		Usage: "work the review queue: items a model asked a person to check (list, show ID, take ID, resolve ID)",
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
						switch {
						case it.SupersededBy != "":
							state = "superseded by " + it.SupersededBy + " " + it.Resolved
						case it.Closed != "":
							state = "closed " + it.Resolved + ": " + it.Closed
						case it.Resolved != "":
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
				Name:      "show",
				Usage:     "print review item ID, with the slot text it proposes",
				ArgsUsage: "ID",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf("review show needs one ID (see prose wiki review list)")
					}
					v, err := openVault(c)
					if err != nil {
						return err
					}
					defer v.Close()
					q, err := ingest.ReadReview(v)
					if err != nil {
						return err
					}
					for _, it := range q.Items {
						if it.ID != c.Args().First() {
							continue
						}
						out := newOutput(c)
						out.printf("%s  %s  %s\n%s\n", it.ID, it.Kind, it.Page, it.Detail)
						if it.SupersededBy != "" {
							out.printf("superseded on %s by %s, which proposes newer text for the same slot\n", it.Resolved, it.SupersededBy)
						} else if it.Closed != "" {
							out.printf("closed on %s: %s\n", it.Resolved, it.Closed)
						} else if it.Resolved != "" {
							out.printf("resolved on %s\n", it.Resolved)
						}
						if it.Proposed != "" {
							out.printf("\nproposed for slot %s:\n%s\n", it.Slot, it.Proposed)
						}
						return out.emit(it)
					}
					return &exitError{code: 1, err: fmt.Errorf("no review item %q; `prose wiki review list` lists them", c.Args().First())}
				},
			},
			{
				Name:      "take",
				Usage:     "write the slot text review item ID proposes into its page, and resolve it (one receipt); refused when the slot changed since the item was queued, unless --force",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "write the proposal even over a slot written after the item was queued"}},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf("review take needs one ID (see prose wiki review list)")
					}
					return withWiki(c, func(w *wiki.Wiki, out *output) error {
						day, err := today()
						if err != nil {
							return err
						}
						it, res, err := ingest.Take(c.Context, w, c.Args().First(), day, c.Bool("force"))
						if err != nil {
							return &exitError{code: 1, err: err}
						}
						return report(out, res, wrote{
							what:   "review take " + it.ID + " " + it.Page + " " + it.Slot,
							fields: map[string]any{"item": it},
						})
					})
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
					day, err := today()
					if err != nil {
						return err
					}
					it, err := ingest.Resolve(c.Context, v, c.Args().First(), day)
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

// today is the date a review item is resolved on: PROSE_NOW's when set,
// as the dates an ingest gives its items, else the wall clock's.
func today() (string, error) {
	now, err := model.Now(os.Getenv)
	if err != nil {
		return "", err
	}
	return now.UTC().Format(time.DateOnly), nil
}
