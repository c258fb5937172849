package wiki

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/internal/parallel"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
)

// Result is what a committed Tx wrote.
type Result struct {
	Receipt *receipt.Receipt `json:"receipt,omitempty"` // nil when nothing material changed
	Commit  string           `json:"commit,omitempty"`  // branch commit; "" when nothing was committed
	Changed []string         `json:"changed"`           // wiki paths whose files changed
	Moved   []string         `json:"moved,omitempty"`   // facets whose tokens moved
	// Rendered counts the pages a rebuild rendered again (RebuildMerged).
	Rendered int `json:"rendered,omitempty"`
}

// Commit writes every change of the Tx, with the folder indexes above the
// pages it changed, as one commit carrying one receipt. A Tx whose changes
// are all immaterial (the same content written again) commits nothing.
func (tx *Tx) Commit() (*Result, error) {
	return tx.CommitWith(CommitOptions{})
}

// CommitOptions add to the receipt and commit of a Tx: what a pipeline
// that drove the Tx knows and the wiki does not.
type CommitOptions struct {
	// Who names the command in the lock holder file.
	Who string
	// Body is written into the commit message between its summary line and
	// the receipt.
	Body string
	// Diff is merged into the receipt's semantic_diff.
	Diff map[string]any
	// Refs are the receipt's wake refs; Cost its cost (nil: the default).
	Refs []string
	Cost *receipt.Cost
	// Files are vault files outside published/ committed with the pages.
	Files map[string][]byte
	// Load are more such files, each read by its function when the
	// commit writes it: a commit that stages its files (past stageAbove)
	// reads them one at a time, under the writer lock, and holds none of
	// them after it is written. A path in Files and Load is refused.
	Load map[string]func() ([]byte, error)
}

// CommitWith is Commit with options.
func (tx *Tx) CommitWith(o CommitOptions) (*Result, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	tx.done = true
	defer tx.closeSpill()
	// The files are rendered into memory up to stageAbove bytes; a
	// larger commit (its pages' slots alone pass it, or their rendering
	// does) renders them under the writer lock, each file's blob written
	// as it is rendered (staged).
	out := &commitFiles{tx: tx, mem: map[string][]byte{}, limit: stageAbove}
	staging := tx.slotBytes() > stageAbove
	if !staging {
		err := tx.files(out)
		staging = errors.Is(err, errStage)
		if err != nil && !staging {
			return nil, err
		}
	}
	res := &Result{Changed: []string{}}
	settle := len(tx.force) > 0 || len(tx.takeInFiles) > 0
	if !staging && len(out.paths) == 0 && !settle {
		return res, nil
	}
	if err := out.checkInside(); err != nil {
		return nil, err
	}
	for p := range o.Load {
		if _, ok := o.Files[p]; ok {
			return nil, fmt.Errorf("commit: %s is both in Files and in Load", p)
		}
	}
	changes, files := out.mem, o.Files
	var stage func(*vault.Staged) error
	if staging {
		changes = nil
		stage = func(st *vault.Staged) error {
			out := &commitFiles{tx: tx, staged: st}
			if err := tx.files(out); err != nil {
				return err
			}
			if err := out.checkInside(); err != nil {
				return err
			}
			for _, p := range slices.Sorted(maps.Keys(o.Load)) {
				data, err := o.Load[p]()
				if err != nil {
					return err
				}
				if err := st.PutFile(p, data); err != nil {
					return err
				}
			}
			return nil
		}
	} else if len(o.Load) > 0 {
		// A small commit: the files are read now, as Files.
		files = maps.Clone(o.Files)
		if files == nil {
			files = map[string][]byte{}
		}
		for p, load := range o.Load {
			data, err := load()
			if err != nil {
				return nil, err
			}
			files[p] = data
		}
	}
	var pages []any
	for _, rel := range tx.order {
		pages = append(pages, rel)
	}
	for rel := range tx.removed {
		pages = append(pages, rel)
	}
	diff := map[string]any{"pages": pages}
	// What happened to each page, for the summary line (pageSummary).
	// Only the changed pages' paths are looked up (not the whole list of
	// files: ≈ 110 trees of a 1,000-page wiki); a tree that cannot be read
	// leaves the summary out, as before, and the write reports it.
	{
		var created, removed []any
		for _, rel := range tx.order {
			had, err := tx.st.has(rel)
			if err != nil {
				created, removed = nil, nil
				break
			}
			switch _, alive := tx.wrote(rel); {
			case !alive && had:
				removed = append(removed, rel)
			case alive && !had:
				created = append(created, rel)
			}
		}
		if created != nil {
			diff["created"] = created
		}
		if removed != nil {
			diff["removed"] = removed
		}
	}
	for k, v := range o.Diff {
		diff[k] = v
	}
	who := o.Who
	if who == "" {
		who = "prose wiki"
	}
	wr, err := tx.w.v.WriteNode(tx.ctx, Node, changes, vault.WriteOptions{
		Stage:   stage,
		Who:     who,
		Base:    tx.st.base,
		Rebuild: tx.rebuild,
		Message: "prose: wiki rebuild (page shells re-rendered, no material change)\n",
		Diff:    diff,
		Refs:    o.Refs,
		Cost:    o.Cost,
		Body:    o.Body,
		Files:   files,
		TakeIn:  tx.takeInFiles,
		Settle:  settle,
	})
	if err != nil {
		if errors.Is(err, vault.ErrHandEdits) {
			return nil, fmt.Errorf("%w; run `prose wiki commit` to take them in first", err)
		}
		return nil, err
	}
	res.Receipt, res.Moved = wr.Receipt, wr.Moved
	if !wr.Commit.IsZero() {
		res.Commit = wr.Commit.String()
		res.Changed = wr.Changed
		if !staging && len(tx.takeInFiles) == 0 {
			tx.saveLinks(wr.Tree, changes)
		}
	}
	return res, nil
}

