package wiki

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// "Referenced by" is derived shell: every page shows the pages whose
// slots or related meta link to it, computed from those pages' links and
// rendered by the Tx into the shell of exactly the pages whose inbound
// links changed, in the same commit. It is never stored in meta, so it
// moves no fingerprint and is never a page's truth.
//
// The links of every committed page are kept in a cache under
// .prose/links/ (its name carries the format version): per page its title
// and the pages it links to, and the wiki tree it reflects. A Tx brings it
// up to its base tree by diffing that tree against the one it reflects; a
// missing, damaged or other-version cache is rebuilt from the vault. It is
// never the only copy of anything.
const linksVersion = "prose-wiki-links-v1\n"

// MaxBacklinks is how many pages a page's "Referenced by" names; the rest
// are counted ("and 4,950 more") and `prose wiki backlinks PAGE` lists
// them all.
const MaxBacklinks = 50

// linkRec is what a page gives the shells of the pages it links to.
type linkRec struct {
	title   string
	targets []string // wiki paths, sorted, unique, never the page itself
}

// pageLinks returns the pages p (at wiki path rel) links to from its slots
// and its related meta.
func pageLinks(rel string, p *Page) *linkRec {
	seen := map[string]bool{}
	for _, s := range p.Slots {
		if !strings.Contains(s.HTML, "<a") {
			continue
		}
		for _, h := range links(s.HTML) {
			if t, ok := resolveLink(rel, h); ok && t != rel {
				seen[t] = true
			}
		}
	}
	for _, r := range p.Meta.Related() {
		if t, err := cleanPagePath(r); err == nil && t != rel {
			seen[t] = true
		}
	}
	rec := &linkRec{title: p.Meta.Title(), targets: make([]string, 0, len(seen))}
	for t := range seen {
		rec.targets = append(rec.targets, t)
	}
	slices.Sort(rec.targets)
	return rec
}

func (w *Wiki) linksPath() string { return w.v.StatePath("links", "wiki-v1.idx") }

// linkIndex holds the links of every page of one committed wiki tree.
type linkIndex struct {
	tree  plumbing.Hash
	pages map[string]*linkRec
	rev   map[string][]string // target → the pages linking to it (unsorted)
	// raw is the cache file's bytes when they are this index's encoding
	// (read back as they were, or just written), else nil.
	raw []byte
}

// encodeLinks writes the cache: the version line, the tree, the page
// count, per page its path, title and targets (uvarint-length strings),
// and a CRC-32C of everything before it.
func (l *linkIndex) encode() []byte {
	out := []byte(linksVersion)
	out = append(out, l.tree[:]...)
	paths := make([]string, 0, len(l.pages))
	for p := range l.pages {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	out = binary.AppendUvarint(out, uint64(len(paths)))
	str := func(s string) {
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	for _, p := range paths {
		r := l.pages[p]
		str(p)
		str(r.title)
		out = binary.AppendUvarint(out, uint64(len(r.targets)))
		for _, t := range r.targets {
			str(t)
		}
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli()))
}

// retree returns the encoding of an index of the same pages and links
// as raw's (an encoding) for tree tree: the tree and the checksum change,
// nothing else does.
func retree(raw []byte, tree plumbing.Hash) []byte {
	out := slices.Clone(raw)
	copy(out[len(linksVersion):], tree[:])
	body := out[:len(out)-4]
	binary.LittleEndian.PutUint32(out[len(body):], crc32.Checksum(body, castagnoli()))
	return out
}

// decodeLinks reads a cache file; ok is false when it is damaged or of
// another version.
func decodeLinks(data []byte) (*linkIndex, bool) {
	head := len(linksVersion) + 20
	if len(data) < head+4 || string(data[:len(linksVersion)]) != linksVersion {
		return nil, false
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli()) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, false
	}
	l := &linkIndex{pages: map[string]*linkRec{}}
	copy(l.tree[:], body[len(linksVersion):head])
	r := &reader{b: body, p: head, ok: true}
	n := r.uvarint()
	for i := uint64(0); i < n && r.ok; i++ {
		p := string(r.bytes())
		rec := &linkRec{title: string(r.bytes())}
		k := r.uvarint()
		if k > uint64(len(body)) {
			return nil, false
		}
		rec.targets = make([]string, 0, k)
		for j := uint64(0); j < k && r.ok; j++ {
			rec.targets = append(rec.targets, string(r.bytes()))
		}
		l.pages[p] = rec
	}
	if !r.ok || r.p != len(body) {
		return nil, false
	}
	return l, true
}

