package forme

import "strings"

// Kind is a contract's kind.
type Kind string

// The authored kinds, plus KindUnknown for files whose kind could not be read
// (and retired `system` files).
const (
	KindResponsibility Kind = "responsibility"
	KindFunction       Kind = "function"
	KindGateway        Kind = "gateway"
	KindPattern        Kind = "pattern"
	KindTest           Kind = "test"
	KindUnknown        Kind = "unknown"
)

// IsNode reports whether contracts of this kind are topology nodes.
func (k Kind) IsNode() bool { return k == KindResponsibility || k == KindGateway }

// Pos is a 1-based line and byte column in a source file.
type Pos struct {
	Line   int
	Column int
}

// File is one parsed *.prose.md source.
type File struct {
	Path        string // as displayed in diagnostics
	Rel         string // root-relative, forward slashes (manifest sources)
	Frontmatter map[string]string
	Contracts   []*Contract // the file entry first, then inline ## nodes
	Diagnostics []Diagnostic
	hasFM       bool
	fmKeys      map[string]Pos
}

// Contract is one responsibility, function, gateway, pattern or test: the
// file entry or an inline `##` node.
type Contract struct {
	Name     string
	Kind     Kind
	ID       string // frontmatter id, empty when absent
	Title    string // the # title
	Subject  string // tests
	Inline   bool
	File     *File `json:"-"` // the file holding the contract
	Pos      Pos   // the frontmatter name, the ## heading, or 1:1
	Preamble string
	Sections []*Section

	// Retired records a retired kind (service, system) read from frontmatter.
	Retired string
}

// Section is one `###` section as written. Repeated headings give several
// sections with the same Key.
type Section struct {
	Key     string // canonical lower-case name ("requires", "expects not"), or the lower-cased heading when unknown
	Heading string // as written
	Value   string // the value after "Name:" in the heading ("external-driven")
	Known   bool
	Retired bool
	Pos     Pos
	Body    string // trimmed raw body, #### lines included
	Text    string // trimmed raw body before the first #### part
	Items   []*Item
	Parts   []*Part // #### sub-headings
	Code    []*CodeBlock
	Paras   []Para // top-level paragraphs before the first #### part
}

// Part is a `####` sub-heading inside a section: a facet under Maintains, a
// facet-need under Requires, documentation elsewhere.
type Part struct {
	Name  string
	Pos   Pos
	Body  string
	Items []*Item
	Paras []Para
}

// Para is one paragraph of prose with its position.
type Para struct {
	Text string
	Pos  Pos
}

// Item is one Markdown list item in contract-item style:
// "- `name`: description", "- `name` (note): description",
// "- `name`: run — description", "- each article has: …", or plain prose.
type Item struct {
	Name     string // the backticked name, or "" for plain prose
	Note     string // a parenthesised note after the name
	Type     string // "run" or "run[]" for typed caller inputs
	Desc     string // the text after the name and separator
	Head     string // the first block of the item, lines joined by spaces
	Text     string // the whole item, nested items included, lines joined by spaces
	Each     bool   // an "each … has:" postcondition
	Pos      Pos
	Children []*Item
}

// CodeBlock is a fenced code block.
type CodeBlock struct {
	Lang string
	Body string
	Pos  Pos // the opening fence
	// BodyLine is the line of the first content line.
	BodyLine int
}

// sections returns every section with key, in source order.
func (c *Contract) sections(key string) []*Section {
	var out []*Section
	for _, s := range c.Sections {
		if s.Key == key {
			out = append(out, s)
		}
	}
	return out
}

// has reports whether the contract has a section with key.
func (c *Contract) has(key string) bool {
	for _, s := range c.Sections {
		if s.Key == key {
			return true
		}
	}
	return false
}

// body joins the bodies of every section with key.
func (c *Contract) body(key string) string {
	var out strings.Builder
	for _, s := range c.Sections {
		if s.Key != key {
			continue
		}
		b := s.Body
		if s.Value != "" {
			if b == "" {
				b = s.Value
			} else {
				b = s.Value + "\n" + b
			}
		}
		if b == "" {
			continue
		}
		if out.Len() > 0 {
			out.WriteString("\n\n")
		}
		out.WriteString(b)
	}
	return out.String()
}

// items returns the top-level items of every section with key.
func (c *Contract) items(key string) []*Item {
	var out []*Item
	for _, s := range c.sections(key) {
		out = append(out, s.Items...)
	}
	return out
}

// EffectiveID is the id, or the name when the contract has none.
func (c *Contract) EffectiveID() string {
	if c.ID != "" {
		return c.ID
	}
	return c.Name
}
