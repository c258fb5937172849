package main

import (
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

func wikiCommand() *cli.Command {
	return &cli.Command{
		Name:  "wiki",
		Usage: "the deterministic wiki operations; each write is one receipt",
		Description: "Pages live under published/wiki/ as HTML files with one meta block and named slots\n" +
			"(docs/wiki-format.md). Each write is one commit carrying one receipt; a write that changes\n" +
			"nothing commits nothing. PAGE is a path (ml/transformers, with or without .html) or a\n" +
			"unique page name (transformers).",
		Subcommands: []*cli.Command{
			wikiNewCommand(),
			wikiSlotWriteCommand("write-slot", "replace the content of slot ID of PAGE", false),
			wikiSlotWriteCommand("append-slot", "append to the content of slot ID of PAGE", true),
			wikiSetMetaCommand(),
			wikiReadCommand(),
			wikiMetaCommand(),
			wikiSlotCommand(),
			wikiListSlotsCommand(),
			wikiTemplatesCommand(),
			wikiTreeCommand(),
			wikiIndexCommand(),
			wikiFindCommand(),
			wikiBacklinksCommand(),
			wikiSearchCommand(),
			wikiLintCommand(),
			wikiRebuildCommand(),
			wikiStatsCommand(),
			wikiMvCommand(),
			wikiRmCommand(),
			wikiCommitCommand(),
			wikiReviewCommand(),
		},
	}
}

// openWiki opens the vault and its wiki.
func openWiki(c *cli.Context) (*wiki.Wiki, func(), error) {
	v, err := openVault(c)
	if err != nil {
		return nil, nil, err
	}
	w, err := wiki.Open(v)
	if err != nil {
		v.Close()
		return nil, nil, err
	}
	return w, func() { v.Close() }, nil
}

// withWiki opens the wiki, runs fn on it with the command's output, and
// closes the vault.
func withWiki(c *cli.Context, fn func(w *wiki.Wiki, out *output) error) error {
	w, done, err := openWiki(c)
	if err != nil {
		return err
	}
	defer done()
	return fn(w, newOutput(c))
}

// wikiAction is the action of a wiki subcommand that reads no input before
// the vault is opened: check its arguments (nil: any will do), then run it
// on the open wiki.
func wikiAction(check func(c *cli.Context) error, run func(c *cli.Context, w *wiki.Wiki, out *output) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if check != nil {
			if err := check(c); err != nil {
				return err
			}
		}
		return withWiki(c, func(w *wiki.Wiki, out *output) error { return run(c, w, out) })
	}
}

// wikiReader is the action of a wiki subcommand that only reads: it is
// wikiAction, run after the reader's check of the working tree
// (readerCheck).
func wikiReader(check func(c *cli.Context) error, run func(c *cli.Context, w *wiki.Wiki, out *output) error) cli.ActionFunc {
	return wikiReaderChecked(check, func(c *cli.Context, w *wiki.Wiki, out *output, _ vault.ReaderCheck) error { return run(c, w, out) })
}

// wikiReaderChecked is wikiReader for a reader that reads the working
// tree itself (lint): run is told what the check found.
func wikiReaderChecked(check func(c *cli.Context) error, run func(c *cli.Context, w *wiki.Wiki, out *output, rc vault.ReaderCheck) error) cli.ActionFunc {
	return wikiAction(check, func(c *cli.Context, w *wiki.Wiki, out *output) error {
		return run(c, w, out, readerCheck(c, w.Vault()))
	})
}

// readerCheck is what every command that only reads does first: a working
// tree a writer left behind the branch (killed during its checkout) is
// finished when the writer lock is free at once; otherwise the command
// answers from the committed tree, and stderr says so once, with the
// command that finishes it.
func readerCheck(c *cli.Context, v *vault.Vault) vault.ReaderCheck {
	rc := v.FinishCheckout()
	if note := rc.Note(); note != "" {
		fmt.Fprintln(c.App.ErrWriter, note)
	}
	return rc
}

// wikiErr turns a wiki error into the CLI's: a bad page name or argument
// is a usage error (exit 2), the rest exit 1.
func wikiErr(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, wiki.ErrUnsafe):
		return &exitError{code: 2, err: err}
	}
	return err
}

