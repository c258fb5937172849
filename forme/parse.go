package forme

import (
	"bytes"
	"fmt"
	"github.com/prose-store/prose/internal/lazyre"
	"html"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	gmparser "github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"gopkg.in/yaml.v3"
)

// markdown parses blocks only: contracts are read from block structure and
// raw source lines, so inline parsing (emphasis, links) is skipped.
// It is built on first use, not at start: every prose command would pay
// for it.
var markdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(goldmark.WithParser(gmparser.NewParser(
		gmparser.WithBlockParsers(gmparser.DefaultBlockParsers()...),
		gmparser.WithParagraphTransformers(gmparser.DefaultParagraphTransformers()...),
	)))
})

// ParseFile parses one Contract Markdown source. path names the file in
// diagnostics. It never fails: problems become diagnostics on the File.
func ParseFile(path string, src []byte) (f *File) {
	f = &File{Path: path, Rel: path, Frontmatter: map[string]string{}, fmKeys: map[string]Pos{}}
	defer func() {
		if r := recover(); r != nil {
			f.Contracts = nil
			f.Diagnostics = append(f.Diagnostics, diagAt(CodeSourceUnreadable, path, Pos{1, 1},
				"the parser failed on this file (%v); simplify the Markdown around the last edit and report the file to the prose maintainers", r))
		}
	}()
	p := &parser{f: f, src: src}
	p.run()
	return f
}

type parser struct {
	fmBroken   bool // the frontmatter could not be read; identity checks are moot
	f          *File
	src        []byte
	lineStarts []int
	entry      *Contract
}

func (p *parser) diag(code string, pos Pos, format string, args ...any) {
	p.f.Diagnostics = append(p.f.Diagnostics, diagAt(code, p.f.Path, pos, format, args...))
}

