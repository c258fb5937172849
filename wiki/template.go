package wiki

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/prose-store/prose/published"
)

//go:embed templates/*.html shell/layout.html shell/style.css shell/palette.md
var builtin embed.FS

// TemplateDir is where a vault keeps its own page templates, relative to
// the vault root: a file NAME.html there overrides the built-in template
// NAME or adds a new one.
const TemplateDir = "templates/wiki"

// ComponentPalette returns the description of the CSS components every
// page styles, in the words prompts show a model.
func ComponentPalette() string {
	b, _ := builtin.ReadFile("shell/palette.md")
	return string(b)
}

// stylesheet is the CSS embedded in every page: one string for the
// process, not a copy of the embedded file per page rendered.
//
//go:embed shell/style.css
var stylesheet string

// Stylesheet returns the CSS embedded in every page.
func Stylesheet() string { return stylesheet }

// SlotDef declares one slot of a template.
type SlotDef struct {
	ID       string `yaml:"id" json:"id"`
	Required bool   `yaml:"required" json:"required"`
	About    string `yaml:"about" json:"description"`
}

// Template is a page template: its declared slots and the html/template
// that renders a page's body.
type Template struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Slots       []SlotDef `json:"slots"`
	Source      string    `json:"source"` // "built-in" or the vault file
	t           *template.Template
}

// Declares reports whether the template declares slot id.
func (t *Template) Declares(id string) bool {
	return slices.ContainsFunc(t.Slots, func(s SlotDef) bool { return s.ID == id })
}

// Required reports whether slot id must not be empty.
func (t *Template) Required(id string) bool {
	return slices.ContainsFunc(t.Slots, func(s SlotDef) bool { return s.ID == id && s.Required })
}

const headerOpen, headerClose = "{{/* prose:template\n", "\n*/}}"

// parseTemplate reads a template file: a header comment holding YAML (a
// description and the slot list) and a definition of "body".
func parseTemplate(name, source string, data []byte) (*Template, error) {
	if err := published.CheckIdent(name); err != nil {
		return nil, fmt.Errorf("template %s: %w", source, err)
	}
	s := string(data)
	if !strings.HasPrefix(s, headerOpen) {
		return nil, fmt.Errorf("template %s: it must start with a {{/* prose:template … */}} header declaring its slots (see docs/wiki-format.md)", source)
	}
	end := strings.Index(s, headerClose)
	if end < 0 {
		return nil, fmt.Errorf("template %s: the header is not closed with */}}", source)
	}
	var hdr struct {
		Description string    `yaml:"description"`
		Slots       []SlotDef `yaml:"slots"`
	}
	dec := yaml.NewDecoder(strings.NewReader(s[len(headerOpen):end]))
	dec.KnownFields(true)
	if err := dec.Decode(&hdr); err != nil {
		return nil, fmt.Errorf("template %s: the header is not valid: %v", source, err)
	}
	seen := map[string]bool{}
	for _, sd := range hdr.Slots {
		if err := published.CheckIdent(sd.ID); err != nil {
			return nil, fmt.Errorf("template %s: slot %w", source, err)
		}
		if seen[sd.ID] {
			return nil, fmt.Errorf("template %s: slot %q is declared twice", source, sd.ID)
		}
		seen[sd.ID] = true
	}
	base, err := layoutTemplate()
	if err != nil {
		return nil, err
	}
	t, err := base.Clone()
	if err != nil {
		return nil, err
	}
	if _, err := t.Parse(s); err != nil {
		return nil, fmt.Errorf("template %s: %v", source, err)
	}
	if t.Lookup("body") == nil {
		return nil, fmt.Errorf("template %s: it defines no \"body\" ({{define \"body\"}}…{{end}})", source)
	}
	return &Template{Name: name, Description: hdr.Description, Slots: hdr.Slots, Source: source, t: t}, nil
}

// layoutTemplate is the page shell every template is parsed into, parsed
// once and cloned for each.
var layoutTemplate = sync.OnceValues(func() (*template.Template, error) {
	layout, err := builtin.ReadFile("shell/layout.html")
	if err != nil {
		return nil, err
	}
	return template.New("layout").Parse(string(layout))
})

// builtinTemplate is one built-in template, parsed at its first use: a
// write renders with one or two of them, and parsing all twelve at every
// start cost ≈ 0.7 ms of a write-slot.
type builtinTemplate struct {
	name, file string
	parse      func() (*Template, error)
}

