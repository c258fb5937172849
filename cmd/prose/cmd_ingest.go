package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/ingest"
	_ "github.com/prose-store/prose/ingest/offline" // registers the offline engine
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/internal/gctune"
	"github.com/prose-store/prose/internal/parallel"
	"github.com/prose-store/prose/model"
	_ "github.com/prose-store/prose/model/anthropic" // registers anthropic
	_ "github.com/prose-store/prose/model/openai"    // registers openai and openai-chat
	_ "github.com/prose-store/prose/model/replay"    // registers replay
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

func modelFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "model `PROVIDER:NAME` (default: $PROSE_MODEL, else prose.yaml's model, else the built-in offline engine)"},
		&cli.StringFlag{Name: "purpose", Usage: "`TEXT` saying what the wiki is for, as the prompts say it"},
		&cli.StringFlag{Name: "audience", Usage: "`TEXT` saying who reads the wiki, as the prompts say it"},
		&cli.IntFlag{Name: "budget", Usage: "prompt budget in `TOKENS` (default: per model, see docs/wiki-pipeline.md)"},
		&cli.StringFlag{Name: "record", Usage: "save every model exchange to `FILE` (replay it with --model replay:FILE)"},
		&cli.StringFlag{Name: "model-timeout", Usage: "how long one attempt of one model call may take, as a `DURATION` such as 30m (default: $PROSE_MODEL_TIMEOUT, else 10m)"},
	}
}

