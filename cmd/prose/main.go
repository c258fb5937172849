// Command prose is the command-line interface of the prose world-model store.
// It parses flags, calls the packages that do the work and prints; it holds
// no logic of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	// PROSE_CPUPROFILE=FILE writes a CPU profile of the command, for
	// finding what bounds a benchmark figure.
	if f := os.Getenv("PROSE_CPUPROFILE"); f != "" {
		if out, err := os.Create(f); err == nil {
			if pprof.StartCPUProfile(out) == nil {
				code := run(os.Args, os.Stdout, os.Stderr)
				pprof.StopCPUProfile()
				out.Close()
				os.Exit(code)
			}
		}
	}
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code:
// 0 success, 1 the command ran and found failures, 2 usage error.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	go func() {
		if s, ok := <-sigc; ok {
			cancel(signalError{s})
		}
	}()
	app := newApp(stdout, stderr)
	err := app.RunContext(ctx, interspersed(app, hoistGlobalFlags(app, args)))
	if err == nil {
		return 0
	}
	if errors.Is(err, context.Canceled) {
		if c := context.Cause(ctx); c != nil && c != context.Canceled {
			err = c
		}
	}
	code, msg := classify(err)
	if msg != "" {
		fmt.Fprintf(stderr, "prose: %s\n", msg)
	}
	return code
}

// signalError is the cause of a command's cancellation by a signal.
type signalError struct{ s os.Signal }

func (e signalError) Error() string { return "stopped by " + e.s.String() }

// exitError carries an exit code and, unless silent, a message.
type exitError struct {
	code   int
	err    error
	silent bool // the command already printed its findings
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErrorf(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...)}
}

// findings reports that the command ran and found failures it has already
// printed.
func findings(format string, a ...any) error {
	return &exitError{code: 1, err: fmt.Errorf(format, a...), silent: true}
}

func classify(err error) (int, string) {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.silent {
			return ee.code, ""
		}
		return ee.code, ee.err.Error()
	}
	var se signalError
	if errors.As(err, &se) {
		if se.s == syscall.SIGTERM {
			return 143, "terminated; stopped at a safe point, the vault is as before"
		}
		return 130, "interrupted; stopped at a safe point, the vault is as before"
	}
	if errors.Is(err, context.Canceled) {
		return 130, "interrupted; stopped at a safe point, the vault is as before"
	}
	msg := err.Error()
	// urfave/cli reports flag parsing problems as plain errors.
	for _, p := range []string{"flag provided but not defined", "flag needs an argument", "invalid value", "Required flag", "Required flags"} {
		if strings.Contains(msg, p) {
			return 2, msg + " (see --help)"
		}
	}
	return 1, msg
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:                 "prose",
		Usage:                "a content-addressed, git-backed store for OpenProse world-models",
		Version:              version,
		HideVersion:          true,
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		Flags:                globalFlags(),
		Commands: []*cli.Command{
			initCommand(),
			checkCommand(),
			compileCommand(),
			graphCommand(),
			idCommand(),
			publishCommand(),
			logCommand(),
			receiptsCommand(),
			diffCommand(),
			fsckCommand(),
			casCommand(),
			ingestCommand(),
			enrichCommand(),
			wikiCommand(),
			promptsCommand(),
			programsCommand(),
			doctorCommand(),
			versionCommand(),
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return &exitError{code: 2, err: fmt.Errorf("%v (see prose --help)", err)}
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("unknown command %q (see prose --help)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		ExitErrHandler: func(*cli.Context, error) {},
	}
	for _, c := range app.Commands {
		setUsageErrors(c)
	}
	return app
}

func setUsageErrors(c *cli.Command) {
	c.OnUsageError = func(ctx *cli.Context, err error, _ bool) error {
		return &exitError{code: 2, err: fmt.Errorf("%s: %v (see prose %s --help)", c.Name, err, c.FullName())}
	}
	for _, s := range c.Subcommands {
		setUsageErrors(s)
	}
}

// hoistGlobalFlags moves global flags written after the command name to the
// front, so `prose log --json` means `prose --json log`. Parsing stops at "--".
func hoistGlobalFlags(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	withValue := map[string]bool{"--vault": true, "--lock-timeout": true, "--model": true, "--record": true}
	plain := map[string]bool{"--json": true, "--quiet": true, "-q": true, "--no-color": true}
	// The value-taking flags of the commands named so far: their values
	// stay where they are even when they look like a global flag.
	cmds := app.Commands
	takesValue := map[string]bool{}
	var global, rest []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		for _, c := range cmds {
			if c.HasName(a) {
				for _, f := range c.Flags {
					if _, isBool := f.(*cli.BoolFlag); !isBool {
						for _, n := range f.Names() {
							takesValue["-"+n], takesValue["--"+n] = true, true
						}
					}
				}
				cmds = c.Subcommands
				break
			}
		}
		name, _, hasValue := strings.Cut(a, "=")
		if takesValue[name] && !hasValue && i+1 < len(args) {
			rest = append(rest, a, args[i+1])
			i++
			continue
		}
		switch {
		case plain[name]:
			global = append(global, a)
		case withValue[name] && hasValue:
			global = append(global, a)
		case withValue[name] && i+1 < len(args):
			global = append(global, a, args[i+1])
			i++
		default:
			rest = append(rest, a)
		}
	}
	out := append([]string{args[0]}, global...)
	return append(out, rest...)
}

// interspersed lets command flags follow positional arguments
// (`prose publish NODE DIR --spec F`), which urfave/cli stops parsing at:
// flags of the command named on the line are moved before its arguments.
func interspersed(app *cli.App, args []string) []string {
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		i++ // global flags were hoisted; values use --flag=value or follow
		if i < len(args) && !strings.HasPrefix(args[i-1], "--vault=") && (args[i-1] == "--vault" || args[i-1] == "--lock-timeout" || args[i-1] == "--model" || args[i-1] == "--record") {
			i++
		}
	}
	cmds := app.Commands
	var cmd *cli.Command
	for i < len(args) {
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(args[i]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		cmd = next
		cmds = next.Subcommands
		i++
	}
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{"help": false, "h": false}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, positional []string
	for j := i; j < len(args); j++ {
		a := args[j]
		if a == "--" {
			positional = append(positional, args[j:]...)
			break
		}
		name := strings.TrimLeft(a, "-")
		name, _, hasValue := strings.Cut(name, "=")
		v, known := takesValue[name]
		if !strings.HasPrefix(a, "-") || a == "-" || !known {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		if v && !hasValue && j+1 < len(args) {
			flags = append(flags, args[j+1])
			j++
		}
	}
	out := append(append([]string{}, args[:i]...), flags...)
	return append(out, positional...)
}
