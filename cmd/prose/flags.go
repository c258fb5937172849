package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/internal/progress"
	"github.com/prose-store/prose/vault"
)

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "vault", Usage: "`DIR` of the vault (default: $PROSE_VAULT, else the vault containing the working directory)", EnvVars: []string{"PROSE_VAULT"}},
		&cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON on stdout (one document)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors"},
		// NO_COLOR is read by noColor, not as the flag's value: any non-empty
		// value means no color (no-color.org), not only a boolean word.
		&cli.BoolFlag{Name: "no-color", Usage: "disable colored output (also NO_COLOR set to any non-empty value)"},
		&cli.StringFlag{Name: "model", Usage: "model as `PROVIDER:NAME` (openai, openai-chat, anthropic, replay:FILE, offline); default $PROSE_MODEL, else prose.yaml's model, else offline"},
		&cli.StringFlag{Name: "record", Usage: "save every model exchange to `FILE` (replay it with --model replay:FILE)"},
		&cli.DurationFlag{Name: "lock-timeout", Value: vault.DefaultLockTimeout, Usage: "how long a writer waits for the vault lock (a `DURATION`: 30s, 2m; 0: one try)"},
	}
}

// output prints a command's result as text or, with --json, as one JSON
// document.
type output struct {
	c     *cli.Context
	json  bool
	quiet bool
	w     io.Writer
}

func newOutput(c *cli.Context) *output {
	return &output{c: c, json: c.Bool("json"), quiet: c.Bool("quiet"), w: c.App.Writer}
}

// printf writes text output unless --json or --quiet is set.
func (o *output) printf(format string, a ...any) {
	if o.json || o.quiet {
		return
	}
	io.WriteString(o.w, terminalSafe(fmt.Sprintf(format, a...)))
}

// printData writes text a command prints as data, exactly as stored (a
// slot's HTML, a page file), unless --json or --quiet is set: as it is
// into a pipe or a file, so writing it back changes nothing, and through
// terminalSafe onto a terminal.
func (o *output) printData(s string) {
	if o.json || o.quiet {
		return
	}
	if progress.IsTerminal(o.w) {
		s = terminalSafe(s)
	}
	io.WriteString(o.w, s)
}

// emit writes v as the command's JSON document when --json is set.
func (o *output) emit(v any) error {
	if !o.json {
		return nil
	}
	return encodeJSON(o.w, v)
}

// vaultOptions reads the flags that tune how a vault is opened.
func vaultOptions(c *cli.Context) vault.Options {
	timeout := c.Duration("lock-timeout")
	if timeout <= 0 {
		timeout = -1 // --lock-timeout 0: one try, no wait
	}
	return vault.Options{LockTimeout: timeout, NoFsync: os.Getenv("PROSE_UNSAFE_NO_FSYNC") == "1"}
}

// openVault opens the vault named by --vault or $PROSE_VAULT, else the one
// containing the working directory.
func openVault(c *cli.Context) (*vault.Vault, error) {
	dir, err := vaultDir(c.String("vault"))
	if err != nil {
		return nil, err
	}
	return vault.Open(dir, vaultOptions(c))
}

// vaultDir returns dir, or when it is empty the directory of the vault
// containing the working directory.
func vaultDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return vault.Find(wd)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// @atomic first, then the facets by name.
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == "@atomic") != (keys[j] == "@atomic") {
			return keys[i] == "@atomic"
		}
		return keys[i] < keys[j]
	})
	return keys
}

// printJSON prints v as indented JSON whatever --json says: for commands
// whose only output is a JSON document.
func printJSON(c *cli.Context, v any) error {
	return encodeJSON(c.App.Writer, v)
}

// encodeJSON writes v as indented JSON, every character a terminal would
// act on escaped (jsonSafe).
func encodeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(emptyLists(v)); err != nil {
		return err
	}
	_, err := io.WriteString(w, jsonSafe(b.String()))
	return err
}

// urfaveFlagString is urfave/cli's own flag line, which flagString trims.
var urfaveFlagString = cli.FlagStringer

func init() { cli.FlagStringer = flagString }

// flagString is a flag's line in a command's help: urfave/cli's, without
// the "(default: …)" it appends when it says nothing (false, 0, empty) or
// when the usage already says what the default is — the rule the
// generated docs follow (internal/clidocs).
func flagString(f cli.Flag) string {
	s := urfaveFlagString(f)
	i := strings.LastIndex(s, " (default: ")
	if i < 0 || !strings.HasSuffix(s, ")") {
		return s
	}
	switch d := s[i+len(" (default: ") : len(s)-1]; {
	case d == "false", d == "0", d == `""`, d == "[]", d == "":
		return s[:i]
	case strings.Contains(s[:i], "(default:") || strings.Contains(s[:i], "default $") || strings.Contains(s[:i], "(default "):
		return s[:i]
	}
	return s
}
