package source

import (
	"fmt"
	"strings"
)

// Markdown renders the document's outline as Markdown: the form prompts
// quote, whatever the source's format, and that Read(name, md, Markdown)
// reads back to the same sections, steps, lists, definitions, tables and
// code. Conversation turns become "**Role:** text" paragraphs holding the
// turn's own Markdown.
func (d *Document) Markdown() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s\n", plainLine(d.Title))
	for i, s := range d.Sections {
		if s.Heading != "" && !(i == 0 && s.Level == 1 && s.Heading == d.Title) {
			fmt.Fprintf(&sb, "\n%s %s\n", strings.Repeat("#", min(max(s.Level, 2), 6)), plainLine(s.Heading))
		}
		for _, b := range s.Blocks {
			if d.Kind == Conversation && b.Kind != Turn {
				continue // the structure of an answer is in its turn's text
			}
			sb.WriteString("\n")
			writeBlock(&sb, b)
		}
	}
	return sb.String()
}

func writeBlock(sb *strings.Builder, b Block) {
	switch b.Kind {
	case Paragraph:
		sb.WriteString(oneLine(b.Text) + "\n")
	case Quote:
		sb.WriteString("> " + oneLine(b.Text) + "\n")
	case List:
		for _, it := range b.Items {
			sb.WriteString("- " + oneLine(it) + "\n")
		}
	case Steps:
		for i, it := range b.Items {
			fmt.Fprintf(sb, "%d. %s\n", i+1, oneLine(it))
		}
	case Definitions:
		for _, df := range b.Defs {
			fmt.Fprintf(sb, "- **%s**: %s\n", plainLine(df.Term), oneLine(df.Meaning))
		}
	case Table:
		cols := len(b.Header)
		for _, r := range b.Rows {
			cols = max(cols, len(r))
		}
		if cols == 0 {
			return
		}
		row := func(cells []string) {
			sb.WriteString("|")
			for i := 0; i < cols; i++ {
				c := ""
				if i < len(cells) {
					c = strings.ReplaceAll(clean(cells[i]), "|", `\|`)
				}
				sb.WriteString(" " + c + " |")
			}
			sb.WriteString("\n")
		}
		row(b.Header)
		sb.WriteString("|" + strings.Repeat(" --- |", cols) + "\n")
		for _, r := range b.Rows {
			row(r)
		}
	case Code:
		fence := "```"
		for strings.Contains(b.Text, fence) {
			fence += "`"
		}
		fmt.Fprintf(sb, "%s%s\n%s\n%s\n", fence, codeLang(b.Lang), b.Text, fence)
	case Turn:
		role := b.Role
		if role != "" {
			role = EscapeText(clean(strings.ToUpper(role[:1]) + role[1:]))
		}
		sep := " "
		if first, _, _ := strings.Cut(strings.TrimSpace(b.Text), "\n"); strings.HasPrefix(first, "- ") || strings.HasPrefix(first, "* ") ||
			strings.HasPrefix(first, "#") || strings.HasPrefix(first, "```") || strings.HasPrefix(first, "|") || numbered().MatchString(first) {
			sep = "\n\n" // a list or a heading must start its own block
		}
		fmt.Fprintf(sb, "**%s:**%s%s\n", role, sep, b.Text)
	}
}

// oneLine is a block's text (inline Markdown) on one line, with a
// character that would start a block of its own there (a heading, list
// item, rule or quote) escaped.
func oneLine(s string) string {
	s = clean(s)
	switch {
	case s == "":
		return s
	case strings.IndexByte("#-+=>|*_~:", s[0]) >= 0:
		return "\\" + s
	}
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return s[:i] + "\\" + s[i:]
	}
	return s
}

// plainLine is plain text (a title, heading or term) as inline Markdown on
// one line.
func plainLine(s string) string { return oneLine(EscapeText(clean(s))) }

// codeLang is a code block's language as a fence's info string: its first
// word, without backticks (which would end the fence).
func codeLang(lang string) string {
	f := strings.Fields(strings.ReplaceAll(lang, "`", ""))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
