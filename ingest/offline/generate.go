package offline

import (
	"encoding/json"
	"fmt"
	"github.com/prose-store/prose/internal/lazyre"
	"github.com/prose-store/prose/internal/spaces"
	"html"
	"path"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/render"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/model"
)

// PageView is what the read_page tool returns, as far as the engine reads
// it.
type PageView struct {
	Path     string            `json:"path"`
	Template string            `json:"template"`
	Meta     map[string]any    `json:"meta"`
	Slots    map[string]string `json:"slots"`
}

// generate writes the planned pages. First it reads every page the plan
// updates (to learn whether this source wrote it); then it writes; then it
// ends the turn.
func (e Engine) generate(prompt string, results []model.ToolResult, turns int) (model.Response, error) {
	w, err := readWorkspace(prompt)
	if err != nil {
		return model.Response{}, err
	}
	text, _, _ := plan.Extract(prompt, "analysis")
	p, err := plan.Parse(text)
	if err != nil {
		return model.Response{}, fmt.Errorf("the offline engine cannot read the prompt's analysis: %w", err)
	}
	var updates []string
	for _, pg := range p.Pages {
		if pg.Action == plan.Update {
			updates = append(updates, pg.Path)
		}
	}
	readTurn := len(updates) > 0
	existing := map[string]PageView{}
	for _, r := range results {
		var v PageView
		if !r.IsError && json.Unmarshal([]byte(r.Content), &v) == nil && v.Path != "" && v.Meta != nil {
			existing[v.Path] = v
		}
	}
	switch {
	case turns == 0 && readTurn:
		var cs []model.ToolCall
		for _, u := range updates {
			cs = append(cs, call(plan.ToolReadPage, plan.PathArgs{Path: u}))
		}
		return calls(cs), nil
	case turns == 0 || turns == 1 && readTurn:
		return calls(w.writes(p, existing)), nil
	}
	var review []plan.ReviewItem
	for _, f := range failures(results) {
		review = append(review, plan.ReviewItem{Kind: "tool-error", Detail: f})
	}
	review = append(review, w.conflicts(p, existing)...)
	return end(fmt.Sprintf("Wrote %d pages from %s.", len(p.Pages), w.doc.Title), review), nil
}

// conflicts asks for review where this source wrote into a page another
// source already wrote (a term both define), saying what it did there.
func (w *workspace) conflicts(p *plan.Plan, existing map[string]PageView) []plan.ReviewItem {
	cands := w.candidateIndex()
	var out []plan.ReviewItem
	for _, pg := range p.Pages {
		if pg.Action != plan.Update {
			continue
		}
		v := existing[pg.Path]
		srcs := metaStrings(v.Meta, "sources")
		if len(srcs) == 0 || contains(srcs, w.sourceID) {
			continue
		}
		c, ok := cands.find(pg)
		if !ok {
			continue
		}
		c.page = pg
		what, of := "definition", "term"
		if c.kind != "definition" {
			what, of = "word", "page"
		}
		detail := fmt.Sprintf("%s (the %s) was written from another source; %s says the same, so nothing was added.", pg.Title, of, w.doc.Title)
		if _, ok := w.merge(c, v); ok {
			detail = fmt.Sprintf("%s (the %s) was written from another source; the %s from %s was added after what the page already said: check that the two agree.", pg.Title, of, what, w.doc.Title)
		}
		out = append(out, plan.ReviewItem{Page: pg.Path, Kind: "merge", Detail: detail})
	}
	return out
}

// candIndex finds the candidate a planned page was made from by the page's
// identity, its origin: one section can give several procedures of one
// title (three numbered lists under one heading), each from its own list.
// A plan page whose origin matches none (a plan the engine did not make
// itself) is found by title.
type candIndex struct{ byKey, byTitle map[string]candidate }

