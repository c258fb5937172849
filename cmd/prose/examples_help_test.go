package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// allCommands lists every command's path, those with subcommands too.
func allCommands(cmds []*cli.Command, path []string) [][]string {
	var out [][]string
	for _, c := range cmds {
		p := append(append([]string{}, path...), c.Name)
		out = append(out, p)
		out = append(out, allCommands(c.Subcommands, p)...)
	}
	return out
}

// TestHelpShowsTheExamplesOfTheWholeTree: a command line builds its tree
// without the examples and adds a command's when it prints its help
// (helpWithExamples); every help — `prose PATH --help`, `-h`, `prose help
// PATH` — is byte for byte the help of the tree that has them all from the
// start (newApp, the generated reference's), the examples included.
func TestHelpShowsTheExamplesOfTheWholeTree(t *testing.T) {
	inParallel(t)
	eager := newApp(io.Discard, io.Discard)
	withExamples := 0
	for _, path := range allCommands(eager.Commands, nil) {
		name := strings.Join(path, " ")
		if len(commandExamples[name]) > 0 {
			withExamples++
		}
		for _, args := range [][]string{append(append([]string{"prose"}, path...), "--help"), append(append([]string{"prose"}, path...), "-h"), append([]string{"prose", "help"}, path...)} {
			if path[len(path)-1] == "help" && args[1] == "help" {
				continue // `prose help help` is the help command's own help either way
			}
			var want, got, errs bytes.Buffer
			app := newApp(&want, io.Discard)
			if err := app.RunContext(context.Background(), args); err != nil {
				t.Fatalf("%s: the whole tree: %v", strings.Join(args, " "), err)
			}
			if code := run(args, &got, &errs); code != 0 {
				t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, errs.String())
			}
			if got.String() != want.String() {
				t.Fatalf("%s prints\n%s\nwhere the whole tree prints\n%s", strings.Join(args, " "), got.String(), want.String())
			}
			if ex := commandExamples[name]; len(ex) > 0 && (!strings.Contains(got.String(), "Examples:") || !strings.Contains(got.String(), ex[0])) {
				t.Fatalf("%s shows no examples:\n%s", strings.Join(args, " "), got.String())
			}
		}
	}
	if withExamples < 30 {
		t.Fatalf("only %d commands have examples; the walk may have missed the tree", withExamples)
	}
}

// A flag's line in a command's help states its default once, and never a
// default that says nothing: "(default: false)" on a switch, "(default:
// 0)" after a usage that already names the default.
func TestHelpStatesEachDefaultOnce(t *testing.T) {
	inParallel(t)
	app := newApp(io.Discard, io.Discard)
	lines := 0
	for _, path := range append(allCommands(app.Commands, nil), nil) {
		args := append(append([]string{"prose"}, path...), "--help")
		var out, errs bytes.Buffer
		if code := run(args, &out, &errs); code != 0 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, errs.String())
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "--") {
				continue
			}
			lines++
			if strings.Count(line, "(default:") > 1 || strings.HasSuffix(line, "(default: false)") || strings.HasSuffix(line, "(default: 0)") {
				t.Errorf("%s: %s", strings.Join(args, " "), strings.TrimSpace(line))
			}
		}
	}
	if lines < 100 {
		t.Fatalf("only %d flag lines in the whole tree's help: the walk missed it", lines)
	}
}
