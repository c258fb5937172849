package prompt

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Dialect says how braces are read.
type Dialect string

const (
	// Fields replaces {field} for declared fields and leaves every other
	// brace as written. The default.
	Fields Dialect = "fields"
	// StrFormat is Fields plus {{ → { and }} → }, as Python's str.format
	// writes literal braces.
	StrFormat Dialect = "str.format"
)

// Template is a prompt with declared fields.
type Template struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Fields      []string `json:"fields"`
	Dialect     Dialect  `json:"dialect"`
	Text        string   `json:"text"`
	// Source is "built-in" or the path of the override file.
	Source string `json:"source"`
}

// header is a template file's front matter.
type header struct {
	Description string   `yaml:"description"`
	Fields      []string `yaml:"fields"`
	Dialect     Dialect  `yaml:"dialect"`
}

// Parse reads a template file: an optional front matter between "---"
// lines (description, fields, dialect) and the text after it.
func Parse(name, source string, data []byte) (*Template, error) {
	t := &Template{Name: name, Source: source, Dialect: Fields}
	text := string(data)
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		front, body, found := strings.Cut(rest, "\n---\n")
		if !found {
			return nil, fmt.Errorf("%s: the front matter opened by --- on the first line is never closed; end it with a line ---", source)
		}
		var h header
		dec := yaml.NewDecoder(bytes.NewReader([]byte(front)))
		dec.KnownFields(true)
		if err := dec.Decode(&h); err != nil {
			return nil, fmt.Errorf("%s: the front matter is not valid: %v (allowed keys: description, fields, dialect)", source, err)
		}
		t.Description, t.Fields, text = h.Description, h.Fields, body
		if h.Dialect != "" {
			t.Dialect = h.Dialect
		}
	}
	if t.Dialect != Fields && t.Dialect != StrFormat {
		return nil, fmt.Errorf("%s: unknown dialect %q; use %q or %q", source, t.Dialect, Fields, StrFormat)
	}
	for _, f := range t.Fields {
		if !isIdent(f) {
			return nil, fmt.Errorf("%s: field %q is not a name (letters, digits, _)", source, f)
		}
	}
	t.Text = text
	return t, nil
}

// Render returns the text with each declared {field} replaced by its
// value. Every value must be given, and only declared fields may be.
func (t *Template) Render(values map[string]string) (string, error) {
	if err := t.check(values); err != nil {
		return "", err
	}
	return t.render(t.Text, values), nil
}

// check reports a field values lacks or a value for no field.
func (t *Template) check(values map[string]string) error {
	var missing []string
	for _, f := range t.Fields {
		if _, ok := values[f]; !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("prompt %s: no value for field %s (its fields are %s)", t.Name, strings.Join(missing, ", "), strings.Join(t.Fields, ", "))
	}
	for k := range values {
		if !slices.Contains(t.Fields, k) {
			return fmt.Errorf("prompt %s: %q is not one of its fields (%s)", t.Name, k, strings.Join(t.Fields, ", "))
		}
	}
	return nil
}

// render writes text (t's text or a part of it) with values: one walk
// to size the result, one to write it, so a prompt quoting a long source
// is one allocation, not a doubling buffer's copies.
func (t *Template) render(text string, values map[string]string) string {
	part := *t
	part.Text = text
	n := 0
	part.scan(func(literal string) { n += len(literal) }, func(field string) { n += len(values[field]) })
	var b strings.Builder
	b.Grow(n)
	part.scan(func(literal string) { b.WriteString(literal) }, func(field string) { b.WriteString(values[field]) })
	return b.String()
}

// PerCall is the line that splits a prompt's text for caching: above it
// the fixed part, the same for every call of a run (instructions,
// templates, palette), sent as the system text; below it the variable
// part (index, source, turns), sent as the user message. A prompt
// without it (an override written before) is all variable part: sent as
// one user message, as it always was.
const PerCall = "<<<PER CALL>>>"

// RenderParts renders the fixed part and the variable part of the text
// (split at its first PerCall line) with values, as Render does.
func (t *Template) RenderParts(values map[string]string) (fixed, variable string, err error) {
	if err := t.check(values); err != nil {
		return "", "", err
	}
	top, bottom, ok := splitPerCall(t.Text)
	if !ok {
		return "", t.render(t.Text, values), nil
	}
	return strings.TrimRight(t.render(top, values), "\n"), t.render(bottom, values), nil
}

func splitPerCall(text string) (string, string, bool) {
	if rest, ok := strings.CutPrefix(text, PerCall+"\n"); ok {
		return "", rest, true
	}
	i := strings.Index(text, "\n"+PerCall+"\n")
	if i < 0 {
		return "", "", false
	}
	return text[:i+1], text[i+len(PerCall)+2:], true
}

// Used returns the declared fields the text refers to, in order of first
// use.
func (t *Template) Used() []string {
	var used []string
	t.scan(func(string) {}, func(f string) {
		if !slices.Contains(used, f) {
			used = append(used, f)
		}
	})
	return used
}

// Unused returns the declared fields the text never refers to.
func (t *Template) Unused() []string {
	used := t.Used()
	var out []string
	for _, f := range t.Fields {
		if !slices.Contains(used, f) {
			out = append(out, f)
		}
	}
	return out
}

// scan walks the text once, calling literal for text to copy and field
// for each declared field reference.
func (t *Template) scan(literal func(string), field func(string)) {
	s := t.Text
	start := 0 // start of the pending literal run
	flush := func(end int) {
		if end > start {
			literal(s[start:end])
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if t.Dialect == StrFormat && (c == '{' || c == '}') && i+1 < len(s) && s[i+1] == c {
			flush(i)
			literal(s[i : i+1])
			i += 2
			start = i
			continue
		}
		if c == '{' {
			// A reference is { name } with nothing else inside; scanning
			// only name bytes keeps the walk linear whatever the text.
			j := i + 1
			for j < len(s) && identByte(s[j]) {
				j++
			}
			if j < len(s) && s[j] == '}' && slices.Contains(t.Fields, s[i+1:j]) {
				flush(i)
				field(s[i+1 : j])
				i = j + 1
				start = i
				continue
			}
		}
		i++
	}
	flush(len(s))
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