func ingestCommand() *cli.Command {
	return &cli.Command{
		Name:      "ingest",
		Usage:     "turn sources (Markdown, text, HTML, JSON conversations, directories, - for stdin) into wiki pages, as one receipt",
		ArgsUsage: "SOURCE…",
		Description: "Each source is read, redacted of secrets and analysed into a plan; the model then writes the pages\n" +
			"with the wiki tools. Everything lands as one commit carrying one receipt. A source ingested before with\n" +
			"the same model and options is skipped without asking any model. On failure nothing is written.\n" +
			fmt.Sprintf("A source may hold up to %d MiB (a larger one is refused: split it by chapter); a long one becomes a\n", source.MaxSize>>20) +
			"source page with its contents and one page per section, and a model is shown it part by part.",
		Flags: append(modelFlags(),
			&cli.StringFlag{Name: "name", Usage: "`TITLE` of the source read from standard input (-)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan and write nothing (with a provider: makes the analysis calls alone and prints their tokens)"},
			&cli.StringFlag{Name: "into", Usage: "wiki `FOLDER` for the pages of files named on their own (default: notes; a directory's files mirror its path)"},
			&cli.BoolFlag{Name: "force", Usage: "ingest sources again even when their memo key was seen"},
			&cli.Int64Flag{Name: "max-tokens", Usage: "token budget `N` of the run: a source whose estimate would pass what is left is not started (the others land; the output names those left); 0: no limit"},
			&cli.BoolFlag{Name: "estimate", Usage: "ask no model and write nothing: estimate each source's calls and tokens from the prompts it would send"},
			jobsFlag("sources"),
		),
		Action: func(c *cli.Context) error {
			gctune.Pipeline()
			if c.NArg() == 0 {
				return usageErrorf("ingest needs at least one SOURCE (a file, a directory, or - for standard input)")
			}
			inputs, skipped, err := source.Collect(c.Args().Slice(), os.Stdin, c.String("name"))
			if err != nil {
				return usageErrorf("%v", err)
			}
			reportSkipped(c.App.ErrWriter, skipped)
			var docs []*source.Document
			var paths []string // the file each of docs was read from ("": standard input)
			reported := len(skipped)
			read, err := readInputs(c.Context, inputs)
			if err != nil {
				return err // interrupted: nothing was written
			}
			for i, in := range inputs {
				d, err := read[i].doc, read[i].err
				if err != nil && in.Found {
					// A file found in a directory that does not read is
					// skipped, as one that cannot be opened is.
					fmt.Fprintf(c.App.ErrWriter, "prose: skipped %v\n", err)
					reported++
					continue
				}
				if err != nil {
					if strings.Contains(err.Error(), "leave it out") {
						// The reason already says what to do.
						return &exitError{code: 1, err: fmt.Errorf("%v; nothing was ingested", err)}
					}
					return &exitError{code: 1, err: fmt.Errorf("%v; nothing was ingested (fix or leave out that source)", err)}
				}
				if d.Encoding != "" {
					fmt.Fprintf(c.App.ErrWriter, "prose: %s is in %s, not UTF-8: read it converted to UTF-8 (the vault keeps the converted text)\n", d.Name, d.Encoding)
				}
				d.Collection = in.Found
				d.Earlier = in.Earlier
				if in.Stdin && c.String("name") != "" {
					d.Title = c.String("name")
				}
				docs = append(docs, d)
				paths = append(paths, in.Path)
			}
			if len(docs) == 0 && reported == 0 {
				return &exitError{code: 1, err: errors.New("no source to ingest: the directories named hold no files (dot-files and dot-directories are left out)")}
			}
			if len(docs) == 0 {
				return &exitError{code: 1, err: errors.New("no source to ingest: every file was skipped (see above)")}
			}
			v, w, opt, err := openPipeline(c)
			if err != nil {
				return err
			}
			defer v.Close()
			if v.Algorithm() == canon.BLAKE3 {
				// The run lets go of each file's bytes once it is parsed:
				// the commit reads the file again to store it (checked
				// against the id it had), so a run of thousands of
				// sources does not hold all their bytes. A source whose
				// stored bytes are not the file's (secrets redacted, or
				// converted to UTF-8) is kept: reading it again would
				// redact it again. (A vault of another algorithm hashes
				// the bytes for its refs.)
				for i, d := range docs {
					if p := paths[i]; p != "" && d.Redactions == 0 && d.Encoding == "" {
						d.Reload = reloadSource(p, d.Name, d.Kind, d.ID)
						d.Data = nil
					}
				}
			}
			opt.DryRun, opt.Force = c.Bool("dry-run"), c.Bool("force")
			opt.Estimate = c.Bool("estimate")
			if opt.MaxTokens = c.Int64("max-tokens"); opt.MaxTokens < 0 {
				return usageErrorf("--max-tokens %d: give a number of tokens above 0", opt.MaxTokens)
			}
			if opt.Jobs, err = jobsOf(c, v, "sources"); err != nil {
				return err
			}
			if into := c.String("into"); into != "" {
				clean, err := intoFolder(into)
				if err != nil {
					return usageErrorf("--into %s: %v", into, err)
				}
				opt.Into = clean
			}
			for _, sk := range skipped {
				if sk.RedirectTo != "" {
					if opt.Redirects == nil {
						opt.Redirects = map[string]string{}
					}
					opt.Redirects[sk.Path] = sk.RedirectTo
				}
			}
			res, err := ingest.Ingest(c.Context, w, docs, opt)
			if err != nil {
				return pipelineError(c, "ingest", err)
			}
			return reportPipeline(c, v, opt, res, "ingest", "source")
		},
	}
}

// readInput is what reading one input gave.
type readInput struct {
	doc *source.Document
	err error
}

// readInputs parses every input (the blocks each collection repeats
// found first), on every core: a document's reading depends on its bytes
// and its collection's boilerplate alone, so the results, kept in the
// inputs' order, are those of reading them one by one. The document
// holds what the run needs: the bytes as read are let go once parsed (a
// redacted or converted source is a copy of its own). An interrupt stops
// the reading between documents.
func readInputs(ctx context.Context, inputs []source.Input) ([]readInput, error) {
	chrome := source.FindBoilerplate(inputs)
	read := make([]readInput, len(inputs))
	parallel.For(len(inputs), func(i int) {
		data := inputs[i].Data
		inputs[i].Data = nil
		if ctx.Err() != nil {
			return
		}
		in := &inputs[i]
		read[i].doc, read[i].err = source.ReadWith(in.Name, data, in.Kind, chrome[in.Collection])
	})
	return read, ctx.Err()
}

