package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/model"
	_ "github.com/prose-store/prose/model/anthropic"
	_ "github.com/prose-store/prose/model/openai"
	_ "github.com/prose-store/prose/model/replay"
	"github.com/prose-store/prose/vault"
)

// modelChoice is the model a command would use and where that choice
// came from.
type modelChoice struct {
	Spec   string `json:"spec"`
	Source string `json:"source"` // --model, $PROSE_MODEL, prose.yaml or default
}

// flagValue is a flag's value from the innermost level of the command line
// that set it: a command's own --model, else the global one (`prose
// --model X ingest`), which a command defining the flag too would shadow
// with its empty default.
func flagValue(c *cli.Context, name string) string {
	for _, x := range c.Lineage() {
		if x.IsSet(name) {
			return x.String(name)
		}
	}
	return ""
}

// chooseModel resolves --model, else $PROSE_MODEL, else the vault's
// prose.yaml model, else the built-in offline engine.
func chooseModel(c *cli.Context) (modelChoice, error) {
	return resolveModel(c, func() (string, error) {
		v, err := openVault(c)
		switch {
		case err == nil:
			defer v.Close()
			return v.Config().Model, nil
		case errors.Is(err, vault.ErrNotVault) && c.String("vault") == "":
			return "", nil // outside a vault: no prose.yaml to read
		}
		return "", err
	})
}

// resolveModel is chooseModel given how to read the vault's configured
// model, asked only when neither --model nor $PROSE_MODEL names one.
func resolveModel(c *cli.Context, configured func() (string, error)) (modelChoice, error) {
	if s := flagValue(c, "model"); s != "" {
		return modelChoice{s, "--model"}, nil
	}
	if s := os.Getenv("PROSE_MODEL"); s != "" {
		return modelChoice{s, "$PROSE_MODEL"}, nil
	}
	s, err := configured()
	if err != nil {
		return modelChoice{}, err
	}
	if s != "" {
		return modelChoice{s, "prose.yaml"}, nil
	}
	return modelChoice{model.Offline, "default"}, nil
}

// modelConfig is the model configuration of a command line: keys and
// endpoints from the environment, --record, and the timeout of one
// attempt from --model-timeout, else $PROSE_MODEL_TIMEOUT, else the
// default.
func modelConfig(c *cli.Context) (model.Config, error) {
	cfg := model.Config{Getenv: os.Getenv, Record: flagValue(c, "record")}
	errw := c.App.ErrWriter
	var once sync.Mutex
	cfg.Notice = func(msg string) {
		once.Lock()
		defer once.Unlock()
		fmt.Fprintf(errw, "prose: %s\n", msg)
	}
	what, s := "--model-timeout", flagValue(c, "model-timeout")
	if s == "" {
		what, s = "$PROSE_MODEL_TIMEOUT", os.Getenv("PROSE_MODEL_TIMEOUT")
	}
	if s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return cfg, usageErrorf("%s %q: give a positive duration such as 90s, 30m or 1h", what, s)
		}
		cfg.Timeout = d
	}
	return cfg, nil
}

// openModel opens the model the command line chooses.
func openModel(c *cli.Context) (model.Model, modelChoice, error) {
	choice, err := chooseModel(c)
	if err != nil {
		return nil, choice, err
	}
	cfg, err := modelConfig(c)
	if err != nil {
		return nil, choice, err
	}
	m, err := model.Open(choice.Spec, cfg)
	return m, choice, err
}
