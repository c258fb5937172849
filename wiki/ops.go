package wiki

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/prose-store/prose/vault"
)

// Update runs fn in a Tx and commits it as one receipt; an error from fn
// discards everything fn did. When another writer committed between the
// Tx's start and its commit (vault.ErrBaseMoved), fn runs again on the new
// state, so concurrent writers queue rather than fail; fn must therefore
// read everything it decides on through the Tx.
func (w *Wiki) Update(ctx context.Context, fn func(tx *Tx) error) (*Result, error) {
	return w.UpdateWith(ctx, func(tx *Tx) (CommitOptions, error) { return CommitOptions{}, fn(tx) })
}

// UpdateWith is Update whose fn also gives the options of the commit: the
// vault files outside the wiki that change with the pages (a queue that
// names pages the Tx moved), and the rest.
func (w *Wiki) UpdateWith(ctx context.Context, fn func(tx *Tx) (CommitOptions, error)) (*Result, error) {
	for attempt := 0; ; attempt++ {
		tx, err := w.Begin(ctx)
		if err != nil {
			return nil, err
		}
		o, err := fn(tx)
		if err != nil {
			tx.Discard()
			return nil, err
		}
		res, err := tx.CommitWith(o)
		if errors.Is(err, vault.ErrBaseMoved) && attempt < 20 {
			continue
		}
		return res, err
	}
}

// reader returns a Tx for reading the committed wiki (never committed).
func (w *Wiki) reader() (*Tx, error) { return w.begin(context.Background()) }

// Resolve returns the wiki path of the page named name (see Tx.Resolve).
func (w *Wiki) Resolve(name string) (string, error) {
	tx, err := w.reader()
	if err != nil {
		return "", err
	}
	return tx.resolve(name)
}

// Read returns the committed page named name and its wiki path.
func (w *Wiki) Read(name string) (string, *Page, error) {
	tx, err := w.reader()
	if err != nil {
		return "", nil, err
	}
	return tx.Read(name)
}

// ReadFile returns the committed file of the page named name, as a browser
// would open it.
func (w *Wiki) ReadFile(name string) (string, []byte, error) {
	tx, err := w.reader()
	if err != nil {
		return "", nil, err
	}
	rel, err := tx.resolve(name)
	if err != nil {
		return "", nil, err
	}
	data, ok, err := tx.st.raw(rel)
	if err != nil {
		return "", nil, err
	}
	if !ok {
		return "", nil, fmt.Errorf("%w: %s", ErrNotFound, rel)
	}
	return rel, data, nil
}

// SlotOf returns the HTML of slot id of the committed page named name,
// exactly as stored. Stored slots are sanitized, so this is a fixed point
// of Sanitize; a page committed with git and not yet taken in may hold
// anything, and what SlotOf returns of it is sanitized all the same (no
// event handler or script leaves it, whoever wrote the file).
func (w *Wiki) SlotOf(name, id string) (string, error) {
	rel, p, err := w.Read(name)
	if err != nil {
		return "", err
	}
	h, ok := p.Slot(id)
	if !ok {
		t, terr := w.Template(p.Meta.Template())
		if terr != nil || !t.Declares(id) {
			return "", fmt.Errorf("%s has no slot %q; `prose wiki list-slots %s` lists them", rel, id, strings.TrimSuffix(rel, ".html"))
		}
	}
	clean, _, err := Sanitize(h)
	if err != nil {
		return "", fmt.Errorf("%s slot %s: %w", rel, id, err)
	}
	return clean, nil
}

// SlotInfo describes one slot of a page.
type SlotInfo struct {
	ID          string `json:"id"`
	Required    bool   `json:"required"`
	Declared    bool   `json:"declared"`
	Empty       bool   `json:"empty"`
	Bytes       int    `json:"bytes"`
	Description string `json:"description"`
}

