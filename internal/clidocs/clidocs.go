// Package clidocs renders the reference documents of a command tree: a
// Markdown page, roff man pages and bash, zsh and fish completion scripts.
// Everything it writes is derived from the tree alone (names, usage lines,
// descriptions, flags), so the same tree gives the same bytes.
package clidocs

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// Node is one command of the tree with its full path ("wiki search").
type Node struct {
	Path []string
	Cmd  *cli.Command
}

// Name is the command line that names the command: "prose wiki search".
func (n Node) Name(app string) string {
	return strings.Join(append([]string{app}, n.Path...), " ")
}

// Walk lists the visible commands of app depth-first in the order the help
// shows them; hidden commands (and their subcommands) are left out.
func Walk(app *cli.App) []Node {
	var out []Node
	var walk func(cmds []*cli.Command, path []string)
	walk = func(cmds []*cli.Command, path []string) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(append([]string{}, path...), c.Name)
			out = append(out, Node{Path: p, Cmd: c})
			walk(c.Subcommands, p)
		}
	}
	walk(app.Commands, nil)
	return out
}

// Visible is cmds without the hidden ones.
func Visible(cmds []*cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cmds {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

// Flag is what the documents say of one flag.
type Flag struct {
	Names   []string // long first: "quiet", "q"
	Value   string   // the placeholder of its value, "" for a switch
	Usage   string   // the sentence, the placeholder's backquotes removed
	Default string   // the default shown by the help, "" when none
}

// Spelled is the flag as written on a command line: "--quiet, -q" or
// "--into FOLDER".
func (f Flag) Spelled() string {
	var names []string
	for _, n := range f.Names {
		if len(n) == 1 {
			names = append(names, "-"+n)
		} else {
			names = append(names, "--"+n)
		}
	}
	s := strings.Join(names, ", ")
	if f.Value != "" {
		s += " " + f.Value
	}
	return s
}

// Flags describes flags in the order given, the help flag left out.
func Flags(flags []cli.Flag) []Flag {
	var out []Flag
	for _, f := range flags {
		if f == cli.HelpFlag {
			continue
		}
		df, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		names := append([]string{}, f.Names()...)
		sort.SliceStable(names, func(i, j int) bool { return len(names[i]) > 1 && len(names[j]) == 1 })
		placeholder, usage := unquoteUsage(df.GetUsage())
		fl := Flag{Names: names, Usage: usage}
		if df.TakesValue() {
			fl.Value = placeholder
			if fl.Value == "" {
				fl.Value = valueName(f)
			}
			d := df.GetDefaultText()
			if d == "" {
				d = df.GetValue()
			}
			if d = strings.Trim(d, `"`); d != "" && d != "0" && d != "[]" {
				fl.Default = d
			}
		}
		if env := df.GetEnvVars(); len(env) > 0 && !strings.Contains(fl.Usage, "$"+env[0]) {
			fl.Usage += " (also $" + strings.Join(env, ", $") + ")"
		}
		out = append(out, fl)
	}
	return out
}

// valueName is the placeholder of a flag's value when its usage names
// none: its kind.
func valueName(f cli.Flag) string {
	switch f.(type) {
	case *cli.DurationFlag:
		return "DURATION"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "N"
	case *cli.StringSliceFlag:
		return "VALUE"
	}
	return "VALUE"
}

// Synopsis is the usage line of a command: "prose wiki search [flags] QUERY".
func Synopsis(app string, n Node) string {
	s := n.Name(app)
	if len(Visible(n.Cmd.Subcommands)) > 0 {
		return s + " COMMAND [flags]"
	}
	if len(Flags(n.Cmd.Flags)) > 0 {
		s += " [flags]"
	}
	if n.Cmd.ArgsUsage != "" {
		s += " " + n.Cmd.ArgsUsage
	}
	return s
}

// SplitDescription separates a command's description into its prose and its
// examples: the lines after an "Examples:" line, each "prose …" command
// with the comment lines ("# …") that come before it.
func SplitDescription(desc string) (text string, examples []string) {
	before, after, found := strings.Cut(desc, "Examples:\n")
	if !found {
		return strings.TrimSpace(desc), nil
	}
	for _, l := range strings.Split(after, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			examples = append(examples, l)
		}
	}
	return strings.TrimSpace(before), examples
}

// firstSentence trims a usage line to what a completion menu shows.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 72 {
		cut := strings.LastIndex(s[:72], " ")
		if cut < 40 {
			cut = 72
		}
		s = s[:cut] + "…"
	}
	return s
}

func must(b *strings.Builder, format string, a ...any) {
	fmt.Fprintf(b, format, a...)
}

// unquoteUsage splits a flag's usage into the placeholder named between
// backquotes (`FILE`) and the sentence without the backquotes, as the help
// does.
func unquoteUsage(usage string) (string, string) {
	start := strings.IndexByte(usage, '`')
	if start < 0 {
		return "", usage
	}
	end := strings.IndexByte(usage[start+1:], '`')
	if end < 0 {
		return "", usage
	}
	name := usage[start+1 : start+1+end]
	return name, usage[:start] + name + usage[start+2+end:]
}
