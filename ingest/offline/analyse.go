package offline

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"github.com/prose-store/prose/wiki"
	"path"
	"sort"

	"github.com/prose-store/prose/internal/lazyre"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/model"
)

// IndexEntry is one existing page as prompts list it (the <index> field).
type IndexEntry struct {
	Path     string   `json:"path"`
	Title    string   `json:"title"`
	Template string   `json:"template"`
	Sources  []string `json:"sources,omitempty"`
}

// candidate is a page the engine would write for a source.
type candidate struct {
	page  plan.Page
	kind  string // "source", "procedure", "definition"
	text  string // the text the page says, for finding mentions (until linked)
	sec   *source.Section
	block *source.Block
	def   source.Definition
}

// workspace is what the engine knows while planning one source.
type workspace struct {
	doc *source.Document
	// q is the source as read from the prompt, with what is derived from
	// its text alone; key is what the workspace's candidates depend on.
	q        *quotedDoc
	key      candidateKey
	sourceID string
	// name is the source's name ("docs/guide.md").
	name string
	// mark is the class of what this source adds to a page other sources
	// wrote: the same for every version of the source (it is made from the
	// source's name), so a changed source finds and replaces what it added.
	mark     string
	index    []IndexEntry
	byTitle  map[string][]IndexEntry // by lower-case title, in index order
	byPath   map[string]IndexEntry
	folders  map[string]int // pages per folder, existing and planned
	sents    []string       // the document's sentences, once split
	lowSents []string       // the same in lower case, once
	// sentWords are the sentences (their indexes, in order) by the
	// lower-case words they hold, for the words indexed (see indexWords).
	sentWords map[string][]int
	indexed   map[string]bool
	// pitfallText are the sentences that warn, once found.
	pitfallText []string
	// pitfallSecs are the indexes of the sections whose heading names
	// pitfalls, once found: a source's pages are all written in one call,
	// and each procedure page asks again.
	pitfallSecs []int
	// prereqSec is 1 + the index of the section whose heading names
	// prerequisites, -1 when there is none, 0 before it is looked for.
	prereqSec int
}

func (e Engine) analyse(prompt string) (model.Response, error) {
	w, err := readWorkspace(prompt)
	if err != nil {
		return model.Response{}, err
	}
	p := &plan.Plan{Pages: []plan.Page{}}
	for _, c := range w.candidates() {
		p.Pages = append(p.Pages, c.page)
	}
	return model.Response{Text: "```json\n" + p.JSON() + "\n```", StopReason: model.StopEnd}, nil
}

// readWorkspace reads the source, index and tree fields of a prompt.
func readWorkspace(prompt string) (*workspace, error) {
	text, attrs, ok := plan.Extract(prompt, "source")
	if !ok {
		return nil, fmt.Errorf("the offline engine found no <source> field in the prompt")
	}
	q, err := readQuoted(text)
	if err != nil {
		return nil, fmt.Errorf("the offline engine cannot read the prompt's source: %w", err)
	}
	shared := *q.doc
	doc := &shared
	doc.Kind = source.Kind(attrs["kind"])
	// The attributes are copied: the candidates the source's memo keeps
	// hold them, and a part of the prompt would keep it all alive.
	w := &workspace{doc: doc, q: q, sourceID: strings.Clone(attrs["id"]), name: strings.Clone(attrs["name"]), mark: sourceMark(attrs["name"]), byTitle: map[string][]IndexEntry{}, byPath: map[string]IndexEntry{}, folders: map[string]int{}}
	idx, _, hasIdx := plan.Extract(prompt, "index")
	tree, _, hasTree := plan.Extract(prompt, "tree")
	w.key = candidateKey{q: q, kind: strings.Clone(attrs["kind"]), id: w.sourceID, name: w.name,
		index: sha256.Sum256([]byte(idx)), tree: sha256.Sum256([]byte(tree))}
	if hasIdx && strings.TrimSpace(idx) != "" {
		if err := json.Unmarshal([]byte(idx), &w.index); err != nil {
			return nil, fmt.Errorf("the offline engine cannot read the prompt's index: %w", err)
		}
	}
	for _, e := range w.index {
		w.byTitle[strings.ToLower(e.Title)] = append(w.byTitle[strings.ToLower(e.Title)], e)
		w.byPath[e.Path] = e
		w.folders[folderOf(e.Path)]++
	}
	if hasTree && strings.TrimSpace(tree) != "" {
		var folders []string
		if json.Unmarshal([]byte(tree), &folders) == nil {
			for _, f := range folders {
				if _, ok := w.folders[f]; !ok {
					w.folders[f] = 0
				}
			}
		}
	}
	return w, nil
}

