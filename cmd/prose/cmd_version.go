package main

import (
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/vault"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the prose version and the formats it reads and writes",
		Action: func(c *cli.Context) error {
			out := newOutput(c)
			out.printf("prose %s (%s, vault format %d)\n", version, runtime.Version(), vault.FormatVersion)
			return out.emit(map[string]any{"version": version, "go": runtime.Version(), "vault_format": vault.FormatVersion})
		},
	}
}