func needArgs(c *cli.Context, n int, what string) error {
	if c.NArg() != n {
		return usageErrorf("wiki %s needs %s, got %s (see prose wiki %s --help)", c.Command.Name, what, nounCount(c.NArg(), "argument"), c.Command.Name)
	}
	return nil
}

// takes is the argument check of a subcommand that takes exactly n
// arguments, named by what.
func takes(n int, what string) func(c *cli.Context) error {
	return func(c *cli.Context) error { return needArgs(c, n, what) }
}

// wrote is what a wiki write reports besides its result: what the line
// naming the commit calls the write, the fields the JSON document adds,
// and anything printed after that line.
type wrote struct {
	what   string
	fields map[string]any
	more   func(out *output)
}

// wikiWrite opens the wiki, makes op's change as one transaction (one
// commit, one receipt; none if nothing changed) and reports it.
func wikiWrite(c *cli.Context, op func(tx *wiki.Tx) (wrote, error)) error {
	return withWiki(c, func(w *wiki.Wiki, out *output) error {
		var r wrote
		res, err := w.Update(c.Context, func(tx *wiki.Tx) error {
			var err error
			r, err = op(tx)
			return err
		})
		if err != nil {
			return wikiErr(err)
		}
		return report(out, res, r)
	})
}

// wikiWriteFollowingReview is wikiWrite for an operation that moves or
// removes pages (mv, rm): the review queue follows it in the same commit
// (ingest.ReviewWatch). op returns the pages it moved (old path to new)
// and removed (true when the links to them became text).
func wikiWriteFollowingReview(c *cli.Context, op func(tx *wiki.Tx) (wrote, map[string]string, map[string]bool, error)) error {
	return withWiki(c, func(w *wiki.Wiki, out *output) error {
		var r wrote
		res, err := w.UpdateWith(c.Context, func(tx *wiki.Tx) (wiki.CommitOptions, error) {
			watch, err := ingest.WatchReview(w.Vault(), tx)
			if err != nil {
				return wiki.CommitOptions{}, err
			}
			var moved map[string]string
			var removed map[string]bool
			if r, moved, removed, err = op(tx); err != nil {
				return wiki.CommitOptions{}, err
			}
			day, err := today()
			if err != nil {
				return wiki.CommitOptions{}, err
			}
			var o wiki.CommitOptions
			if q := watch.Follow(tx, moved, removed, day); q != nil {
				o.Files = map[string][]byte{ingest.ReviewFile: q}
			}
			// A page a person removed stays removed: the record goes with
			// the removal, and no ingest re-creates the page.
			before := map[string]*wiki.Page{}
			for rel := range removed {
				if _, p, err := w.Read(rel); err == nil {
					before[rel] = p
				}
			}
			if err := noteRemoved(w, &o, before, day, "prose wiki rm"); err != nil {
				return wiki.CommitOptions{}, err
			}
			return o, nil
		})
		if err != nil {
			return wikiErr(err)
		}
		return report(out, res, r)
	})
}

// noteRemoved adds to o the record of the pages a person removed
// (ingest.RemovedFile).
func noteRemoved(w *wiki.Wiki, o *wiki.CommitOptions, pages map[string]*wiki.Page, day, by string) error {
	data, err := ingest.NoteRemoved(w.Vault(), pages, day, by)
	if err != nil || data == nil {
		return err
	}
	if o.Files == nil {
		o.Files = map[string][]byte{}
	}
	o.Files[ingest.RemovedFile] = data
	return nil
}

// report prints what a write committed, then r's text, and emits its JSON
// document.
func report(out *output, res *wiki.Result, r wrote) error {
	printResult(out, res, r.what)
	if r.more != nil {
		r.more(out)
	}
	return out.emit(resultDoc(res, r.fields))
}

// printResult prints what a write committed.
func printResult(out *output, res *wiki.Result, what string) {
	switch {
	case res.Receipt != nil:
		out.printf("%s: committed %s (receipt %s)\n", what, short(res.Commit), short(strings.TrimPrefix(res.Receipt.ContentHash, "blake3:")))
	case res.Commit != "":
		out.printf("%s: committed %s (no material change, no receipt)\n", what, short(res.Commit))
	default:
		out.printf("%s: nothing changed, nothing committed\n", what)
	}
}

