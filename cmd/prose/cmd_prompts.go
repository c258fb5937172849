package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/prompt"
)

func promptsCommand() *cli.Command {
	return &cli.Command{
		Name:  "prompts",
		Usage: "the prompt templates of the wiki pipeline, with their fields and the vault's overrides",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list the prompts, their fields and where each comes from",
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usageErrorf("prompts list takes no arguments")
					}
					root := promptRoot(c)
					out := newOutput(c)
					docs := []map[string]any{}
					for _, name := range prompt.Names() {
						t, err := prompt.Load(root, name)
						if err != nil {
							return err
						}
						out.printf("%-11s %-19s %s\n", t.Name, t.Source, strings.Join(t.Fields, ", "))
						docs = append(docs, map[string]any{"name": t.Name, "source": t.Source, "fields": t.Fields, "dialect": t.Dialect, "description": t.Description})
					}
					return out.emit(docs)
				},
			},
			{
				Name:      "show",
				Usage:     "print one prompt's fields and text",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf("prompts show needs one NAME (see prose prompts list)")
					}
					t, err := prompt.Load(promptRoot(c), c.Args().First())
					if err != nil {
						return usageErrorf("%v", err)
					}
					out := newOutput(c)
					out.printf("# %s (%s, dialect %s)\n# %s\n# fields: %s\n\n%s", t.Name, t.Source, t.Dialect, t.Description, strings.Join(t.Fields, ", "), t.Text)
					return out.emit(t)
				},
			},
		},
	}
}

// promptRoot is the vault whose overrides apply, or "" outside a vault.
func promptRoot(c *cli.Context) string {
	v, err := openVault(c)
	if err != nil {
		return ""
	}
	defer v.Close()
	return v.Root()
}
