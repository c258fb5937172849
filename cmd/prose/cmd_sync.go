package main

import (
	"fmt"
	"os/exec"
	"path"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/mergefile"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// syncCommands are clone, push, pull and remote: the vault shared through
// git remotes (docs/sync.md).
func syncCommands() []*cli.Command {
	return []*cli.Command{cloneCommand(), pushCommand(), pullCommand(), resolveCommand(), remoteCommand()}
}

func cloneCommand() *cli.Command {
	return &cli.Command{
		Name:      "clone",
		Usage:     "copy a vault from a git remote, its receipts (refs/prose/*) included, with the refspecs that make plain git carry them",
		ArgsUsage: "URL DIR",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "origin", Value: "origin", Usage: "`NAME` of the remote in the new vault"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usageErrorf("clone needs URL and DIR, got %s (see prose clone --help)", nounCount(c.NArg(), "argument"))
			}
			url, dir := c.Args().Get(0), c.Args().Get(1)
			v, err := vault.Clone(c.Context, url, dir, vault.CloneOptions{Options: vaultOptions(c), Remote: c.String("origin")})
			if err != nil {
				return err
			}
			defer v.Close()
			n := 0
			if recs, err := v.AllReceipts(); err == nil {
				n = len(recs)
			}
			out := newOutput(c)
			out.printf("Cloned %s into %s (branch %s, %s)\n", url, v.Root(), v.Config().Branch, nounCount(n, "receipt"))
			return out.emit(map[string]any{"vault": v.Root(), "url": url, "remote": c.String("origin"), "branch": v.Config().Branch, "receipts": n})
		},
	}
}

func pushCommand() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "send the branch and the ledger to a remote, both or neither; refused, never forced, when the remote has receipts this vault lacks",
		ArgsUsage: "[REMOTE]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "check and say what would be sent, send nothing"},
		},
		Action: func(c *cli.Context) error {
			remote, err := remoteArg(c, "push")
			if err != nil {
				return err
			}
			v, err := openVault(c)
			if err != nil {
				return err
			}
			defer v.Close()
			res, err := v.Push(c.Context, remote, c.Bool("dry-run"))
			if err != nil {
				return err
			}
			out := newOutput(c)
			configured(out, remote, res.Configured)
			switch {
			case res.UpToDate:
				out.printf("%s is up to date\n", remote)
			case res.DryRun:
				out.printf("would push %s to %s (branch %s, ledger %s); nothing was sent\n", nounCount(res.Receipts, "receipt"), remote, res.Branch[:12], res.Ledger[:12])
			default:
				out.printf("pushed %s to %s (branch %s, ledger %s)\n", nounCount(res.Receipts, "receipt"), remote, res.Branch[:12], res.Ledger[:12])
			}
			return out.emit(res)
		},
	}
}

func pullCommand() *cli.Command {
	return &cli.Command{
		Name:      "pull",
		Usage:     "fetch a remote and take in its receipts: a fast-forward, or one merge commit when the two sides changed different nodes; a node changed differently on both sides is refused, nothing changes, and prose resolve settles it",
		ArgsUsage: "[REMOTE]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "continue", Usage: "take in a merge git made (git pull, git merge): record it in the ledger, never undo it"},
		},
		Action: func(c *cli.Context) error {
			remote, err := remoteArg(c, "pull")
			if err != nil {
				return err
			}
			v, err := openVault(c)
			if err != nil {
				return err
			}
			defer v.Close()
			res, err := v.Pull(c.Context, remote, vault.PullOptions{Continue: c.Bool("continue")})
			if err != nil {
				return err
			}
			out := newOutput(c)
			configured(out, remote, res.Configured)
			switch {
			case res.LocalAhead > 0:
				out.printf("nothing to pull: %s lacks %s of this vault (`prose push %s` sends them)\n", remote, nounCount(res.LocalAhead, "receipt"), remote)
			case res.UpToDate:
				out.printf("already up to date with %s\n", remote)
			case res.Merged:
				out.printf("merged %s from %s (merge commit %s)\n%s", nounCount(res.Receipts, "receipt"), remote, res.Branch.String()[:12], indent(res.Summary))
			default:
				out.printf("pulled %s from %s (branch now %s)\n", nounCount(res.Receipts, "receipt"), remote, res.Branch.String()[:12])
			}
			rerenderMerged(c, v, out, res)
			return out.emit(map[string]any{"remote": remote, "receipts": res.Receipts, "up_to_date": res.UpToDate, "merged": res.Merged, "summary": res.Summary, "local_ahead": res.LocalAhead, "configured": res.Configured, "branch": res.Branch.String(), "ledger": res.Ledger.String()})
		},
	}
}