// pos converts a byte offset into a line and byte column.
func (p *parser) pos(off int) Pos {
	if off < 0 {
		off = 0
	}
	if off > len(p.src) {
		off = len(p.src)
	}
	i := sort.Search(len(p.lineStarts), func(i int) bool { return p.lineStarts[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return Pos{Line: i + 1, Column: off - p.lineStarts[i] + 1}
}

func (p *parser) lineStart(off int) int {
	if off > len(p.src) {
		off = len(p.src)
	}
	for off > 0 && p.src[off-1] != '\n' {
		off--
	}
	return off
}

func (p *parser) lineEnd(off int) int {
	for off < len(p.src) && p.src[off] != '\n' {
		off++
	}
	if off < len(p.src) {
		off++
	}
	return off
}

func (p *parser) run() {
	src := p.src
	p.lineStarts = []int{0}
	for i, c := range src {
		if c == '\n' {
			p.lineStarts = append(p.lineStarts, i+1)
		}
	}
	bodyStart := p.frontmatter()

	entry := &Contract{File: p.f, Pos: Pos{1, 1}}
	p.entry = entry
	if pos, ok := p.f.fmKeys["name"]; ok {
		entry.Pos = pos
	}
	p.f.Contracts = []*Contract{entry}

	// Parse the whole file with the frontmatter blanked, so offsets in the
	// AST are offsets in the file.
	body := make([]byte, len(src))
	copy(body, src)
	for i := 0; i < bodyStart && i < len(body); i++ {
		if body[i] != '\n' && body[i] != '\r' {
			body[i] = ' '
		}
	}
	doc := markdown().Parser().Parse(text.NewReader(body))
	p.walk(doc, bodyStart)
	p.identity()
}

// frontmatter reads the leading YAML block and returns the offset where the
// Markdown body starts.
func (p *parser) frontmatter() int {
	src := p.src
	start := 0
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		start = 3
	}
	first := p.lineEnd(start)
	if strings.TrimRight(string(src[start:first]), " \t\r\n") != "---" {
		p.diag(CodeFrontmatterMissing, Pos{1, 1},
			"no frontmatter: start the file with a `---` block holding `name:` and `kind:` (responsibility, function, gateway, pattern or test)")
		return 0
	}
	p.f.hasFM = true
	off := first
	for off < len(src) {
		end := p.lineEnd(off)
		line := strings.TrimRight(string(src[off:end]), " \t\r\n")
		if line == "---" || line == "..." {
			p.yaml(src[first:off])
			return end
		}
		off = end
	}
	p.fmBroken = true
	p.diag(CodeFrontmatterInvalid, Pos{1, 1},
		"the frontmatter is never closed: add a `---` line after the last frontmatter key")
	return len(src)
}

var yamlLineRe = lazyre.New(`line (\d+)`)

func (p *parser) yaml(data []byte) {
	if p.simpleYAML(data) {
		return
	}
	var doc yaml.Node
	err := safeYAML(data, &doc)
	if err != nil {
		line := 2
		msg := err.Error()
		if m := yamlLineRe().FindStringSubmatch(msg); m != nil {
			if n, e := strconv.Atoi(m[1]); e == nil {
				line, _ = fmPos(data, n, 1)
			}
			msg = yamlLineRe().ReplaceAllString(msg, "frontmatter line $1")
		}
		p.fmBroken = true
		p.diag(CodeFrontmatterInvalid, Pos{line, 1},
			"the frontmatter is not valid YAML (%s): fix the YAML between the `---` lines", strings.TrimPrefix(msg, "yaml: "))
		return
	}
	if len(doc.Content) == 0 {
		return
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		p.fmBroken = true
		line, col := fmPos(data, m.Line, m.Column)
		p.diag(CodeFrontmatterInvalid, Pos{line, col},
			"the frontmatter must be a YAML mapping of `key: value` lines (name, kind, …)")
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := k.Value
		line, col := fmPos(data, k.Line, k.Column)
		pos := Pos{line, col}
		if _, dup := p.f.fmKeys[key]; dup {
			p.diag(CodeFrontmatterInvalid, pos, "frontmatter key %q appears twice: keep one", key)
			continue
		}
		p.f.fmKeys[key] = pos
		if v.Kind == yaml.ScalarNode {
			p.f.Frontmatter[key] = strings.TrimSpace(v.Value)
			continue
		}
		switch key {
		case "name", "kind", "id", "subject":
			p.diag(CodeFrontmatterInvalid, pos, "frontmatter %s must be a plain value on one line, like `%s: example`", key, key)
		}
	}
}

// fmPos turns a position the YAML decoder gives in the frontmatter data
// (1-based line and column) into the file's: the frontmatter starts on the
// file's second line, and YAML also breaks lines at a lone \r where the
// file (and every other position prose reports) breaks only at \n.
func fmPos(data []byte, yamlLine, yamlCol int) (line, col int) {
	off := 0 // where YAML's line yamlLine starts
	for l := 1; l < yamlLine && off < len(data); l++ {
		i := bytes.IndexAny(data[off:], "\r\n")
		if i < 0 {
			off = len(data)
			break
		}
		off += i + 1
		if data[off-1] == '\r' && off < len(data) && data[off] == '\n' {
			off++
		}
	}
	for c := 1; c < yamlCol && off < len(data); c++ { // YAML counts characters
		_, size := utf8.DecodeRune(data[off:])
		off += size
	}
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return 2 + bytes.Count(data[:off], []byte("\n")), 1 + utf8.RuneCount(data[start:off])
}

// simpleYAML reads frontmatter made only of `key: plain-value` lines (the
// usual case) without the YAML decoder. Anything else — quotes, comments,
// lists, flow or block syntax, odd characters — returns false and goes to
// the full decoder, which gives the same result for the simple case.
func (p *parser) simpleYAML(data []byte) bool {
	type kv struct {
		key, value string
		line       int
	}
	var kvs []kv
	line := 2
	for _, raw := range strings.Split(string(data), "\n") {
		l := strings.TrimRight(raw, "\r")
		if strings.TrimSpace(l) == "" {
			line++
			continue
		}
		key, value, ok := strings.Cut(l, ": ")
		if !ok || !plainKey(key) {
			return false
		}
		value = strings.TrimSpace(value)
		if !plainValue(value) {
			return false
		}
		kvs = append(kvs, kv{key, value, line})
		line++
	}
	seen := map[string]bool{}
	for _, e := range kvs {
		if seen[e.key] {
			return false // let the decoder path report it
		}
		seen[e.key] = true
	}
	for _, e := range kvs {
		p.f.fmKeys[e.key] = Pos{e.line, 1}
		p.f.Frontmatter[e.key] = e.value
	}
	return true
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(isWordByte(c) || c == '-' && i > 0) {
			return false
		}
	}
	return true
}

func plainValue(v string) bool {
	if v == "" {
		return false
	}
	c0 := v[0]
	if !(c0 >= 'a' && c0 <= 'z' || c0 >= 'A' && c0 <= 'Z' || c0 >= '0' && c0 <= '9') {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(isWordByte(c) || c == '-' || c == '.' || c == '/' || c == ' ' && v[i-1] != ' ') {
			return false
		}
	}
	return true
}

// safeYAML decodes YAML, turning a decoder panic into an error.
func safeYAML(data []byte, out *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml decoder failed: %v", r)
		}
	}()
	return yaml.Unmarshal(data, out)
}

