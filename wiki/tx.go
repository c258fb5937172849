package wiki

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/vault"
)

// Tx groups wiki writes into one receipt: every operation reads the state
// the Tx started from plus its own earlier operations, and Commit writes
// them all (with the folder indexes they touch) as one commit carrying one
// receipt. Discard, or an error from Commit, leaves the vault as it was.
type Tx struct {
	w     *Wiki
	ctx   context.Context
	st    *state
	pages map[string]*Page // pages written in this Tx held in memory (nil: removed)
	order []string         // pages in first-write order
	// The written pages spilled out of memory (spill.go): a path is in
	// pages or in spilled, never both.
	spilled   map[string]spilled
	spillTo   *spillFile
	spillBuf  []byte   // a record's bytes, written or read
	hot       []string // pages held since the last spill
	heldBytes int      // what the pages held in memory come to
	noSpill   bool     // the spill file failed: every page stays in memory
	removed   map[string][]string
	ops       []string
	rebuild   bool
	done      bool
	// Folders whose indexes a rebuild renders beyond those of the pages
	// it writes (RebuildMerged: the folders of removed files).
	marked map[string]bool
	// Pages taken in from hand edits: always re-rendered.
	force       map[string]bool
	takeInFiles map[string][]byte
	// The links of the base tree's pages (read on first need) and of the
	// pages written, computed again after a write (gen counts the writes).
	links        *linkIndex
	gen, linkGen int
	txLinks      map[string]*linkRec
	txRev        map[string][]string
	// The directories the tool calls' checkInside saw (Tx.checkInside).
	inside insideSeen
}

// checkInside is the Wiki's, remembering the directories it looked at for
// the rest of the Tx: the commit looks at every path it writes again.
func (tx *Tx) checkInside(rel string) error {
	if tx.inside == nil {
		tx.inside = insideSeen{}
	}
	return tx.w.checkInsideSeen(rel, tx.inside)
}

// Begin starts a Tx. It refuses while pages under published/wiki/ carry
// hand edits that `prose wiki commit` has not taken in, so nothing a person
// typed is overwritten.
func (w *Wiki) Begin(ctx context.Context) (*Tx, error) {
	if err := w.checkNoHandEdits(); err != nil {
		return nil, err
	}
	return w.begin(ctx)
}

func (w *Wiki) begin(ctx context.Context) (*Tx, error) {
	st, err := w.head()
	if err != nil {
		return nil, err
	}
	return &Tx{w: w, ctx: ctx, st: st, pages: map[string]*Page{}, removed: map[string][]string{}, force: map[string]bool{}}, nil
}

// checkNoHandEdits refuses when the working tree or the branch holds page
// edits no receipt took in.
func (w *Wiki) checkNoHandEdits() error {
	// A merge git made looks like a hand commit to the wiki: name the
	// command that takes it in, not prose wiki commit.
	if err := w.v.CheckGitMerge(context.Background()); err != nil {
		return err
	}
	edits, err := w.v.NodeHandEdits(Node)
	if err != nil {
		return err
	}
	for _, e := range edits {
		if err := w.checkInside(strings.TrimPrefix(e.Path, Dir+"/")); err != nil {
			return err
		}
	}
	if len(edits) > 0 {
		return handEditsError(edits)
	}
	pending, err := w.committedByGit()
	if err == nil && pending {
		// A writer between its branch and ledger moves looks the same
		// for a moment: wait for it, then look again.
		if err = w.v.WaitWriters(context.Background()); err == nil {
			pending, err = w.committedByGit()
		}
	}
	if err != nil {
		return err
	}
	if pending {
		return fmt.Errorf("%w: pages under %s were changed by a git commit since the last receipt; run `prose wiki commit` to take them in first", ErrHandEdits, Dir)
	}
	return nil
}

func handEditsError(edits []vault.HandEdit) error {
	var names []string
	for i, e := range edits {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(edits)-5))
			break
		}
		names = append(names, e.String())
	}
	return fmt.Errorf("%w (%s); run `prose wiki commit` to take them in first", ErrHandEdits, strings.Join(names, "; "))
}

