package clidocs

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// ManPages renders the man pages of the tree, keyed by file name:
// APP.1, the overview, and APP-COMMAND.1 for each top-level command with
// its subcommands. The pages carry no date or version, so they change only
// when the tree does.
func ManPages(app *cli.App, manual string) map[string]string {
	pages := map[string]string{}
	var top []Node
	for _, n := range Walk(app) {
		if len(n.Path) == 1 {
			top = append(top, n)
		}
	}
	pages[app.Name+".1"] = overviewPage(app, manual, top)
	all := Walk(app)
	for _, t := range top {
		var b strings.Builder
		name := app.Name + "-" + t.Cmd.Name
		header(&b, name, manual)
		b.WriteString(".SH NAME\n")
		must(&b, "%s \\- %s\n", roffText(name), roffText(t.Cmd.Usage))
		b.WriteString(".SH SYNOPSIS\n")
		for _, n := range all {
			if n.Path[0] == t.Cmd.Name && len(Visible(n.Cmd.Subcommands)) == 0 {
				must(&b, ".B %s\n.br\n", roffText(Synopsis(app.Name, n)))
			}
		}
		for _, n := range all {
			if n.Path[0] != t.Cmd.Name {
				continue
			}
			if len(n.Path) == 1 {
				b.WriteString(".SH DESCRIPTION\n")
			} else {
				must(&b, ".SH %s\n", roffText(strings.ToUpper(strings.Join(n.Path, " "))))
				must(&b, ".B %s\n.PP\n%s.\n", roffText(Synopsis(app.Name, n)), roffText(strings.TrimSuffix(upperFirst(n.Cmd.Usage), ".")))
			}
			commandBody(&b, n)
		}
		b.WriteString(".SH \"GLOBAL FLAGS\"\n")
		must(&b, "See\n.BR %s (1).\n", app.Name)
		seeAlso(&b, app.Name, "")
		pages[name+".1"] = b.String()
	}
	return pages
}

func overviewPage(app *cli.App, manual string, top []Node) string {
	var b strings.Builder
	header(&b, app.Name, manual)
	b.WriteString(".SH NAME\n")
	must(&b, "%s \\- %s\n", app.Name, roffText(app.Usage))
	b.WriteString(".SH SYNOPSIS\n")
	must(&b, ".B %s\n[\\fIglobal flags\\fR] \\fICOMMAND\\fR [\\fIflags\\fR] [\\fIARGS\\fR]\n", app.Name)
	b.WriteString(".SH DESCRIPTION\n")
	must(&b, "Each command prints its help with \\fB\\-\\-help\\fR, \\fB%s help COMMAND\\fR or\n\\fB%s COMMAND help SUBCOMMAND\\fR; each has a page of its own, \\fB%s\\-COMMAND\\fR(1).\n", app.Name, app.Name, app.Name)
	b.WriteString(".SH COMMANDS\n")
	for _, t := range top {
		must(&b, ".TP\n.BR %s\\-%s (1)\n%s\n", app.Name, roffText(t.Cmd.Name), roffText(t.Cmd.Usage))
	}
	b.WriteString(".SH \"GLOBAL FLAGS\"\n")
	b.WriteString("They may be written before or after the command name.\n")
	flagList(&b, Flags(app.Flags))
	b.WriteString(".SH \"EXIT STATUS\"\n")
	b.WriteString(".TP\n0\nsuccess\n.TP\n1\nthe command ran and found failures, or failed\n.TP\n2\na usage error\n.TP\n130, 143\ninterrupted by SIGINT or SIGTERM; the vault is as it was before the command\n")
	seeAlso(&b, app.Name, "docs/cli.md")
	return b.String()
}

func header(b *strings.Builder, name, manual string) {
	must(b, ".TH %s 1 \"\" \"\" \"%s\"\n", strings.ToUpper(roffText(name)), manual)
	b.WriteString(".\\\" Generated from the command tree; do not edit by hand.\n")
}

func commandBody(b *strings.Builder, n Node) {
	text, examples := SplitDescription(n.Cmd.Description)
	if len(n.Path) == 1 {
		must(b, "%s.\n", roffText(strings.TrimSuffix(upperFirst(n.Cmd.Usage), ".")))
	}
	if text != "" {
		b.WriteString(".PP\n" + roffBlock(text))
	}
	if fl := Flags(n.Cmd.Flags); len(fl) > 0 {
		b.WriteString(".PP\nFlags:\n")
		flagList(b, fl)
	}
	if len(examples) > 0 {
		b.WriteString(".PP\nExamples:\n.PP\n.RS 4\n.nf\n")
		for _, e := range examples {
			b.WriteString(roffLine(e) + "\n")
		}
		b.WriteString(".fi\n.RE\n")
	}
}

func flagList(b *strings.Builder, flags []Flag) {
	for _, f := range flags {
		must(b, ".TP\n\\fB%s\\fR\n%s", roffText(f.Spelled()), roffLine(f.Usage))
		if f.Default != "" {
			must(b, " (default: %s)", roffText(f.Default))
		}
		b.WriteString("\n")
	}
}

func seeAlso(b *strings.Builder, app, doc string) {
	b.WriteString(".SH \"SEE ALSO\"\n")
	if doc != "" {
		must(b, "%s, the same reference as one Markdown page.\n", roffText(doc))
	} else {
		must(b, ".BR %s (1)\n", app)
	}
}

// roffBlock renders a description: indented lines (tables, commands) as
// no-fill text, the other lines as filled paragraphs.
func roffBlock(s string) string {
	var b strings.Builder
	inCode := false
	for _, l := range strings.Split(s, "\n") {
		code := strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "\t")
		switch {
		case code && !inCode:
			b.WriteString(".RS 4\n.nf\n")
			inCode = true
		case !code && inCode:
			b.WriteString(".fi\n.RE\n")
			inCode = false
		}
		if strings.TrimSpace(l) == "" {
			b.WriteString(".PP\n")
			continue
		}
		if code {
			b.WriteString(roffLine(strings.TrimLeft(l, " \t")) + "\n")
		} else {
			b.WriteString(roffLine(l) + "\n")
		}
	}
	if inCode {
		b.WriteString(".fi\n.RE\n")
	}
	return b.String()
}

// roffText escapes text for roff: backslashes and hyphens; a line of it
// must not start with a control character.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
		} else {
			// Any roff reads it, whatever its input encoding.
			fmt.Fprintf(&b, `\[u%04X]`, r)
		}
	}
	return b.String()
}

func roffLine(s string) string {
	s = roffText(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
