package main

import (
	"fmt"
	"github.com/prose-store/prose/internal/gctune"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/vault"
)

func logCommand() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "receipt history, newest first, with the facets each receipt moved",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "node", Usage: "only receipts of `NODE`"},
			&cli.BoolFlag{Name: "rendered", Usage: "only rendered receipts (the branch history)"},
			&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Usage: "show at most `N` receipts (0: all)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("log takes no arguments; use --node NODE")
			}
			gctune.History()
			v, err := openVault(c)
			if err != nil {
				return err
			}
			defer v.Close()
			readerCheck(c, v)
			out := newOutput(c)
			var docs []map[string]any
			shown := 0
			checked := false
			err = v.Receipts(func(rec vault.Record) error {
				r := rec.Receipt
				if n := c.String("node"); n != "" && r.Node != n {
					return nil
				}
				if c.Bool("rendered") && r.Status != "rendered" {
					return nil
				}
				if lim := c.Int("limit"); lim > 0 && shown >= lim {
					return errStop
				}
				shown++
				off := false
				if !checked && !rec.Commit.IsZero() {
					// The newest rendered receipt's commit must be on the
					// branch; only a rewrite by hand (amend, reset, rebase)
					// takes it off. Older ones are checked by prose fsck.
					checked = true
					on, err := v.OnBranch(rec.Commit)
					if err != nil {
						return err
					}
					if off = !on; off {
						fmt.Fprintf(c.App.ErrWriter, "prose: warning: receipt %s (%s) is in the ledger but its commit %s is not on the branch: the branch was rewritten by hand (git commit --amend, git reset or a rebase); the receipt is kept. Restore the commit (git reflog) or publish the node again; see prose fsck\n", r.ContentHash, r.Node, short(rec.Commit.String()))
					}
				}
				moved := movedOf(r.SemanticDiff)
				line := rec.When.Local().Format(time.DateTime) + "  " + string(r.Status) + "  " + r.Node
				if s := vault.Summary(r); s != "" {
					line += "  " + s
				}
				out.printf("%s  %s\n", short(strings.TrimPrefix(strings.TrimPrefix(r.ContentHash, "blake3:"), "sha256:")), line)
				if !out.json {
					return nil
				}
				d := map[string]any{"receipt": r.ToValue(), "ledger": rec.Ledger.String(), "time": rec.When.UTC().Format(time.RFC3339), "moved": moved}
				if !rec.Commit.IsZero() {
					d["commit"] = rec.Commit.String()
				}
				if off {
					d["off_branch"] = true
				}
				docs = append(docs, d)
				return nil
			})
			if err != nil && err != errStop {
				return err
			}
			if docs == nil {
				docs = []map[string]any{}
			}
			return out.emit(docs)
		},
	}
}

type stopError struct{}

func (stopError) Error() string { return "stop" }

var errStop error = stopError{}

func movedOf(d map[string]any) []string {
	list, _ := d["moved"].([]any)
	out := []string{}
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