// committedByGit reports whether the committed wiki's fingerprints differ
// from its last receipt's that published something: pages changed by a
// git commit since (a failed run takes nothing in).
func (w *Wiki) committedByGit() (bool, error) {
	last, err := w.v.LastPublishedReceipt(Node)
	if err != nil {
		return false, err
	}
	_, tree, err := w.v.NodeHead(Node)
	if err != nil {
		return false, err
	}
	if last == nil {
		return !tree.IsZero(), nil
	}
	fps, _, err := w.v.NodeFingerprints(Node, tree)
	if err != nil {
		return false, err
	}
	for k, v := range last.Fingerprints {
		if fps[k] != v {
			return true, nil
		}
	}
	return len(fps) != len(last.Fingerprints), nil
}

func (tx *Tx) check() error {
	if tx.done {
		return errors.New("the wiki transaction is already committed or discarded")
	}
	return tx.ctx.Err()
}

// Discard abandons the Tx; nothing was written.
func (tx *Tx) Discard() {
	tx.done = true
	tx.closeSpill()
}

// page returns the page at wiki path rel as the Tx sees it; ok is false
// when it does not exist.
func (tx *Tx) page(rel string) (*Page, bool, error) {
	if p, written, err := tx.written(rel); written || err != nil {
		return p, p != nil, err
	}
	return tx.st.page(rel)
}

// written returns the page the Tx wrote at rel (nil: removed); written is
// false when the Tx did not write rel.
func (tx *Tx) written(rel string) (p *Page, written bool, err error) {
	if p, ok := tx.pages[rel]; ok {
		return p, true, nil
	}
	if s, ok := tx.spilled[rel]; ok {
		p, err := tx.unspill(rel, s)
		return p, true, err
	}
	return nil, false, nil
}

// wrote reports whether the Tx wrote rel, and alive whether it left a
// page there (false: it removed it).
func (tx *Tx) wrote(rel string) (wrote, alive bool) {
	if p, ok := tx.pages[rel]; ok {
		return true, p != nil
	}
	_, ok := tx.spilled[rel]
	return ok, ok
}

// eachWritten calls fn with every path the Tx wrote and whether it left a
// page there, in no order.
func (tx *Tx) eachWritten(fn func(rel string, alive bool)) {
	for rel, p := range tx.pages {
		fn(rel, p != nil)
	}
	for rel := range tx.spilled {
		fn(rel, true)
	}
}

// page reads and parses a committed page.
func (s *state) page(rel string) (*Page, bool, error) {
	if p, ok := s.parsed[rel]; ok {
		return p, p != nil, nil
	}
	data, ok, err := s.raw(rel)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		s.parsed[rel] = nil
		return nil, false, nil
	}
	p, err := Parse(data)
	if err != nil {
		return nil, true, fmt.Errorf("%s/%s: %w", Dir, rel, err)
	}
	s.parsed[rel] = p
	return p, true, nil
}

func (tx *Tx) put(rel string, p *Page, op string) {
	if ok, _ := tx.wrote(rel); !ok {
		tx.order = append(tx.order, rel)
	}
	tx.hold(rel, p)
	tx.gen++
	if op != "" {
		tx.ops = append(tx.ops, op)
	}
}

// Resolve returns the wiki path of the page named name: a path, with or
// without .html, or a unique page stem. An ambiguous stem is an error that
// lists the candidates.
func (tx *Tx) Resolve(name string) (string, error) { return tx.resolve(name) }

func (tx *Tx) exists(rel string) (bool, error) {
	if ok, alive := tx.wrote(rel); ok {
		return alive, nil
	}
	_, ok, err := tx.st.raw(rel)
	return ok, err
}

