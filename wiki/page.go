package wiki

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/prose-store/prose/published"
)

// The markers of the page format (docs/wiki-format.md). They are HTML
// comments, so a page stays valid HTML that any browser opens.
const (
	metaOpen   = "<!-- prose:meta\n"
	metaClose  = "\n-->"
	slotPrefix = `<!-- prose:slot id="`
	slotEnd    = `<!-- /prose:slot id="`
	markerTail = `" -->`
)

// Page is the structured content of one wiki page: its meta and its slots.
// The rendered shell around them is not part of it.
type Page struct {
	Meta  Meta
	Slots []Slot // in the order the page holds them
}

// Slot is one named slot of a page and its sanitized HTML.
type Slot struct {
	ID   string `json:"id"`
	HTML string `json:"html"`
}

// Slot returns the HTML of slot id and whether the page holds it.
func (p *Page) Slot(id string) (string, bool) {
	for _, s := range p.Slots {
		if s.ID == id {
			return s.HTML, true
		}
	}
	return "", false
}

// SetSlot sets slot id to html, adding it when absent.
func (p *Page) SetSlot(id, html string) {
	for i := range p.Slots {
		if p.Slots[i].ID == id {
			p.Slots[i].HTML = html
			return
		}
	}
	p.Slots = append(p.Slots, Slot{ID: id, HTML: html})
}

// Clone returns a deep copy of p.
func (p *Page) Clone() *Page {
	return &Page{Meta: p.Meta.Clone(), Slots: slices.Clone(p.Slots)}
}

// FormatError reports a page whose format is broken: where, what, and how
// to fix it.
type FormatError struct {
	Line int // 1-based; 0 when not tied to a line
	Msg  string
	Fix  string
}