// identity fills in the file entry's kind, name, id and subject, and infers
// inline node kinds.
func (p *parser) identity() {
	e := p.entry
	fm := p.f.Frontmatter
	kindPos := e.Pos
	if pos, ok := p.f.fmKeys["kind"]; ok {
		kindPos = pos
	}
	kind := strings.ToLower(fm["kind"])
	switch {
	case !p.f.hasFM || p.fmBroken:
		e.Kind = KindUnknown
	case kind == "":
		e.Kind = KindUnknown
		p.diag(CodeKindMissing, kindPos,
			"the frontmatter has no kind: add `kind: responsibility` (or function, gateway, pattern, test)")
	case retiredKinds[kind] != "":
		e.Retired = kind
		e.Kind = KindUnknown
		if kind == "service" {
			e.Kind = KindFunction
		}
		p.diag(CodeKindRetired, kindPos, "kind: %s is retired and never executes: use %s (%s)", kind, retiredKinds[kind], upgradeHint(kind))
	default:
		switch Kind(kind) {
		case KindResponsibility, KindFunction, KindGateway, KindPattern, KindTest:
			e.Kind = Kind(kind)
		default:
			e.Kind = KindUnknown
			p.diag(CodeKindUnknown, kindPos,
				"kind %q is not a Contract Markdown kind: use responsibility, function, gateway, pattern or test", fm["kind"])
		}
	}
	e.Name = fm["name"]
	if e.Name == "" {
		switch {
		case e.Title != "":
			e.Name = e.Title
		default:
			e.Name = strings.TrimSuffix(strings.TrimSuffix(path.Base(strings.ReplaceAll(p.f.Path, "\\", "/")), ".md"), ".prose")
		}
		if _, written := p.f.fmKeys["name"]; p.f.hasFM && !p.fmBroken && !written {
			p.diag(CodeNameMissing, e.Pos, "the frontmatter has no name; using %q: add `name: %s`", e.Name, slug(e.Name))
		}
	}
	e.ID = fm["id"]
	e.Subject = fm["subject"]
	for _, c := range p.f.Contracts[1:] {
		c.Kind = inferInlineKind(c, e.Kind)
	}
}