func (tx *Tx) resolve(name string) (string, error) {
	rel, err := cleanPagePath(name)
	if err != nil {
		return "", err
	}
	if ok, err := tx.exists(rel); err != nil || ok || path.Base(rel) == IndexName {
		return rel, err
	}
	if strings.Contains(strings.TrimSuffix(rel, ".html"), "/") {
		return "", fmt.Errorf("%w: %s; `prose wiki find` lists pages", ErrNotFound, rel)
	}
	all, err := tx.allPages()
	if err != nil {
		return "", err
	}
	var cands []string
	for _, p := range all {
		if path.Base(p) == rel {
			cands = append(cands, p)
		}
	}
	switch len(cands) {
	case 0:
		return "", fmt.Errorf("%w: %s; `prose wiki find` lists pages", ErrNotFound, strings.TrimSuffix(rel, ".html"))
	case 1:
		return cands[0], nil
	}
	return "", fmt.Errorf("%w: %q names %s; give the path", ErrAmbiguous, strings.TrimSuffix(rel, ".html"), strings.Join(cands, ", "))
}

// allPages lists every page path (.html files) the Tx sees, sorted.
func (tx *Tx) allPages() ([]string, error) {
	files, err := tx.st.list()
	if err != nil {
		return nil, err
	}
	var out []string
	for p := range files {
		if ok, _ := tx.wrote(p); !ok && strings.HasSuffix(p, ".html") {
			out = append(out, p)
		}
	}
	tx.eachWritten(func(p string, alive bool) {
		if alive {
			out = append(out, p)
		}
	})
	slices.Sort(out)
	return out, nil
}

// Read returns the page named name as the Tx sees it.
func (tx *Tx) Read(name string) (string, *Page, error) {
	rel, err := tx.resolve(name)
	if err != nil {
		return "", nil, err
	}
	p, ok, err := tx.page(rel)
	if err != nil {
		return "", nil, err
	}
	if !ok {
		return "", nil, fmt.Errorf("%w: %s", ErrNotFound, rel)
	}
	return rel, p.Clone(), nil
}

// owned returns the page at rel for writing.
func (tx *Tx) owned(name string) (string, *Page, error) {
	rel, err := tx.resolve(name)
	if err != nil {
		return "", nil, err
	}
	if err := tx.checkInside(rel); err != nil {
		return "", nil, err
	}
	p, ok, err := tx.page(rel)
	if errors.Is(err, ErrNotOwned) {
		return "", nil, fmt.Errorf("%s/%s: %w; prose writes only pages it created", Dir, rel, ErrNotOwned)
	}
	if err != nil {
		return "", nil, err
	}
	if !ok && path.Base(rel) == IndexName {
		// A folder's index is written at commit; until then a write to its
		// description starts from the index it will get.
		d := path.Dir(rel)
		alive := d == "."
		if !alive {
			if alive, err = tx.folderAlive(d); err != nil {
				return "", nil, err
			}
		}
		if alive {
			return rel, tx.defaultIndex(d), nil
		}
	}
	if !ok {
		return "", nil, fmt.Errorf("%w: %s", ErrNotFound, rel)
	}
	return rel, p.Clone(), nil
}

// defaultIndex is the index page a folder without one gets.
func (tx *Tx) defaultIndex(d string) *Page {
	title := "Wiki"
	if d != "." {
		title = titleFromStem(path.Base(d))
	}
	return &Page{Meta: Meta{KeyTitle: title, KeyTemplate: "folder", KeyCreated: tx.w.today()}, Slots: []Slot{{ID: "description"}}}
}

// NewOptions are the contents of a new page.
type NewOptions struct {
	Template string
	Title    string
	Tags     []string
	Meta     Meta              // further meta keys
	Slots    map[string]string // initial slot contents (sanitized)
}

// SlotResult is what a slot write did.
type SlotResult struct {
	Page    string   `json:"page"`
	Slot    string   `json:"slot"`
	Removed []string `json:"removed"` // what the sanitizer removed
}

