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
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/internal/gctune"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	gctune.Command()
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
	// PROSE_HEAPPROFILE=FILE writes a heap profile taken when the heap in
	// use was at its largest, for finding where a command's peak memory
	// goes.
	if f := os.Getenv("PROSE_HEAPPROFILE"); f != "" {
		stop := watchHeapPeak(f)
		code := run(os.Args, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// watchHeapPeak samples the heap in use every 100 ms and writes a heap
// profile to file each time it passes its largest value so far; stop takes
// a last sample and waits for the watcher.
func watchHeapPeak(file string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	var peak uint64
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse <= peak+peak/20 {
			return
		}
		peak = ms.HeapInuse
		if out, err := os.Create(file); err == nil {
			_ = pprof.Lookup("heap").WriteTo(out, 0)
			out.Close()
		}
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				sample()
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// run executes one command line and returns the process exit code:
// 0 success, 1 the command ran and found failures, 2 usage error.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, interrupted, stop := signalContext()
	defer stop()
	out := &countingWriter{w: stdout}
	app := newCommandTree(out, stderr) // the help adds the examples it shows (helpWithExamples)
	args = versionFlag(interspersed(app, hoistGlobalFlags(app, args)))
	err := app.RunContext(ctx, args)
	if errors.Is(err, errServeStopped) {
		return 0 // it said how it stopped
	}
	if err == nil {
		if sig := interrupted(); sig != nil {
			// The signal came too late to stop anything: the command had
			// done its work (and committed what it commits).
			fmt.Fprintf(stderr, "prose: %s came after the command had finished its work; what it did stands\n", signalName(sig))
		}
		return 0
	}
	if sig := interrupted(); sig != nil {
		fmt.Fprintf(stderr, "prose: interrupted by %s: stopped at a safe point; the vault is as it was before this command\n", signalName(sig))
		if out.n == 0 && jsonRequested(args) {
			writeJSONError(stdout, context.Canceled, 128+int(sig.(syscall.Signal)), "interrupted by "+signalName(sig)+": stopped at a safe point; the vault is as it was before this command")
		}
		return 128 + int(sig.(syscall.Signal))
	}
	code, msg := classify(err)
	if msg != "" {
		fmt.Fprintf(stderr, "prose: %s\n", terminalSafe(msg))
	}
	if out.n == 0 && jsonRequested(args) {
		// --json promises one document on stdout, a failure included;
		// a command that printed its own (fsck's findings) has kept it.
		if msg == "" {
			msg = err.Error()
		}
		writeJSONError(stdout, err, code, msg)
	}
	return code
}

// signalNoticed, when set (by the tests' child process), is told each
// signal once the command has taken note of it.
var signalNoticed func(os.Signal)

// signalContext returns a context cancelled by the first SIGINT or SIGTERM,
// and a function telling which signal came (nil if none). After the first
// signal the default action is restored, so a second one ends the process
// at once.
func signalContext() (ctx context.Context, interrupted func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var got atomic.Value
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			got.Store(s)
			signal.Stop(sigs)
			cancel()
			if signalNoticed != nil {
				signalNoticed(s)
			}
		case <-done:
		}
	}()
	interrupted = func() os.Signal {
		s, _ := got.Load().(os.Signal)
		return s
	}
	stop = func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
	return ctx, interrupted, stop
}

// signalName is the conventional name of the signals prose stops on.
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

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

// newApp is the whole command tree, every command's examples in its
// description: what the generated reference (docs/cli.md, the man pages,
// the completions) is made from.
func newApp(stdout, stderr io.Writer) *cli.App {
	app := newCommandTree(stdout, stderr)
	addExamples(app)
	return app
}