func resultDoc(res *wiki.Result, extra map[string]any) map[string]any {
	d := map[string]any{"changed": res.Changed, "committed": res.Commit != ""}
	if res.Commit != "" {
		d["commit"] = res.Commit
	}
	if res.Receipt != nil {
		d["receipt"] = res.Receipt.ToValue()
		d["moved"] = res.Moved
	}
	for k, v := range extra {
		d[k] = v
	}
	return d
}

// nonNil returns s, or an empty slice for nil: JSON shows [] rather than
// null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// printMeta prints a page's meta, one key a line.
// printMeta prints a page's meta as YAML, as the meta block stores it.
func printMeta(out *output, m wiki.Meta) error {
	y, err := m.YAML()
	if err != nil {
		return err
	}
	out.printf("%s", y)
	return nil
}

func metaFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "template", Aliases: []string{"t"}, Value: "note", Usage: "page template `NAME` (prose wiki templates lists them)"},
		&cli.StringFlag{Name: "title", Usage: "page `TITLE` (default: from the file name)"},
		&cli.StringSliceFlag{Name: "tag", Usage: "a `TAG` (repeat for more)"},
		&cli.StringSliceFlag{Name: "meta", Usage: "meta `k=v` (text) or k:=JSON (typed); repeat for more"},
	}
}

func parseAssignments(args []string) (map[string]any, []string, error) {
	set := map[string]any{}
	var remove []string
	for _, a := range args {
		k, v, rm, err := wiki.ParseAssignment(a)
		if err != nil {
			return nil, nil, usageErrorf("%v", err)
		}
		if rm {
			remove = append(remove, k)
			continue
		}
		set[k] = v
	}
	return set, remove, nil
}

func wikiNewCommand() *cli.Command {
	return &cli.Command{
		Name:      "new",
		Usage:     "create page PATH from a template",
		ArgsUsage: "PATH",
		Flags:     metaFlags(),
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "PATH"); err != nil {
				return err
			}
			set, _, err := parseAssignments(c.StringSlice("meta"))
			if err != nil {
				return err
			}
			template := c.String("template")
			return wikiWrite(c, func(tx *wiki.Tx) (wrote, error) {
				rel, removed, err := tx.New(c.Args().First(), wiki.NewOptions{Template: template, Title: c.String("title"), Tags: c.StringSlice("tag"), Meta: set})
				return wrote{what: "new " + rel, fields: map[string]any{"page": rel, "template": template, "removed": nonNil(removed)}}, err
			})
		},
	}
}

// slotContent reads a slot's new content from --content, --file or stdin.
func slotContent(c *cli.Context) (string, error) {
	var data []byte
	switch {
	case c.IsSet("content") && c.IsSet("file"):
		return "", usageErrorf("give the content with --content or --file, not both")
	case c.IsSet("content"):
		data = []byte(c.String("content"))
	case c.IsSet("file"):
		f := c.String("file")
		var err error
		if f == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(f)
		}
		if err != nil {
			return "", usageErrorf("--file: %v", err)
		}
	default:
		if term.IsTerminal(int(os.Stdin.Fd())) {
			return "", usageErrorf("give the content with --content TEXT, --file FILE, or on stdin")
		}
		var err error
		if data, err = io.ReadAll(os.Stdin); err != nil {
			return "", err
		}
	}
	s := string(data)
	if c.Bool("markdown") {
		return wiki.MarkdownToHTML(s)
	}
	return s, nil
}

func contentFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "content", Aliases: []string{"c"}, Usage: "the slot's HTML `TEXT`"},
		&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read the content from `FILE` (- for stdin)"},
		&cli.BoolFlag{Name: "markdown", Aliases: []string{"m"}, Usage: "the content is Markdown; convert it to HTML"},
	}
}