// saveLinks writes the link cache for the tree the commit made, node tree
// tree, whose files are the Tx's base tree with changes applied: the next
// command finds the cache current instead of diffing the trees and parsing
// the changed pages again. Without the base tree's links (the Tx read
// none) the cache stays as it was, caught up by the next Tx.
func (tx *Tx) saveLinks(tree plumbing.Hash, changes map[string][]byte) {
	base := tx.links
	if base == nil || base.tree != tx.st.tree || tree.IsZero() {
		return
	}
	// The changed pages' links; same says each is the base's (the commit
	// changed no page's title or links: most writes of a slot or a meta
	// value), so the cache is the base's bytes for the new tree.
	recs := map[string]*linkRec{}
	same := base.raw != nil
	for rel, data := range changes {
		if !strings.HasSuffix(rel, ".html") {
			continue
		}
		var r *linkRec
		if data != nil {
			if p, err := Parse(data); err == nil {
				r = pageLinks(rel, p)
			}
		}
		recs[rel] = r
		if old := base.pages[rel]; r == nil || old == nil || old.title != r.title || !slices.Equal(old.targets, r.targets) {
			same = false
		}
	}
	if same {
		_ = writeCache(tx.w.linksPath(), retree(base.raw, tree))
		return
	}
	l := &linkIndex{tree: tree, pages: maps.Clone(base.pages)}
	for rel, r := range recs {
		delete(l.pages, rel)
		if r != nil {
			l.pages[rel] = r
		}
	}
	_ = writeCache(tx.w.linksPath(), l.encode())
}

// stageAbove is how many bytes of rendered files a commit holds in
// memory. A larger commit renders its files again under the writer lock,
// each one's blob written into the object store as it is rendered
// (vault.WriteOptions.Stage), so a commit of thousands of pages holds
// one page's bytes at a time; a small one (a page or a few) renders once.
const stageAbove = 4 << 20

// slotBytes is the HTML the Tx's pages hold in their slots: less than
// their rendering comes to.
func (tx *Tx) slotBytes() int {
	n := 0
	for _, rel := range tx.order {
		if p := tx.pages[rel]; p != nil {
			for _, s := range p.Slots {
				n += len(s.HTML)
			}
		} else if s, ok := tx.spilled[rel]; ok {
			n += s.slots
		}
	}
	return n
}

// errStage stops the first rendering of a commit past stageAbove bytes.
var errStage = errors.New("past the bytes a commit holds: stage the files")

// commitFiles are the files a commit writes: node paths → content in
// memory (nil removes), or staged.
type commitFiles struct {
	tx     *Tx
	mem    map[string][]byte
	held   int
	limit  int // > 0: errStage once mem holds more
	staged *vault.Staged
	paths  map[string]bool
}

