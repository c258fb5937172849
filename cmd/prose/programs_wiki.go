package main

import (
	"context"
	"os"
	"sync"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/program"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// programs is the program registry with the wiki's programs, offered to
// agents; they work on the vault of $PROSE_VAULT, else the one containing
// the working directory. They are registered on first use: registering
// compiles every program's argument schema, which no other command needs
// to pay for at start.
var programs = sync.OnceValue(func() *program.Registry {
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
	return program.Default
})
