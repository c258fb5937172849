package ingest

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/wiki"
)

// Where an ingest keeps its books in the vault, beside the wiki: each
// source's redacted bytes under SourcesDir named by their BLAKE3 hex, and
// the catalog — sources ingested with their memo keys, and the pages with
// their titles — in CatalogFile. Both are committed with the receipt.
const (
	SourcesDir  = "sources"
	CatalogFile = "sources/index.json"
	PagesDir    = "sources/pages"
	ReviewFile  = "review/queue.json"
)

// metaSources is the page meta key listing the ids of the sources a page
// was written from; prose keeps it, a model cannot set it.
const metaSources = "sources"

// catalog is CatalogFile (the sources; their pages are those that list
// them) and the files under PagesDir (the pages, one a line: path, title,
// template and source ids, tab-separated; one file per top-level folder,
// so a run rewrites only the files of the folders it touched).
type catalog struct {
	Version int                      `json:"version"`
	Sources map[string]*sourceRecord `json:"sources"`
	Pages   map[string]*pageRecord   `json:"-"`
	// Duplicates are the sources whose text another source's pages hold,
	// by name (duplicates.go).
	Duplicates map[string]*dupRecord `json:"duplicates,omitempty"`
	// shards are the page files as read, by vault path.
	shards map[string][]byte
	// ix indexes Pages for the analysis prompt; built on first use and
	// kept up to date by note (nil: not built).
	ix *pageIndex
}

// pageIndex is what index needs of the pages, kept up to date as pages
// come and go, so that listing them for each source of an ingest costs
// what that source is relevant to, not the size of the wiki: an ingest of
// many sources into a large wiki was quadratic.
type pageIndex struct {
	sorted  []string            // every page path, in order
	size    int                 // the prompt bytes of all of them (entrySize)
	folders map[string]int      // folder → pages at any depth below it
	byDir   map[string][]string // folder ("." for the root) → its own pages
	byWord  map[string][]string // a title's first word → the pages so titled
	// byOrigin finds a page by its identity (plan.MetaOrigin).
	byOrigin map[string]string
	// low and titled are the paths in lower case and the paths by
	// lower-case title, built on first use (lower, byTitle) and dropped
	// when a page comes or goes.
	low    map[string]bool
	titled map[string][]string
	// examined counts the pages index looked at: how its cost grows, for
	// tests (atomic: a source worked ahead asks index beside the run).
	examined atomic.Int64
}

// entrySize is the size a page takes in the prompt's index, roughly: its
// JSON entry.
func entrySize(p string, r *pageRecord) int {
	return len(p) + len(r.Title) + 48 + 72*len(r.Sources)
}

// pages returns the index of Pages, building it when missing or stale.
func (c *catalog) pages() *pageIndex {
	if c.ix != nil && len(c.ix.sorted) == len(c.Pages) {
		return c.ix
	}
	ix := &pageIndex{folders: map[string]int{}, byDir: map[string][]string{}, byWord: map[string][]string{}, byOrigin: map[string]string{}}
	ix.sorted = make([]string, 0, len(c.Pages))
	for p, r := range c.Pages {
		ix.sorted = append(ix.sorted, p)
		ix.add(p, r)
	}
	sort.Strings(ix.sorted)
	c.ix = ix
	return ix
}

// add and remove keep everything but sorted in step with one page.
func (ix *pageIndex) add(p string, r *pageRecord) {
	ix.low, ix.titled = nil, nil
	ix.size += entrySize(p, r)
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		ix.folders[d]++
	}
	ix.byDir[path.Dir(p)] = append(ix.byDir[path.Dir(p)], p)
	if ws := r.titleWords(); len(ws) > 0 {
		ix.byWord[ws[0]] = append(ix.byWord[ws[0]], p)
	}
	if r.Origin != "" {
		if q, ok := ix.byOrigin[r.Origin]; !ok || p < q {
			ix.byOrigin[r.Origin] = p // two pages of one origin (a copy by hand): the first
		}
	}
}