// builtinTemplateFiles lists the built-in templates' files by name.
var builtinTemplateFiles = sync.OnceValues(func() (map[string]string, error) {
	ents, err := fs.ReadDir(builtin, "templates")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range ents {
		out[strings.TrimSuffix(e.Name(), ".html")] = "templates/" + e.Name()
	}
	return out, nil
})

// templateSet is a wiki's templates: the vault's own, parsed (and so
// checked) when the wiki is opened, and the built-in ones it does not
// override, each parsed at its first use.
type templateSet struct {
	own     map[string]*Template
	builtin map[string]*builtinTemplate
	parsed  atomic.Int64 // built-in templates parsed (tests)
}

func openTemplates(root string) (*templateSet, error) {
	files, err := builtinTemplateFiles()
	if err != nil {
		return nil, err
	}
	own, err := loadOwnTemplates(root, map[string]*Template{})
	if err != nil {
		return nil, err
	}
	s := &templateSet{own: own, builtin: map[string]*builtinTemplate{}}
	for name, file := range files {
		b := &builtinTemplate{name: name, file: file}
		b.parse = sync.OnceValues(func() (*Template, error) {
			s.parsed.Add(1)
			data, err := builtin.ReadFile(b.file)
			if err != nil {
				return nil, err
			}
			return parseTemplate(b.name, "built-in", data)
		})
		s.builtin[name] = b
	}
	return s, nil
}

// get returns template name, parsing a built-in one at its first use.
func (s *templateSet) get(name string) (*Template, bool, error) {
	if t, ok := s.own[name]; ok {
		return t, true, nil
	}
	b, ok := s.builtin[name]
	if !ok {
		return nil, false, nil
	}
	t, err := b.parse()
	return t, true, err
}