// inferInlineKind decides an inline ## node's kind from its sections.
func inferInlineKind(c *Contract, fileKind Kind) Kind {
	switch {
	case c.has("slots") || c.has("delegation"):
		return KindPattern
	case c.has("fixtures") || c.has("expects") || c.has("expects not"):
		return KindTest
	case c.has("receives") || c.has("emits") || c.has("payload") || c.has("schedule"):
		return KindGateway
	case c.has("maintains") || c.has("continuity"):
		if readContinuity(c).Mode == WakeExternal {
			return KindGateway
		}
		return KindResponsibility
	case c.has("parameters") || c.has("returns"):
		return KindFunction
	case c.has("requires") && (fileKind == KindResponsibility || fileKind == KindGateway):
		return KindResponsibility
	}
	return KindFunction
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// block boundaries

// start returns the byte offset where a block starts.
func (p *parser) start(n ast.Node) int {
	if n.Pos() >= 0 {
		return n.Pos()
	}
	best := -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && c.Type() == ast.TypeBlock && c.Lines().Len() > 0 {
			s := c.Lines().At(0).Start
			if best < 0 || s < best {
				best = s
			}
		}
		return ast.WalkContinue, nil
	})
	if best < 0 {
		return 0
	}
	return best
}

// isATX reports whether a heading is written with leading #s (the only
// form that carries contract structure).
func (p *parser) isATX(h *ast.Heading) bool {
	k := p.lineStart(p.start(h))
	for i := 0; i < 3 && k < len(p.src) && p.src[k] == ' '; i++ {
		k++
	}
	return k < len(p.src) && p.src[k] == '#'
}

// headingEnd returns the offset just after a heading's last line.
func (p *parser) headingEnd(h *ast.Heading) int {
	lines := h.Lines()
	if lines.Len() == 0 {
		return p.lineEnd(p.start(h))
	}
	first := lines.At(0)
	ls := p.lineStart(first.Start)
	k := ls
	for k < len(p.src) && k < ls+4 && p.src[k] == ' ' {
		k++
	}
	last := lines.At(lines.Len() - 1)
	end := p.lineEnd(last.Start)
	if k < len(p.src) && p.src[k] != '#' { // setext: the underline follows
		end = p.lineEnd(end)
	}
	return end
}

func (p *parser) headingText(h *ast.Heading) string {
	var parts []string
	lines := h.Lines()
	for i := 0; i < lines.Len(); i++ {
		s := lines.At(i)
		parts = append(parts, strings.TrimSpace(string(s.Value(p.src))))
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

// blockText is a block's raw text with lines trimmed and joined by spaces.
func (p *parser) blockText(n ast.Node) string {
	var parts []string
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || c.Type() != ast.TypeBlock {
			return ast.WalkContinue, nil
		}
		if _, ok := c.(*ast.List); ok {
			return ast.WalkContinue, nil
		}
		lines := c.Lines()
		for i := 0; i < lines.Len(); i++ {
			s := lines.At(i)
			if t := strings.TrimSpace(string(s.Value(p.src))); t != "" {
				parts = append(parts, t)
			}
		}
		return ast.WalkContinue, nil
	})
	return strings.Join(parts, " ")
}

// walking the document

type openPart struct {
	part  *Part
	start int
}

