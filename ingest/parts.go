package ingest

import (
	"fmt"
	"strings"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/model"
)

// A model is shown a source within its prompt budget. A source whose
// quotation fits half the budget is quoted whole, as it always was; a
// longer one (a split document of up to source.MaxSize) is never sent
// whole: the analysis prompt quotes its outline — the title and its
// headings, as many as fit — and generation runs once per part, each
// prompt quoting one part of the source, section by section
// (source.Document.MarkdownParts), with the plan. prose's own offline
// engine reads the whole source from one prompt, as before: it runs
// here, and its pages are bounded by the source limits.

// quotesWhole reports whether prompts quote a source whole: for the
// offline engine, and for a replay of its recording (whose requests were
// built so). A replay's tool calls are still checked as any model's
// (run.trusted): a recording is a file anyone may have written.
func (r *run) quotesWhole() bool {
	if r.trusted() {
		return true
	}
	return r.opt.recordedModel == model.Offline
}

// minSourceRoom is the least a quoted part may take, whatever the budget.
const minSourceRoom = 4096

// sourceRoom is the bytes a quoted source (or one part of it) may take in
// a prompt: half the budget, about four bytes a token.
func (r *run) sourceRoom() int {
	return max(r.opt.Budget*4/2, minSourceRoom)
}

// quoteParts is the source as generation prompts quote it: one quotation
// of the whole, or (past sourceRoom, for a model other than the offline
// engine) one per part, each saying which part it is.
func (r *run) quoteParts(d *source.Document) []string {
	if r.quotesWhole() {
		return []string{quoteSource(d)}
	}
	room := r.sourceRoom()
	md := d.Markdown()
	if len(md) <= room-512 {
		return []string{quoteWith(d, md, "")}
	}
	parts := d.MarkdownParts(room - 512)
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = quoteWith(d, p, fmt.Sprintf(` part="%d" parts="%d"`, i+1, len(parts)))
	}
	return out
}

// quoteAnalysed is the source as the analysis prompt quotes it: whole
// when it fits, else its outline (the title and the headings that fit
// sourceRoom, then how many more there are), marked outline="true".
func (r *run) quoteAnalysed(d *source.Document) string {
	if r.quotesWhole() {
		return quoteSource(d)
	}
	room := r.sourceRoom()
	md := d.Markdown()
	if len(md) <= room-512 {
		return quoteWith(d, md, "")
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s\n", oneLine(d.Title))
	left := 0
	for i, s := range d.Sections {
		if s.Heading == "" || i == 0 && s.Level == 1 && s.Heading == d.Title {
			continue
		}
		line := strings.Repeat("#", min(max(s.Level, 2), 6)) + " " + oneLine(s.Heading) + "\n"
		if left > 0 || sb.Len()+len(line) > room-1024 {
			left++
			continue
		}
		sb.WriteString("\n" + line)
	}
	if left > 0 {
		fmt.Fprintf(&sb, "\n(and %d more headings)\n", left)
	}
	n := len(d.MarkdownParts(room - 512))
	fmt.Fprintf(&sb, "\n(The source's text, %d bytes, is too long for one prompt: this is its outline. Generation is shown it in %d parts, one prompt each.)\n", len(md), n)
	return quoteWith(d, sb.String(), fmt.Sprintf(` outline="true" parts="%d"`, n))
}

// quoteWith quotes md, the Markdown of d or a part of it, in a <source>
// field whose attributes name it (and, after attrs, which part it is).
func quoteWith(d *source.Document, md, attrs string) string {
	return quoteOpen(d, attrs) + strings.TrimRight(md, "\n") + "\n</source>"
}

// quoteOpen is the opening of a quotation of d: its <source> tag.
func quoteOpen(d *source.Document, attrs string) string {
	return "<" + fmt.Sprintf(`source name="%s" kind="%s" id="%s"%s`, plan.Attr(d.Name), d.Kind, d.ID, attrs) + ">\n"
}

// oneLine is s on one line, for a heading in an outline.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
