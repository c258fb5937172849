package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/diffview"
	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "what changed between two commits or receipts, for a reviewer: pages, slots word by word, world-model paths",
		ArgsUsage: "[REV [REV] | A..B | BASE...HEAD]",
		Description: "With no REV: the last commit against its parent. With one: REV against the branch tip.\n" +
			"A..B is A B; BASE...HEAD is what HEAD changed since the merge base of the two, as in git.\n" +
			"A REV is a commit (or prefix), a branch or remote-tracking name (origin/main), NAME~N, HEAD~N,\n" +
			"or a receipt content hash (or hex prefix).\n" +
			"Both sides are reduced by the node's canonicalization spec, so immaterial churn is hidden.\n" +
			"The wiki reads as pages (created, changed, moved, removed) with a word diff of each slot's text;\n" +
			"prose's own bookkeeping (generated, sources, source_*, origin, dates) is one line per page\n" +
			"unless --verbose. --format markdown fits a pull-request comment (65,536 characters) and says\n" +
			"what it left out; --format json gives everything to tools.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "node", Usage: "only `NODE`"},
			&cli.StringFlag{Name: "facet", Usage: "only changes under `FACET`"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, markdown or json"},
			&cli.BoolFlag{Name: "verbose", Usage: "show prose's bookkeeping meta key by key"},
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
				return usageErrorf("diff takes at most two revisions (or one A..B or BASE...HEAD)")
			}
			args := c.Args().Slice()
			if len(args) == 2 && (strings.Contains(args[0], "..") || strings.Contains(args[1], "..")) {
				return usageErrorf("give either two revisions or one range A..B / BASE...HEAD, not both")
			}
			v, err := openVault(c)
			if err != nil {
				return err
			}
			defer v.Close()
			rg, err := resolveDiffRange(v, args)
			var revErr *vault.RevisionError
			if errors.As(err, &revErr) {
				// A revision that names nothing is a usage error (exit
				// 2), so CI tells a misconfigured range from findings.
				return &exitError{code: 2, err: err}
			}
			if err != nil {
				return err
			}
			res, err := v.Diff(rg.from, rg.to, vault.DiffOptions{Node: c.String("node"), Facet: c.String("facet")})
			if err != nil {
				return err
			}
			in := diffview.Input{Result: res, Receipts: -1}
			if !rg.base.IsZero() {
				in.Base = rg.base.String()
			}
			if n, err := receiptsBetween(v, rg.from, rg.to); err == nil {
				in.Receipts = n
			}
			if c.String("node") == "" || c.String("node") == wiki.Node {
				in.ReviewOld, _, _ = v.FileAt(rg.from, ingest.ReviewFile)
				in.ReviewNew, _, _ = v.FileAt(rg.to, ingest.ReviewFile)
			}
			in.Page = func(old bool, file string) (map[string]any, bool) {
				at := rg.to
				if old {
					at = rg.from
				}
				data, ok, err := v.FileAt(at, "published/"+wiki.Node+"/"+file)
				if err != nil || !ok {
					return nil, false
				}
				if p, err := wiki.Parse(data); err == nil {
					return p.Meta, true
				}
				return nil, true
			}
			rep := diffview.Build(in)
			opt := diffview.Options{
				Range:   short(rg.from.String()) + ".." + short(rg.to.String()),
				Command: "prose diff " + rg.from.String()[:12] + " " + rg.to.String()[:12],
				Verbose: c.Bool("verbose"),
			}
			for _, f := range []string{"node", "facet"} {
				if s := c.String(f); s != "" {
					opt.Command += " --" + f + " " + s
				}
			}
			w := &safeWriter{w: c.App.Writer}
			switch format {
			case "json":
				return printJSON(c, rep)
			case "markdown":
				fmt.Fprint(w, diffview.Markdown(rep, opt))
			default:
				fmt.Fprint(w, diffview.Text(rep, opt))
			}
			return nil
		},
	}
}

type diffRange struct {
	from, to, base plumbing.Hash
}

// resolveDiffRange reads diff's revisions: none, one, two, A..B or
// BASE...HEAD (an empty side is HEAD, as in git).
func resolveDiffRange(v *vault.Vault, args []string) (diffRange, error) {
	var rg diffRange
	resolve := func(rev string) (plumbing.Hash, error) {
		if rev == "" {
			rev = "HEAD"
		}
		return v.ResolveRev(rev)
	}
	var err error
	switch len(args) {
	case 0:
		if rg.to, err = resolve("HEAD"); err == nil {
			rg.from, err = resolve("HEAD~1")
		}
	case 1:
		if a, b, ok := strings.Cut(args[0], "..."); ok {
			var base plumbing.Hash
			if base, err = resolve(a); err == nil {
				if rg.to, err = resolve(b); err == nil {
					rg.base, err = v.MergeBase(base, rg.to)
					rg.from = rg.base
				}
			}
		} else if a, b, ok := strings.Cut(args[0], ".."); ok {
			if rg.from, err = resolve(a); err == nil {
				rg.to, err = resolve(b)
			}
		} else if rg.from, err = resolve(args[0]); err == nil {
			rg.to, err = resolve("HEAD")
		}
	case 2:
		if rg.from, err = resolve(args[0]); err == nil {
			rg.to, err = resolve(args[1])
		}
	}
	return rg, err
}

// receiptsBetween counts the rendered receipts whose branch commit the
// range from..to brings.
func receiptsBetween(v *vault.Vault, from, to plumbing.Hash) (int, error) {
	in, err := v.CommitsBetween(from, to)
	if err != nil {
		return 0, err
	}
	recs, err := v.AllReceipts()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range recs {
		if !r.Commit.IsZero() && in[r.Commit] {
			n++
		}
	}
	return n, nil
}
