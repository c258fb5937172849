package main

import (
	"context"
	"os"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/program"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// The wiki's programs, offered to agents through the program registry;
// they work on the vault of $PROSE_VAULT, else the one containing the
// working directory.
func init() {
	open := func(ctx context.Context) (*wiki.Wiki, error) {
		dir, err := vaultDir(os.Getenv("PROSE_VAULT"))
		if err != nil {
			return nil, err
		}
		v, err := vault.Open(dir, vault.Options{})
		if err != nil {
			return nil, err
		}
		return wiki.Open(v)
	}
	if err := ingest.RegisterPrograms(program.Default, open); err != nil {
		panic(err) // the schemas are constants: a failure is a programming error
	}
}