func (w *workspace) candidateIndex() candIndex {
	ix := candIndex{byKey: map[string]candidate{}, byTitle: map[string]candidate{}}
	for _, c := range w.candidates() {
		ix.byKey[candKey(c.page)] = c
		if _, ok := ix.byTitle[c.page.Title]; !ok {
			ix.byTitle[c.page.Title] = c
		}
	}
	return ix
}

func (ix candIndex) find(pg plan.Page) (candidate, bool) {
	if c, ok := ix.byKey[candKey(pg)]; ok {
		return c, true
	}
	c, ok := ix.byTitle[pg.Title]
	return c, ok
}

// candKey is what the pipeline keeps of a candidate's origin (ingest's
// originOf qualifies "#s-x" as "NAME#s-x/procedure"): a term's origin,
// the source page, or a section's anchor with its template.
func candKey(pg plan.Page) string {
	o := pg.Origin
	switch {
	case plan.IsTermOrigin(o):
		return o
	case pg.Template == "source":
		return "source"
	}
	o = plan.Derived(o, pg.Template)
	if i := strings.LastIndexByte(plan.Underived(o), '#'); i >= 0 {
		return o[i:]
	}
	return "title:" + pg.Title
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writes are the tool calls that write the plan's pages.
func (w *workspace) writes(p *plan.Plan, existing map[string]PageView) []model.ToolCall {
	cands := w.candidateIndex()
	var cs []model.ToolCall
	for _, pg := range p.Pages {
		c, ok := cands.find(pg)
		if !ok {
			continue // a plan the engine did not make: nothing to say
		}
		c.page = pg
		slots := w.slots(c)
		// A page only this source wrote is rewritten; a page other sources
		// wrote too gets this source's word added once.
		mine := true
		v, had := existing[pg.Path]
		if had && pg.Action == plan.Update {
			srcs := metaStrings(v.Meta, "sources")
			mine = len(srcs) == 0 || len(srcs) == 1 && srcs[0] == w.sourceID || metaString(v.Meta, metaMark) == w.mark
		}
		switch {
		case pg.Action == plan.Create:
			cs = append(cs, call(plan.ToolNewPage, plan.NewPageArgs{Path: pg.Path, Template: pg.Template, Title: pg.Title}))
		case !mine:
			if call, ok := w.merge(c, v); ok {
				cs = append(cs, call)
			}
			continue
		}
		if had {
			// What other sources added to the page stays after this
			// source's own text.
			main := mainSlot(pg.Template)
			if others := othersAdded(v.Slots[main], w.mark); others != "" {
				if slots[main] != "" {
					slots[main] += "\n"
				}
				slots[main] += others
			}
		}
		for _, id := range slotOrder(pg.Template) {
			if h, ok := slots[id]; ok && (h != "" || had && strings.TrimSpace(v.Slots[id]) != "") {
				cs = append(cs, call(plan.ToolWriteSlot, plan.SlotArgs{Path: pg.Path, Slot: id, HTML: h}))
			}
		}
		meta := map[string]any{"tags": w.tags(c)}
		if c.sec != nil && c.sec.Heading != "" {
			meta["source_section"] = c.sec.Heading
		}
		meta["source_kind"] = string(w.doc.Kind)
		meta[metaMark] = w.mark
		cs = append(cs, call(plan.ToolSetMeta, plan.SetMetaArgs{Path: pg.Path, Updates: meta}))
	}
	return cs
}

// metaMark is the meta key naming, by its mark, the source that wrote a
// page (the others add marked paragraphs to it).
const metaMark = "source_mark"

func metaString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// othersAdded are the paragraphs other sources added to a slot (marked
// with a class other than mark), in order.
func othersAdded(h, mark string) string {
	const open = `<p class="from-`
	var out []string
	for rest := h; ; {
		i := strings.Index(rest, open)
		if i < 0 {
			break
		}
		rest = rest[i:]
		end := strings.Index(rest, "</p>")
		if end < 0 {
			break
		}
		end += len("</p>")
		if !strings.HasPrefix(rest, `<p class="`+mark+`">`) {
			out = append(out, rest[:end])
		}
		rest = rest[end:]
	}
	return strings.Join(out, "\n")
}

// sourceMark is the class marking what the source named name adds to a
// page other sources wrote (plan.SourceMark).
func sourceMark(name string) string { return plan.SourceMark(name) }

// merge is the call that puts what this source says on a page other
// sources wrote (c.page, as v shows it): this source's marked paragraph
// replaced when an earlier version of the source added one, else appended;
// no call when the page already says it.
func (w *workspace) merge(c candidate, v PageView) (model.ToolCall, bool) {
	pg := c.page
	slot := mainSlot(pg.Template)
	said := c.def.Meaning
	open := fmt.Sprintf(`<p class="%s">`, w.mark)
	add := fmt.Sprintf("%s%s: %s</p>", open, w.sourceLink(c), linkify(c.def.Meaning, pg.Path, pg.Links))
	if c.kind != "definition" {
		said = w.doc.Title
		add = fmt.Sprintf("%sSee also %s.</p>", open, w.sourceLink(c))
	}
	cur := v.Slots[slot]
	if i := strings.Index(cur, open); i >= 0 {
		// What an earlier version of this source added: replaced, never
		// added a second time.
		end := strings.Index(cur[i:], "</p>")
		if end < 0 {
			end = len(cur) - i
		} else {
			end += len("</p>")
		}
		if next := cur[:i] + add + cur[i+end:]; next != cur {
			return call(plan.ToolWriteSlot, plan.SlotArgs{Path: pg.Path, Slot: slot, HTML: next}), true
		}
		return model.ToolCall{}, false
	}
	// Said already, however the page cases it (a definition starts with a
	// capital there).
	if strings.Contains(strings.ToLower(plain(strings.Join(slotValues(v.Slots), " "))), strings.ToLower(plain(source.InlineHTML(said)))) {
		return model.ToolCall{}, false
	}
	return call(plan.ToolAppendSlot, plan.SlotArgs{Path: pg.Path, Slot: slot, HTML: add}), true
}

func slotValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}

