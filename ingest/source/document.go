package source

import (
	"github.com/prose-store/prose/internal/spaces"
	"strings"
	"unicode"
)

// Kind is the format a source was read as.
type Kind string

// The source kinds.
const (
	Markdown     Kind = "markdown"
	Text         Kind = "text"
	HTML         Kind = "html"
	Conversation Kind = "conversation"
)

// Document is one source, read.
type Document struct {
	// Name is how the source was named: its path (slash-separated,
	// relative to the directory argument for files found in one) or the
	// --name given to standard input.
	Name string
	// Collection is true for a source found in a directory given to
	// ingest: its page mirrors its path there (plan.SourceHome).
	Collection bool `json:"-"`
	// Earlier is the name an earlier prose gave this source (Input.Earlier),
	// or "": the ingest keeps it when the vault holds the source under it.
	Earlier string `json:"-"`
	Kind    Kind
	// Title is the first top-level heading, the HTML <title>, the opening
	// question of a conversation, or else a title made from Name.
	Title    string
	Sections []Section
	Links    []Link
	// Data is the source's bytes with secrets redacted: what the vault
	// keeps and what prompts quote.
	Data []byte
	// ID is the BLAKE3 token of Data.
	ID string
	// Redactions counts the secrets replaced in Data.
	Redactions int
	// Encoding names the encoding the source was converted from to UTF-8
	// (UTF16LE, UTF16BE, Windows1252), or is "" for a source in UTF-8.
	Encoding string `json:",omitempty"`
	// Boilerplate is the collection boilerplate left out of the document
	// (ReadWith), nil when none was.
	Boilerplate *Boilerplate `json:"-"`
	// Size is the length of Data as read, kept when a caller lets go of
	// Data (see Reload).
	Size int `json:"-"`
	// Reload, when set, reads Data again (the file read again through
	// Stored): a caller that sets Data to nil once the document is parsed
	// does not hold every source's bytes until the vault stores them.
	Reload func() ([]byte, error) `json:"-"`
	// asked is the kind the document was read as asked ("": by its name
	// or bytes), for Reread; released is set by Release.
	asked    Kind
	released bool
}

// Section is a heading and the blocks under it up to the next heading. A
// section before the first heading has Level 0 and no Heading.
type Section struct {
	Level   int
	Heading string
	Blocks  []Block
	// IDs are the source's own names for places in this section (an HTML
	// element's id, an <a name>): a link to one (page.html#name) leads
	// to the section. An id met before a heading with no text between
	// them names the heading's section.
	IDs []string `json:",omitempty"`
}

// BlockKind says what a block holds.
type BlockKind string

// The block kinds.
const (
	Paragraph   BlockKind = "paragraph"
	List        BlockKind = "list"        // Items, unordered
	Steps       BlockKind = "steps"       // Items, numbered
	Definitions BlockKind = "definitions" // Defs
	Table       BlockKind = "table"       // Header, Rows
	Code        BlockKind = "code"        // Text, Lang
	Quote       BlockKind = "quote"       // Text
	Turn        BlockKind = "turn"        // Role, Text: one message of a conversation
)

// Block is one piece of a section. Which fields are set depends on Kind.
// Text, Items, a definition's Meaning, Header and Rows hold inline
// Markdown in the canonical form EscapeText describes (a Turn's Text is the
// message's own Markdown); Code blocks hold their code as it is.
type Block struct {
	Kind   BlockKind
	Text   string       `json:",omitempty"`
	Lang   string       `json:",omitempty"`
	Role   string       `json:",omitempty"`
	Items  []string     `json:",omitempty"`
	Defs   []Definition `json:",omitempty"`
	Header []string     `json:",omitempty"`
	Rows   [][]string   `json:",omitempty"`
}

// Definition is a term and what it means. Meaning is inline Markdown
// (see EscapeText): a description of one paragraph, or the first of a
// description holding more — its later paragraphs, code, lists and
// nested definitions (Sphinx's class and its attributes, an option and
// its example) are Body, in the source's order, at most MaxNesting
// descriptions deep.
type Definition struct {
	Term, Meaning string
	Body          []Block `json:",omitempty"`
}