// reloadSource reads the source file at p, named name, of kind, again as
// the vault stores it (source.Stored), for the document of id: a file
// whose bytes are those stored (no secret redacted, nothing converted)
// is taken as it is read, without redacting it again.
func reloadSource(p, name string, kind source.Kind, id string) func() ([]byte, error) {
	return func() ([]byte, error) {
		data, err := source.ReadFile(p, name)
		if err != nil {
			return nil, err
		}
		if canon.BLAKE3.Token(data) == id {
			return data, nil
		}
		return source.Stored(name, data, kind)
	}
}

// reportPipeline prints what an ingest or enrich (cmd) did: an estimate,
// or the result, the tokens used and the units (sources, pages) left
// past --max-tokens.
func reportPipeline(c *cli.Context, v *vault.Vault, opt ingest.Options, res *ingest.Result, cmd, unit string) error {
	if res.Status == "estimate" {
		return printEstimate(c, v, opt.ModelSpec, res)
	}
	if err := printPipeline(c, v, opt.ModelSpec, res); err != nil {
		return err
	}
	printUsage(c, v, opt.ModelSpec, res.Usage)
	if len(res.Left) > 0 && !newOutput(c).json {
		fmt.Fprintf(c.App.Writer, "left: %s not started within --max-tokens %d (%s them in a later run): %s\n", nounCount(len(res.Left), unit), opt.MaxTokens, cmd, strings.Join(res.Left, ", "))
	}
	return nil
}

// jobsFlag is --jobs of ingest and enrich: how many units (sources,
// pages) are worked at once with a provider.
func jobsFlag(units string) cli.Flag {
	return &cli.IntFlag{Name: "jobs", Usage: fmt.Sprintf("work `N` %s at once with a provider (default: prose.yaml's jobs, else %d); the result is the same at any N", units, ingest.DefaultJobs)}
}

// jobsOf is the number of jobs: --jobs, else prose.yaml's jobs, else 0
// (the default), from 0 to 64.
func jobsOf(c *cli.Context, v *vault.Vault, units string) (int, error) {
	jobs := v.Config().Jobs
	if c.IsSet("jobs") {
		jobs = c.Int("jobs")
	}
	if jobs < 0 || jobs > 64 {
		return 0, usageErrorf("--jobs %d: give a number of %s from 1 to 64 (jobs: in prose.yaml likewise)", jobs, units)
	}
	return jobs, nil
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// intoFolder checks a --into folder: a wiki path of folders, no page.
func intoFolder(f string) (string, error) {
	f = strings.Trim(strings.ReplaceAll(f, "\\", "/"), "/")
	if f == "" || f == "." {
		return "", errors.New("name a folder of the wiki, e.g. --into notes/ops")
	}
	for _, seg := range strings.Split(f, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
			return "", fmt.Errorf("%q is not a folder name (no empty, dot or dot-dot parts)", seg)
		}
	}
	if strings.HasSuffix(f, ".html") {
		return "", errors.New("that is a page; name a folder")
	}
	return f, nil
}