func resolveCommand() *cli.Command {
	return &cli.Command{
		Name:      "resolve",
		Usage:     "settle what a pull refused — a node advanced on both sides, or a wiki page's slot or meta key both sides changed — by keeping this vault's side, taking the remote's, or (a world-model node) rendering it again; the merge lands when everything is settled, with a merge receipt naming both heads",
		ArgsUsage: "NODE|PAGE",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "ours", Usage: "keep this vault's side (of the node, the page's conflicts, or the slot)"},
			&cli.BoolFlag{Name: "theirs", Usage: "take the remote's side (of the node, the page's conflicts, or the slot)"},
			&cli.StringFlag{Name: "slot", Usage: "settle only this `SLOT` of PAGE (without it and --key: every conflict of the page, its meta keys included)"},
			&cli.StringFlag{Name: "key", Usage: "settle only this meta `KEY` of PAGE (title, tags, template, …) that both sides set differently"},
			&cli.StringFlag{Name: "remote", Value: "origin", Usage: "the `REMOTE` whose refused pull this settles"},
			renderFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("resolve needs one NODE or PAGE, got %s (see prose resolve --help)", nounCount(c.NArg(), "argument"))
			}
			if c.Bool("render") {
				return resolveRender(c)
			}
			if c.Bool("ours") == c.Bool("theirs") {
				return usageErrorf("resolve needs exactly one of --ours (keep this vault's node) and --theirs (take the remote's)")
			}
			slot, key := c.String("slot"), c.String("key")
			if slot != "" && key != "" {
				return usageErrorf("resolve settles one slot (--slot) or one meta key (--key) at a time, not both: run it once for each")
			}
			side := vault.TakeOurs
			if c.Bool("theirs") {
				side = vault.TakeTheirs
			}
			v, err := openVault(c)
			if err != nil {
				return err
			}
			defer v.Close()
			remote, node := c.String("remote"), c.Args().First()
			if page, ok := resolvePageArg(node, slot+key); ok {
				id := ""
				switch {
				case slot != "":
					id = "slot:" + slot
				case key != "":
					id = "meta:" + key
				}
				res, err := v.ResolveFile(c.Context, remote, page, id, side)
				if err != nil {
					return err
				}
				out := newOutput(c)
				what := vault.ResolveName(page)
				switch {
				case slot != "":
					what += " slot " + slot
				case key != "":
					what += " meta key " + key
				}
				out.printf("resolved %s (--%s); merged %s from %s (branch now %s)\n%s", what, side, nounCount(res.Receipts, "receipt"), remote, res.Branch.String()[:12], indent(res.Summary))
				rerenderMerged(c, v, out, res)
				return out.emit(map[string]any{"remote": remote, "page": page, "slot": slot, "key": key, "taken": side, "receipts": res.Receipts, "summary": res.Summary, "branch": res.Branch.String(), "ledger": res.Ledger.String()})
			}
			// The wiki's source catalog and review queue go with its pages.
			var companions []string
			if node == wiki.Node {
				companions = []string{ingest.CatalogFile, ingest.PagesDir, ingest.ReviewFile}
			}
			res, err := v.ResolveMerge(c.Context, remote, node, side, companions)
			if err != nil {
				return err
			}
			out := newOutput(c)
			out.printf("resolved node %s (--%s); merged %s from %s (branch now %s)\n%s", node, side, nounCount(res.Receipts, "receipt"), remote, res.Branch.String()[:12], indent(res.Summary))
			rerenderMerged(c, v, out, res)
			return out.emit(map[string]any{"remote": remote, "node": node, "taken": side, "receipts": res.Receipts, "summary": res.Summary, "branch": res.Branch.String(), "ledger": res.Ledger.String()})
		},
	}
}

