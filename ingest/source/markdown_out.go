package source

import (
	"fmt"
	"strings"

	"github.com/prose-store/prose/internal/spaces"
)

// Markdown renders the document's outline as Markdown: the form prompts
// quote, whatever the source's format, and that Read(name, md, Markdown)
// reads back to the same sections, steps, lists, definitions, tables and
// code. Conversation turns become "**Role:** text" paragraphs holding the
// turn's own Markdown.
func (d *Document) Markdown() string {
	var sb strings.Builder
	sb.Grow(d.proseSize() + d.proseSize()/8 + 1024) // most of it, at once
	d.writeMarkdown(&sb)
	return sb.String()
}

// Quote is open, then the Markdown of d ended by one newline, then
// close: what strings.TrimRight(d.Markdown(), "\n") would give between
// them, built in one buffer (a 16 MiB source's quotation is made without
// a second copy of its Markdown beside it).
func (d *Document) Quote(open, close string) string {
	var sb strings.Builder
	sb.Grow(len(open) + d.proseSize() + d.proseSize()/8 + 1024 + len(close))
	sb.WriteString(open)
	d.writeMarkdown(&sb)
	s := sb.String()
	body := strings.TrimRight(s[len(open):], "\n")
	if len(s) == len(open)+len(body)+1 {
		sb.WriteString(close) // s stays as it is: the builder only appends
		return sb.String()
	}
	return s[:len(open)+len(body)] + "\n" + close
}

func (d *Document) writeMarkdown(sb *strings.Builder) {
	fmt.Fprintf(sb, "# %s\n", plainLine(d.Title))
	for i, s := range d.Sections {
		if s.Heading != "" && !(i == 0 && s.Level == 1 && s.Heading == d.Title) {
			fmt.Fprintf(sb, "\n%s %s\n", strings.Repeat("#", min(max(s.Level, 2), 6)), plainLine(s.Heading))
		}
		var prev BlockKind
		for _, b := range s.Blocks {
			if d.Kind == Conversation && b.Kind != Turn {
				continue // the structure of an answer is in its turn's text
			}
			sb.WriteString(listBreak(prev, b.Kind))
			sb.WriteString("\n")
			writeBlock(sb, b)
			prev = b.Kind
		}
	}
}

func writeBlock(sb *strings.Builder, b Block) {
	switch b.Kind {
	case Paragraph:
		sb.WriteString(oneLine(b.Text))
		sb.WriteByte('\n')
	case Quote:
		sb.WriteString("> ")
		sb.WriteString(oneLine(b.Text))
		sb.WriteByte('\n')
	case List:
		for _, it := range b.Items {
			sb.WriteString("- ")
			sb.WriteString(oneLine(it))
			sb.WriteByte('\n')
		}
	case Steps:
		for i, it := range b.Items {
			fmt.Fprintf(sb, "%d. %s\n", i+1, oneLine(it))
		}
	case Definitions:
		for _, df := range b.Defs {
			fmt.Fprintf(sb, "- **%s**:", plainLine(df.Term))
			if m := oneLine(df.Meaning); m != "" {
				sb.WriteString(" " + m)
			}
			sb.WriteByte('\n')
			// The description's later blocks, inside its item.
			var prev BlockKind
			for _, x := range df.Body {
				var bb strings.Builder
				bb.WriteString(listBreak(prev, x.Kind))
				writeBlock(&bb, x)
				sb.WriteString("\n")
				indent(sb, bb.String(), "  ")
				prev = x.Kind
			}
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
	s = spaces.Shared(s) // clean(s), without a copy of a clean text
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

// MarkdownParts is the outline of Markdown cut, section by section, into
// parts of at most about limit bytes each, in order, for a model whose
// prompt cannot hold the whole: a part holds whole sections where they
// fit, a longer section goes on in the next part (which repeats its
// heading, marked "(continued)"), and a block longer than a part is cut
// between its lines. The first part starts with the title. Joined, the
// parts say what Markdown says.
func (d *Document) MarkdownParts(limit int) []string {
	limit = max(limit, 1024)
	var parts []string
	var cur strings.Builder
	fmt.Fprintf(&cur, "# %s\n", plainLine(d.Title))
	push := func() {
		if strings.TrimSpace(cur.String()) != "" {
			parts = append(parts, cur.String())
		}
		cur.Reset()
	}
	cont := ""
	for i, s := range d.Sections {
		cont = ""
		if s.Heading != "" && !(i == 0 && s.Level == 1 && s.Heading == d.Title) {
			head := strings.Repeat("#", min(max(s.Level, 2), 6)) + " " + plainLine(s.Heading)
			if cur.Len()+len(head)+2 > limit {
				push()
			}
			cur.WriteString("\n" + head + "\n")
			if len(head) > limit/4 {
				head = cutAt(head, limit/4)
			}
			cont = "\n" + head + " (continued)\n"
		}
		var prev BlockKind
		for _, b := range s.Blocks {
			if d.Kind == Conversation && b.Kind != Turn {
				continue // the structure of an answer is in its turn's text
			}
			var bb strings.Builder
			bb.WriteString(listBreak(prev, b.Kind))
			bb.WriteString("\n")
			writeBlock(&bb, b)
			prev = b.Kind
			text := bb.String()
			for text != "" {
				room := limit - cur.Len()
				if len(text) <= room {
					cur.WriteString(text)
					break
				}
				if cur.Len() > len(cont) && (len(text) <= limit-len(cont) || room < limit/4) {
					// It fits a part of its own, or little is left of this one.
					push()
					cur.WriteString(cont)
					continue
				}
				// A block longer than a part: cut between its lines.
				piece := cutAt(text, room)
				if n := strings.LastIndexByte(piece, '\n'); n > 0 {
					piece = piece[:n+1]
				}
				cur.WriteString(piece)
				text = text[len(piece):]
				push()
				cur.WriteString(cont)
			}
		}
	}
	push()
	return parts
}

// cutAt is the longest prefix of s of at most n bytes (n > 0) that ends
// between characters, and at least one character.
func cutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 1)
	for n > 1 && s[n]&0xC0 == 0x80 {
		n--
	}
	if s[n]&0xC0 == 0x80 { // n == 1 inside a character: take it whole
		n = 1
		for n < len(s) && s[n]&0xC0 == 0x80 {
			n++
		}
	}
	return s[:n]
}

// indent writes text with each line but an empty one after prefix.
func indent(sb *strings.Builder, text, prefix string) {
	for text != "" {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line = text[:i+1]
		}
		text = text[len(line):]
		if line != "\n" {
			sb.WriteString(prefix)
		}
		sb.WriteString(line)
	}
}

// listBreak is what ends a list before a list of the same marker (a
// list, or definitions, after a list or definitions; steps after steps),
// which Markdown would read as one list with it: an empty comment.
func listBreak(prev, next BlockKind) string {
	bullet := func(k BlockKind) bool { return k == List || k == Definitions }
	if bullet(prev) && bullet(next) || prev == Steps && next == Steps {
		return "\n<!-- -->\n"
	}
	return ""
}