func metaStrings(m map[string]any, key string) []string {
	var out []string
	switch v := m[key].(type) {
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	case string:
		out = append(out, v)
	}
	return out
}

func mainSlot(template string) string {
	switch template {
	case "entity":
		return "description"
	case "source":
		return "pages"
	case "procedure":
		return "pitfalls"
	}
	return "body"
}

func slotOrder(template string) []string {
	switch template {
	case "source":
		return []string{"citation", "abstract", "key_points", "pages", "excerpts"}
	case "procedure":
		return []string{"summary", "prerequisites", "steps", "pitfalls"}
	case "concept":
		return []string{"summary", "body", "examples", "related_notes"}
	case "entity":
		return []string{"summary", "description", "attributes", "related_notes"}
	}
	return []string{"body"}
}

// tags are the topic folder and the kind of source.
func (w *workspace) tags(c candidate) []any {
	tags := []any{}
	if f := folderOf(c.page.Path); f != "" {
		tags = append(tags, strings.SplitN(f, "/", 2)[0])
	}
	return append(tags, c.kind)
}

func (w *workspace) sourceLink(c candidate) string {
	for _, l := range c.page.Links {
		if l.Title == w.doc.Title {
			return fmt.Sprintf(`<a href="%s">%s</a>`, html.EscapeString(rel(c.page.Path, l.Path)), html.EscapeString(l.Title))
		}
	}
	return "<cite>" + html.EscapeString(w.doc.Title) + "</cite>"
}