// newCommandTree is the command tree without the examples, which a command
// line adds only when it prints a command's help (helpWithExamples):
// appending them to every description cost every command ≈ 0.1 ms of its
// start (docs/benchmarks.md).
func newCommandTree(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:                 "prose",
		Usage:                "a content-addressed, git-backed store for OpenProse world-models",
		Version:              version,
		HideVersion:          true,
		Writer:               stdout,
		ErrWriter:            &safeWriter{w: stderr},
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		Flags:                globalFlags(),
		Commands: []*cli.Command{
			initCommand(),
			checkCommand(),
			compileCommand(),
			runCommand(), triggerCommand(), serveCommand(), statusCommand(), inspectCommand(), testCommand(),
			upgradeCommand(),
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
			completionCommand(),
			helpCommand(),
			docsCommand(),
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
	// The own help command hides urfave/cli's, which would also drop --help.
	app.Flags = append(app.Flags, cli.HelpFlag)
	app.Commands = append(app.Commands, syncCommands()...)
	app.Commands = append(app.Commands, mergeDriverCommand())
	for _, c := range app.Commands {
		setUsageErrors(c, c.Name)
	}
	return app
}

// setUsageErrors gives every command the same usage habits: a flag error
// or an unknown subcommand is a usage error (exit 2) in our wording, and a
// command that declares no ArgsUsage refuses every positional argument.
func setUsageErrors(c *cli.Command, path string) {
	c.OnUsageError = func(ctx *cli.Context, err error, _ bool) error {
		return &exitError{code: 2, err: fmt.Errorf("%s: %v (see prose %s --help)", c.Name, err, path)}
	}
	if len(c.Subcommands) == 0 {
		// A command without subcommands has no "help" subcommand either:
		// `prose wiki search help` searches for the word help.
		c.HideHelpCommand = true
	}
	switch {
	case len(c.Subcommands) > 0:
		c.HideHelpCommand = true
		if c.Command("help") == nil {
			c.Subcommands = append(c.Subcommands, subHelpCommand(path))
		}
		c.Action = func(ctx *cli.Context) error {
			if ctx.Args().Present() {
				return usageErrorf("unknown command %q for prose %s (see prose %s --help)", ctx.Args().First(), path, path)
			}
			return cli.ShowSubcommandHelp(ctx)
		}
	case c.ArgsUsage == "" && c.Action != nil:
		action := c.Action
		c.Action = func(ctx *cli.Context) error {
			if ctx.Args().Present() {
				return usageErrorf("%s takes no arguments, got %q (see prose %s --help)", path, strings.Join(ctx.Args().Slice(), " "), path)
			}
			return action(ctx)
		}
	}
	for _, s := range c.Subcommands {
		setUsageErrors(s, path+" "+s.Name)
	}
}

// helpCommand is `prose help [COMMAND…]`: the help of the command named, or a
// usage error when there is none.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "show the commands, or one command's help",
		ArgsUsage: "[COMMAND [SUBCOMMAND]]",
		Action: func(c *cli.Context) error {
			return showHelp(c, c.Args().Slice())
		},
	}
}

// showHelp prints the help of the command named by names ("wiki",
// "search"), the program's own with none, or a usage error when there is
// no such command.
func showHelp(c *cli.Context, names []string) error {
	if len(names) == 0 {
		return cli.ShowAppHelp(c)
	}
	cmds, path := c.App.Commands, []string{}
	for _, name := range names {
		var found *cli.Command
		for _, cmd := range cmds {
			if cmd.HasName(name) && cmd.Name != "help" {
				found = cmd
			}
		}
		if found == nil {
			return usageErrorf("no command %q to show help for (see prose %s)", strings.Join(append(path, name), " "), strings.Join(append(path, "--help"), " "))
		}
		path, cmds = append(path, found.Name), found.Subcommands
	}
	return c.App.RunContext(c.Context, append(append([]string{c.App.Name}, path...), "--help"))
}

// versionFlag turns `prose --version` (after any global flags) into
// `prose version`.
func versionFlag(args []string) []string {
	for i := 1; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		if args[i] == "--version" {
			out := append(append([]string{}, args[:i]...), "version")
			return append(out, args[i+1:]...)
		}
	}
	return args
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
		if !known && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(name) > 1 && takesValue[name[:1]] {
			// A one-letter flag with its value attached: -n1 is -n 1.
			flags = append(flags, "-"+name[:1], name[1:])
			continue
		}
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
