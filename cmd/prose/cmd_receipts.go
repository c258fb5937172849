package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/prose-store/prose/internal/gctune"
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
			receiptsCostCommand(),
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
				Usage:     "print one receipt as JSON: by its hash (blake3:… as listed, or a prefix of at least 6 hex digits), the commit of a rendered receipt, or a node name (its last receipt)",
				ArgsUsage: "HASH|COMMIT|NODE",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf("receipts show needs one receipt hash (or prefix), commit or node name")
					}
					v, err := openVault(c)
					if err != nil {
						return err
					}
					defer v.Close()
					found, err := findReceipt(v, c.Args().First())
					if err != nil {
						return err
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
					gctune.History()
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
						out.printf("%s: %s, %s, %s\n", f, nounCount(rep.Receipts, "receipt"), nounCount(rep.Nodes, "node"), nounCount(len(rep.Problems), "problem"))
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
					out.printf("%s, %s, %s\n", nounCount(rep.Receipts, "receipt"), nounCount(rep.Nodes, "node"), nounCount(len(rep.Problems), "problem"))
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

// minPrefix is the shortest hash or commit prefix `receipts show` accepts.
const minPrefix = 6

// findReceipt resolves what a user typed for one receipt: its content hash
// as `receipts list` prints it (blake3:…), a hex prefix of that hash, the
// commit of a rendered receipt (or a prefix), or a node name, which means
// the node's last receipt.
func findReceipt(v *vault.Vault, want string) (*receipt.Receipt, error) {
	algo, hex, hasAlgo := strings.Cut(want, ":")
	if !hasAlgo || (algo != "blake3" && algo != "sha256") {
		hex, algo = want, ""
	}
	hex = strings.ToLower(hex)
	isHex := hex != "" && strings.Trim(hex, "0123456789abcdef") == ""
	var byNode *receipt.Receipt
	matches := map[string]*receipt.Receipt{}
	err := v.Receipts(func(rec vault.Record) error {
		r := rec.Receipt
		if r.Node == want && byNode == nil {
			byNode = r // newest first: the node's last receipt
		}
		if !isHex || len(hex) < minPrefix {
			return nil
		}
		rAlgo, rHex, _ := strings.Cut(r.ContentHash, ":")
		if (algo == "" || algo == rAlgo) && strings.HasPrefix(rHex, hex) {
			matches[r.ContentHash] = r
		} else if algo == "" && !rec.Commit.IsZero() && strings.HasPrefix(rec.Commit.String(), hex) {
			matches[r.ContentHash] = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch {
	case byNode != nil:
		return byNode, nil
	case len(matches) == 1:
		for _, r := range matches {
			return r, nil
		}
	case len(matches) > 1:
		return nil, usageErrorf("%q matches %d receipts: give more of the hash", want, len(matches))
	case isHex && len(hex) < minPrefix:
		return nil, usageErrorf("%q is too short to name a receipt: give at least %d hex digits of its hash or commit", want, minPrefix)
	}
	return nil, fmt.Errorf("no receipt matches %q; list them with `prose receipts list`", want)
}