// linkIndex returns the links of every page of the committed tree tree:
// the cache, caught up from the tree it reflects when that tree is still
// in the vault, or rebuilt. The cache is rewritten when it moved.
func (w *Wiki) linkIndex(ctx context.Context, tree plumbing.Hash) (*linkIndex, error) {
	path := w.linksPath()
	data, rerr := os.ReadFile(path)
	l, ok := (*linkIndex)(nil), false
	if rerr == nil {
		l, ok = decodeLinks(data)
	}
	if ok && l.tree == tree {
		l.raw = data
		return l, nil
	}
	from := plumbing.ZeroHash
	if ok && l.tree != plumbing.ZeroHash && w.v.HasObject(l.tree) {
		from = l.tree
	} else {
		l = &linkIndex{pages: map[string]*linkRec{}}
	}
	changes, err := w.v.DiffNodeTrees(from, tree)
	if err != nil {
		return nil, err
	}
	for i, c := range changes {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if !strings.HasSuffix(c.Path, ".html") {
			continue
		}
		delete(l.pages, c.Path)
		if c.New.IsZero() {
			continue
		}
		data, err := w.v.Blob(c.New)
		if err != nil {
			return nil, err
		}
		p, err := Parse(data)
		if err != nil {
			continue // not a page (lint names it): it links nowhere
		}
		l.pages[c.Path] = pageLinks(c.Path, p)
	}
	l.tree = tree
	// A cache: written whole and renamed into place; a failed write only
	// means the next Tx catches up again.
	l.raw = l.encode()
	_ = writeCache(path, l.raw)
	return l, nil
}

// reverse fills l.rev.
func (l *linkIndex) reverse() {
	if l.rev != nil {
		return
	}
	l.rev = map[string][]string{}
	for p, r := range l.pages {
		for _, t := range r.targets {
			l.rev[t] = append(l.rev[t], p)
		}
	}
}

// baseLinks returns the link index of the Tx's base tree (read once).
func (tx *Tx) baseLinks() (*linkIndex, error) {
	if tx.links == nil {
		l, err := tx.w.linkIndex(tx.ctx, tx.st.tree)
		if err != nil {
			return nil, err
		}
		l.reverse()
		tx.links = l
	}
	return tx.links, nil
}

// changedLinks returns the links of the pages the Tx wrote (a removed
// page is absent), and the reverse of them, computed again only after a
// write.
func (tx *Tx) changedLinks() (map[string]*linkRec, map[string][]string) {
	if tx.linkGen == tx.gen && tx.txLinks != nil {
		return tx.txLinks, tx.txRev
	}
	fwd, rev := map[string]*linkRec{}, map[string][]string{}
	add := func(rel string, r *linkRec) {
		fwd[rel] = r
		for _, t := range r.targets {
			rev[t] = append(rev[t], rel)
		}
	}
	for rel, p := range tx.pages {
		if p != nil {
			add(rel, pageLinks(rel, p))
		}
	}
	for rel, s := range tx.spilled {
		add(rel, s.links)
	}
	tx.txLinks, tx.txRev, tx.linkGen = fwd, rev, tx.gen
	return fwd, rev
}

// setIndex puts a folder index the Tx re-rendered into its pages, keeping
// the links of the written pages current without computing them again.
func (tx *Tx) setIndex(rel string, p *Page) {
	current := tx.txLinks != nil && tx.linkGen == tx.gen
	tx.hold(rel, p)
	tx.gen++
	if !current {
		return
	}
	if old := tx.txLinks[rel]; old != nil {
		for _, t := range old.targets {
			tx.txRev[t] = slices.DeleteFunc(tx.txRev[t], func(q string) bool { return q == rel })
		}
		delete(tx.txLinks, rel)
	}
	if p != nil {
		r := pageLinks(rel, p)
		tx.txLinks[rel] = r
		for _, t := range r.targets {
			tx.txRev[t] = append(tx.txRev[t], rel)
		}
	}
	tx.linkGen = tx.gen
}

// Backlink is one page that links to another.
type Backlink struct {
	Path  string `json:"path"`
	Title string `json:"title"`
}