// slots writes the HTML of each slot of a candidate page.
func (w *workspace) slots(c candidate) map[string]string {
	doc := w.doc
	here, links := c.page.Path, c.page.Links
	lk := newLinker(here, links)
	text := lk.html
	out := map[string]string{}
	switch c.kind {
	case "source":
		// The engine cannot understand the text, so it writes no abstract
		// and no key points of its own words: the page renders the whole
		// source below, and what links here is the page's derived
		// "Referenced by". An empty abstract also clears what an earlier
		// engine wrote there on a re-ingest.
		out["citation"] = fmt.Sprintf("<p><cite>%s</cite> — %s <code>%s</code>.</p>",
			html.EscapeString(doc.Title), kindWord(doc.Kind), html.EscapeString(w.name))
		out["abstract"] = ""
		// What the engine made of the source (its terms, its procedures,
		// its sections' pages) is linked from it, so none is found only
		// through a folder index.
		var made []string
		for _, l := range links {
			if l.Path != here {
				made = append(made, fmt.Sprintf(`<a href="%s">%s</a>`, html.EscapeString(rel(here, l.Path)), html.EscapeString(l.Title)))
			}
		}
		// Under their own heading: a list of links is no key point (the
		// template's key_points is a synthesis, a model's to write; an
		// empty one clears the links an earlier engine put there). All of
		// them, uncapped: the list is the one place a reader of the source
		// finds every page made from it, and it is bounded by the pages
		// the source's own text yields or names.
		out["pages"] = list("ul", made, len(made))
		out["key_points"] = ""
		// No excerpts: the page renders the whole source below, so a
		// quotation of it (a conversation's turns, a paragraph the
		// abstract already gives) would only say it twice. An earlier
		// version's excerpts are emptied.
		out["excerpts"] = ""
	case "procedure":
		out["summary"] = "<p>" + text(procedureSummary(doc, c.sec)) + "</p>"
		var steps []string
		for _, it := range c.block.Items {
			steps = append(steps, text(it))
		}
		out["steps"] = `<ol class="steps">` + items(steps) + `</ol>`
		out["prerequisites"] = w.prerequisites(text)
		out["pitfalls"] = w.pitfalls(text)
	case "definition":
		summary := sentence(c.def.Meaning)
		// The meaning is the summary; the body says where it comes from
		// (and gathers what other sources say), never the summary again.
		// A description of several blocks (a glossary entry of two
		// paragraphs, an option and its example) is quoted whole: the
		// summary is its first paragraph, the body the rest, in order.
		body := render.Blocks(c.def.Body, text) + fmt.Sprintf("<p>%s defines %s under %s.</p>", w.sourceLink(c),
			html.EscapeString(c.def.Term), html.EscapeString(quote(headingOr(c.sec, doc.Title))))
		var uses []string
		for _, s := range w.mentionsOf(c.def.Term, c.def.Meaning) {
			uses = append(uses, text(s))
		}
		if c.page.Template == "entity" {
			out["summary"] = "<p>" + text(summary) + "</p>"
			out["description"] = body
			out["attributes"] = fmt.Sprintf("<table><thead><tr><th>Key</th><th>Value</th></tr></thead><tbody><tr><td>Defined in</td><td>%s</td></tr><tr><td>Section</td><td>%s</td></tr></tbody></table>",
				w.sourceLink(c), html.EscapeString(headingOr(c.sec, doc.Title)))
		} else {
			out["summary"] = "<p>" + text(summary) + "</p>"
			out["body"] = body
			out["examples"] = list("ul", uses, 3)
		}
		out["related_notes"] = related(here, links)
	}
	return out
}

func kindWord(k source.Kind) string {
	switch k {
	case source.HTML:
		return "the web page"
	case source.Conversation:
		return "the conversation"
	case source.Text:
		return "the text file"
	}
	return "the Markdown file"
}

// leadText is the first paragraphs of a document (or its first turns).
func leadText(doc *source.Document) string {
	var parts []string
	for _, s := range doc.Sections {
		for _, b := range s.Blocks {
			if (b.Kind == source.Paragraph || b.Kind == source.Quote) && !strings.HasPrefix(b.Text, "System:") {
				parts = append(parts, stripRole(b.Text)) // a system prompt says nothing of the conversation
			}
			if len(parts) >= 3 {
				return strings.Join(parts, " ")
			}
		}
	}
	if len(parts) == 0 {
		return doc.Title + "."
	}
	return strings.Join(parts, " ")
}

