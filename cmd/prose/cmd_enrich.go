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
			sel := ingest.Selection{Pages: c.Args().Slice(), All: c.Bool("all") || c.NArg() == 0, Template: c.String("template"), Limit: c.Int("limit")}
			res, err := ingest.Enrich(c.Context, w, sel, opt)
			if err != nil {
				return pipelineError(c, "enrich", err)
			}
			return printPipeline(c, v, opt.ModelSpec, res)
		},
	}
}