// openPipeline opens the vault, its wiki and the model the flags name.
func openPipeline(c *cli.Context) (*vault.Vault, *wiki.Wiki, ingest.Options, error) {
	if c.Int("budget") < 0 {
		return nil, nil, ingest.Options{}, usageErrorf("--budget %d: a prompt budget is a number of tokens, 0 or more (0: the model's default)", c.Int("budget"))
	}
	v, err := openVault(c)
	if err != nil {
		return nil, nil, ingest.Options{}, err
	}
	if !c.Bool("dry-run") && !c.Bool("estimate") {
		// Refuse before any model is asked: the run's first write would
		// refuse only after its calls were made and paid for.
		if err := v.CheckGitMerge(c.Context); err != nil {
			v.Close()
			return nil, nil, ingest.Options{}, &exitError{code: 1, err: err}
		}
	}
	w, err := wiki.Open(v)
	if err != nil {
		v.Close()
		return nil, nil, ingest.Options{}, err
	}
	choice, _ := resolveModel(c, func() (string, error) { return v.Config().Model, nil })
	spec := choice.Spec
	now, err := model.Now(os.Getenv)
	if err != nil {
		v.Close()
		return nil, nil, ingest.Options{}, usageErrorf("%v", err)
	}
	w.Now = func() time.Time { return now }
	cfg, err := modelConfig(c)
	if err != nil {
		v.Close()
		return nil, nil, ingest.Options{}, err
	}
	m, err := model.Open(spec, cfg)
	if err != nil && c.Bool("estimate") {
		// An estimate asks nothing: it needs the spec, not a key.
		m, err = nil, nil
	}
	if err != nil {
		v.Close()
		return nil, nil, ingest.Options{}, usageErrorf("--model %s: %v", spec, err)
	}
	// Progress bars on a terminal only, and never with --json or --quiet
	// (as every command's): --json keeps the run's notes on stderr
	// without a bar, --quiet prints errors alone.
	var progressTo io.Writer = c.App.ErrWriter
	switch {
	case c.Bool("quiet"):
		progressTo = io.Discard
	case c.Bool("json"):
		progressTo = struct{ io.Writer }{c.App.ErrWriter} // not a terminal: no bar
	}
	return v, w, ingest.Options{
		Purpose: c.String("purpose"), Audience: c.String("audience"), Model: m, ModelSpec: spec,
		Budget: c.Int("budget"), Progress: progressTo, Now: func() time.Time { return now },
	}, nil
}

// pipelineError reports a failed ingest or enrich: what failed, that
// nothing was written, and what to do.
func pipelineError(c *cli.Context, cmd string, err error) error {
	if c.Context.Err() != nil {
		return err // the signal handler's exit code applies
	}
	hint := "; fix the cause and run the command again"
	var me *model.Error
	if errors.As(err, &me) && me.Hint != "" || errors.Is(err, vault.ErrBaseMoved) {
		hint = "" // the error carries its own hint
	}
	return &exitError{code: 1, err: fmt.Errorf("%s failed at %v; nothing was written (the ledger records a failed receipt)%s", cmd, err, hint)}
}