func (e *FormatError) Error() string {
	s := e.Msg
	if e.Line > 0 {
		s = fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// ErrNotOwned is returned by Parse for a file with no prose meta block: a
// page prose did not create, which it never writes.
var ErrNotOwned = errors.New("the file has no prose meta block, so prose does not own it")

func lineAt(data []byte, off int) int { return bytes.Count(data[:off], []byte{'\n'}) + 1 }

// Parse reads the meta and slots of a page file. Everything outside the
// markers is the shell and is ignored. Inside a slot, anything up to the
// slot's own end marker is content; outside slots, comments other than the
// markers are shell.
func Parse(data []byte) (*Page, error) {
	if !utf8.Valid(data) {
		return nil, &FormatError{Msg: "the page is not valid UTF-8", Fix: "save it as UTF-8"}
	}
	// Line ends as a browser reads them: CRLF and a lone CR are LF (an
	// editor that saved the page with CRLF line ends changed nothing).
	if bytes.IndexByte(data, '\r') >= 0 {
		data = bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	}
	p := &Page{}
	seenMeta := false
	seen := map[string]bool{}
	for off := 0; ; {
		i := bytes.Index(data[off:], []byte("<!--"))
		if i < 0 {
			break
		}
		at := off + i
		rest := data[at:]
		switch {
		case bytes.HasPrefix(rest, []byte(metaOpen)):
			if seenMeta {
				return nil, &FormatError{Line: lineAt(data, at), Msg: "a second prose meta block", Fix: "keep one <!-- prose:meta … --> block per page"}
			}
			body := rest[len(metaOpen):]
			end := bytes.Index(body, []byte(metaClose))
			if end < 0 {
				return nil, &FormatError{Line: lineAt(data, at), Msg: "the meta block is not closed", Fix: "end it with a line holding only -->"}
			}
			m, err := decodeMeta(body[:end+1])
			if err != nil {
				return nil, &FormatError{Line: lineAt(data, at), Msg: "the meta block is not valid: " + err.Error(), Fix: "fix the YAML between <!-- prose:meta and -->"}
			}
			p.Meta, seenMeta = m, true
			off = at + len(metaOpen) + end + len(metaClose)
		case bytes.HasPrefix(rest, []byte(slotPrefix)):
			idEnd := bytes.Index(rest[len(slotPrefix):], []byte(markerTail))
			if idEnd < 0 {
				return nil, &FormatError{Line: lineAt(data, at), Msg: "a slot start marker is not closed", Fix: `write it as <!-- prose:slot id="ID" -->`}
			}
			id := string(rest[len(slotPrefix) : len(slotPrefix)+idEnd])
			if err := published.CheckIdent(id); err != nil {
				return nil, &FormatError{Line: lineAt(data, at), Msg: fmt.Sprintf("slot id %q is not valid", id), Fix: published.RuleIdent}
			}
			if seen[id] {
				return nil, &FormatError{Line: lineAt(data, at), Msg: fmt.Sprintf("slot %q appears twice", id), Fix: "merge the two slots into one"}
			}
			seen[id] = true
			start := at + len(slotPrefix) + idEnd + len(markerTail)
			closer := []byte(slotEnd + id + markerTail)
			end := bytes.Index(data[start:], closer)
			if end < 0 {
				return nil, &FormatError{Line: lineAt(data, at), Msg: fmt.Sprintf("slot %q has no end marker", id), Fix: fmt.Sprintf("end it with %s", closer)}
			}
			p.Slots = append(p.Slots, Slot{ID: id, HTML: string(data[start : start+end])})
			off = start + end + len(closer)
		case bytes.HasPrefix(rest, []byte(slotEnd)):
			return nil, &FormatError{Line: lineAt(data, at), Msg: "a slot end marker without its start", Fix: "remove it or add the matching start marker"}
		default:
			end := bytes.Index(rest[4:], []byte("-->"))
			if end < 0 {
				return nil, &FormatError{Line: lineAt(data, at), Msg: "a comment is not closed", Fix: "close it with -->"}
			}
			off = at + 4 + end + 3
		}
	}
	if !seenMeta {
		if i := bytes.Index(data, []byte("prose:meta")); i >= 0 {
			// A meta block a person's edit bent out of shape is not a
			// page prose never owned: say what is wrong with it.
			return nil, &FormatError{Line: lineAt(data, i), Msg: "the prose:meta comment is not in its form", Fix: "write it as <!-- prose:meta on a line of its own (one space after <!--), the YAML, and a line holding only -->"}
		}
		return nil, ErrNotOwned
	}
	return p, nil
}

// The meta block's YAML sits inside an HTML comment, so the three
// characters that could end or nest a comment are written as entities.
var (
	commentEscaper   = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	commentUnescaper = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")
)

// encodeMeta returns the meta block comment for m.
func encodeMeta(m Meta) ([]byte, error) {
	y, err := m.yaml()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(metaOpen)
	b.WriteString(commentEscaper.Replace(string(y)))
	if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("-->")
	return b.Bytes(), nil
}

// decodeMeta reads the escaped YAML of a meta block.
func decodeMeta(body []byte) (Meta, error) {
	text := commentUnescaper.Replace(string(body))
	if m, ok := parseMetaYAML([]byte(text)); ok {
		return m, nil // the shape prose writes, read without yaml.v3
	}
	v, err := published.YAMLValue([]byte(text))
	if err != nil {
		return nil, err
	}
	if v == nil {
		return Meta{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the meta block must be a mapping of keys to values")
	}
	return Meta(m), nil
}

// slotMarkup returns a slot with its markers.
func slotMarkup(id, html string) string {
	return slotPrefix + id + markerTail + html + slotEnd + id + markerTail
}

// yamlNode builds a YAML node for a value of the value model, so map keys
// come out sorted and strings always come back as strings.
func yamlNode(v any) (*yaml.Node, error) {
	switch x := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(x)}, nil
	case float64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: formatNumber(x)}, nil
	case string:
		if !utf8.ValidString(x) {
			return nil, errors.New("a meta value is not valid UTF-8")
		}
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x}
		if needsQuotes(x) {
			n.Style = yaml.DoubleQuotedStyle
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			c, err := yamlNode(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			kn, err := yamlNode(k)
			if err != nil {
				return nil, err
			}
			c, err := yamlNode(x[k])
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, kn, c)
		}
		return n, nil
	}
	return nil, fmt.Errorf("a meta value of type %T cannot be stored", v)
}

// needsQuotes reports strings that plain or block YAML would not give back
// byte for byte; they are written double-quoted, which escapes everything.
func needsQuotes(s string) bool {
	// "<<" unquoted is YAML's merge key, never the text "<<".
	if s == "" || s == "<<" || strings.TrimSpace(s) != s {
		return true
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0xfeff || r == '\u2028' || r == '\u2029' {
			return true
		}
	}
	return false
}
