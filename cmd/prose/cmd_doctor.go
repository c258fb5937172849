package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/model"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "report which model is configured, where from, and whether its key is present (never the key); in a vault, its remotes and its merge driver",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "fix", Usage: "register the merge driver (merge.prose.* and the attribute lines) where the vault lacks it"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("doctor takes no arguments")
			}
			out := newOutput(c)
			choice, err := chooseModel(c)
			if err != nil {
				return err
			}
			provider, name, perr := model.ParseSpec(choice.Spec)
			rep := map[string]any{"model": choice.Spec, "source": choice.Source, "provider": provider, "name": name, "providers": model.Providers()}
			out.printf("model      %s (from %s)\n", choice.Spec, choice.Source)
			var problems []string
			if perr != nil {
				problems = append(problems, perr.Error())
			}
			if keyVar, baseVar := providerEnv(provider); keyVar != "" {
				present := os.Getenv(keyVar) != ""
				rep["key_variable"], rep["key_present"] = keyVar, present
				state := "present"
				if !present {
					state = "missing"
				}
				out.printf("key        %s %s\n", keyVar, state)
				base := os.Getenv(baseVar)
				rep["base_url_variable"], rep["base_url"] = baseVar, base
				if base == "" {
					base = "(default endpoint)"
				}
				out.printf("endpoint   %s %s\n", baseVar, base)
			}
			if perr == nil {
				if cfg, err := modelConfig(c); err != nil {
					problems = append(problems, err.Error())
				} else if _, err := model.Open(choice.Spec, cfg); err != nil {
					problems = append(problems, err.Error())
				}
			}
			problems = append(problems, doctorRemotes(c, out, rep)...)
			if problems == nil {
				problems = []string{}
			}
			rep["problems"] = problems
			rep["ok"] = len(problems) == 0
			for _, p := range problems {
				out.printf("problem    %s\n", p)
			}
			if len(problems) == 0 {
				out.printf("ok         the model can be opened\n")
			}
			if err := out.emit(rep); err != nil {
				return err
			}
			if len(problems) > 0 {
				return findings("doctor found %d problems", len(problems))
			}
			return nil
		},
	}
}

// providerEnv names the key and base-URL variables of a provider.
func providerEnv(provider string) (key, base string) {
	switch provider {
	case "openai", "openai-chat":
		return "OPENAI_API_KEY", "OPENAI_BASE_URL"
	case "anthropic":
		return "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"
	}
	return "", ""
}
