package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/cas"
)

func fsckCommand() *cli.Command {
	return &cli.Command{
		Name:  "fsck",
		Usage: "verify everything: git objects, receipt chains, published state, hand edits, CAS objects",
		Action: func(c *cli.Context) error {
			v, err := openVault(c)
			if err != nil {
				return err
			}
			defer v.Close()
			rep, err := v.Fsck(c.Context)
			if err != nil {
				return err
			}
			st, err := openStore(v)
			if err != nil {
				return err
			}
			var casBad []string
			checked, _, err := st.Verify(func(id cas.ID, err error) {
				casBad = append(casBad, fmt.Sprintf("cas object %s: %v", id, err))
			})
			if err != nil {
				return err
			}
			out := newOutput(c)
			ew := c.App.ErrWriter
			if !out.json {
				for _, p := range rep.Problems {
					fmt.Fprintf(ew, "problem: %s\n", p)
				}
				if rep.Receipts != nil {
					for _, p := range rep.Receipts.Problems {
						fmt.Fprintf(ew, "receipt: %s\n", p)
					}
				}
				for _, h := range rep.HandEdits {
					fmt.Fprintf(ew, "hand edit: %s (restore with `git checkout -- %s`, or publish it)\n", h, h.Path)
				}
				for _, s := range casBad {
					fmt.Fprintln(ew, s)
				}
			}
			receipts := 0
			if rep.Receipts != nil {
				receipts = rep.Receipts.Receipts
			}
			out.printf("checked %d git objects, %d receipts, %d nodes, %d cas objects\n", rep.Objects, receipts, rep.Nodes, checked)
			ok := rep.OK() && len(casBad) == 0
			if casBad == nil {
				casBad = []string{}
			}
			if err := out.emit(map[string]any{"ok": ok, "vault": rep, "cas_checked": checked, "cas_problems": casBad}); err != nil {
				return err
			}
			if !ok {
				return findings("fsck found problems")
			}
			out.printf("ok\n")
			return nil
		},
	}
}
