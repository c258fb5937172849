package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
)

func receiptsCommand() *cli.Command {
	return &cli.Command{
		Name:  "receipts",
		Usage: "read and verify receipt chains",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list every receipt, oldest first",
				Flags: []cli.Flag{&cli.StringFlag{Name: "node", Usage: "only receipts of `NODE`"}},
				Action: func(c *cli.Context) error {
					v, err := openVault(c)
					if err != nil {
						return err
					}
					defer v.Close()
					recs, err := v.AllReceipts()
					if err != nil {
						return err
					}
					out := newOutput(c)
					docs := []any{}
					for _, rec := range recs {
						r := rec.Receipt
						if n := c.String("node"); n != "" && r.Node != n {
							continue
						}
						out.printf("%s  %-8s  %s\n", r.ContentHash, r.Status, r.Node)
						docs = append(docs, r.ToValue())
					}
					return out.emit(docs)
				},
			},
			{
				Name:      "show",
				Usage:     "print one receipt as JSON",
				ArgsUsage: "HASH|NODE",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf("receipts show needs one receipt hash (or prefix) or a node name")
					}
					v, err := openVault(c)
					if err != nil {
						return err
					}
					defer v.Close()
					want := c.Args().First()
					var found *receipt.Receipt
					err = v.Receipts(func(rec vault.Record) error {
						r := rec.Receipt
						_, hex, _ := strings.Cut(r.ContentHash, ":")
						if r.ContentHash == want || (len(want) >= 6 && strings.HasPrefix(hex, want)) || r.Node == want {
							found = r
							return errStop
						}
						return nil
					})
					if err != nil && err != errStop {
						return err
					}
					if found == nil {
						return fmt.Errorf("no receipt matches %q; list them with `prose receipts list`", want)
					}
					return printJSON(c, found.ToValue())
				},
			},
			{
				Name:  "verify",
				Usage: "verify every receipt chain: hashes, prev links, node identity, shape",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "reactor", Usage: "verify a reference reactor receipts.json `FILE` instead (no vault needed)"},
				},
				Action: func(c *cli.Context) error {
					out := newOutput(c)
					if f := c.String("reactor"); f != "" {
						rep, err := receipt.VerifyReactorFile(c.Context, f)
						switch {
						case errors.Is(err, context.Canceled):
							return err
						case errors.Is(err, receipt.ErrNotRegular), errors.Is(err, receipt.ErrTooLarge), errors.Is(err, os.ErrNotExist), errors.Is(err, os.ErrPermission):
							return usageErrorf("--reactor: %v", err)
						case err != nil:
							return fmt.Errorf("%s: %w", f, err)
						}
						var probs []string
						for _, p := range rep.Problems {
							probs = append(probs, p.String())
							if !out.json {
								fmt.Fprintf(c.App.ErrWriter, "%s: %s\n", f, p)
							}
						}
						out.printf("%s: %d receipts, %d nodes, %d problems\n", f, rep.Receipts, rep.Nodes, len(rep.Problems))
						if probs == nil {
							probs = []string{}
						}
						if err := out.emit(map[string]any{"file": f, "receipts": rep.Receipts, "nodes": rep.Nodes, "problems": probs, "ok": len(probs) == 0}); err != nil {
							return err
						}
						if len(probs) > 0 {
							return findings("verification failed")
						}
						return nil
					}
					v, err := openVault(c)
					if err != nil {
						return err
					}
					defer v.Close()
					rep, err := v.VerifyReceipts()
					if err != nil {
						return err
					}
					for _, p := range rep.Problems {
						if !out.json {
							fmt.Fprintf(c.App.ErrWriter, "%s\n", p)
						}
					}
					out.printf("%d receipts, %d nodes, %d problems\n", rep.Receipts, rep.Nodes, len(rep.Problems))
					if rep.Problems == nil {
						rep.Problems = []vault.Problem{}
					}
					if err := out.emit(rep); err != nil {
						return err
					}
					if len(rep.Problems) > 0 {
						return findings("verification failed")
					}
					return nil
				},
			},
		},
	}
}