// New creates the page at name (a wiki path) from a template. It returns
// the page's wiki path and what the sanitizer removed from initial slots.
func (tx *Tx) New(name string, o NewOptions) (string, []string, error) {
	if err := tx.check(); err != nil {
		return "", nil, err
	}
	rel, err := cleanPagePath(name)
	if err != nil {
		return "", nil, err
	}
	if path.Base(rel) == IndexName {
		return "", nil, fmt.Errorf("%w: %s is a folder index; prose writes it from the folder's contents (set its description with write-slot)", ErrUnsafe, rel)
	}
	if err := tx.checkInside(rel); err != nil {
		return "", nil, err
	}
	if ok, err := tx.exists(rel); err != nil {
		return "", nil, err
	} else if ok {
		return "", nil, fmt.Errorf("%w: %s; write its slots with write-slot", ErrExists, rel)
	}
	if err := tx.checkNoFolderClash(rel); err != nil {
		return "", nil, err
	}
	tname := o.Template
	if tname == "" {
		tname = "note"
	}
	t, err := tx.w.Template(tname)
	if err != nil {
		return "", nil, err
	}
	m := o.Meta.Clone()
	for k, v := range m {
		if err := checkMetaValue(k, v); err != nil {
			return "", nil, err
		}
	}
	m[KeyTemplate] = t.Name
	title := o.Title
	if title == "" {
		title = m.Title()
	}
	if title == "" {
		title = titleFromStem(strings.TrimSuffix(path.Base(rel), ".html"))
	}
	m[KeyTitle] = title
	if len(o.Tags) > 0 {
		tags := make([]any, len(o.Tags))
		for i, s := range o.Tags {
			tags[i] = s
		}
		m[KeyTags] = tags
	}
	m[KeyCreated] = tx.w.today()
	p := &Page{Meta: m}
	for _, sd := range t.Slots {
		p.Slots = append(p.Slots, Slot{ID: sd.ID})
	}
	var removed []string
	ids := make([]string, 0, len(o.Slots))
	for id := range o.Slots {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !t.Declares(id) {
			return "", nil, undeclared(rel, t, id)
		}
		clean, rm, err := Sanitize(o.Slots[id])
		if err != nil {
			return "", nil, err
		}
		removed = appendRemoved(removed, rm...)
		p.SetSlot(id, clean)
	}
	tx.put(rel, p, "new "+rel)
	return rel, removed, nil
}

// checkNoFolderClash refuses a page whose folders run through an
// existing file (a folder named like a file above it). It looks up each
// folder on the way, never the whole wiki.
func (tx *Tx) checkNoFolderClash(rel string) error {
	segs := strings.Split(rel, "/")
	for k := 1; k < len(segs); k++ {
		dir := strings.Join(segs[:k], "/")
		if _, alive := tx.wrote(dir); alive {
			return fmt.Errorf("%w: %s is a file, not a folder", ErrUnsafe, dir)
		}
		if _, ok, err := tx.st.raw(dir); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("%w: %s is a file, not a folder", ErrUnsafe, dir)
		}
	}
	return nil
}

func titleFromStem(s string) string {
	s = strings.NewReplacer("-", " ", "_", " ").Replace(s)
	if s == "" {
		return s
	}
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToTitle(r)) + s[size:]
}

func undeclared(rel string, t *Template, id string) error {
	var ids []string
	for _, s := range t.Slots {
		ids = append(ids, s.ID)
	}
	return fmt.Errorf("%s: template %s declares no slot %q (its slots: %s)", rel, t.Name, id, strings.Join(ids, ", "))
}

// pageTemplate returns the template of page p.
func (tx *Tx) pageTemplate(rel string, p *Page) (*Template, error) {
	name := p.Meta.Template()
	if name == "" {
		return nil, fmt.Errorf("%s/%s: the meta block names no template; add template: NAME", Dir, rel)
	}
	t, err := tx.w.Template(name)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", Dir, rel, err)
	}
	return t, nil
}

// WriteSlot replaces slot id of the page named name with html, sanitized.
func (tx *Tx) WriteSlot(name, id, html string) (SlotResult, error) {
	return tx.writeSlot(name, id, html, false)
}