// backlinks returns the pages linking to the page at rel as the Tx sees
// them, by title (then path).
func (tx *Tx) backlinks(rel string) ([]Backlink, error) {
	base, err := tx.baseLinks()
	if err != nil {
		return nil, err
	}
	fwd, rev := tx.changedLinks()
	var out []Backlink
	for _, q := range base.rev[rel] {
		if changed, _ := tx.wrote(q); !changed {
			out = append(out, Backlink{q, base.pages[q].title})
		}
	}
	for _, q := range rev[rel] {
		out = append(out, Backlink{q, fwd[q].title})
	}
	for i := range out {
		if out[i].Title == "" {
			out[i].Title = strings.TrimSuffix(out[i].Path[strings.LastIndexByte(out[i].Path, '/')+1:], ".html")
		}
	}
	slices.SortFunc(out, func(a, b Backlink) int {
		if c := strings.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title)); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out, nil
}

// MoreBacklinks is what a "Referenced by" says of the pages past
// MaxBacklinks: how many, the command that lists them all, and the
// folder most of them are in.
type MoreBacklinks struct {
	N        int
	Page     string // the page's wiki path without .html, for the command
	Folder   Link   // the folder holding most of them
	InFolder int    // how many of them it holds
}

// backlinkShell is what a page's "Referenced by" shows: at most
// MaxBacklinks links, relative to the page, and what it says of the rest.
func (tx *Tx) backlinkShell(rel string) ([]Link, *MoreBacklinks, error) {
	bl, err := tx.backlinks(rel)
	if err != nil {
		return nil, nil, err
	}
	var more *MoreBacklinks
	if len(bl) > MaxBacklinks {
		rest := bl[MaxBacklinks:]
		bl = bl[:MaxBacklinks]
		more = &MoreBacklinks{N: len(rest), Page: strings.TrimSuffix(rel, ".html")}
		count := map[string]int{}
		for _, b := range rest {
			count[path.Dir(b.Path)]++
		}
		for _, d := range slices.Sorted(maps.Keys(count)) {
			if count[d] > more.InFolder {
				more.InFolder = count[d]
				idx, text := IndexName, "the wiki's root"
				if d != "." {
					idx, text = d+"/"+IndexName, d+"/"
				}
				more.Folder = Link{Href: relLink(rel, idx), Text: text}
			}
		}
	}
	out := make([]Link, len(bl))
	for i, b := range bl {
		out[i] = Link{Href: relLink(rel, b.Path), Text: b.Title}
	}
	// Two linkers of one title are told apart by their paths.
	for i := 1; i < len(bl); i++ {
		if strings.EqualFold(bl[i-1].Title, bl[i].Title) {
			out[i-1].Text = bl[i-1].Title + " (" + bl[i-1].Path + ")"
			out[i].Text = bl[i].Title + " (" + bl[i].Path + ")"
		}
	}
	return out, more, nil
}

// backlinkTargets returns the pages whose "Referenced by" the Tx's writes
// change: the pages a written page linked to before or links to now where
// the link, or the linking page's title, changed; a page created gets its
// own.
func (tx *Tx) backlinkTargets() (map[string]bool, error) {
	base, err := tx.baseLinks()
	if err != nil {
		return nil, err
	}
	fwd, _ := tx.changedLinks()
	out := map[string]bool{}
	var written []string
	tx.eachWritten(func(rel string, _ bool) { written = append(written, rel) })
	for _, rel := range written {
		old, now := base.pages[rel], fwd[rel]
		switch {
		case old == nil && now == nil:
		case old == nil || now == nil || old.title != now.title:
			for _, r := range []*linkRec{old, now} {
				if r != nil {
					for _, t := range r.targets {
						out[t] = true
					}
				}
			}
			if old == nil && now != nil {
				out[rel] = true
			}
		default:
			for _, t := range symmetricDiff(old.targets, now.targets) {
				out[t] = true
			}
		}
	}
	return out, nil
}

// symmetricDiff returns what one of two sorted lists holds and the other
// does not.
func symmetricDiff(a, b []string) []string {
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return out
}

// Backlinks returns every page that links to the page named name (from a
// slot or its related meta), by title: what its "Referenced by" shows,
// uncapped.
func (w *Wiki) Backlinks(ctx context.Context, name string) (string, []Backlink, error) {
	tx, err := w.begin(ctx)
	if err != nil {
		return "", nil, err
	}
	rel, err := tx.resolve(name)
	if err != nil {
		return "", nil, err
	}
	if ok, err := tx.exists(rel); err != nil {
		return "", nil, err
	} else if !ok {
		return "", nil, fmt.Errorf("%w: %s; `prose wiki find` lists pages", ErrNotFound, rel)
	}
	bl, err := tx.backlinks(rel)
	if bl == nil {
		bl = []Backlink{}
	}
	return rel, bl, err
}