func (ix *pageIndex) remove(p string, r *pageRecord) {
	ix.low, ix.titled = nil, nil
	ix.size -= entrySize(p, r)
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if ix.folders[d]--; ix.folders[d] == 0 {
			delete(ix.folders, d)
		}
	}
	drop := func(m map[string][]string, k string) {
		l := m[k]
		if i := slices.Index(l, p); i >= 0 {
			l = slices.Delete(l, i, i+1)
		}
		if len(l) == 0 {
			delete(m, k)
		} else {
			m[k] = l
		}
	}
	drop(ix.byDir, path.Dir(p))
	if ws := r.titleWords(); len(ws) > 0 {
		drop(ix.byWord, ws[0])
	}
	if r.Origin != "" && ix.byOrigin[r.Origin] == p {
		delete(ix.byOrigin, r.Origin)
	}
}

// lower is the set of page paths in lower case.
func (ix *pageIndex) lower() map[string]bool {
	if ix.low == nil {
		ix.low = make(map[string]bool, len(ix.sorted))
		for _, p := range ix.sorted {
			ix.low[strings.ToLower(p)] = true
		}
	}
	return ix.low
}

// byTitle lists the pages by lower-case title, in path order.
func (ix *pageIndex) byTitle(c *catalog) map[string][]string {
	if ix.titled == nil {
		ix.titled = map[string][]string{}
		for _, p := range ix.sorted {
			t := strings.ToLower(c.Pages[p].Title)
			ix.titled[t] = append(ix.titled[t], p)
		}
	}
	return ix.titled
}

// warm builds what the catalog builds on first use (its index, the
// lower-case paths, the pages by title, each page's title words), so the
// reads after it change nothing and may run beside each other: the base
// catalog, which no one writes, is read by a source worked ahead beside
// the run's own reads.
func (c *catalog) warm() {
	ix := c.pages()
	ix.lower()
	ix.byTitle(c)
	for _, r := range c.Pages {
		r.titleWords()
	}
}

// byOrigin is the page whose identity is origin, if any.
func (c *catalog) byOrigin(origin string) (string, bool) {
	p, ok := c.pages().byOrigin[origin]
	return p, ok
}

// snapshot is a copy of the catalog as it stands: a run's sources plan
// against the wiki as it was when the run started (records are never
// changed in place, only replaced, so they are shared).
func (c *catalog) snapshot() *catalog {
	s := &catalog{Version: c.Version, Sources: map[string]*sourceRecord{}, Pages: make(map[string]*pageRecord, len(c.Pages))}
	maps.Copy(s.Sources, c.Sources)
	maps.Copy(s.Pages, c.Pages)
	if c.Duplicates != nil {
		s.Duplicates = maps.Clone(c.Duplicates)
	}
	return s
}

// paths returns the page paths in order.
func (c *catalog) paths() []string { return c.pages().sorted }

type sourceRecord struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Title string `json:"title"`
	// Original is the title as the source gave it, when cleaning changed
	// it (titles.go): what a collection's shared suffix is found from.
	Original   string `json:"original_title,omitempty"`
	Memo       string `json:"memo"`
	Redactions int    `json:"redactions"`
	// Text is the token of the source's text (textKey): another source
	// of the same text is its duplicate.
	Text string `json:"text,omitempty"`
}

type pageRecord struct {
	Title    string   `json:"title"`
	Template string   `json:"template"`
	Sources  []string `json:"sources,omitempty"`
	// Origin is the page's identity (plan.MetaOrigin), "" for a page
	// made by hand or by an earlier engine.
	Origin string `json:"-"`
	// words are the title's lower-case words, split once (titleWords).
	words []string
}

// titleWords returns the lower-case words of the page's title.
func (r *pageRecord) titleWords() []string {
	if r.words == nil {
		r.words = strings.FieldsFunc(strings.ToLower(r.Title), notWordRune)
		if r.words == nil {
			r.words = []string{}
		}
	}
	return r.words
}

// SourcePath is where the vault keeps the bytes of source id.
func SourcePath(id string) string {
	_, hex, _ := strings.Cut(id, ":")
	return SourcesDir + "/" + hex
}