func remoteCommand() *cli.Command {
	return &cli.Command{
		Name:  "remote",
		Usage: "add git remotes with the refspecs prose needs, or list them",
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "add a remote and write its refspecs, so plain git push and git fetch carry the branch and refs/prose/*",
				ArgsUsage: "NAME URL",
				Action: func(c *cli.Context) error {
					if c.NArg() != 2 {
						return usageErrorf("remote add needs NAME and URL, got %s", nounCount(c.NArg(), "argument"))
					}
					v, err := openVault(c)
					if err != nil {
						return err
					}
					defer v.Close()
					name, url := c.Args().Get(0), c.Args().Get(1)
					if err := v.AddRemote(c.Context, name, url); err != nil {
						return err
					}
					out := newOutput(c)
					out.printf("added remote %s (%s); `prose push %s` sends the branch and the ledger\n", name, url, name)
					return out.emit(map[string]any{"remote": name, "url": url})
				},
			},
			{
				Name:  "list",
				Usage: "list the remotes, each with its URL and the refspecs it lacks",
				Action: func(c *cli.Context) error {
					v, err := openVault(c)
					if err != nil {
						return err
					}
					defer v.Close()
					out := newOutput(c)
					doc, err := remoteReport(c, v)
					if err != nil {
						return err
					}
					for _, r := range doc {
						out.printf("%s\t%s", r["remote"], r["url"])
						if m := r["missing"].([]string); len(m) > 0 {
							out.printf("\t(lacks %s; the next prose push or pull writes them)", nounCount(len(m), "refspec"))
						}
						out.printf("\n")
					}
					return out.emit(doc)
				},
			},
		},
	}
}

// remoteReport lists each remote with its URL and missing refspec lines.
func remoteReport(c *cli.Context, v *vault.Vault) ([]map[string]any, error) {
	names, err := v.Remotes(c.Context)
	if err != nil {
		return nil, err
	}
	var doc []map[string]any
	for _, n := range names {
		url, _ := v.RemoteURL(c.Context, n)
		missing, err := v.MissingRefspecs(c.Context, n)
		if err != nil {
			return nil, err
		}
		if missing == nil {
			missing = []string{}
		}
		doc = append(doc, map[string]any{"remote": n, "url": url, "missing": missing})
	}
	return doc, nil
}

// remoteArg is the optional REMOTE argument, origin by default.
func remoteArg(c *cli.Context, cmd string) (string, error) {
	switch c.NArg() {
	case 0:
		return "origin", nil
	case 1:
		return c.Args().First(), nil
	}
	return "", usageErrorf("%s takes at most one remote, got %s", cmd, nounCount(c.NArg(), "argument"))
}

// configured says which refspec lines a push or pull wrote.
func configured(out *output, remote string, lines []string) {
	if len(lines) > 0 {
		out.printf("wrote %s for %s into .git/config, so plain git push and fetch carry refs/prose/*\n", nounCount(len(lines), "refspec"), remote)
	}
}

// doctorRemotes checks, when a vault is found, that each remote's config
// carries the refspecs prose needs; it prints one line per remote and
// returns the problems.
func doctorRemotes(c *cli.Context, out *output, rep map[string]any) []string {
	dir, err := vaultDir(c.String("vault"))
	if err != nil {
		return nil // doctor also runs outside any vault
	}
	v, err := vault.Open(dir, vaultOptions(c))
	if err != nil {
		return []string{err.Error()}
	}
	defer v.Close()
	doc, err := remoteReport(c, v)
	if err != nil {
		return []string{err.Error()}
	}
	rep["remotes"] = doc
	problems := doctorMergeDriver(c, out, v, rep)
	for _, r := range doc {
		missing := r["missing"].([]string)
		if len(missing) == 0 {
			out.printf("remote     %s %s (refspecs carry refs/prose/*)\n", r["remote"], r["url"])
			continue
		}
		out.printf("remote     %s %s lacks %s\n", r["remote"], r["url"], nounCount(len(missing), "refspec"))
		problems = append(problems, fmt.Sprintf("remote %s lacks %s, so plain git push and fetch leave the ledger behind (%s): run `prose pull %s` or `prose push %s` once, which writes them", r["remote"], nounCount(len(missing), "refspec"), strings.Join(missing, "; "), r["remote"], r["remote"]))
	}
	return problems
}