func folderOf(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[:i]
	}
	return ""
}

// candidates derives the pages of the workspace's source, in a stable
// order: the source page, procedures, definitions. No note: the source
// page renders the whole document, so a note of its sentences and lists
// would hold nothing the source page does not.
func (w *workspace) candidates() []candidate {
	if cs, ok := w.q.memo.get(w.key); ok {
		return cs
	}
	cs := w.derive()
	w.q.memo.put(w.key, cs)
	return cs
}

// derive is candidates, computed.
func (w *workspace) derive() []candidate {
	doc := w.doc
	topic := w.topic()
	var out []candidate
	planned := map[string]bool{}
	origins := map[string]bool{}
	add := func(c candidate, folder string) {
		title := c.page.Title
		if origins[c.page.Origin] {
			return // one page per origin: a term defined twice, a section twice
		}
		origins[c.page.Origin] = true
		if e, ok := w.existing(c); ok {
			c.page.Action, c.page.Path, c.page.Template = plan.Update, e.Path, e.Template
		} else {
			name := plan.Slug(title)
			if c.kind != "definition" && len(w.byTitle[strings.ToLower(title)]) > 0 {
				// Another source has a page of this title: this source's
				// own page gets a name of its own.
				name += "-" + w.suffix(name)
			}
			c.page.Action = plan.Create
			c.page.Path = w.place(folder, name, planned)
		}
		if planned[c.page.Path] {
			return // one page per path and run
		}
		planned[c.page.Path] = true
		out = append(out, c)
	}

	add(candidate{kind: "source", page: plan.Page{Template: "source", Title: doc.Title, Origin: w.name, Why: "every ingested source gets a source page"}}, topic) // its text's words: w.q.lowerWords
	anchors := map[string]int{}

	for i := range doc.Sections {
		s := &doc.Sections[i]
		for j := range s.Blocks {
			b := &s.Blocks[j]
			if !presentsSteps(doc, s, b) {
				continue // only a list the document presents as steps
			}
			h := s.Heading
			if h == "" || h == doc.Title {
				h = "steps" // the steps of the document itself
			}
			anchor := plan.Anchor(h)
			if anchors[anchor]++; anchors[anchor] > 1 {
				anchor = fmt.Sprintf("%s-%d", anchor, anchors[anchor]) // a second list of steps in one section
			}
			add(candidate{kind: "procedure", sec: s, block: b, text: sectionText(s),
				page: plan.Page{Template: "procedure", Title: procedureTitle(doc, s), Origin: "#" + anchor, Why: fmt.Sprintf("%d numbered steps", len(b.Items))}}, topic)
		}
	}
	once := definedOnce(doc)
	trails := headingTrails(doc)
	var heads headingMemo
	for i := range doc.Sections {
		s := &doc.Sections[i]
		for j := range s.Blocks {
			b := &s.Blocks[j]
			if b.Kind != source.Definitions {
				continue
			}
			// A list whose every entry is shaped as a term is a list of
			// terms; one holding an option, a path or an expression among
			// them ("-b", "info/refs", "%a") lists an interface, unless it
			// is in a glossary (gitglossary's "<pathspec>" beside its
			// "bare repository").
			terms := shapedTerms(b) || inGlossary(&heads, doc, trails[i])
			for _, d := range b.Defs {
				if !terms || strings.TrimSpace(d.Meaning) == "" || !declaresTerm(&heads, s, trails[i], b, d) || !source.TermShaped(strings.Trim(d.Term, "*_`")) || strings.ContainsAny(d.Term, "\"/:") || !isTerm(d.Term) || !once[strings.ToLower(d.Term)] || wiki.APIName(d.Term) != "" {
					continue // only a declared definition of a name; an API name (size_t) is anchored on the source page and listed in the index of names
				}
				if plainOrLabel(d.Term) && !inGlossary(&heads, doc, trails[i]) && !containsPhrase(strings.ToLower(s.Heading), strings.ToLower(d.Term)) {
					continue // a word or a label a list defines ("abort", "quit", "W1"), not one its heading names: it stays on the source page
				}
				tmpl := "concept"
				if isEntity(&heads, s.Heading, d.Term) {
					tmpl = "entity"
				}
				add(candidate{kind: "definition", sec: s, def: d, text: d.Meaning,
					page: plan.Page{Template: tmpl, Title: d.Term, Origin: plan.TermOrigin(d.Term), Why: "defined under " + quote(headingOr(s, doc.Title))}}, topic)
			}
		}
	}
	w.link(out)
	for i := range out {
		out[i].text = "" // read by link only: not kept in the source's memo
	}
	return out
}