// AppendSlot appends html, sanitized, to slot id of the page named name.
func (tx *Tx) AppendSlot(name, id, html string) (SlotResult, error) {
	return tx.writeSlot(name, id, html, true)
}

func (tx *Tx) writeSlot(name, id, html string, appendTo bool) (SlotResult, error) {
	if err := tx.check(); err != nil {
		return SlotResult{}, err
	}
	if err := published.CheckIdent(id); err != nil {
		return SlotResult{}, fmt.Errorf("slot id %w", err)
	}
	rel, p, err := tx.owned(name)
	if err != nil {
		return SlotResult{}, err
	}
	t, err := tx.pageTemplate(rel, p)
	if err != nil {
		return SlotResult{}, err
	}
	if !t.Declares(id) {
		return SlotResult{}, undeclared(rel, t, id)
	}
	clean, removed, err := Sanitize(html)
	if err != nil {
		return SlotResult{}, err
	}
	if appendTo {
		old, _ := p.Slot(id)
		if old != "" && clean != "" && !strings.HasSuffix(old, "\n") {
			old += "\n"
		}
		// Sanitizing the joined text keeps the stored form a fixed point.
		clean, _, err = Sanitize(old + clean)
		if err != nil {
			return SlotResult{}, err
		}
	}
	p.SetSlot(id, clean)
	op := "write-slot "
	if appendTo {
		op = "append-slot "
	}
	tx.put(rel, p, op+rel+" "+id)
	if removed == nil {
		removed = []string{}
	}
	return SlotResult{Page: rel, Slot: id, Removed: removed}, nil
}

// checkMetaValue refuses meta values the format cannot store exactly.
func checkMetaValue(key string, v any) error {
	if err := checkMetaKey(key); err != nil {
		return err
	}
	switch key {
	case KeyTemplate:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("meta %s must be a template name", key)
		}
		return published.CheckIdent(s)
	case KeyTitle:
		if _, ok := v.(string); !ok {
			return fmt.Errorf("meta %s must be text", key)
		}
	}
	if _, err := yamlNode(v); err != nil {
		return fmt.Errorf("meta %s: %w", key, err)
	}
	return nil
}

func checkMetaKey(k string) error {
	if k == "" || !utf8.ValidString(k) || strings.ContainsFunc(k, unicode.IsControl) || strings.TrimSpace(k) != k {
		return fmt.Errorf("meta key %q: keys are non-empty text without line breaks or surrounding spaces", k)
	}
	return nil
}

// SetMeta sets meta keys of the page named name and removes the keys in
// remove. The template key may name another template only if it declares
// every non-empty slot of the page.
func (tx *Tx) SetMeta(name string, set map[string]any, remove []string) (string, error) {
	if err := tx.check(); err != nil {
		return "", err
	}
	rel, p, err := tx.owned(name)
	if err != nil {
		return "", err
	}
	was := p.Meta.Template()
	keys := make([]string, 0, len(set))
	for k, v := range set {
		if err := checkMetaValue(k, v); err != nil {
			return "", err
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p.Meta[k] = cloneValue(set[k])
	}
	for _, k := range remove {
		if k == KeyTemplate || k == KeyTitle {
			return "", fmt.Errorf("meta %s cannot be removed (every page has one); set another value instead", k)
		}
		delete(p.Meta, k)
	}
	t, err := tx.pageTemplate(rel, p)
	if err != nil {
		return "", err
	}
	if t.Name != was {
		if err := templateFits(rel, p, t); err != nil {
			return "", err
		}
	}
	tx.put(rel, p, "set-meta "+rel)
	return rel, nil
}

// templateFits refuses template t for page p when t does not declare a
// slot of p that holds HTML: the text would be left outside every slot
// the template renders.
func templateFits(rel string, p *Page, t *Template) error {
	for _, s := range p.Slots {
		if s.HTML != "" && !t.Declares(s.ID) {
			return fmt.Errorf("%s: template %s declares no slot %q, which holds text; empty the slot first or choose a template that declares it", rel, t.Name, s.ID)
		}
	}
	return nil
}