// names lists every template name, sorted.
func (s *templateSet) names() []string {
	var out []string
	for n := range s.own {
		out = append(out, n)
	}
	for n := range s.builtin {
		if _, ok := s.own[n]; !ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// loadTemplates reads the built-in templates and the vault's overrides
// under root/TemplateDir, every one parsed.
func loadTemplates(root string) (map[string]*Template, error) {
	files, err := builtinTemplateFiles()
	if err != nil {
		return nil, err
	}
	out := map[string]*Template{}
	for name, file := range files {
		data, err := builtin.ReadFile(file)
		if err != nil {
			return nil, err
		}
		t, err := parseTemplate(name, "built-in", data)
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return loadOwnTemplates(root, out)
}

// loadOwnTemplates parses the vault's templates under root/TemplateDir into
// out (over the built-in ones of the same name).
func loadOwnTemplates(root string, out map[string]*Template) (map[string]*Template, error) {
	if root == "" {
		return out, nil
	}
	dir := filepath.Join(root, filepath.FromSlash(TemplateDir))
	ents2, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range ents2 {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".html") {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".html")
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		t, err := parseTemplate(name, path.Join(TemplateDir, e.Name()), data)
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// Link is a link in a page's shell.
type Link struct {
	Href string `json:"href"`
	Text string `json:"text"`
}

// FolderListing is what a folder index lists.
type FolderListing struct {
	Folders []FolderEntry `json:"folders"`
	Pages   []PageEntry   `json:"pages"`
	// MorePages counts the pages past MaxFolderListed a folder holds but
	// its index does not list.
	MorePages int `json:"more_pages,omitempty"`
	// Terms are the glossary pages that link to the folder's pages (the
	// terms its documents define); Names the API names its pages' headings
	// give (ffi_call, fs.realpath(path…)), each linked to its section.
	Terms     []Link `json:"terms,omitempty"`
	MoreTerms int    `json:"more_terms,omitempty"`
	Names     []Name `json:"names,omitempty"`
	MoreNames int    `json:"more_names,omitempty"`
}

// Name is one entry of a folder's index of names: a heading that names
// an API, and the page and section it heads.
type Name struct {
	Name string `json:"name"`
	Href string `json:"href"`
	Page string `json:"page"`
}

// FolderEntry is one subfolder in a folder index.
type FolderEntry struct {
	Name string `json:"name"`
	Href string `json:"href"`
	Note string `json:"note"`
}

// PageEntry is one page in a folder index.
type PageEntry struct {
	Title    string `json:"title"`
	Href     string `json:"href"`
	Template string `json:"template"`
	Updated  string `json:"updated"`
	Lead     string `json:"lead,omitempty"` // the page's first sentence
	origin   string
}

// renderData is what a template sees.
type renderData struct {
	Lang, Title, Template, Updated string
	Tags                           []string
	CSS                            template.CSS
	MetaBlock                      template.HTML
	Crumbs, Related                []Link
	Up, Home                       string
	Extra                          []Slot
	Folder                         *FolderListing
	Backlinks                      []Link
	More                           *MoreBacklinks
	page                           *Page
}

// shell is what a page's shell shows that is derived from other pages:
// a folder index's listing, and every page's "Referenced by".
type shell struct {
	Folder    *FolderListing
	Backlinks []Link
	More      *MoreBacklinks
}

// Slot returns slot id with its markers; an absent slot renders empty, so
// a later write can fill it.
func (d *renderData) Slot(id string) template.HTML {
	h, _ := d.page.Slot(id)
	return template.HTML(slotMarkup(id, h))
}

// render renders page p at wiki path rel (for example "ml/attention.html")
// with template t.
func render(t *Template, rel string, p *Page, sh shell) ([]byte, error) {
	meta, err := encodeMeta(p.Meta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	dir := path.Dir(rel)
	depth := 0
	if dir != "." {
		depth = strings.Count(dir, "/") + 1
	}
	up := strings.Repeat("../", depth)
	d := &renderData{
		Lang: "en", Title: p.Meta.Title(), Template: t.Name, Updated: p.Meta.String(KeyUpdated),
		Tags: p.Meta.Tags(), CSS: template.CSS(Stylesheet()), MetaBlock: template.HTML(meta),
		Home: up + "README.html", Up: "README.html", Folder: sh.Folder, page: p,
		Backlinks: sh.Backlinks, More: sh.More,
	}
	if l := p.Meta.String("lang"); l != "" && published.CheckIdent(strings.ToLower(l)) == nil {
		d.Lang = l
	}
	if d.Title == "" {
		d.Title = strings.TrimSuffix(path.Base(rel), ".html")
	}
	if path.Base(rel) == IndexName {
		d.Up = "../README.html"
		if depth == 0 {
			d.Up = "" // the wiki root has no folder above it
		}
	}
	d.Crumbs = append(d.Crumbs, Link{up + "README.html", "Wiki"})
	if dir != "." {
		segs := strings.Split(dir, "/")
		for i, s := range segs {
			d.Crumbs = append(d.Crumbs, Link{strings.Repeat("../", depth-i-1) + "README.html", s})
		}
	}
	for _, r := range p.Meta.Related() {
		target, err := cleanPagePath(r)
		if err != nil {
			continue
		}
		d.Related = append(d.Related, Link{relLink(rel, target), strings.TrimSuffix(path.Base(target), ".html")})
	}
	for _, s := range p.Slots {
		if !t.Declares(s.ID) {
			d.Extra = append(d.Extra, s)
		}
	}
	// The page is about its slots and the stylesheet: grown at that size
	// at once, a commit's rendered pages (each held to the commit) hold no
	// buffer doubled past its page.
	size := len(meta) + len(Stylesheet()) + 8<<10
	for _, s := range p.Slots {
		size += len(s.HTML)
	}
	var b bytes.Buffer
	b.Grow(size)
	if err := t.t.ExecuteTemplate(&b, "layout", d); err != nil {
		return nil, fmt.Errorf("render %s with template %s: %w", rel, t.Name, err)
	}
	if out := b.Bytes(); cap(out)-len(out) > len(out)/8+4<<10 {
		return bytes.Clone(out), nil
	}
	return b.Bytes(), nil
}

// relLink returns the relative href from the page at from to the page at
// to (both wiki paths).
func relLink(from, to string) string {
	fd := strings.Split(path.Dir(from), "/")
	if fd[0] == "." {
		fd = nil
	}
	td := strings.Split(to, "/")
	i := 0
	for i < len(fd) && i < len(td)-1 && fd[i] == td[i] {
		i++
	}
	return strings.Repeat("../", len(fd)-i) + strings.Join(td[i:], "/")
}

// BuiltinTemplateSource returns the source of built-in template name, the
// starting point of a vault override under TemplateDir.
func BuiltinTemplateSource(name string) (string, error) {
	if err := published.CheckIdent(name); err != nil {
		return "", err
	}
	b, err := builtin.ReadFile("templates/" + name + ".html")
	if err != nil {
		return "", fmt.Errorf("no built-in template %q", name)
	}
	return string(b), nil
}