// link gives each candidate the pages whose titles its text mentions —
// this run's and the index's — and ties derived pages to the source page.
func (w *workspace) link(cs []candidate) {
	type target struct {
		path, title, lower string
		// words are the words of lower when it has more than one; one
		// holds when lower is a single word (nothing else).
		words []string
		one   bool
	}
	var targets []target
	seen := map[string]bool{}
	for _, c := range cs {
		targets = append(targets, target{path: c.page.Path, title: c.page.Title, lower: strings.ToLower(c.page.Title)})
		seen[c.page.Path] = true
	}
	for _, e := range w.index {
		if !seen[e.Path] {
			targets = append(targets, target{path: e.Path, title: e.Title, lower: strings.ToLower(e.Title)})
		}
	}
	// The targets by the first word of their title: a text is checked
	// only against the titles whose first word it holds, so linking a
	// source of n definitions costs about n, not n².
	byFirst := map[string][]int{}
	for k, t := range targets {
		if len(t.title) < 4 {
			continue
		}
		if ws := strings.FieldsFunc(t.lower, func(r rune) bool { return !isWordRune(r) }); len(ws) > 0 {
			byFirst[ws[0]] = append(byFirst[ws[0]], k)
			if len(ws) == 1 && ws[0] == t.lower {
				targets[k].one = true
			} else {
				targets[k].words = ws
			}
		} else {
			byFirst[""] = append(byFirst[""], k) // no word: checked against every text
		}
	}
	for i := range cs {
		c := &cs[i]
		var links []plan.Link
		linked := map[string]bool{c.page.Path: true}
		// One page per title: this run's pages come first, so a source
		// links a title it shares with another source's page to its own.
		titled := map[string]bool{strings.ToLower(c.page.Title): true}
		addLink := func(t target) {
			lower := strings.ToLower(t.title)
			if !linked[t.path] && !titled[lower] {
				linked[t.path], titled[lower] = true, true
				links = append(links, plan.Link{Path: t.path, Title: t.title})
			}
		}
		if i > 0 {
			addLink(target{path: cs[0].page.Path, title: cs[0].page.Title}) // back to the source page
		} else {
			for _, d := range cs[1:] {
				addLink(target{path: d.page.Path, title: d.page.Title})
			}
		}
		var lower func() string
		var words []string
		if c.kind == "source" {
			// The whole document's text: split once per source, not once
			// per call, and lowered only when a title of several words
			// is looked for in it.
			lower, words = w.q.lowerWords()
		} else {
			l := strings.ToLower(c.text)
			lower, words = func() string { return l }, distinctWords(l)
		}
		cands := append([]int{}, byFirst[""]...)
		for _, word := range words {
			cands = append(cands, byFirst[word]...)
		}
		sort.Ints(cands) // in the targets' order, as a scan of them all would
		// A title's phrase occurs in the text (between non-word runes)
		// only if each of its words is a word of the text: a title of
		// one word found by its first word is there without a scan, and
		// one of several words is scanned for only when all are there
		// (a scan of a long source for every title was a seventh of
		// ingesting real documents).
		var have map[string]bool
		present := func(t target) bool {
			if t.one {
				return true
			}
			if have == nil {
				have = make(map[string]bool, len(words))
				for _, w := range words {
					have[w] = true
				}
			}
			for _, w := range t.words {
				if !have[w] {
					return false
				}
			}
			return containsPhrase(lower(), t.lower)
		}
		for _, k := range cands {
			if t := targets[k]; !linked[t.path] && !titled[t.lower] && present(t) {
				addLink(t)
			}
		}
		c.page.Links = links
	}
}