func wikiSlotWriteCommand(name, usage string, appendTo bool) *cli.Command {
	write := (*wiki.Tx).WriteSlot
	if appendTo {
		write = (*wiki.Tx).AppendSlot
	}
	return &cli.Command{
		Name:      name,
		Usage:     usage + " (content from --content, --file or stdin; sanitized)",
		ArgsUsage: "PAGE ID",
		Flags:     contentFlags(),
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 2, "PAGE and ID"); err != nil {
				return err
			}
			content, err := slotContent(c)
			if err != nil {
				return err
			}
			return wikiWrite(c, func(tx *wiki.Tx) (wrote, error) {
				sr, err := write(tx, c.Args().Get(0), c.Args().Get(1), content)
				return wrote{
					what:   name + " " + sr.Page + " " + sr.Slot,
					fields: map[string]any{"page": sr.Page, "slot": sr.Slot, "removed": sr.Removed},
					more: func(*output) {
						if len(sr.Removed) > 0 {
							fmt.Fprintf(c.App.ErrWriter, "prose: the sanitizer removed: %s\n", strings.Join(sr.Removed, "; "))
						}
					},
				}, err
			})
		},
	}
}

func wikiSetMetaCommand() *cli.Command {
	return &cli.Command{
		Name:      "set-meta",
		Usage:     "set meta keys of PAGE: k=v (text), k:=JSON (typed), k= (remove)",
		ArgsUsage: "PAGE k=v…",
		Action: func(c *cli.Context) error {
			if c.NArg() < 2 {
				return usageErrorf("wiki set-meta needs PAGE and at least one k=v (see prose wiki set-meta --help)")
			}
			set, remove, err := parseAssignments(c.Args().Slice()[1:])
			if err != nil {
				return err
			}
			return wikiWrite(c, func(tx *wiki.Tx) (wrote, error) {
				rel, err := tx.SetMeta(c.Args().First(), set, remove)
				return wrote{what: "set-meta " + rel, fields: map[string]any{"page": rel}}, err
			})
		},
	}
}

func wikiReadCommand() *cli.Command {
	return &cli.Command{
		Name:      "read",
		Usage:     "print PAGE's meta and slots",
		ArgsUsage: "PAGE",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "html", Usage: "print the page file as stored"}},
		Action: wikiReader(takes(1, "PAGE"), func(c *cli.Context, w *wiki.Wiki, out *output) error {
			if c.Bool("html") {
				rel, data, err := w.ReadFile(c.Args().First())
				if err != nil {
					return wikiErr(err)
				}
				out.printData(string(data))
				return out.emit(map[string]any{"page": rel, "html": string(data)})
			}
			rel, p, err := w.Read(c.Args().First())
			if err != nil {
				return wikiErr(err)
			}
			out.printf("# %s (%s)\n", p.Meta.Title(), rel)
			if err := printMeta(out, p.Meta); err != nil {
				return err
			}
			slots := nonNil(p.Slots)
			for _, s := range slots {
				out.printf("\n## %s\n%s\n", s.ID, s.HTML)
			}
			return out.emit(map[string]any{"page": rel, "meta": p.Meta, "slots": slots})
		}),
	}
}

func wikiMetaCommand() *cli.Command {
	return &cli.Command{
		Name:      "meta",
		Usage:     "print PAGE's meta block",
		ArgsUsage: "PAGE",
		Action: wikiReader(takes(1, "PAGE"), func(c *cli.Context, w *wiki.Wiki, out *output) error {
			rel, p, err := w.Read(c.Args().First())
			if err != nil {
				return wikiErr(err)
			}
			if err := printMeta(out, p.Meta); err != nil {
				return err
			}
			return out.emit(map[string]any{"page": rel, "meta": p.Meta})
		}),
	}
}

func wikiSlotCommand() *cli.Command {
	return &cli.Command{
		Name:      "slot",
		Usage:     "print slot ID of PAGE exactly as stored (writing it back changes nothing)",
		ArgsUsage: "PAGE ID",
		Action: wikiReader(takes(2, "PAGE and ID"), func(c *cli.Context, w *wiki.Wiki, out *output) error {
			id := c.Args().Get(1)
			rel, err := w.Resolve(c.Args().First())
			if err != nil {
				return wikiErr(err)
			}
			h, err := w.SlotOf(rel, id)
			if err != nil {
				return wikiErr(err)
			}
			out.printData(h)
			return out.emit(map[string]any{"page": rel, "slot": id, "html": h})
		}),
	}
}