var rolePrefix = lazyre.New(`^(?:User|Assistant|System|Human|Model|Tool):\s*`)

// stripRole drops the "User:" a quoted conversation turn starts with.
func stripRole(s string) string { return rolePrefix().ReplaceAllString(s, "") }

func procedureSummary(doc *source.Document, s *source.Section) string {
	for _, b := range s.Blocks {
		if b.Kind == source.Paragraph && !rolePrefix().MatchString(b.Text) {
			return source.LeadingSentences(b.Text, 2)
		}
	}
	return fmt.Sprintf("The steps of %s, from %s. %s", quote(headingOr(s, doc.Title)), doc.Title, source.LeadingSentences(leadText(doc), 1))
}

var (
	prereqHeading  = lazyre.New(`(?i)\b(before|prereq\w*|requirements?|you need|setup|set-up|preparation)\b`)
	pitfallHeading = lazyre.New(`(?i)\b(wrong|pitfalls?|troubleshoot\w*|caveats?|warnings?|problems?|fail\w*|avoid)\b`)
)

func (w *workspace) prerequisites(text func(string) string) string {
	if w.prereqSec == 0 {
		// Found once per source: each procedure page asks again.
		w.prereqSec = -1
		for i, s := range w.doc.Sections {
			if prereqHeading().MatchString(s.Heading) {
				w.prereqSec = i + 1
				break
			}
		}
	}
	if w.prereqSec > 0 {
		s := w.doc.Sections[w.prereqSec-1]
		var parts []string
		for _, b := range s.Blocks {
			switch b.Kind {
			case source.List, source.Steps:
				var its []string
				for _, it := range b.Items {
					its = append(its, text(it))
				}
				parts = append(parts, list("ul", its, 20))
			case source.Paragraph:
				parts = append(parts, "<p>"+text(b.Text)+"</p>")
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func (w *workspace) pitfalls(text func(string) string) string {
	if w.pitfallSecs == nil {
		w.pitfallSecs = []int{}
		for i, s := range w.doc.Sections {
			if pitfallHeading().MatchString(s.Heading) {
				w.pitfallSecs = append(w.pitfallSecs, i)
			}
		}
	}
	var parts []string
	for _, i := range w.pitfallSecs {
		for _, b := range w.doc.Sections[i].Blocks {
			switch b.Kind {
			case source.Paragraph:
				parts = append(parts, `<div class="alert alert-warning"><p>`+text(b.Text)+`</p></div>`)
			case source.List:
				var its []string
				for _, it := range b.Items {
					its = append(its, text(it))
				}
				parts = append(parts, list("ul", its, 20))
			case source.Table:
				parts = append(parts, table(b, text))
			}
		}
	}
	// Only sections the source heads as pitfalls: a sentence's shape
	// ("never", "avoid") makes no pitfall.
	return strings.Join(parts, "\n")
}

// mentionsOf lists up to three sentences of doc that use term, other than
// its definition (mentions, with the sentences lower-cased and indexed by
// the words of the source's terms once per source rather than once per
// term: only the sentences holding the term's rarest word are looked at,
// so a source of n definitions costs about n, not n²).
func (w *workspace) mentionsOf(term, meaning string) []string {
	sents := w.sentences()
	if w.lowSents == nil {
		w.lowSents = make([]string, len(sents))
		for i, s := range sents {
			w.lowSents[i] = strings.ToLower(s)
		}
	}
	if len(term) < 4 {
		return nil
	}
	lowTerm := strings.ToLower(term)
	words := strings.FieldsFunc(lowTerm, func(r rune) bool { return !isWordRune(r) })
	if len(words) == 0 {
		return nil
	}
	w.indexWords(words)
	rare := w.sentWords[words[0]]
	for _, word := range words[1:] {
		if l := w.sentWords[word]; len(l) < len(rare) {
			rare = l
		}
	}
	var out []string
	for _, i := range rare {
		if len(out) == 3 {
			break
		}
		s := sents[i]
		if len(s) > maxMention {
			continue // a run of lines with no full stop (a list of definitions) is no sentence
		}
		// A sentence of the definition itself is the page's summary, not
		// an example of the term in use.
		if containsPhrase(w.lowSents[i], lowTerm) && !strings.Contains(s, meaning) && !strings.Contains(meaning, s) && !strings.HasPrefix(s, term+":") {
			out = append(out, s)
		}
	}
	return out
}

// indexWords makes sure sentWords lists the sentences of each of words.
// Only the words of terms are indexed, not every word of the document:
// the first call indexes the words of every term the source defines (its
// definition candidates), a later one with a word not indexed yet indexes
// again with it.
func (w *workspace) indexWords(words []string) {
	missing := false
	for _, word := range words {
		missing = missing || !w.indexed[word]
	}
	if !missing {
		return
	}
	if w.indexed == nil {
		w.indexed = map[string]bool{}
		for _, c := range w.candidates() {
			if c.kind == "definition" {
				for _, word := range strings.FieldsFunc(strings.ToLower(c.def.Term), func(r rune) bool { return !isWordRune(r) }) {
					w.indexed[word] = true
				}
			}
		}
	}
	for _, word := range words {
		w.indexed[word] = true
	}
	w.sentWords = map[string][]int{}
	for i, low := range w.lowSents {
		for word := range strings.FieldsFuncSeq(low, func(r rune) bool { return !isWordRune(r) }) {
			if w.indexed[word] {
				if l := w.sentWords[word]; len(l) == 0 || l[len(l)-1] != i {
					w.sentWords[word] = append(l, i)
				}
			}
		}
	}
}

// maxMention is the longest sentence a page quotes as a mention of its
// term.
const maxMention = 400

// sentences are the document's sentences, split once per workspace.
func (w *workspace) sentences() []string {
	if w.sents == nil {
		w.sents = sentences(w.q.prose())
	}
	return w.sents
}

// sentences splits text into its sentences longer than 20 bytes: a
// sentence ends at '.', '!' or '?' followed by white space, within a
// paragraph (texts split at blank lines), with white space runs made one
// space and a leading "User:"-style role dropped. It scans bytes rather
// than running a regular expression: it splits every source's prose once
// per model call, and the expression took a third of a generation.
func sentences(text string) []string {
	var out []string
	emit := func(s string) {
		if s = strings.TrimSpace(s); len(s) > 20 {
			out = append(out, s)
		}
	}
	for _, para := range strings.Split(text, "\n\n") {
		para = stripRole(spaces.Collapse(para))
		start := 0
		for i := 0; i+1 < len(para); i++ {
			if c := para[i]; (c == '.' || c == '!' || c == '?') && asciiSpace(para[i+1]) {
				emit(para[start : i+1])
				start = i + 1
			}
		}
		emit(para[start:])
	}
	return out
}

// asciiSpace reports the white space of regular expressions' \s.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// sentence makes a meaning a sentence: a capital first and a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[n:]
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "!") && !strings.HasSuffix(s, "?") {
		s += "."
	}
	return s
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || (len(s) > n && unicode.IsUpper(rune(s[n]))) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

func list(tag string, its []string, max int) string {
	if len(its) == 0 {
		return ""
	}
	if len(its) > max {
		its = its[:max]
	}
	return "<" + tag + ">" + items(its) + "</" + tag + ">"
}

func items(its []string) string {
	var sb strings.Builder
	for _, it := range its {
		sb.WriteString("<li>" + it + "</li>")
	}
	return sb.String()
}

func table(b source.Block, text func(string) string) string {
	var sb strings.Builder
	sb.WriteString("<table>")
	if len(b.Header) > 0 {
		sb.WriteString("<thead><tr>")
		for _, h := range b.Header {
			sb.WriteString("<th>" + source.InlineHTML(h) + "</th>")
		}
		sb.WriteString("</tr></thead>")
	}
	sb.WriteString("<tbody>")
	for _, r := range b.Rows {
		sb.WriteString("<tr>")
		for _, c := range r {
			sb.WriteString("<td>" + text(c) + "</td>")
		}
		sb.WriteString("</tr>")
	}
	sb.WriteString("</tbody></table>")
	return sb.String()
}

// related is a list of links to the pages a page mentions or comes from.
func related(here string, links []plan.Link) string {
	var its []string
	for _, l := range links {
		if l.Path != here {
			its = append(its, fmt.Sprintf(`<a href="%s">%s</a>`, html.EscapeString(rel(here, l.Path)), html.EscapeString(l.Title)))
		}
	}
	return list("ul", its, 12)
}

// linkify renders text (inline Markdown, see source.InlineHTML) and links
// the first mention of each linked page's title outside tags, code and
// links.
func linkify(text, here string, links []plan.Link) string {
	return newLinker(here, links).html(text)
}

// linker links the titles of a page's links in its texts. It indexes the
// links by the first word of their titles once, so that each text is
// checked only against the titles whose first word it holds: a source
// page linking thousands of pages renders each of its thousands of
// sections in time of that section, not of every link.
type linker struct {
	here    string
	links   []plan.Link
	byFirst map[string][]int
}

func newLinker(here string, links []plan.Link) *linker {
	l := &linker{here: here, links: links, byFirst: map[string][]int{}}
	for i, ln := range links {
		if ln.Path == here || len([]rune(ln.Title)) < 4 {
			continue
		}
		ws := strings.FieldsFunc(asciiLower(html.EscapeString(ln.Title)), func(r rune) bool { return !isWordRune(r) })
		first := ""
		if len(ws) > 0 {
			first = ws[0]
		}
		l.byFirst[first] = append(l.byFirst[first], i)
	}
	return l
}

func (l *linker) html(text string) string {
	out := source.InlineHTML(text)
	if len(l.byFirst) == 0 {
		return out
	}
	cands := append([]int{}, l.byFirst[""]...)
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(asciiLower(out), func(r rune) bool { return !isWordRune(r) }) {
		if !seen[w] {
			seen[w] = true
			cands = append(cands, l.byFirst[w]...)
		}
	}
	sort.Ints(cands) // in the links' order
	for _, k := range cands {
		ln := l.links[k]
		title := asciiLower(html.EscapeString(ln.Title))
		lower := asciiLower(out)
		i := -1
		for off := 0; off < len(out); {
			j := indexPhrase(lower[off:], title)
			if j < 0 {
				break
			}
			if !inTag(out, off+j) {
				i = off + j
				break
			}
			off += j + 1
		}
		if i < 0 {
			continue
		}
		end := i + len(title)
		a := fmt.Sprintf(`<a href="%s">%s</a>`, html.EscapeString(rel(l.here, ln.Path)), out[i:end])
		out = out[:i] + a + out[end:]
	}
	return out
}

// inTag reports whether offset i of s lies inside a tag, a link's text or
// code.
func inTag(s string, i int) bool {
	open := strings.LastIndex(s[:i], "<a ")
	code := strings.LastIndex(s[:i], "<code>")
	return strings.LastIndex(s[:i], "<") > strings.LastIndex(s[:i], ">") || open > strings.LastIndex(s[:i], "</a>") ||
		code > strings.LastIndex(s[:i], "</code>")
}

// rel is the relative link from the page at from to the page at to, both
// relative to the wiki root.
func rel(from, to string) string {
	fromDir := path.Dir(from)
	if fromDir == "." {
		return to
	}
	up := strings.Count(fromDir, "/") + 1
	fparts := strings.Split(fromDir, "/")
	tparts := strings.Split(to, "/")
	common := 0
	for common < len(fparts) && common < len(tparts)-1 && fparts[common] == tparts[common] {
		common++
	}
	up -= common
	return strings.Repeat("../", up) + strings.Join(tparts[common:], "/")
}