func printPipeline(c *cli.Context, v *vault.Vault, spec string, res *ingest.Result) error {
	out := newOutput(c)
	if out.json {
		doc := map[string]any{"status": res.Status, "sources": res.Sources, "created": res.Created, "updated": res.Updated,
			"moved": res.Moved, "folders_reindexed": res.Folders, "review": res.Review}
		doc["not_recreated"] = nonNil(res.NotRecreated)
		if res.Left != nil {
			doc["left"] = res.Left
		}
		if res.Plans != nil {
			doc["plans"] = res.Plans
		}
		if res.Asked != nil {
			doc["asked"] = res.Asked
		}
		if res.Receipt != nil {
			doc["receipt"] = res.Receipt.ToValue()
		}
		if res.Commit != "" {
			doc["commit"] = res.Commit
		}
		if res.ReviewCommit != "" {
			doc["review_commit"] = res.ReviewCommit
		}
		if res.Layout != nil {
			doc["layout"] = res.Layout
		}
		doc["usage"] = usageDoc(v, spec, res.Usage)
		return out.emit(doc)
	}
	for _, s := range res.Sources {
		red := ""
		if s.Redactions > 0 {
			red = fmt.Sprintf(", %d secrets redacted", s.Redactions)
		}
		if s.Encoding != "" {
			red = ", converted from " + s.Encoding + red
		}
		switch {
		case s.MarkupOf:
			red += ", the markup source of " + s.SameAs
		case s.SameAs != "":
			red += ", the same text as " + s.SameAs
		}
		out.printf("%-9s %s (%s%s)\n", s.Status, s.Name, s.Kind, red)
	}
	for _, p := range res.Plans {
		out.printf("\nplan for %s:\n", p.Source)
		for _, pg := range p.Plan.Pages {
			out.printf("  %-6s %-9s %s  %q\n", pg.Action, pg.Template, pg.Path, pg.Title)
		}
	}
	for _, p := range res.Asked {
		out.printf("  would ask about %s\n", p)
	}
	for _, p := range res.Created {
		out.printf("  created  %s\n", p)
	}
	for _, p := range res.Updated {
		out.printf("  updated  %s\n", p)
	}
	for _, m := range res.Moved {
		out.printf("  moved    %s -> %s\n", m.From, m.To)
	}
	for _, p := range res.NotRecreated {
		out.printf("  removed by a person, not re-created: %s\n", p)
	}
	if l := res.Layout; l != nil {
		out.printf("  layout   %s of the earlier layout moved to where its source puts %s (listed above); %d kept where %s, as a person wrote on %s (see the review items)\n",
			nounCount(l.Moved, "page"), pick(l.Moved, "it", "them"), l.Kept, pick(l.Kept, "it is", "they are"), pick(l.Kept, "it", "them"))
	}
	for _, r := range res.Review {
		if r.Page != "" {
			out.printf("  review   %s %s: %s\n", r.ID, r.Page, r.Detail)
		} else {
			out.printf("  review   %s %s\n", r.ID, r.Detail)
		}
	}
	switch res.Status {
	case "rendered":
		out.printf("wiki: rendered %s (receipt %s)\n", short(res.Commit), res.Receipt.ContentHash)
	case "skipped":
		reread := false
		for _, s := range res.Sources {
			reread = reread || s.Status == "unchanged"
		}
		why := "nothing new"
		if len(res.Sources) == 0 {
			why = "no page changed" // enrich
		}
		if reread {
			why = "every page came out as it was"
		}
		if res.ReviewCommit != "" {
			out.printf("wiki: skipped (%s); committed the review queue %s with %s (prose wiki review list)\n", why, short(res.ReviewCommit), nounCount(len(res.Review), "new item"))
		} else {
			out.printf("wiki: skipped (%s; no commit)\n", why)
		}
	case "dry-run":
		out.printf("dry run: nothing was written\n")
	}
	if res.Status != "dry-run" {
		out.printf("open %s\n", strings.TrimPrefix(v.Root()+"/"+wiki.Dir+"/"+wiki.IndexName, "./"))
	}
	return nil
}

// listedUnsupported is how many files of an unsupported type an ingest
// names one by one; beyond it they are counted by extension, since a
// manual's folder may hold hundreds of images and stylesheets.
const listedUnsupported = 5

// reportSkipped says what Collect left out: every surprise (a pipe, an
// unreadable file, the vault's own folder) by name, and the files that
// are simply not documents by name when few, else as one line of counts.
func reportSkipped(w io.Writer, skipped []source.Skipped) {
	var unsupported, redirects []source.Skipped
	for _, s := range skipped {
		switch {
		case s.Unsupported:
			unsupported = append(unsupported, s)
			continue
		case s.Redirect:
			redirects = append(redirects, s)
			continue
		}
		fmt.Fprintf(w, "prose: skipped %s: %s\n", s.Path, s.Reason)
	}
	if len(redirects) <= listedUnsupported {
		for _, s := range redirects {
			fmt.Fprintf(w, "prose: skipped %s: %s\n", s.Path, s.Reason)
		}
	} else {
		fmt.Fprintf(w, "prose: skipped %d pages that only redirect to another (such as %s: %s); a link to one leads to its target\n",
			len(redirects), redirects[0].Path, redirects[0].Reason)
	}
	if len(unsupported) <= listedUnsupported {
		for _, s := range unsupported {
			fmt.Fprintf(w, "prose: skipped %s: %s\n", s.Path, s.Reason)
		}
		return
	}
	count := map[string]int{}
	for _, s := range unsupported {
		ext := strings.ToLower(filepath.Ext(s.Path))
		if ext == "" {
			ext = "no extension"
		}
		count[ext]++
	}
	exts := make([]string, 0, len(count))
	for e := range count {
		exts = append(exts, e)
	}
	sort.Slice(exts, func(i, j int) bool {
		if count[exts[i]] != count[exts[j]] {
			return count[exts[i]] > count[exts[j]]
		}
		return exts[i] < exts[j]
	})
	parts := make([]string, len(exts))
	for i, e := range exts {
		parts[i] = fmt.Sprintf("%d %s", count[e], e)
	}
	fmt.Fprintf(w, "prose: skipped %d files that are not sources (%s), such as %s; sources are .md, .txt, .html, .json and .jsonl files\n",
		len(unsupported), strings.Join(parts, ", "), unsupported[0].Path)
}