func wikiListSlotsCommand() *cli.Command {
	return &cli.Command{
		Name:      "list-slots",
		Usage:     "list the slots of PAGE: declared, required, empty",
		ArgsUsage: "PAGE",
		Action: wikiReader(takes(1, "PAGE"), func(c *cli.Context, w *wiki.Wiki, out *output) error {
			rel, slots, err := w.ListSlots(c.Args().First())
			if err != nil {
				return wikiErr(err)
			}
			for _, s := range slots {
				flags := []string{}
				if s.Required {
					flags = append(flags, "required")
				}
				if !s.Declared {
					flags = append(flags, "undeclared")
				}
				if s.Empty {
					flags = append(flags, "empty")
				}
				out.printf("%-16s %-28s %s\n", s.ID, strings.Join(flags, ","), s.Description)
			}
			return out.emit(map[string]any{"page": rel, "slots": nonNil(slots)})
		}),
	}
}

func wikiTemplatesCommand() *cli.Command {
	return &cli.Command{
		Name:  "templates",
		Usage: "list the page templates with their descriptions and slots",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "palette", Usage: "print the component palette the pages style"}},
		Action: wikiAction(nil, func(c *cli.Context, w *wiki.Wiki, out *output) error {
			if c.Bool("palette") {
				out.printf("%s", wiki.ComponentPalette())
				return out.emit(map[string]any{"palette": wiki.ComponentPalette()})
			}
			ts := w.Templates()
			for _, t := range ts {
				out.printf("%s — %s (%s)\n", t.Name, t.Description, t.Source)
				for _, s := range t.Slots {
					req := "optional"
					if s.Required {
						req = "required"
					}
					out.printf("  %-16s %-9s %s\n", s.ID, req, s.About)
				}
			}
			return out.emit(map[string]any{"templates": ts, "directory": wiki.TemplateDir})
		}),
	}
}

func wikiTreeCommand() *cli.Command {
	return &cli.Command{
		Name:    "tree",
		Aliases: []string{"ls"},
		Usage:   "print the wiki's folders and pages",
		Action: wikiReader(nil, func(c *cli.Context, w *wiki.Wiki, out *output) error {
			t, err := w.Tree()
			if err != nil {
				return err
			}
			var walk func(n *wiki.TreeNode, indent string)
			walk = func(n *wiki.TreeNode, indent string) {
				for _, p := range n.Pages {
					out.printf("%s%s  %s\n", indent, p.Path[strings.LastIndex(p.Path, "/")+1:], p.Title)
				}
				for _, f := range n.Folders {
					out.printf("%s%s/\n", indent, f.Name)
					walk(f, indent+"  ")
				}
			}
			walk(t, "")
			return out.emit(t)
		}),
	}
}

func wikiIndexCommand() *cli.Command {
	return &cli.Command{
		Name:      "index",
		Usage:     "print a folder's index: its description, subfolders and pages (in the collection's order), the terms its pages define and its index of names",
		ArgsUsage: "[FOLDER]",
		Action: wikiReader(func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageErrorf("wiki index takes at most one FOLDER")
			}
			return nil
		}, func(c *cli.Context, w *wiki.Wiki, out *output) error {
			l, desc, err := w.Index(c.Args().First())
			if err != nil {
				return wikiErr(err)
			}
			if d := strings.TrimSpace(desc); d != "" {
				out.printf("%s\n\n", d)
			}
			for _, f := range l.Folders {
				out.printf("%s/  %s\n", f.Name, f.Note)
			}
			for _, p := range l.Pages {
				out.printf("%-32s %-11s %-10s %s\n", p.Href, p.Template, p.Updated, p.Title)
			}
			if len(l.Terms) > 0 {
				out.printf("\nterms defined here:")
				for _, t := range l.Terms {
					out.printf(" %s", t.Text)
				}
				out.printf("\n")
			}
			if len(l.Names) > 0 {
				out.printf("\nindex of names:\n")
				for _, n := range l.Names {
					out.printf("  %-30s %s\n", n.Name, n.Href)
				}
			}
			return out.emit(map[string]any{"folder": c.Args().First(), "description": desc, "folders": l.Folders, "pages": l.Pages, "terms": nonNil(l.Terms), "names": nonNil(l.Names)})
		}),
	}
}