// ListSlots lists the slots of the page named name: the template's, in its
// order, then any the page holds that the template does not declare.
func (w *Wiki) ListSlots(name string) (string, []SlotInfo, error) {
	rel, p, err := w.Read(name)
	if err != nil {
		return "", nil, err
	}
	var out []SlotInfo
	seen := map[string]bool{}
	if t, err := w.Template(p.Meta.Template()); err == nil {
		for _, sd := range t.Slots {
			h, _ := p.Slot(sd.ID)
			out = append(out, SlotInfo{ID: sd.ID, Required: sd.Required, Declared: true, Empty: strings.TrimSpace(h) == "", Bytes: len(h), Description: sd.About})
			seen[sd.ID] = true
		}
	}
	for _, s := range p.Slots {
		if !seen[s.ID] {
			out = append(out, SlotInfo{ID: s.ID, Empty: strings.TrimSpace(s.HTML) == "", Bytes: len(s.HTML)})
		}
	}
	return rel, out, nil
}

// PageInfo is one page in a listing.
type PageInfo struct {
	Path     string   `json:"path"`
	Title    string   `json:"title"`
	Template string   `json:"template"`
	Tags     []string `json:"tags"`
	Updated  string   `json:"updated,omitempty"`
	Error    string   `json:"error,omitempty"` // the page does not parse
}

// Pages lists every committed page (folder indexes included), sorted by
// path.
func (w *Wiki) Pages() ([]PageInfo, error) {
	tx, err := w.reader()
	if err != nil {
		return nil, err
	}
	all, err := tx.allPages()
	if err != nil {
		return nil, err
	}
	out := make([]PageInfo, 0, len(all))
	for _, rel := range all {
		pi := PageInfo{Path: rel, Tags: []string{}}
		p, _, err := tx.st.page(rel)
		if err != nil {
			pi.Error = err.Error()
		} else {
			pi.Title, pi.Template, pi.Updated = p.Meta.Title(), p.Meta.Template(), p.Meta.String(KeyUpdated)
			if t := p.Meta.Tags(); t != nil {
				pi.Tags = t
			}
		}
		out = append(out, pi)
	}
	return out, nil
}

// Find lists the pages whose path or title contains pattern (case
// insensitive), or matches it as a path glob ("ml/*").
func (w *Wiki) Find(pattern string) ([]PageInfo, error) {
	all, err := w.Pages()
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(norm.NFC.String(pattern))
	re := globRegexp(norm.NFC.String(pattern))
	var out []PageInfo
	for _, p := range all {
		name := norm.NFC.String(p.Path)
		if !strings.Contains(pattern, "/") {
			name = path.Base(name) // a pattern without / matches the base name
		}
		glob := re != nil && (re.MatchString(name) || re.MatchString(strings.TrimSuffix(name, ".html")))
		if q == "" || glob || strings.Contains(strings.ToLower(norm.NFC.String(p.Path)), q) || strings.Contains(strings.ToLower(norm.NFC.String(p.Title)), q) {
			out = append(out, p)
		}
	}
	return out, nil
}