// mentions reports whether text names title as a whole phrase, ignoring
// case. Titles shorter than four letters are never matched.
func mentions(text, title string) bool {
	if len(title) < 4 {
		return false
	}
	return containsPhrase(strings.ToLower(text), strings.ToLower(title))
}

// containsPhrase reports whether phrase occurs in text (both lower case)
// with no letter or digit right before or after it.
func containsPhrase(text, phrase string) bool { return indexPhrase(text, phrase) >= 0 }

// indexPhrase is the byte offset of the first such occurrence, or -1.
func indexPhrase(text, phrase string) int {
	if phrase == "" {
		return -1
	}
	for off := 0; off < len(text); {
		i := strings.Index(text[off:], phrase)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(phrase)
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if (i == 0 || !isWordRune(before)) && (end == len(text) || !isWordRune(after)) {
			return i
		}
		off = i + 1
	}
	return -1
}

// asciiLower lowers A–Z only, so byte offsets stay those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// existing is the page a candidate updates, if any. A definition updates
// the page of its term whichever source wrote it (two sources defining one
// term share its page); a source's own page, its procedures and its note
// update only pages this source wrote, so that another source with the
// same title never takes them over.
func (w *workspace) existing(c candidate) (IndexEntry, bool) {
	for _, e := range w.byTitle[strings.ToLower(c.page.Title)] {
		if c.kind == "definition" || contains(e.Sources, w.sourceID) {
			return e, true
		}
	}
	return IndexEntry{}, false
}

// suffix tells this source's pages from those of another source with
// the same title, the same on every run: the words of the source's name
// that the slug lacks ("b/guide.md" → "b" beside "setup-guide"), else a
// short hash of the name.
func (w *workspace) suffix(slug string) string {
	have := map[string]bool{}
	for _, p := range strings.Split(slug, "-") {
		have[p] = true
	}
	var parts []string
	for _, p := range strings.Split(plan.Slug(strings.TrimSuffix(w.name, path.Ext(w.name))), "-") {
		if !have[p] {
			parts = append(parts, p)
		}
	}
	if s := strings.Join(parts, "-"); s != "" && len(s) <= 30 {
		return s
	}
	return plan.ShortHash(w.name)
}

// place picks a free path in folder for slug. The pipeline files pages
// into subfolders where a folder would hold too many.
func (w *workspace) place(folder, slug string, planned map[string]bool) string {
	p := join(folder, slug+".html")
	for n := 2; planned[p] || w.byPath[p].Path != ""; n++ {
		p = join(folder, fmt.Sprintf("%s-%d.html", slug, n))
	}
	w.folders[folder]++
	return p
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}

// topic names the folder a source's pages go to: an existing top-level
// folder its title names, else the title word the source uses most.
func (w *workspace) topic() string {
	titleWords := plan.Words(w.doc.Title)
	for _, t := range titleWords {
		if _, ok := w.folders[t]; ok {
			return t
		}
	}
	if len(titleWords) == 0 {
		return "notes"
	}
	counts := w.q.titleCounts(titleWords, w.doc.Title)
	best := titleWords[0]
	for _, t := range titleWords[1:] {
		if counts[t] > counts[best] {
			best = t
		}
	}
	return best
}

// countWords adds to counts, for each word it holds, how often it occurs
// as a whole word (a run of letters and digits, lower-cased) in texts
// joined by spaces. It walks the texts word by word: lower-casing a 16
// MiB source and splitting it into a slice of every word held ≈ 90 MB at
// once.
func countWords(counts map[string]int, texts ...string) {
	var word []byte
	flush := func() {
		if _, ok := counts[string(word)]; ok && len(word) > 0 {
			counts[string(word)]++
		}
		word = word[:0]
	}
	for _, s := range texts {
		for _, r := range s {
			if r = unicode.ToLower(r); isWordRune(r) {
				word = utf8.AppendRune(word, r)
				continue
			}
			flush()
		}
		flush()
	}
}

