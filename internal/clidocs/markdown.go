package clidocs

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Markdown renders the whole tree as one page: a contents list, the global
// flags, then every command with its usage, description, flags and examples.
// regen is the command that remakes the page, named in its header.
func Markdown(app *cli.App, regen string) string {
	var b strings.Builder
	nodes := Walk(app)
	must(&b, "# %s command reference\n\n", app.Name)
	must(&b, "<!-- Generated from the command tree by `%s`; do not edit by hand. -->\n\n", regen)
	must(&b, "`%s` is %s. Every command below prints the same text with `--help`\n", app.Name, markdownEscape(app.Usage))
	must(&b, "(`%s help COMMAND…` and `%s COMMAND help SUBCOMMAND` too). Exit codes: 0 success,\n", app.Name, app.Name)
	b.WriteString("1 the command ran and found failures (or failed), 2 a usage error, 130/143 interrupted.\n\n")
	b.WriteString("## Commands\n\n")
	for _, n := range nodes {
		indent := strings.Repeat("  ", len(n.Path)-1)
		must(&b, "%s- [`%s`](#%s) — %s\n", indent, n.Name(app.Name), anchor(n.Name(app.Name)), markdownEscape(n.Cmd.Usage))
	}
	b.WriteString("\n## Global flags\n\n")
	b.WriteString("These go before or after the command name: `prose --json log` and `prose log --json` are the same.\n\n")
	writeFlags(&b, Flags(app.Flags))
	for _, n := range nodes {
		c := n.Cmd
		must(&b, "\n## %s\n\n", n.Name(app.Name))
		must(&b, "%s.\n\n", markdownEscape(strings.TrimSuffix(upperFirst(c.Usage), ".")))
		if len(c.Aliases) > 0 {
			must(&b, "Also spelled: `%s`.\n\n", strings.Join(c.Aliases, "`, `"))
		}
		must(&b, "```\n%s\n```\n\n", Synopsis(app.Name, n))
		text, examples := SplitDescription(c.Description)
		if text != "" {
			b.WriteString(markdownText(text) + "\n\n")
		}
		if subs := Visible(c.Subcommands); len(subs) > 0 {
			b.WriteString("Commands:\n\n")
			for _, s := range subs {
				full := n.Name(app.Name) + " " + s.Name
				must(&b, "- [`%s`](#%s) — %s\n", s.Name, anchor(full), markdownEscape(s.Usage))
			}
			b.WriteString("\n")
		}
		if fl := Flags(c.Flags); len(fl) > 0 {
			b.WriteString("Flags:\n\n")
			writeFlags(&b, fl)
			b.WriteString("\n")
		}
		if len(examples) > 0 {
			b.WriteString("Examples:\n\n```sh\n")
			for _, e := range examples {
				b.WriteString(e + "\n")
			}
			b.WriteString("```\n")
		}
	}
	return b.String()
}

func writeFlags(b *strings.Builder, flags []Flag) {
	for _, f := range flags {
		line := "- `" + f.Spelled() + "` — " + markdownEscape(f.Usage)
		if f.Default != "" {
			line += " (default: `" + f.Default + "`)"
		}
		b.WriteString(line + "\n")
	}
}

// markdownText keeps a description's line structure: lines that are
// indented (tables, commands) become a code block, the others a paragraph.
func markdownText(s string) string {
	var out []string
	inCode := false
	for _, l := range strings.Split(s, "\n") {
		code := strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "\t")
		if code && !inCode {
			out = append(out, "", "```")
			inCode = true
		} else if !code && inCode {
			out = append(out, "```", "")
			inCode = false
		}
		if code {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(l, "  "), "\t"))
		} else {
			out = append(out, markdownEscape(l))
		}
	}
	if inCode {
		out = append(out, "```")
	}
	return strings.Join(out, "\n")
}

// markdownEscape keeps text as it reads in the help: no emphasis, no HTML,
// no heading or list made by a character at the start of a line.
func markdownEscape(l string) string {
	l = strings.NewReplacer(`\`, `\\`, "*", `\*`, "<", `&lt;`).Replace(l)
	if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "+ ") {
		l = `\` + l
	}
	return l
}

// anchor is the GitHub heading anchor of "prose wiki search".
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