func (p *parser) walk(doc ast.Node, bodyStart int) {
	cur := p.entry
	var sec *Section
	var secStart int
	var part *openPart
	preStart := bodyStart // the open preamble of cur, or -1

	closePart := func(end int) {
		if part != nil {
			part.part.Body = strings.TrimSpace(string(p.src[part.start:max(end, part.start)]))
			part = nil
		}
	}
	closeSection := func(end int) {
		if sec == nil {
			return
		}
		closePart(end)
		sec.Body = strings.TrimSpace(string(p.src[secStart:max(end, secStart)]))
		textEnd := end
		if len(sec.Parts) > 0 {
			textEnd = p.partLineStart(sec)
		}
		sec.Text = strings.TrimSpace(string(p.src[secStart:max(textEnd, secStart)]))
		sec = nil
	}
	closePreamble := func(end int) {
		if preStart >= 0 {
			cur.Preamble = strings.TrimSpace(string(p.src[preStart:max(end, preStart)]))
		}
		preStart = -1
	}

	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		h, isHeading := n.(*ast.Heading)
		if !isHeading {
			if sec != nil {
				p.block(n, sec, part)
			}
			continue
		}
		ls := p.lineStart(p.start(h))
		if !p.isATX(h) {
			continue // a setext heading ("text" over "---") is prose, not structure
		}
		txt := p.headingText(h)
		switch {
		case h.Level == 1 && cur == p.entry && sec == nil && len(cur.Sections) == 0 && p.entry.Title == "":
			p.entry.Title = stripInline(txt)
			preStart = p.headingEnd(h)
		case h.Level == 2:
			closeSection(ls)
			closePreamble(ls)
			cur = &Contract{File: p.f, Name: stripInline(txt), Inline: true, Pos: p.pos(p.start(h))}
			p.f.Contracts = append(p.f.Contracts, cur)
			preStart = p.headingEnd(h)
		case h.Level == 3:
			closeSection(ls)
			closePreamble(ls)
			key, value, known, retired := classifyHeading(stripInline(txt))
			sec = &Section{Key: key, Heading: txt, Value: value, Known: known, Retired: retired, Pos: p.pos(p.start(h))}
			cur.Sections = append(cur.Sections, sec)
			secStart = p.headingEnd(h)
		case h.Level == 4 && sec != nil:
			closePart(ls)
			pt := &Part{Name: stripInline(txt), Pos: p.pos(p.start(h))}
			sec.Parts = append(sec.Parts, pt)
			part = &openPart{part: pt, start: p.headingEnd(h)}
		}
		// any other heading is prose inside whatever is open
	}
	closeSection(len(p.src))
	closePreamble(len(p.src))
}

// block files one non-heading top-level block into the open section.
func (p *parser) block(n ast.Node, sec *Section, part *openPart) {
	inPart := part != nil && (sec.Key == "maintains" || sec.Key == "requires")
	switch b := n.(type) {
	case *ast.List:
		items := p.list(b)
		if inPart {
			part.part.Items = append(part.part.Items, items...)
		} else {
			sec.Items = append(sec.Items, items...)
		}
	case *ast.Paragraph:
		para := Para{Text: p.blockText(b), Pos: p.pos(p.start(b))}
		if inPart {
			part.part.Paras = append(part.part.Paras, para)
		} else if part == nil {
			sec.Paras = append(sec.Paras, para)
		}
	case *ast.FencedCodeBlock:
		cb := &CodeBlock{Pos: p.pos(p.start(b))}
		if b.Info != nil {
			info := strings.TrimSpace(string(b.Info.Segment.Value(p.src)))
			if f := strings.Fields(info); len(f) > 0 {
				cb.Lang = strings.ToLower(f[0])
			}
		}
		var sb strings.Builder
		lines := b.Lines()
		for i := 0; i < lines.Len(); i++ {
			s := lines.At(i)
			sb.Write(s.Value(p.src))
		}
		if lines.Len() > 0 {
			cb.BodyLine = p.pos(lines.At(0).Start).Line
		} else {
			cb.BodyLine = cb.Pos.Line + 1
		}
		cb.Body = sb.String()
		sec.Code = append(sec.Code, cb)
	}
}

// partLineStart is the offset of the first #### heading line in sec.
func (p *parser) partLineStart(sec *Section) int {
	pt := sec.Parts[0]
	if pt.Pos.Line-1 < len(p.lineStarts) {
		return p.lineStarts[pt.Pos.Line-1]
	}
	return len(p.src)
}

// list converts a Markdown list to items.
func (p *parser) list(l *ast.List) []*Item {
	var out []*Item
	for li := l.FirstChild(); li != nil; li = li.NextSibling() {
		item := &Item{Pos: p.pos(p.start(li))}
		var texts []string
		first := true
		for c := li.FirstChild(); c != nil; c = c.NextSibling() {
			if sub, ok := c.(*ast.List); ok {
				kids := p.list(sub)
				item.Children = append(item.Children, kids...)
				for _, k := range kids {
					texts = append(texts, k.Text)
				}
				continue
			}
			t := p.blockText(c)
			if first {
				item.Head = t
				first = false
			}
			if t != "" {
				texts = append(texts, t)
			}
		}
		item.Text = strings.Join(texts, " ")
		parseItemHead(item)
		out = append(out, item)
	}
	return out
}