var genericHeading = lazyre.New(`(?i)^(steps?|procedure|instructions?|how to|usage|setup|set-up|process)$`)

func procedureTitle(doc *source.Document, s *source.Section) string {
	h := s.Heading
	if h == "" || h == doc.Title || genericHeading().MatchString(h) {
		return "Steps: " + doc.Title
	}
	return h
}

var entityHeading = lazyre.New(`(?i)\b(roles?|people|persons?|teams?|services?|systems?|components?|tools?|products?|organi[sz]ations?|who|severity|levels?)\b`)
var acronym = lazyre.New(`^[A-Z][A-Z0-9-]{1,9}$`)

// isEntity says whether a defined term names a thing (a role, a system, a
// level) rather than an idea.
func isEntity(hm *headingMemo, heading, term string) bool {
	return hm.match(entityHeading(), heading) || acronym().MatchString(term)
}

func headingOr(s *source.Section, fallback string) string {
	if s.Heading != "" {
		return s.Heading
	}
	return fallback
}

// shapedTerms reports whether every term of a definitions block is
// shaped as one (source.TermShaped).
func shapedTerms(b *source.Block) bool {
	for _, d := range b.Defs {
		if !source.TermShaped(strings.Trim(d.Term, "*_`\"")) {
			return false
		}
	}
	return true
}

func quote(s string) string { return "“" + s + "”" }