// globRegexp compiles a find pattern as a case-insensitive glob: * and ?
// stay within one path segment, ** crosses / (**/ also matches no
// folder), [...] is a class. It is nil when the pattern has no glob
// character or does not compile.
func globRegexp(pattern string) *regexp.Regexp {
	if !strings.ContainsAny(pattern, "*?[") {
		return nil
	}
	var b strings.Builder
	b.WriteString("(?i)^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case strings.HasPrefix(pattern[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(pattern[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(pattern[i:], ']')
			if j < 0 {
				return nil
			}
			class := pattern[i+1 : i+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil
	}
	return re
}

// TreeNode is a folder of the wiki tree.
type TreeNode struct {
	Name    string      `json:"name"`
	Path    string      `json:"path"` // "" for the root
	Folders []*TreeNode `json:"folders"`
	Pages   []PageInfo  `json:"pages"`
}

// Tree returns the folder tree of the committed wiki.
func (w *Wiki) Tree() (*TreeNode, error) {
	all, err := w.Pages()
	if err != nil {
		return nil, err
	}
	root := &TreeNode{Name: "wiki", Folders: []*TreeNode{}, Pages: []PageInfo{}}
	for _, p := range all {
		n := root
		segs := strings.Split(p.Path, "/")
		for i, s := range segs[:len(segs)-1] {
			var next *TreeNode
			for _, f := range n.Folders {
				if f.Name == s {
					next = f
				}
			}
			if next == nil {
				next = &TreeNode{Name: s, Path: strings.Join(segs[:i+1], "/"), Folders: []*TreeNode{}, Pages: []PageInfo{}}
				n.Folders = append(n.Folders, next)
			}
			n = next
		}
		n.Pages = append(n.Pages, p)
	}
	return root, nil
}

// Stats counts what the wiki holds.
type Stats struct {
	Pages       int            `json:"pages"`
	Folders     int            `json:"folders"`
	Bytes       int64          `json:"bytes"`
	Templates   map[string]int `json:"templates"`
	EmptySlots  int            `json:"empty_required_slots"`
	Unparsable  int            `json:"unparsable"`
	LastUpdated string         `json:"last_updated,omitempty"`
}

// Stats returns counts over the committed wiki.
func (w *Wiki) Stats() (*Stats, error) {
	tx, err := w.reader()
	if err != nil {
		return nil, err
	}
	all, err := tx.allPages()
	if err != nil {
		return nil, err
	}
	s := &Stats{Templates: map[string]int{}}
	folders := map[string]bool{}
	for _, rel := range all {
		if path.Base(rel) == IndexName {
			folders[path.Dir(rel)] = true
			continue
		}
		s.Pages++
		data, _, _ := tx.st.raw(rel)
		s.Bytes += int64(len(data))
		p, _, err := tx.st.page(rel)
		if err != nil {
			s.Unparsable++
			continue
		}
		s.Templates[p.Meta.Template()]++
		if u := p.Meta.String(KeyUpdated); u > s.LastUpdated {
			s.LastUpdated = u
		}
		if t, err := w.Template(p.Meta.Template()); err == nil {
			for _, sd := range t.Slots {
				if h, _ := p.Slot(sd.ID); sd.Required && strings.TrimSpace(plainText(h)) == "" {
					s.EmptySlots++
				}
			}
		}
	}
	s.Folders = len(folders)
	return s, nil
}

// Move renames the page old to new, rewrites every link to it in other
// pages' slots and meta, and regenerates both folders' indexes.
func (tx *Tx) Move(oldName, newName string) (string, string, []string, error) {
	if err := tx.check(); err != nil {
		return "", "", nil, err
	}
	from, p, err := tx.owned(oldName)
	if err != nil {
		return "", "", nil, err
	}
	if path.Base(from) == IndexName {
		return "", "", nil, fmt.Errorf("%s is a folder index; move the folder's pages instead", from)
	}
	to, err := cleanPagePath(newName)
	if err != nil {
		return "", "", nil, err
	}
	if err := tx.checkInside(to); err != nil {
		return "", "", nil, err
	}
	if ok, err := tx.exists(to); err != nil {
		return "", "", nil, err
	} else if ok {
		return "", "", nil, fmt.Errorf("%w: %s", ErrExists, to)
	}
	if path.Base(to) == IndexName {
		return "", "", nil, fmt.Errorf("%w: %s is the name of folder indexes", ErrUnsafe, to)
	}
	// Links inside the moved page are relative to its folder: rewrite them
	// to keep pointing where they did.
	for i, s := range p.Slots {
		rewriteSlot(p, i, rewriteLinks(s.HTML, from, to, func(target string) (string, bool) {
			if target == from {
				return to, true // a link to itself
			}
			return target, true
		}))
	}
	tx.put(from, nil, "")
	tx.put(to, p, "mv "+from+" "+to)
	tx.removed[from] = nil
	rewritten, err := tx.relink(from, func(string) (string, bool) { return to, true })
	return from, to, rewritten, err
}

// Remove removes the page named name. It returns the pages whose links to
// it now break; with unlink, those links are replaced by their text.
func (tx *Tx) Remove(name string, unlink bool) (string, []string, error) {
	if err := tx.check(); err != nil {
		return "", nil, err
	}
	rel, _, err := tx.owned(name)
	if err != nil {
		return "", nil, err
	}
	if path.Base(rel) == IndexName {
		return "", nil, fmt.Errorf("%s is a folder index; it goes when the folder's pages go", rel)
	}
	tx.put(rel, nil, "rm "+rel)
	tx.removed[rel] = nil
	if unlink {
		pages, err := tx.relink(rel, func(string) (string, bool) { return "", false })
		return rel, pages, err
	}
	pages, err := tx.linkers(rel)
	return rel, pages, err
}

// linkers lists the pages whose slots or related meta link to target.
func (tx *Tx) linkers(target string) ([]string, error) {
	all, err := tx.allPages()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rel := range all {
		p, ok, err := tx.page(rel)
		if err != nil || !ok {
			continue
		}
		if pageLinksTo(rel, p, target) {
			out = append(out, rel)
		}
	}
	return out, nil
}

func pageLinksTo(rel string, p *Page, target string) bool {
	for _, s := range p.Slots {
		for _, h := range links(s.HTML) {
			if t, ok := resolveLink(rel, h); ok && t == target {
				return true
			}
		}
	}
	for _, r := range p.Meta.Related() {
		if t, err := cleanPagePath(r); err == nil && t == target {
			return true
		}
	}
	return false
}

// relink rewrites, in every page linking to target, the links to target:
// to the page to() names, or to plain text when to gives false.
func (tx *Tx) relink(target string, to func(string) (string, bool)) ([]string, error) {
	pages, err := tx.linkers(target)
	if err != nil {
		return nil, err
	}
	for _, rel := range pages {
		_, p, err := tx.owned(rel)
		if err != nil {
			return nil, err
		}
		for i, s := range p.Slots {
			rewriteSlot(p, i, rewriteLinks(s.HTML, rel, rel, func(t string) (string, bool) {
				if t == target {
					return to(t)
				}
				return t, true
			}))
		}
		if rs := p.Meta.Related(); len(rs) > 0 {
			var keep []any
			for _, r := range rs {
				t, err := cleanPagePath(r)
				if err == nil && t == target {
					if nt, ok := to(t); ok {
						keep = append(keep, strings.TrimSuffix(nt, ".html"))
					}
					continue
				}
				keep = append(keep, r)
			}
			if keep == nil {
				delete(p.Meta, KeyRelated)
			} else {
				p.Meta[KeyRelated] = keep
			}
		}
		tx.put(rel, p, "")
	}
	slices.Sort(pages)
	return pages, nil
}

// Index returns the listing of folder dir ("" for the wiki root) as its
// index shows it, with the folder's description.
func (w *Wiki) Index(dir string) (*FolderListing, string, error) {
	tx, err := w.reader()
	if err != nil {
		return nil, "", err
	}
	d := "."
	if dir = strings.Trim(dir, "/"); dir != "" && dir != "." {
		n, err := cleanPagePath(dir + "/" + IndexName)
		if err != nil {
			return nil, "", err
		}
		d = path.Dir(n)
	}
	l, err := tx.listing(d)
	if err != nil {
		return nil, "", err
	}
	rel := IndexName
	if d != "." {
		rel = d + "/" + IndexName
	}
	desc := ""
	p, ok, err := tx.page(rel)
	if err == nil && ok {
		desc, _ = p.Slot("description")
	}
	if d != "." && !ok && len(l.Folders) == 0 && len(l.Pages) == 0 {
		return nil, "", fmt.Errorf("no folder %s in the wiki; `prose wiki index` lists the top level", d)
	}
	if l.Folders == nil {
		l.Folders = []FolderEntry{}
	}
	if l.Pages == nil {
		l.Pages = []PageEntry{}
	}
	return l, desc, nil
}
