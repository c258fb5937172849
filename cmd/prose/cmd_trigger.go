package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/internal/ctxio"
	"github.com/prose-store/prose/reactor"
)

func triggerCommand() *cli.Command {
	return &cli.Command{
		Name:      "trigger",
		Usage:     "bring outside input into a gateway, then reconcile what it wakes",
		ArgsUsage: "GATEWAY [DIR]",
		Description: "The gateway's world-model becomes the latest payload: DIR (a directory, published as it is)\n" +
			"or --data FILE (- for standard input): JSON (a .json file or standard input) is the gateway's\n" +
			"structured truth, a top-level object one file <key>.json per key, any other value payload.json;\n" +
			"another extension is published as payload.<ext>. The payload is recorded through the vault's one write path, as an external wake,\n" +
			"before anything downstream renders; each subscriber of a facet it moved is woken, and the\n" +
			"drain prints dispositions as prose run does. A payload that moves nothing is a skipped\n" +
			"receipt and wakes nobody.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data", Usage: "the payload `FILE` (- reads standard input)"},
		},
		Action: runTrigger,
	}
}

// maxPayload bounds a --data payload.
const maxPayload = 16 << 20

func runTrigger(c *cli.Context) error {
	if c.NArg() < 1 || c.NArg() > 2 {
		return usageErrorf("trigger needs GATEWAY and a DIR or --data FILE (see prose trigger --help)")
	}
	gw, dir, data := c.Args().Get(0), c.Args().Get(1), c.String("data")
	if (dir == "") == (data == "") {
		return usageErrorf("trigger: give the payload as DIR or as --data FILE, one of them")
	}
	rs, err := loadRuntime(c, "trigger")
	if err != nil {
		return err
	}
	defer rs.set.close()
	if rs.graph.Node(gw) == nil {
		return usageErrorf("trigger: no node %q in the active manifest", gw)
	}
	if data != "" {
		tmp, err := os.MkdirTemp("", "prose-trigger-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		var in io.Reader = os.Stdin
		name := "payload.json"
		if data != "-" {
			f, err := os.Open(data)
			if err != nil {
				return usageErrorf("trigger --data: %v", err)
			}
			defer f.Close()
			in = f
			if ext := filepath.Ext(data); ext != "" {
				name = "payload" + ext
			}
		}
		b, err := io.ReadAll(io.LimitReader(ctxio.Reader(c.Context, in), maxPayload+1))
		if err != nil {
			return fmt.Errorf("trigger: read the payload: %w", err)
		}
		if len(b) > maxPayload {
			return usageErrorf("trigger --data: the payload is larger than %d bytes", maxPayload)
		}
		files := map[string][]byte{name: b}
		if name == "payload.json" {
			// The same mapping as prose serve's deliveries: a JSON object
			// is the gateway's structured truth, one file per key.
			if files, err = reactor.PayloadFiles(b); err != nil {
				return usageErrorf("trigger --data: %v", err)
			}
		}
		if err := reactor.WriteWorldModel(tmp, files); err != nil {
			return err
		}
		dir = tmp
	}
	r, err := rs.reconciler()
	if err != nil {
		return err
	}
	if _, err := r.Ingest(c.Context, gw, dir, nil); err != nil {
		return fmt.Errorf("trigger %s: %w", gw, err)
	}
	rep, derr := r.Drain(c.Context)
	return reportRun(c, rep, rs.notes, derr)
}
