package main

import (
	"github.com/prose-store/prose/internal/gctune"
	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/ingest"
)

func enrichCommand() *cli.Command {
	return &cli.Command{
		Name:      "enrich",
		Usage:     "improve the slots of existing pages with a model, as one receipt",
		ArgsUsage: "[PAGE…]",
		Description: "For each page the model sees the page's path, template, audience, the component palette and every\n" +
			"slot, and rewrites slots through the wiki tools (this page only). Pages whose slots come back\n" +
			"unchanged change nothing; a run that changes nothing commits nothing. With a provider, --jobs pages are\n" +
			"worked at once, each against the wiki as the run found it, and merged in name order: the same result at any --jobs.",
		Flags: append(modelFlags(),
			&cli.BoolFlag{Name: "all", Usage: "enrich every page"},
			&cli.StringFlag{Name: "template", Usage: "only pages of template `NAME`"},
			&cli.IntFlag{Name: "limit", Usage: "at most `N` pages"},
			&cli.BoolFlag{Name: "dry-run", Usage: "list the pages the run would ask the model to improve; ask nothing, write nothing"},
			&cli.BoolFlag{Name: "estimate", Usage: "ask no model and write nothing: estimate each page's calls and tokens from the prompt it would send"},
			&cli.Int64Flag{Name: "max-tokens", Usage: "token budget `N` of the run: pages past it by their estimates are not started (the others land; the output names those left); 0: no limit"},
			jobsFlag("pages"),
		),
		Action: func(c *cli.Context) error {
			gctune.Pipeline()
			if c.NArg() == 0 && !c.Bool("all") && c.String("template") == "" {
				return usageErrorf("enrich needs PAGE names, --all or --template (see prose enrich --help)")
			}
			if c.Int("limit") < 0 {
				return usageErrorf("--limit must be 0 or more")
			}
			v, w, opt, err := openPipeline(c)
			if err != nil {
				return err
			}
			defer v.Close()
			if opt.Jobs, err = jobsOf(c, v, "pages"); err != nil {
				return err
			}
			opt.DryRun, opt.Estimate = c.Bool("dry-run"), c.Bool("estimate")
			if opt.MaxTokens = c.Int64("max-tokens"); opt.MaxTokens < 0 {
				return usageErrorf("--max-tokens %d: give a number of tokens above 0", opt.MaxTokens)
			}
			sel := ingest.Selection{Pages: c.Args().Slice(), All: c.Bool("all") || c.NArg() == 0, Template: c.String("template"), Limit: c.Int("limit")}
			res, err := ingest.Enrich(c.Context, w, sel, opt)
			if err != nil {
				return pipelineError(c, "enrich", err)
			}
			return reportPipeline(c, v, opt, res, "enrich", "page")
		},
	}
}