func wikiFindCommand() *cli.Command {
	return &cli.Command{
		Name:      "find",
		Usage:     "list pages whose path or title contains PATTERN, or that match it as a glob",
		ArgsUsage: "[PATTERN]",
		Description: "PATTERN is a text the page's path or title contains (any case), or a glob: * and ? match\n" +
			"within one folder name, ** crosses folders (ops/**, **/canary*), [abc] is a class. A pattern\n" +
			"without / matches the page's base name in any folder: '*sev*' finds ops/incidents/sev1.html.\n" +
			"Quote it so the shell does not expand it.",
		Action: wikiReader(nil, func(c *cli.Context, w *wiki.Wiki, out *output) error {
			ps, err := w.Find(c.Args().First())
			if err != nil {
				return err
			}
			for _, p := range ps {
				out.printf("%-40s %-11s %s\n", p.Path, p.Template, p.Title)
			}
			if len(ps) == 0 {
				out.printf("no page's path or title matches %q (prose wiki search looks in the text)\n", c.Args().First())
			}
			return out.emit(map[string]any{"pages": nonNil(ps)})
		}),
	}
}

func wikiBacklinksCommand() *cli.Command {
	return &cli.Command{
		Name:      "backlinks",
		Usage:     "list every page that links to PAGE (from a slot or its related meta): its \"Referenced by\", uncapped",
		ArgsUsage: "PAGE",
		Action: wikiReader(takes(1, "PAGE"), func(c *cli.Context, w *wiki.Wiki, out *output) error {
			rel, bl, err := w.Backlinks(c.Context, c.Args().First())
			if err != nil {
				return wikiErr(err)
			}
			for _, b := range bl {
				out.printf("%-40s %s\n", b.Path, b.Title)
			}
			if len(bl) == 0 {
				out.printf("no page links to %s\n", rel)
			}
			return out.emit(map[string]any{"page": rel, "backlinks": bl})
		}),
	}
}

func wikiSearchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "full-text search over titles, tags and the full text of every slot (BM25); identifiers such as ffi_call or fs.realpath match whole",
		ArgsUsage: "QUERY…",
		Flags:     []cli.Flag{&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Value: 10, Usage: "at most `N` results; 0 lists every page that matches"}},
		Action: wikiReader(func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("wiki search needs a QUERY")
			}
			if c.Int("limit") < 0 {
				return usageErrorf("--limit %d: give a number of results, or 0 for every page that matches", c.Int("limit"))
			}
			return nil
		}, func(c *cli.Context, w *wiki.Wiki, out *output) error {
			q := strings.Join(c.Args().Slice(), " ")
			hits, err := w.Search(c.Context, q, c.Int("limit"))
			if err != nil {
				return err
			}
			if len(hits) == 0 {
				out.printf("no page matches %q\n", q)
			}
			// One width for each column, so the scores line up whatever
			// the length of the paths.
			pathW, scoreW := 40, 6
			for _, h := range hits {
				pathW = max(pathW, utf8.RuneCountInString(h.Path))
				scoreW = max(scoreW, len(scoreText(h.Score)))
			}
			for _, h := range hits {
				out.printf("%-*s %*s  %s\n", pathW, h.Path, scoreW, scoreText(h.Score), h.Title)
				if h.Snippet != "" {
					// The snippet is HTML: marks become brackets, entities
					// the characters they stand for.
					s := strings.NewReplacer("<mark>", "[", "</mark>", "]").Replace(h.Snippet)
					out.printf("    %s\n", html.UnescapeString(s))
				}
			}
			return out.emit(map[string]any{"query": q, "hits": hits})
		}),
	}
}

// scoreText prints a BM25 score with three decimals. A word found on
// nearly every page scores near zero (it tells pages apart hardly at all):
// such a match prints as "<0.001", not as a score of nothing.
func scoreText(score float64) string {
	if score > 0 && score < 0.0005 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", score)
}