// loadCatalog reads the catalog and brings its page list in step with the
// pages tx sees: gone pages are dropped, pages it does not know (made by
// hand) are read once.
func loadCatalog(tx *wiki.Tx, read func(string) ([]byte, bool, error)) (*catalog, error) {
	c := &catalog{Version: 1, Sources: map[string]*sourceRecord{}, Pages: map[string]*pageRecord{}}
	data, ok, err := read(CatalogFile)
	if err != nil {
		return nil, err
	}
	if ok {
		if err := json.Unmarshal(data, c); err != nil {
			return nil, fmt.Errorf("%s: %v (restore it from git, or delete it to re-ingest every source)", CatalogFile, err)
		}
		if c.Sources == nil {
			c.Sources = map[string]*sourceRecord{}
		}
		c.Pages = map[string]*pageRecord{}
	}
	all, err := tx.List()
	if err != nil {
		return nil, err
	}
	c.shards = map[string][]byte{}
	for _, top := range topFolders(all) {
		name := shardPath(top)
		data, ok, err := read(name)
		if err != nil {
			return nil, err
		}
		if ok {
			c.shards[name] = data
			for p, r := range parsePages(data) {
				c.Pages[p] = r
			}
		}
	}
	live := map[string]bool{}
	for _, rel := range all {
		if path.Base(rel) == wiki.IndexName {
			continue
		}
		live[rel] = true
		if _, known := c.Pages[rel]; known {
			continue
		}
		p, ok, err := tx.Page(rel)
		if err != nil || !ok {
			continue // a page prose does not own, or broken: lint reports it
		}
		c.Pages[rel] = recordOf(p)
	}
	for rel := range c.Pages {
		if !live[rel] {
			delete(c.Pages, rel)
		}
	}
	return c, nil
}

// note records the current state of page rel.
func (c *catalog) note(tx *wiki.Tx, rel string) {
	var r *pageRecord
	if p, ok, err := tx.Page(rel); err == nil && ok {
		r = recordOf(p)
	}
	c.set(rel, r)
}

// recordOf is the catalog's record of page p.
func recordOf(p *wiki.Page) *pageRecord {
	return &pageRecord{Title: p.Meta.Title(), Template: p.Meta.Template(), Sources: p.Meta.Strings(metaSources), Origin: p.Meta.String(plan.MetaOrigin)}
}

// set records page rel as r (nil: the page is gone), keeping the index in
// step.
func (c *catalog) set(rel string, r *pageRecord) {
	old, had := c.Pages[rel]
	if r == nil {
		delete(c.Pages, rel)
	} else {
		c.Pages[rel] = r
	}
	ix := c.ix
	if ix == nil {
		return
	}
	if had {
		ix.remove(rel, old)
	}
	if r != nil {
		ix.add(rel, r)
	}
	i, found := slices.BinarySearch(ix.sorted, rel)
	switch {
	case had && r == nil && found:
		ix.sorted = slices.Delete(ix.sorted, i, i+1)
	case !had && r != nil && !found:
		ix.sorted = slices.Insert(ix.sorted, i, rel)
	}
}