// set records the content of node path rel (nil removes it).
func (c *commitFiles) set(rel string, data []byte) error {
	if c.paths == nil {
		c.paths = map[string]bool{}
	}
	c.paths[rel] = true
	if c.staged != nil {
		if data == nil {
			return c.staged.RemoveNode(rel)
		}
		return c.staged.PutNode(rel, data)
	}
	c.held += len(data) - len(c.mem[rel])
	c.mem[rel] = data
	if c.limit > 0 && c.held > c.limit {
		return errStage
	}
	return nil
}

// checkInside checks every path is inside the wiki.
func (c *commitFiles) checkInside() error {
	seen := insideSeen{} // fresh: the tool calls' looks may be stale
	for rel := range c.paths {
		if err := c.tx.w.checkInsideSeen(rel, seen); err != nil {
			return err
		}
	}
	return nil
}

// files renders every page the Tx changed materially and the folder
// indexes above them into out.
func (tx *Tx) files(out *commitFiles) error {
	dirs := map[string]bool{}
	var refs map[string]bool
	if len(tx.order) > 0 {
		var err error
		if refs, err = tx.backlinkTargets(); err != nil {
			return err
		}
	}
	// The pages are prepared in order (their dates, their shells: the
	// Tx's state), rendered a chunk at a time on every core (rendering
	// reads only the page, its template and its shell), and set in order.
	type job struct {
		rel  string
		t    *Template
		p    *Page
		sh   shell
		data []byte
		err  error
	}
	var chunk []*job
	flush := func() error {
		parallel.For(len(chunk), func(i int) {
			j := chunk[i]
			j.data, j.err = render(j.t, j.rel, j.p, j.sh)
		})
		for _, j := range chunk {
			if j.err != nil {
				return j.err
			}
			if raw, ok, _ := tx.st.raw(j.rel); ok && string(raw) == string(j.data) {
				continue
			}
			if err := out.set(j.rel, j.data); err != nil {
				return err
			}
			markDirs(dirs, j.rel)
		}
		chunk = chunk[:0]
		return nil
	}
	for _, rel := range tx.order {
		p, _, err := tx.written(rel)
		if err != nil {
			return err
		}
		old, had, err := tx.st.page(rel)
		if err != nil && p != nil && !errors.Is(err, ErrNotOwned) {
			// A broken committed page is replaced by the one the Tx built
			// (prose wiki commit repairs pages this way).
			had = false
		} else if err != nil && p == nil {
			return err
		}
		if p == nil {
			if had {
				if err := out.set(rel, nil); err != nil {
					return err
				}
			}
			// Gone from the Tx's view (or already gone from the branch, as
			// a page deleted with git): its folder's index drops it.
			markDirs(dirs, rel)
			continue
		}
		if tx.rebuild {
			for d := path.Dir(rel); ; d = path.Dir(d) {
				dirs[d] = true
				if d == "." {
					break
				}
			}
		}
		if had && old != nil && !tx.rebuild && !tx.force[rel] && !refs[rel] && materialEqual(old, p) {
			continue // nothing material: the file and its date stay
		}
		was, hadDate := p.Meta[KeyUpdated]
		if !(had && old != nil && materialEqual(old, p)) {
			p.Meta[KeyUpdated] = tx.w.today()
		} else if u, ok := old.Meta[KeyUpdated]; ok {
			p.Meta[KeyUpdated] = u
		}
		if _, out := tx.spilled[rel]; out && (!hadDate || !reflect.DeepEqual(was, p.Meta[KeyUpdated])) {
			tx.respill(rel, p) // the folder's listing reads the date
		}
		t, sh, err := tx.pageShell(rel, p)
		if err != nil {
			return err
		}
		chunk = append(chunk, &job{rel: rel, t: t, p: p, sh: sh})
		if len(chunk) == renderChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	// The pages the Tx did not write whose "Referenced by" changed: their
	// shells are re-rendered in the same commit, nothing material (their
	// date stays), and a folder index's by the indexes below.
	for _, rel := range slices.Sorted(maps.Keys(refs)) {
		if ok, _ := tx.wrote(rel); ok {
			markDirs(dirs, rel) // the folder's index lists the terms that link to its pages
			continue
		}
		// The folder's index lists the terms that link to its pages.
		dirs[path.Dir(rel)] = true
		if path.Base(rel) == IndexName {
			continue
		}
		p, ok, err := tx.st.page(rel)
		if err != nil || !ok {
			continue // a broken link, or a file prose does not own
		}
		data, err := tx.renderPage(rel, p)
		if err != nil {
			return err
		}
		if raw, ok, _ := tx.st.raw(rel); ok && string(raw) == string(data) {
			continue
		}
		if err := out.set(rel, data); err != nil {
			return err
		}
	}
	for d := range tx.marked {
		dirs[d] = true
	}
	// The folder indexes are rendered once the pages fit (they change
	// the Tx's view of its indexes, so they are never rendered twice).
	out.limit = 0
	return tx.indexes(dirs, out)
}

// materialEqual reports whether two pages have the same structured truth.
func materialEqual(a, b *Page) bool {
	return reflect.DeepEqual(pageTruth(a), pageTruth(b))
}

func (tx *Tx) renderPage(rel string, p *Page) ([]byte, error) {
	t, sh, err := tx.pageShell(rel, p)
	if err != nil {
		return nil, err
	}
	return render(t, rel, p, sh)
}

// renderChunk is how many pages files renders at once.
const renderChunk = 32

// pageShell is the template and the derived shell (a folder index's
// listing, the backlinks) page p at rel is rendered with.
func (tx *Tx) pageShell(rel string, p *Page) (*Template, shell, error) {
	t, err := tx.pageTemplate(rel, p)
	if err != nil {
		return nil, shell{}, err
	}
	var sh shell
	if path.Base(rel) == IndexName {
		if sh.Folder, err = tx.listing(path.Dir(rel)); err != nil {
			return nil, shell{}, err
		}
	}
	if sh.Backlinks, sh.More, err = tx.backlinkShell(rel); err != nil {
		return nil, shell{}, err
	}
	return t, sh, nil
}

// markDirs marks the folder of rel. Folders above it are marked by
// indexes when their listing changes.
func markDirs(dirs map[string]bool, rel string) {
	dirs[path.Dir(rel)] = true
}

// indexes regenerates the README.html of every marked folder, deepest
// first, into out, and goes up to the folder above whenever a folder's
// line in its parent's listing changed (the folder appeared or went, or its
// description did): every index up to the wiki root is current, and an
// index whose content would not change is not rewritten. A folder left with
// no pages and no subfolders loses its index unless a person wrote its
// description.
func (tx *Tx) indexes(dirs map[string]bool, out *commitFiles) error {
	pending := maps.Clone(dirs)
	for len(pending) > 0 {
		d := ""
		for c := range pending {
			if d == "" || depth(c) > depth(d) || depth(c) == depth(d) && c < d {
				d = c
			}
		}
		delete(pending, d)
		rel := IndexName
		if d != "." {
			rel = d + "/" + IndexName
		}
		p, had, err := tx.page(rel)
		if err != nil {
			if !errors.Is(err, ErrNotOwned) {
				return err
			}
			return fmt.Errorf("%s/%s: %w; move it aside so prose can write the folder index", Dir, rel, ErrNotOwned)
		}
		committed, wasCommitted, _ := tx.st.page(rel)
		if !had {
			p = tx.defaultIndex(d)
			p.Meta[KeyUpdated] = tx.w.today()
		} else {
			p = p.Clone()
		}
		listing, err := tx.listing(d)
		if err != nil {
			return err
		}
		desc, _ := p.Slot("description")
		parentChanged := !wasCommitted
		if wasCommitted && committed != nil {
			old, _ := committed.Slot("description")
			parentChanged = oneLine(old) != oneLine(desc)
		}
		if len(listing.Folders) == 0 && len(listing.Pages) == 0 && strings.TrimSpace(desc) == "" && d != "." {
			if had {
				if err := out.set(rel, nil); err != nil {
					return err
				}
				tx.setIndex(rel, nil)
			}
			if wasCommitted {
				pending[path.Dir(d)] = true
			}
			continue
		}
		if parentChanged && d != "." {
			pending[path.Dir(d)] = true
		}
		t, err := tx.pageTemplate(rel, p)
		if err != nil {
			return err
		}
		sh := shell{Folder: listing}
		if sh.Backlinks, sh.More, err = tx.backlinkShell(rel); err != nil {
			return err
		}
		data, err := render(t, rel, p, sh)
		if err != nil {
			return err
		}
		if raw, ok, _ := tx.st.raw(rel); ok && string(raw) == string(data) {
			continue
		}
		if err := out.set(rel, data); err != nil {
			return err
		}
		tx.setIndex(rel, p)
	}
	return nil
}

func depth(d string) int {
	if d == "." {
		return 0
	}
	return strings.Count(d, "/") + 1
}

// listing lists folder d ("." for the root) as the Tx sees it.
func (tx *Tx) listing(d string) (*FolderListing, error) {
	dir := ""
	if d != "." {
		dir = d
	}
	ents, err := tx.w.v.NodeDir(tx.st.tree, dir)
	if err != nil {
		return nil, err
	}
	files := map[string]bool{}
	folders := map[string]bool{}
	for _, e := range ents {
		if e.Dir {
			folders[e.Name] = true
		} else {
			files[e.Name] = true
		}
	}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	tx.eachWritten(func(rel string, alive bool) {
		if !strings.HasPrefix(rel, prefix) {
			return
		}
		rest := rel[len(prefix):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			if alive {
				folders[rest[:i]] = true
			}
			return
		}
		files[rest] = alive
	})
	l := &FolderListing{}
	terms := &folderTerms{tx: tx, dir: dir, seen: map[string]bool{}}
	names := &folderNames{}
	for name := range folders {
		sub := prefix + name
		alive, err := tx.folderAlive(sub)
		if err != nil {
			return nil, err
		}
		if !alive {
			continue
		}
		fe := FolderEntry{Name: name, Href: name + "/" + IndexName}
		if p, ok, err := tx.page(sub + "/" + IndexName); err == nil && ok {
			d, _ := p.Slot("description")
			fe.Note = oneLine(d)
		}
		l.Folders = append(l.Folders, fe)
	}
	for name, ok := range files {
		if !ok || name == IndexName || !strings.HasSuffix(name, ".html") {
			continue
		}
		pe := PageEntry{Href: name, Title: strings.TrimSuffix(name, ".html")}
		if p, ok, err := tx.page(prefix + name); err == nil && ok {
			if t := p.Meta.Title(); t != "" {
				pe.Title = t
			}
			pe.Template, pe.Updated = p.Meta.Template(), p.Meta.String(KeyUpdated)
			pe.Lead, pe.origin = firstSentence(p), p.Meta.String(KeyOrigin)
			names.add(name, pe.Title, p)
		}
		if err := terms.add(prefix + name); err != nil {
			return nil, err
		}
		l.Pages = append(l.Pages, pe)
	}
	l.Terms, l.MoreTerms = terms.list()
	l.Names, l.MoreNames = names.list()
	rank, err := tx.contentsOrder(d)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(l.Folders, func(a, b FolderEntry) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(l.Pages, func(a, b PageEntry) int { return comparePages(a, b, rank) })
	// Pages of one title are told apart by what differs, their file
	// names ("Introduction (intro.html)"), never by a number — wherever
	// the folder's order puts them (a collection's own order need not
	// keep them side by side).
	titled := make(map[string]int, len(l.Pages))
	for _, p := range l.Pages {
		titled[strings.ToLower(p.Title)]++
	}
	for i := range l.Pages {
		if titled[strings.ToLower(l.Pages[i].Title)] > 1 {
			l.Pages[i].Title += " (" + l.Pages[i].Href + ")"
		}
	}
	if len(l.Pages) > MaxFolderListed {
		// A folder of thousands of pages (a big collection's glossary)
		// keeps its index within the vault's text limit.
		l.Pages, l.MorePages = l.Pages[:MaxFolderListed], len(l.Pages)-MaxFolderListed
	}
	return l, nil
}

// folderAlive reports whether folder dir still holds anything in the Tx's
// view: a Tx that removed its last page and its index empties it.
func (tx *Tx) folderAlive(dir string) (bool, error) {
	for rel, p := range tx.pages {
		if p != nil && strings.HasPrefix(rel, dir+"/") {
			return true, nil
		}
	}
	for rel := range tx.spilled {
		if strings.HasPrefix(rel, dir+"/") {
			return true, nil
		}
	}
	ents, err := tx.w.v.NodeDir(tx.st.tree, dir)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		rel := dir + "/" + e.Name
		if e.Dir {
			if ok, err := tx.folderAlive(rel); err != nil || ok {
				return ok, err
			}
			continue
		}
		if ok, alive := tx.wrote(rel); !ok || alive {
			return true, nil
		}
	}
	return false, nil
}

// oneLine returns the first line of a slot's text, markup stripped,
// shortened for a folder index.
func oneLine(html string) string {
	s := strings.TrimSpace(plainText(html))
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}
