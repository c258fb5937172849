package main

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/cas"
	"github.com/prose-store/prose/internal/ctxio"
	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/vault"
)

func openStore(v *vault.Vault) (*cas.Store, error) {
	return cas.Open(v.StatePath())
}

// withStore opens the vault's object store for a cas subcommand.
func withStore(c *cli.Context, fn func(*cas.Store, *output) error) error {
	v, err := openVault(c)
	if err != nil {
		return err
	}
	defer v.Close()
	st, err := openStore(v)
	if err != nil {
		return err
	}
	return fn(st, newOutput(c))
}

func parseIDArg(c *cli.Context, what string) (cas.ID, error) {
	if c.NArg() != 1 {
		return cas.ID{}, usageErrorf("%s needs one object id (blake3:<64 hex>)", what)
	}
	id, err := cas.ParseID(c.Args().First())
	if err != nil {
		return cas.ID{}, usageErrorf("%s: %v", what, err)
	}
	return id, nil
}

func casCommand() *cli.Command {
	return &cli.Command{
		Name:  "cas",
		Usage: "the BLAKE3 content-addressed object store under .prose/",
		Subcommands: []*cli.Command{
			{
				Name:      "put",
				Usage:     "store FILE (or stdin with - or no argument); print its id",
				ArgsUsage: "[FILE|-]",
				Action: func(c *cli.Context) error {
					if c.NArg() > 1 {
						return usageErrorf("cas put takes at most one file")
					}
					return withStore(c, func(st *cas.Store, out *output) error {
						var r io.Reader = os.Stdin
						name := "-"
						size := int64(-1)
						if c.NArg() == 1 && c.Args().First() != "-" {
							name = c.Args().First()
							f, err := os.Open(name)
							if err != nil {
								return usageErrorf("cas put: %v", err)
							}
							defer f.Close()
							r = f
							fi, err := f.Stat()
							if err == nil && fi.IsDir() {
								return usageErrorf("cas put: %s is a directory; pass a file, or - to read standard input", name)
							}
							if err == nil && fi.Mode().IsRegular() {
								size = fi.Size()
							}
						}
						bar := byteBar(c, size, "cas put")
						id, n, err := st.PutContext(c.Context, bar.Reader(r))
						bar.Finish()
						if err != nil {
							return err
						}
						if !out.quiet || out.json {
							out.printf("%s\n", id)
						}
						return out.emit(map[string]any{"id": id.String(), "size": n, "source": name})
					})
				},
			},
			{
				Name:      "get",
				Usage:     "write an object to stdout (or -o FILE), verifying its hash",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"}},
				Action: func(c *cli.Context) error {
					id, err := parseIDArg(c, "cas get")
					if err != nil {
						return err
					}
					outFile := c.String("output")
					if outFile != "" {
						if fi, err := os.Stat(outFile); err == nil && fi.IsDir() {
							return usageErrorf("cas get: -o %s is a directory; name the file to write", outFile)
						}
					}
					return withStore(c, func(st *cas.Store, out *output) error {
						rc, err := st.Get(id)
						if errors.Is(err, cas.ErrNotFound) {
							return fmt.Errorf("cas get: no object %s in this vault", id)
						}
						if err != nil {
							return err
						}
						defer rc.Close()
						bar := byteBar(c, -1, "cas get")
						defer bar.Finish()
						src := ctxio.Reader(c.Context, bar.Reader(rc))
						if out.json && c.String("output") == "" {
							return streamBase64Document(c.App.Writer, id, src)
						}
						if outFile != "" {
							return writeOutput(outFile, src)
						}
						_, err = io.Copy(c.App.Writer, src)
						return err
					})
				},
			},
			{
				Name:      "has",
				Usage:     "exit 0 when the object is stored, 1 when not",
				ArgsUsage: "ID",
				Action: func(c *cli.Context) error {
					id, err := parseIDArg(c, "cas has")
					if err != nil {
						return err
					}
					return withStore(c, func(st *cas.Store, out *output) error {
						ok, err := st.Has(id)
						if err != nil {
							return err
						}
						out.printf("%v\n", ok)
						if err := out.emit(map[string]any{"id": id.String(), "present": ok}); err != nil {
							return err
						}
						if !ok {
							return findings("absent")
						}
						return nil
					})
				},
			},
			{
				Name:  "verify",
				Usage: "re-hash every object; exit 1 if any is corrupt",
				Action: func(c *cli.Context) error {
					return withStore(c, func(st *cas.Store, out *output) error {
						var bad []string
						checked, _, err := st.Verify(func(id cas.ID, err error) {
							bad = append(bad, fmt.Sprintf("%s: %v", id, err))
							if !out.json {
								fmt.Fprintf(c.App.ErrWriter, "corrupt: %s: %v\n", id, err)
							}
						})
						if err != nil {
							return err
						}
						out.printf("%s checked, %d corrupt\n", nounCount(checked, "object"), len(bad))
						if bad == nil {
							bad = []string{}
						}
						if err := out.emit(map[string]any{"checked": checked, "corrupt": bad}); err != nil {
							return err
						}
						if len(bad) > 0 {
							return findings("corrupt objects")
						}
						return nil
					})
				},
			},
			{
				Name:  "gc",
				Usage: "remove every object the given roots do not reach (takes the writer lock)",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "root", Usage: "object `ID` to keep (repeatable)"},
					&cli.BoolFlag{Name: "everything", Usage: "with no --root: remove every object"},
				},
				Action: func(c *cli.Context) error {
					roots := []cas.ID{}
					for _, s := range c.StringSlice("root") {
						id, err := cas.ParseID(s)
						if err != nil {
							return usageErrorf("--root: %v", err)
						}
						roots = append(roots, id)
					}
					if len(roots) == 0 && !c.Bool("everything") {
						return usageErrorf("cas gc needs the roots to keep (--root ID ...), or --everything to empty the store")
					}
					return withStore(c, func(st *cas.Store, out *output) error {
						stats, err := st.GC(c.Context, roots, nil, c.Duration("lock-timeout"))
						if err != nil {
							return err
						}
						out.printf("kept %s, removed %d (%s)\n", nounCount(stats.Kept, "object"), stats.Removed, nounCount(int(stats.BytesFreed), "byte"))
						return out.emit(stats)
					})
				},
			},
		},
	}
}

// streamBase64Document writes `cas get --json` — {"id", "content_base64",
// "size"} — encoding the content as it is read, so memory stays flat for
// objects of any size. A corrupt object fails at its end, after part of the
// document was written: the error and exit 1 say the output is not to be
// used.
func streamBase64Document(w io.Writer, id cas.ID, r io.Reader) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "{\n  \"id\": %q,\n  \"content_base64\": \"", id.String())
	enc := base64.NewEncoder(base64.StdEncoding, bw)
	n, err := io.Copy(enc, r)
	if err != nil {
		bw.Flush()
		return fmt.Errorf("cas get %s: %w (the JSON written is incomplete)", id, err)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	fmt.Fprintf(bw, "\",\n  \"size\": %d\n}\n", n)
	return bw.Flush()
}

// writeOutput writes r to the file at path for `cas get -o`. A regular file
// (or none yet) is written by temp file and rename, so an interrupted get,
// or an object that fails its hash check at the end, leaves it as it was;
// an existing file keeps its permissions, and a symbolic link stays a link
// (its target is written). Anything else (/dev/null, /dev/stdout, a named
// pipe) is written in place.
func writeOutput(path string, r io.Reader) error {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	perm := os.FileMode(0o644)
	if err == nil {
		perm = fi.Mode().Perm()
	}
	_, err = durable.WriteFrom(path, r, perm)
	return err
}