// pagesOf lists the pages that record source id, sorted.
func (c *catalog) pagesOf(id string) []string {
	out := []string{}
	for p, r := range c.Pages {
		for _, s := range r.Sources {
			if s == id {
				out = append(out, p)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

func (c *catalog) encode() []byte {
	b, _ := json.MarshalIndent(c, "", "  ")
	return append(b, '\n')
}

// shardPath is the page file of top-level folder top ("" for pages at the
// wiki root).
func shardPath(top string) string {
	if top == "" {
		return PagesDir + "/_root.tsv"
	}
	return PagesDir + "/" + top + ".tsv"
}

func topOf(p string) string {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// topFolders lists the top-level folders of paths, and "" for the root.
func topFolders(paths []string) []string {
	seen := map[string]bool{"": true}
	out := []string{""}
	for _, p := range paths {
		if t := topOf(p); !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// catalogField makes a text one field of a catalog line.
var catalogField = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

// encodePages returns the page files that changed since they were read:
// each a header line, then one page a line, sorted; nil removes a file
// whose folder has no page left.
func (c *catalog) encodePages() map[string][]byte {
	byShard := map[string][]string{}
	for p := range c.Pages {
		name := shardPath(topOf(p))
		byShard[name] = append(byShard[name], p)
	}
	field := catalogField
	out := map[string][]byte{}
	for name, paths := range byShard {
		sort.Strings(paths)
		var b strings.Builder
		b.WriteString("# path\ttitle\ttemplate\tsources\torigin\n")
		for _, p := range paths {
			r := c.Pages[p]
			b.WriteString(p + "\t" + field.Replace(r.Title) + "\t" + field.Replace(r.Template) + "\t" + strings.Join(r.Sources, ",") + "\t" + field.Replace(r.Origin) + "\n")
		}
		if old, ok := c.shards[name]; !ok || string(old) != b.String() {
			out[name] = []byte(b.String())
		}
	}
	for name := range c.shards {
		if _, ok := byShard[name]; !ok {
			out[name] = nil
		}
	}
	return out
}

// parsePages reads a page file; malformed lines are left out (the pages
// they named are read again from the wiki).
func parsePages(data []byte) map[string]*pageRecord {
	out := map[string]*pageRecord{}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 && len(f) != 5 || f[0] == "" {
			continue
		}
		r := &pageRecord{Title: f[1], Template: f[2]}
		if len(f) == 5 {
			r.Origin = f[4] // a file written before pages had an origin has four fields
		}
		if f[3] != "" {
			r.Sources = strings.Split(f[3], ",")
		}
		out[f[0]] = r
	}
	return out
}

// indexEntry is one page as the analysis prompt lists it.
type indexEntry struct {
	Path     string   `json:"path"`
	Title    string   `json:"title"`
	Template string   `json:"template"`
	Sources  []string `json:"sources,omitempty"`
}

// index lists the catalog's pages for a prompt, within maxBytes: all of
// them when they fit, else the pages the source is relevant to — those
// whose title words all occur in it, then those in the folders they sit
// in — so a prompt stays the same size in a wiki of ten thousand pages.
// narrowed reports whether pages were left out.
func (c *catalog) index(doc *source.Document, maxBytes int) (entries []indexEntry, folders []string, narrowed bool) {
	ix := c.pages()
	entry := func(p string) indexEntry {
		r := c.Pages[p]
		return indexEntry{Path: p, Title: r.Title, Template: r.Template, Sources: r.Sources}
	}
	if ix.size <= maxBytes {
		entries = make([]indexEntry, 0, len(ix.sorted))
		for _, p := range ix.sorted {
			entries = append(entries, entry(p))
		}
		ix.examined.Add(int64(len(ix.sorted)))
		return entries, slices.Sorted(maps.Keys(ix.folders)), false
	}
	// The pages whose title words all occur in the source: a title's
	// first word must, so only the pages filed under the source's words
	// are looked at.
	words := wordSet(doc.Title + " " + doc.Prose())
	var hits []string
	hit := map[string]bool{}
	near := map[string]bool{}
	for w := range words {
		for _, p := range ix.byWord[w] {
			ix.examined.Add(1)
			if titleIn(c.Pages[p].titleWords(), words) {
				hits = append(hits, p)
				hit[p] = true
				near[path.Dir(p)] = true
			}
		}
	}
	sort.Strings(hits)
	// Then the other pages of the folders they sit in.
	var others []string
	for d := range near {
		for _, p := range ix.byDir[d] {
			ix.examined.Add(1)
			if !hit[p] {
				others = append(others, p)
			}
		}
	}
	sort.Strings(others)
	size := 0
	for _, p := range append(hits, others...) {
		if size += entrySize(p, c.Pages[p]); size > maxBytes {
			break
		}
		entries = append(entries, entry(p))
	}
	// Top-level folders always, and the folders of the pages shown.
	fs := map[string]bool{}
	for f := range ix.folders {
		if !strings.Contains(f, "/") {
			fs[f] = true
		}
	}
	for _, e := range entries {
		for d := path.Dir(e.Path); d != "."; d = path.Dir(d) {
			fs[d] = true
		}
	}
	for f := range fs {
		folders = append(folders, f)
	}
	sort.Strings(folders)
	return entries, folders, true
}

// wordSet is the lower-case words of s.
func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), notWordRune) {
		out[w] = true
	}
	return out
}

func notWordRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
}

// titleIn reports whether every word of a title (ws, its lower-case words)
// is in words.
func titleIn(ws []string, words map[string]bool) bool {
	if len(ws) == 0 {
		return false
	}
	for _, w := range ws {
		if !words[w] {
			return false
		}
	}
	return true
}
