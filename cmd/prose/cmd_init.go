package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/vault"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "create a vault: a git repository with prose.yaml, .gitignore and a first commit",
		ArgsUsage: "[DIR]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "hash", Value: "blake3", Usage: "hash `ALGORITHM` for fingerprints and receipts: blake3 or sha256"},
			&cli.StringFlag{Name: "branch", Value: "main", Usage: "`BRANCH` that holds the state history"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageErrorf("init takes at most one directory, got %s", nounCount(c.NArg(), "argument"))
			}
			dir := "."
			if c.NArg() == 1 {
				dir = c.Args().First()
			} else if ents, err := os.ReadDir("."); err == nil && len(ents) > 0 {
				// A vault of an existing folder is made on purpose only.
				return usageErrorf("init without DIR would make a vault of the current directory, which is not empty (%s): run `prose init .` to make a vault of it (its files stay, untracked), or `prose init DIR` for a new one", nounCount(len(ents), "file"))
			}
			alg, err := canon.ParseAlgorithm(c.String("hash"))
			if err != nil {
				return usageErrorf("--hash: %v", err)
			}
			v, err := vault.Init(dir, vault.InitOptions{Options: vaultOptions(c), Hash: alg, Branch: c.String("branch")})
			if err != nil {
				return err
			}
			defer v.Close()
			out := newOutput(c)
			out.printf("Initialized prose vault in %s (branch %s, hash %s)\n", v.Root(), v.Config().Branch, v.Config().Hash)
			return out.emit(map[string]any{"vault": v.Root(), "branch": v.Config().Branch, "hash": v.Config().Hash})
		},
	}
}