// indent puts two spaces before every line of s.
func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	return b.String()
}

// doctorMergeDriver checks that git would merge the wiki's pages, the
// review queue and the catalog through prose merge-driver (the config
// keys and the attribute lines); with --fix it registers what is missing.
func doctorMergeDriver(c *cli.Context, out *output, v *vault.Vault, rep map[string]any) []string {
	missing, err := v.MergeDriverMissing(c.Context)
	if err != nil {
		return []string{err.Error()}
	}
	if len(missing) > 0 && c.Bool("fix") {
		if _, err := v.RegisterMergeDriver(c.Context); err != nil {
			return []string{err.Error()}
		}
		out.printf("fixed      registered the merge driver (%s)\n", strings.Join(missing, "; "))
		rep["merge_driver_fixed"] = missing
		missing = nil
	}
	if missing == nil {
		missing = []string{}
	}
	rep["merge_driver_missing"] = missing
	if len(missing) > 0 {
		out.printf("merge      driver not registered (lacks %s)\n", nounCount(len(missing), "setting"))
		return []string{fmt.Sprintf("the merge driver is not registered (%s), so a plain git pull or git merge merges wiki pages as text, not slot by slot: run `prose doctor --fix` (or the next `prose pull` writes it)", strings.Join(missing, "; "))}
	}
	out.printf("merge      driver registered (%s)\n", vault.MergeDriverCommand)
	if _, err := exec.LookPath("prose"); err != nil {
		out.printf("warning    git runs the merge driver as `prose`, which is not on PATH here: put prose on PATH before a plain git merge\n")
		rep["merge_driver_on_path"] = false
	} else {
		rep["merge_driver_on_path"] = true
	}
	return nil
}

// resolvePageArg reads the NODE|PAGE argument of prose resolve: a page
// (or a file beside the nodes) when --slot or --key is given (slot is
// either's value) or when it names a path (ml/attention, attention.html,
// review/queue.json); a node otherwise. It returns the vault path.
func resolvePageArg(arg, slot string) (string, bool) {
	if slot == "" && !strings.Contains(arg, "/") && !strings.HasSuffix(arg, ".html") {
		return "", false
	}
	if strings.HasPrefix(arg, "published/") || mergefile.Handles(arg) {
		return arg, true // a vault path: review/queue.json, sources/index.json, …
	}
	if path.Ext(arg) == "" {
		arg += ".html" // a page named without its extension
	}
	return mergefile.WikiDir + arg, true
}

// rerenderMerged renders again the derived shell of the wiki after a
// merge that merged its pages one by one (Referenced by, folder listings,
// a merged page's heading): only what the merge can have changed, against
// the two heads it joined, the same as prose wiki rebuild would make; one
// commit without a receipt. A failure leaves the merge landed and says
// how to finish.
func rerenderMerged(c *cli.Context, v *vault.Vault, out *output, res *vault.PullResult) {
	if len(res.Pages) == 0 && !slices.Contains(res.FileMerged, wiki.Node) {
		return // no page merged from both sides, by prose or by git
	}
	w, err := wiki.Open(v)
	var r *wiki.Result
	if err == nil {
		r, err = w.RebuildMerged(c.Context, res.Sides[:]...)
	}
	if err != nil {
		out.printf("the merge landed; rendering the merged pages' shells failed (%v): run `prose wiki rebuild`\n", err)
		return
	}
	out.printf("rendered the shells of %s again after the page merge (%s both sides changed)\n", nounCount(r.Rendered, "page"), nounCount(len(res.Pages), "file"))
}