// printEstimate prints an --estimate run: per source its calls and
// tokens, the totals and, when prose.yaml prices the model, the cost.
func printEstimate(c *cli.Context, v *vault.Vault, spec string, res *ingest.Result) error {
	out := newOutput(c)
	var total model.Usage
	calls := 0
	for _, e := range res.Estimates {
		total.Input += e.Input
		total.Output += e.Output
		calls += e.Calls
	}
	if out.json {
		doc := map[string]any{"status": res.Status, "model": spec, "estimates": res.Estimates,
			"total": map[string]any{"calls": calls, "input_tokens": total.Input, "output_tokens": total.Output}}
		if cost, ok := costOf(v, spec, total); ok {
			doc["cost"] = cost
		}
		return out.emit(doc)
	}
	unit := "source"
	for _, e := range res.Estimates {
		name := e.Source
		if e.Page != "" {
			name, unit = e.Page, "page"
		}
		out.printf("estimate  %s: %d calls, %d input tokens, %d output tokens\n", name, e.Calls, e.Input, e.Output)
	}
	out.printf("estimate: %s, %d calls, %d input tokens, %d output tokens", nounCount(len(res.Estimates), unit), calls, total.Input, total.Output)
	if cost, ok := costOf(v, spec, total); ok {
		out.printf(", about %.4f at the prices in prose.yaml", cost)
	}
	out.printf(" (%s; nothing was asked or written)\n", spec)
	return nil
}

// printUsage says what a run's calls used, and cost when prose.yaml
// prices the model; a run that asked no model says nothing.
func printUsage(c *cli.Context, v *vault.Vault, spec string, u model.Usage) {
	if u == (model.Usage{}) || newOutput(c).json {
		return
	}
	line := fmt.Sprintf("tokens: %d input (%d of them cached), %d output", u.Input, u.CachedInput, u.Output)
	if cost, ok := costOf(v, spec, u); ok {
		line += fmt.Sprintf("; cost %.4f at the prices in prose.yaml", cost)
	}
	fmt.Fprintln(c.App.Writer, line)
}

// usageDoc is what a run's calls used, for --json: the model, the
// tokens (input counts the cached part too) and, when prose.yaml prices
// the model, the cost.
func usageDoc(v *vault.Vault, spec string, u model.Usage) map[string]any {
	doc := map[string]any{"model": spec, "input_tokens": u.Input, "cached_input_tokens": u.CachedInput, "output_tokens": u.Output}
	if cost, ok := costOf(v, spec, u); ok {
		doc["cost"] = cost
	}
	return doc
}

// costOf prices u with prose.yaml's prices for spec (per million tokens).
func costOf(v *vault.Vault, spec string, u model.Usage) (float64, bool) {
	p, ok := v.Config().Prices[spec]
	if !ok {
		return 0, false
	}
	cached := p.CachedInput
	if cached == 0 {
		cached = p.Input
	}
	return (float64(u.Input-u.CachedInput)*p.Input + float64(u.CachedInput)*cached + float64(u.Output)*p.Output) / 1e6, true
}