// MaxNesting is how many descriptions deep a definition's Body may
// hold blocks of its own; a description nested deeper is read as the
// one run of text it holds.
const MaxNesting = 3

// Link is a hyperlink found in the source.
type Link struct {
	Text, URL string
}

// Definitions returns every definition of the document, in order.
func (d *Document) Definitions() []Definition {
	var out []Definition
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			out = append(out, b.Defs...)
		}
	}
	return out
}

// Prose returns the document's running text — paragraphs, quotes, turns
// and list items, as inline Markdown (see EscapeText; Plain gives the
// text) — joined by blank lines, for summaries and search.
func (d *Document) Prose() string {
	var sb strings.Builder
	sb.Grow(d.proseSize()) // a 16 MiB source's text, built once
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			addProse(&sb, b)
		}
	}
	return sb.String()
}

// addProse adds the running text of b to sb (see Prose).
func addProse(sb *strings.Builder, b Block) {
	switch b.Kind {
	case Paragraph, Quote, Turn:
		add(sb, b.Text)
	case List, Steps:
		for _, it := range b.Items {
			add(sb, it)
		}
	case Definitions:
		for _, df := range b.Defs {
			add(sb, df.Term+": "+df.Meaning)
			for _, x := range df.Body {
				addProse(sb, x)
			}
		}
	}
}

// proseSize is the length of Prose, or a little more.
func (d *Document) proseSize() int {
	n := 0
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			n += blockProse(b)
		}
	}
	return n
}

// blockProse is the length of b's running text in Prose, or a little more.
func blockProse(b Block) int {
	n := 0
	switch b.Kind {
	case Paragraph, Quote, Turn:
		n += len(b.Text) + 2
	case List, Steps:
		for _, it := range b.Items {
			n += len(it) + 2
		}
	case Definitions:
		for _, df := range b.Defs {
			n += len(df.Term) + len(df.Meaning) + 4
			for _, x := range df.Body {
				n += blockProse(x)
			}
		}
	}
	return n
}

func add(sb *strings.Builder, s string) {
	if s = strings.TrimSpace(s); s == "" {
		return
	}
	if sb.Len() > 0 {
		sb.WriteString("\n\n")
	}
	sb.WriteString(s)
}

// LeadingSentences returns the first n sentences of text (a sentence ends
// with . ! or ? followed by a space or the end), with runs of white space
// collapsed.
func LeadingSentences(text string, n int) string {
	text = spaces.Collapse(text)
	if n <= 0 || text == "" {
		return ""
	}
	rs := []rune(text)
	count := 0
	for i, r := range rs {
		if r != '.' && r != '!' && r != '?' {
			continue
		}
		if i+1 < len(rs) && rs[i+1] != ' ' {
			continue
		}
		// "e.g. " and "i.e. ": a lower-case letter before and after.
		if r == '.' && i+2 < len(rs) && unicode.IsLower(rs[i+2]) {
			continue
		}
		count++
		if count == n {
			return string(rs[:i+1])
		}
	}
	return text
}

// addBlock appends b to the last section, opening a Level 0 section first
// when there is none.
func (d *Document) addBlock(b Block) {
	if len(d.Sections) == 0 {
		d.Sections = append(d.Sections, Section{})
	}
	s := &d.Sections[len(d.Sections)-1]
	// Consecutive definitions from separate lines form one block.
	if b.Kind == Definitions && len(s.Blocks) > 0 && s.Blocks[len(s.Blocks)-1].Kind == Definitions {
		last := &s.Blocks[len(s.Blocks)-1]
		last.Defs = append(last.Defs, b.Defs...)
		return
	}
	s.Blocks = append(s.Blocks, b)
}

func (d *Document) addSection(level int, heading string) {
	heading = clean(heading)
	if d.Title == "" && level == 1 && heading != "" {
		d.Title = heading
	}
	d.Sections = append(d.Sections, Section{Level: level, Heading: heading})
}

// clean collapses white space.
func clean(s string) string {
	return spaces.Collapse(s)
}