func sectionText(s *source.Section) string {
	var parts []string
	parts = append(parts, s.Heading)
	for _, b := range s.Blocks {
		parts = append(parts, b.Text)
		parts = append(parts, b.Items...)
	}
	return strings.Join(parts, " ")
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// quoted caches the last sources read from prompts: a generation reads
// the same source as the analysis before it, two or three times. It keeps
// each text's SHA-256, not the text: a quoted text is a part of its prompt,
// and keeping it would keep the whole prompt (16 MiB for a long source)
// alive after its call.
var quoted struct {
	sync.Mutex
	key []quotedKey
	doc []*quotedDoc
}

type quotedKey struct {
	n   int
	sum [sha256.Size]byte
}

// Forget drops the sources the engine has read from prompts. A pipeline
// calls it once it has worked all its sources, so their documents (≈ 25
// MB for a 16 MiB source) are not held through its commit.
func (Engine) Forget() {
	quoted.Lock()
	defer quoted.Unlock()
	quoted.key, quoted.doc = nil, nil
}

// quotedDoc is a source read from a prompt, and what the engine derives
// from its text alone, each part derived once however many calls (the
// analysis, the generation's turns) quote the source.
type quotedDoc struct {
	doc *source.Document

	wordsOnce sync.Once
	words     []string // the text's distinct words in lower case, in order

	countsOnce sync.Once
	counts     map[string]int // the title words' counts in text and title

	// memo holds the candidates of the workspaces that quote the source:
	// a generation's turns (its writes, then its review of conflicts)
	// each ask for them. They go with the source out of the cache.
	memo memo
}

// prose is doc.Prose(), made again on each call: a 16 MiB source's text
// is not kept with it.
func (q *quotedDoc) prose() string { return q.doc.Prose() }

// lowerWords are the document's text in lower case (made again on each
// call, on the first call of the function returned: a 16 MiB source's is
// not kept) and its distinct words (split as the engine splits words,
// kept), in order.
func (q *quotedDoc) lowerWords() (func() string, []string) {
	var lower string
	made := false
	q.wordsOnce.Do(func() {
		lower, made = strings.ToLower(q.prose()), true
		q.words = distinctWords(lower)
	})
	return func() string {
		if !made {
			lower, made = strings.ToLower(q.prose()), true
		}
		return lower
	}, q.words
}

// titleCounts is how often each of the title's words (titleWords, of
// title) occurs as a word of the text and the title, in lower case. The
// words are those of one title, so they are counted once per source.
func (q *quotedDoc) titleCounts(titleWords []string, title string) map[string]int {
	q.countsOnce.Do(func() {
		q.counts = map[string]int{}
		for _, t := range titleWords {
			q.counts[t] = 0
		}
		countWords(q.counts, q.prose(), title)
	})
	return q.counts
}

// distinctWords are the words of lower (split at what is not a letter or
// a digit), each once, in the order of their first use.
func distinctWords(lower string) []string {
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(lower); {
		n := wordRuneAt(lower, i)
		if n == 0 {
			// A rune that is not a letter or a digit (an invalid byte is
			// read as U+FFFD, one byte long, as strings.FieldsFunc does).
			if lower[i] < utf8.RuneSelf {
				i++
			} else {
				_, size := utf8.DecodeRuneInString(lower[i:])
				i += size
			}
			continue
		}
		j := i + n
		for j < len(lower) {
			m := wordRuneAt(lower, j)
			if m == 0 {
				break
			}
			j += m
		}
		if word := lower[i:j]; !seen[word] {
			seen[word] = true
			out = append(out, strings.Clone(word)) // not a part of lower: kept with the source
		}
		i = j
	}
	return out
}

// wordRuneAt is the length of the rune at s[i] when it is a letter or a
// digit (isWordRune), else 0.
func wordRuneAt(s string, i int) int {
	if c := s[i]; c < utf8.RuneSelf {
		if asciiWord[c] {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if isWordRune(r) {
		return n
	}
	return 0
}

// asciiWord are the ASCII bytes isWordRune reports.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = isWordRune(rune(c))
	}
	return t
}()

// readQuoted reads a prompt's quoted source. The document is shared: the
// engine only reads it. The text is parsed outside the cache's lock, so
// calls about different sources (a pipeline asks the next source's
// analysis while the one before is written) do not wait for each other.
func readQuoted(text string) (*quotedDoc, error) {
	k := quotedKey{len(text), sha256.Sum256([]byte(text))}
	if q := cachedQuote(k); q != nil {
		return q, nil
	}
	doc, err := source.ReadQuoted("source.md", []byte(text))
	if err != nil {
		return nil, err
	}
	quoted.Lock()
	defer quoted.Unlock()
	for i, t := range quoted.key {
		if t == k {
			return quoted.doc[i], nil // read meanwhile by another call
		}
	}
	q := &quotedDoc{doc: doc}
	quoted.key = append(quoted.key, k)
	quoted.doc = append(quoted.doc, q)
	if len(quoted.key) > 4 {
		quoted.key, quoted.doc = quoted.key[1:], quoted.doc[1:]
	}
	return q, nil
}

// cachedQuote is the source cached under k, nil when none is.
func cachedQuote(k quotedKey) *quotedDoc {
	quoted.Lock()
	defer quoted.Unlock()
	for i, t := range quoted.key {
		if t == k {
			return quoted.doc[i]
		}
	}
	return nil
}

// candidateKey is what a workspace's candidates depend on: the source and
// its attributes, the index and the tree of the prompt.
// (q is part of the key for completeness: the memo is the source's own.)
// The index and the tree are kept as their SHA-256 and the attributes
// as copies: a part of the prompt would keep the whole prompt alive.
type candidateKey struct {
	q              *quotedDoc
	kind, id, name string
	index, tree    [sha256.Size]byte
}

// memo keeps the candidates of the last two workspaces of a source (the
// analysis's, the generation's). They are only read.
type memo struct {
	sync.Mutex
	keys  []candidateKey
	cands [][]candidate
}

func (m *memo) get(k candidateKey) ([]candidate, bool) {
	m.Lock()
	defer m.Unlock()
	for i, have := range m.keys {
		if have == k {
			return m.cands[i], true
		}
	}
	return nil, false
}

func (m *memo) put(k candidateKey, cs []candidate) {
	m.Lock()
	defer m.Unlock()
	m.keys, m.cands = append(m.keys, k), append(m.cands, cs)
	if len(m.keys) > 2 {
		m.keys, m.cands = m.keys[1:], m.cands[1:]
	}
}