func wikiLintCommand() *cli.Command {
	return &cli.Command{
		Name:  "lint",
		Usage: "check pages and folders; exit 1 on errors (--fix turns links to missing pages into plain text first)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "fix", Usage: "turn every link to a page that does not exist into plain text (one commit), then check"}},
		Action: wikiReaderChecked(nil, func(c *cli.Context, w *wiki.Wiki, out *output, rc vault.ReaderCheck) error {
			var rep *wiki.LintReport
			var err error
			var fixedDoc map[string]any
			if c.Bool("fix") {
				var fixed map[string][]string
				res, err := w.Update(c.Context, func(tx *wiki.Tx) error {
					var err error
					fixed, err = tx.UnlinkMissing()
					return err
				})
				if err != nil {
					return wikiErr(err)
				}
				n := 0
				for _, p := range sortedKeys(fixed) {
					for _, t := range fixed[p] {
						out.printf("  %s: unlinked %s, which does not exist\n", p, t)
						n++
					}
				}
				printResult(out, res, fmt.Sprintf("lint --fix: %s unlinked in %s", nounCount(n, "missing page"), nounCount(len(fixed), "page")))
				fixedDoc = resultDoc(res, map[string]any{"unlinked": fixed})
				// Check what was committed.
				rc.Behind = true
			}
			if rc.Behind {
				// The working tree is a mix of two commits: lint the
				// committed wiki, which is one.
				var tree plumbing.Hash
				if _, tree, err = w.Vault().NodeHead(wiki.Node); err == nil {
					rep, err = w.LintFS(c.Context, w.Vault().TreeFS(tree), c.App.ErrWriter)
				}
			} else {
				rep, err = w.Lint(c.Context, c.App.ErrWriter)
			}
			if err != nil {
				return err
			}
			for _, f := range rep.Findings {
				out.printf("%s: %s: %s: %s\n", f.Page, f.Severity, f.Kind, f.Detail)
			}
			ne, nw, ni := rep.Count(wiki.SevError), rep.Count(wiki.SevWarning), rep.Count(wiki.SevInfo)
			out.printf("%s, %s: %s, %s, %s\n", nounCount(rep.Pages, "page"), nounCount(rep.Folders, "folder"), nounCount(ne, "error"), nounCount(nw, "warning"), nounCount(ni, "note"))
			var doc any = rep
			if fixedDoc != nil {
				doc = struct {
					*wiki.LintReport
					Fix map[string]any `json:"fix"`
				}{rep, fixedDoc}
			}
			if err := out.emit(doc); err != nil {
				return err
			}
			if ne > 0 {
				return findings("lint found %d errors", ne)
			}
			return nil
		}),
	}
}

func wikiRebuildCommand() *cli.Command {
	return &cli.Command{
		Name:  "rebuild",
		Usage: "re-render every page shell and folder index with the current templates (one commit, no receipt)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "search", Usage: "also rebuild the search index from scratch"}},
		Action: wikiAction(nil, func(c *cli.Context, w *wiki.Wiki, out *output) error {
			res, err := w.Rebuild(c.Context, c.App.ErrWriter)
			if err != nil {
				return wikiErr(err)
			}
			if c.Bool("search") {
				if err := w.ReindexSearch(c.Context); err != nil {
					return err
				}
			}
			return report(out, res, wrote{what: "rebuild"})
		}),
	}
}

func wikiStatsCommand() *cli.Command {
	return &cli.Command{
		Name:  "stats",
		Usage: "count pages, folders, templates and empty required slots",
		Action: wikiReader(nil, func(c *cli.Context, w *wiki.Wiki, out *output) error {
			s, err := w.Stats()
			if err != nil {
				return err
			}
			out.printf("%d pages in %d folders, %d bytes; %d empty required slots; %d unparsable\n", s.Pages, s.Folders, s.Bytes, s.EmptySlots, s.Unparsable)
			names := make([]string, 0, len(s.Templates))
			for n := range s.Templates {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				out.printf("  %-12s %d\n", n, s.Templates[n])
			}
			return out.emit(s)
		}),
	}
}

func wikiMvCommand() *cli.Command {
	return &cli.Command{
		Name:      "mv",
		Usage:     "move page OLD to NEW, rewriting every link to it (one receipt)",
		ArgsUsage: "OLD NEW",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 2, "OLD and NEW"); err != nil {
				return err
			}
			return wikiWriteFollowingReview(c, func(tx *wiki.Tx) (wrote, map[string]string, map[string]bool, error) {
				from, to, relinked, err := tx.Move(c.Args().Get(0), c.Args().Get(1))
				return wrote{
					what:   "mv " + from + " " + to,
					fields: map[string]any{"from": from, "to": to, "relinked": nonNil(relinked)},
					more: func(out *output) {
						for _, p := range relinked {
							out.printf("  links rewritten in %s\n", p)
						}
					},
				}, map[string]string{from: to}, nil, err
			})
		},
	}
}

func wikiRmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "remove PAGE; refuse while other pages link to it, unless --unlink (links become plain text) or --force (they stay, broken)",
		ArgsUsage: "PAGE",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "unlink", Usage: "turn links to the page into plain text"},
			&cli.BoolFlag{Name: "force", Usage: "remove the page even though pages link to it, leaving those links broken (prose wiki lint --fix unlinks them later)"},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "PAGE"); err != nil {
				return err
			}
			unlink := c.Bool("unlink")
			return wikiWriteFollowingReview(c, func(tx *wiki.Tx) (wrote, map[string]string, map[string]bool, error) {
				rel, linkers, err := tx.Remove(c.Args().First(), unlink)
				if err == nil && !unlink && !c.Bool("force") && len(linkers) > 0 {
					return wrote{}, nil, nil, fmt.Errorf("wiki rm: %s %s to %s (%s): nothing removed; pass --unlink to turn those links into plain text as the page goes, or --force to remove it and leave them broken", nounCount(len(linkers), "page"), map[bool]string{true: "links", false: "link"}[len(linkers) == 1], rel, strings.Join(linkers, ", "))
				}
				key := "broken"
				if unlink {
					key = "unlinked"
				}
				return wrote{
					what:   "rm " + rel,
					fields: map[string]any{"page": rel, key: nonNil(linkers)},
					more: func(out *output) {
						for _, p := range linkers {
							if unlink {
								out.printf("  links unlinked in %s\n", p)
							} else {
								fmt.Fprintf(c.App.ErrWriter, "prose: warning: %s links to %s, which is gone: run prose wiki lint --fix to turn such links into plain text, or edit the link by hand and take the page in with prose wiki commit\n", p, rel)
							}
						}
					},
				}, nil, map[string]bool{rel: unlink}, err
			})
		},
	}
}

func wikiCommitCommand() *cli.Command {
	return &cli.Command{
		Name:  "commit",
		Usage: "take in hand edits of pages (uncommitted, or committed with git since the last receipt) as one receipt",
		Action: wikiAction(nil, func(c *cli.Context, w *wiki.Wiki, out *output) error {
			res, err := w.CommitHandEditsWith(c.Context, func(tx *wiki.Tx, deleted map[string]*wiki.Page) (wiki.CommitOptions, error) {
				var o wiki.CommitOptions
				if len(deleted) == 0 {
					return o, nil
				}
				day, err := today()
				if err != nil {
					return o, err
				}
				// The deletions are a person's removals: the review items
				// of those pages close, and no ingest re-creates them.
				watch, err := ingest.WatchReview(w.Vault(), tx)
				if err != nil {
					return o, err
				}
				gone := map[string]bool{}
				for rel := range deleted {
					gone[rel] = false
				}
				if q := watch.Follow(tx, nil, gone, day); q != nil {
					o.Files = map[string][]byte{ingest.ReviewFile: q}
				}
				return o, noteRemoved(w, &o, deleted, day, "prose wiki commit")
			})
			if err != nil {
				return wikiErr(err)
			}
			return report(out, &res.Result, wrote{
				what:   "commit (" + nounCount(len(res.Pages), "page") + ")",
				fields: map[string]any{"pages": res.Pages, "removed": res.Removed, "deleted": res.Deleted, "broken": res.Broken, "discarded": res.Discarded},
				more: func(out *output) {
					for _, p := range res.Pages {
						out.printf("  %s\n", p)
					}
					for _, rel := range res.Deleted {
						for _, p := range res.Broken[rel] {
							fmt.Fprintf(c.App.ErrWriter, "prose: warning: %s links to %s, which was removed: edit the link and take the page in with prose wiki commit (prose wiki lint lists broken links)\n", p, rel)
						}
					}
					for _, p := range res.Pages {
						for _, d := range res.Discarded[p] {
							fmt.Fprintf(c.App.ErrWriter, "prose: warning: %s: discarded %s\n", p, d)
						}
					}
					for p, rm := range res.Removed {
						fmt.Fprintf(c.App.ErrWriter, "prose: the sanitizer removed from %s: %s\n", p, strings.Join(rm, "; "))
					}
				},
			})
		}),
	}
}