// stripInline removes Markdown emphasis and code marks from heading text.
func stripInline(s string) string {
	s = html.UnescapeString(strings.TrimSpace(s))
	s = strings.Trim(s, "`*_")
	s = strings.ReplaceAll(s, "`", "")
	return strings.TrimSpace(s)
}

var (
	plainNameRe = lazyre.New(`^([A-Za-z][A-Za-z0-9_-]*)\s*:\s+(.*)$`)
	eachRe      = lazyre.New(`(?i)^each\b.*\bhas\s*:`)
	innerNameRe = lazyre.New("`([^`\\s]+)`\\s*:")
)

// parseItemHead reads contract-item style from an item's first block.
func parseItemHead(it *Item) {
	h := strings.TrimSpace(it.Head)
	it.Desc = h
	if eachRe().MatchString(h) {
		it.Each = true
		return
	}
	if strings.HasPrefix(h, "`") {
		end := strings.IndexByte(h[1:], '`')
		if end < 0 {
			return
		}
		name := h[1 : 1+end]
		if !isItemName(name) {
			return
		}
		it.Name = name
		rest := strings.TrimSpace(h[2+end:])
		if strings.HasPrefix(rest, "(") {
			if close := strings.IndexByte(rest, ')'); close > 0 {
				it.Note = strings.TrimSpace(rest[1:close])
				rest = strings.TrimSpace(rest[close+1:])
			}
		}
		rest = trimSeparator(rest)
		it.Desc = rest
		it.Type, it.Desc = readInputType(rest)
		return
	}
	if m := innerNameRe().FindStringSubmatchIndex(h); m != nil {
		name := h[m[2]:m[3]]
		if isItemName(name) {
			it.Name = name
			it.Desc = strings.TrimSpace(h[m[1]:])
			return
		}
	}
	// plain "name: description", as some files write contract items
	if m := plainNameRe().FindStringSubmatch(h); m != nil && !plainWords[strings.ToLower(m[1])] {
		it.Name = m[1]
		it.Type, it.Desc = readInputType(strings.TrimSpace(m[2]))
	}
}

// plainWords are prose labels that open a bullet without naming an item.
var plainWords = map[string]bool{
	"postcondition": true, "postconditions": true, "material": true, "immaterial": true,
	"note": true, "notes": true, "example": true, "e": true, "i": true, "each": true,
	"input-driven": true, "self-driven": true, "external-driven": true, "provider": true,
	"event": true, "local": true, "when": true, "if": true, "type": true,
}

func trimSeparator(s string) string {
	for _, sep := range []string{":", "—", "–", "-", "="} {
		if strings.HasPrefix(s, sep) {
			return strings.TrimSpace(s[len(sep):])
		}
	}
	return s
}

// readInputType recognises the reserved caller-input types `run` and
// `run[]` at the start of a description.
func readInputType(desc string) (typ, rest string) {
	for _, t := range []string{"run[]", "run"} {
		if !strings.HasPrefix(desc, t) {
			continue
		}
		after := desc[len(t):]
		if after == "" {
			return t, ""
		}
		r, _ := utf8.DecodeRuneInString(after)
		if r == ' ' || r == '—' || r == '–' || r == '-' || r == ',' || r == ':' || r == ';' || r == '.' {
			return t, trimSeparator(strings.TrimSpace(strings.TrimLeft(after, ",;.")))
		}
	}
	return "", desc
}

func isItemName(s string) bool {
	if s == "" || len(s) > 120 {
		return false
	}
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '{' || r == '}' || r == '"' || r == '\'' || r == ',' {
			return false
		}
	}
	return true
}
