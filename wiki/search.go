package wiki

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"html"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/text/unicode/norm"
)

// The search index is a cache in one file under .prose/search/ (its name
// carries the format version): an inverted index of every page's title,
// tags and full slot text, with that text kept for snippets, and the wiki
// tree it reflects. Nothing of it is read until a search: the search
// brings it up to the committed tree by diffing that tree against the
// one it reflects (deleted and moved pages leave it), and a missing,
// damaged or other-version index is rebuilt from the vault. It is never
// the only copy of anything.
const searchVersion = "prose-wiki-search-v3\n"

// Hit is one search result.
type Hit struct {
	Path    string   `json:"path"`
	Title   string   `json:"title"`
	Score   float64  `json:"score"`
	Snippet string   `json:"snippet"` // slot text around the hits, each hit in <mark>…</mark>
	Tags    []string `json:"tags"`
}

// The fields a page is indexed by, and how much a match in each counts.
const (
	fieldTitle = iota
	fieldTags
	fieldText
	nFields
)

var fieldBoost = [nFields]float64{3, 2, 1}

// BM25's parameters (the usual ones).
const bm25K1, bm25B = 1.2, 0.75

func (w *Wiki) searchPath() string {
	return w.v.StatePath("search", "wiki-v3.idx")
}

// indexDoc is one page in the index.
type indexDoc struct {
	path, title, tags, text string
	lens                    [nFields]uint32 // tokens per field
}

// posting says a term occurs tf times in one field of one page.
type posting struct {
	doc   uint32
	field uint8
	tf    uint32
}

// memIndex is the index decoded whole, for bringing it up to date.
type memIndex struct {
	docs map[string]*indexDoc
	// byPath holds each page's postings (term, field, tf).
	byPath map[string][]termPosting
}

type termPosting struct {
	term  string
	field uint8
	tf    uint32
}

// diskIndex is the index file as read for a search: nothing is decoded
// but the tables and the postings and pages a query needs.
type diskIndex struct {
	data     []byte
	tree     plumbing.Hash
	ndocs    int
	docOffs  []byte // ndocs × uint32: offset of each page's record
	lens     []byte // ndocs × nFields × uint32
	nterms   int
	termOffs []byte // nterms × uint32: offset of each term's entry
	totals   [nFields]uint64
}

var errDamaged = errors.New("damaged search index")

// The file: the version line, the tree (20 bytes), counts and per-field
// token totals, the page table, the term table, then the page records
// and term entries they point at, and a CRC-32C of everything before it.
//
//	version | tree | ndocs u32 | nterms u32 | totals 3×u64
//	docOffs ndocs×u32 | lens ndocs×3×u32 | termOffs nterms×u32
//	records: path, title, tags, text (each uvarint length + bytes)
//	entries: term (uvarint length + bytes), n uvarint, n × (doc delta uvarint, field byte, tf uvarint)
//	crc u32
//
// castagnoli is made on first use: making the table costs ≈ 0.15 ms,
// which a package initializer would charge every command.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

func readIndex(path string) (*diskIndex, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseIndex(data)
}

func parseIndex(data []byte) (*diskIndex, error) {
	head := len(searchVersion) + 20 + 8 + 8*nFields
	if len(data) < head+4 || string(data[:len(searchVersion)]) != searchVersion {
		return nil, errDamaged
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli()) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, errDamaged
	}
	d := &diskIndex{data: body}
	p := len(searchVersion)
	copy(d.tree[:], body[p:p+20])
	p += 20
	d.ndocs = int(binary.LittleEndian.Uint32(body[p:]))
	d.nterms = int(binary.LittleEndian.Uint32(body[p+4:]))
	p += 8
	for f := range nFields {
		d.totals[f] = binary.LittleEndian.Uint64(body[p:])
		p += 8
	}
	need := uint64(d.ndocs)*4*(1+nFields) + uint64(d.nterms)*4
	if need > uint64(len(body)-p) {
		return nil, errDamaged
	}
	d.docOffs = body[p : p+4*d.ndocs]
	p += 4 * d.ndocs
	d.lens = body[p : p+4*nFields*d.ndocs]
	p += 4 * nFields * d.ndocs
	d.termOffs = body[p : p+4*d.nterms]
	return d, nil
}

func (d *diskIndex) docLen(i int, f int) uint32 {
	return binary.LittleEndian.Uint32(d.lens[4*(nFields*i+f):])
}

// reader walks a record or entry, failing (ok false) past the end.
type reader struct {
	b  []byte
	p  int
	ok bool
}

func (r *reader) uvarint() uint64 {
	if !r.ok {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.p:])
	if n <= 0 {
		r.ok = false
		return 0
	}
	r.p += n
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if !r.ok || n > uint64(len(r.b)-r.p) {
		r.ok = false
		return nil
	}
	b := r.b[r.p : r.p+int(n)]
	r.p += int(n)
	return b
}

func (r *reader) byte1() byte {
	if !r.ok || r.p >= len(r.b) {
		r.ok = false
		return 0
	}
	r.p++
	return r.b[r.p-1]
}

func (d *diskIndex) at(off uint32) *reader {
	if int(off) >= len(d.data) {
		return &reader{}
	}
	return &reader{b: d.data, p: int(off), ok: true}
}

func (d *diskIndex) doc(i int) (indexDoc, error) {
	r := d.at(binary.LittleEndian.Uint32(d.docOffs[4*i:]))
	doc := indexDoc{path: string(r.bytes()), title: string(r.bytes()), tags: string(r.bytes()), text: string(r.bytes())}
	for f := range nFields {
		doc.lens[f] = d.docLen(i, f)
	}
	if !r.ok {
		return doc, errDamaged
	}
	return doc, nil
}

func (d *diskIndex) termAt(i int) (term []byte, r *reader) {
	r = d.at(binary.LittleEndian.Uint32(d.termOffs[4*i:]))
	term = r.bytes()
	return term, r
}

// postings returns the postings of term, or none.
func (d *diskIndex) postings(term string) ([]posting, error) {
	want := []byte(term)
	i := sort.Search(d.nterms, func(i int) bool {
		t, _ := d.termAt(i)
		return bytes.Compare(t, want) >= 0
	})
	if i == d.nterms {
		return nil, nil
	}
	t, r := d.termAt(i)
	if !r.ok {
		return nil, errDamaged
	}
	if !bytes.Equal(t, want) {
		return nil, nil
	}
	return readPostings(r, d.ndocs)
}

func readPostings(r *reader, ndocs int) ([]posting, error) {
	n := r.uvarint()
	if !r.ok || n > uint64(ndocs)*nFields {
		return nil, errDamaged
	}
	out := make([]posting, 0, n)
	doc := uint64(0)
	for k := uint64(0); k < n; k++ {
		doc += r.uvarint()
		f := r.byte1()
		tf := r.uvarint()
		if !r.ok || doc >= uint64(ndocs) || f >= nFields || tf > math.MaxUint32 {
			return nil, errDamaged
		}
		out = append(out, posting{doc: uint32(doc), field: f, tf: uint32(tf)})
	}
	return out, nil
}

// decode reads the whole index into memory, to change it.
func (d *diskIndex) decode(ctx context.Context) (*memIndex, error) {
	m := &memIndex{docs: map[string]*indexDoc{}, byPath: map[string][]termPosting{}}
	paths := make([]string, d.ndocs)
	for i := range d.ndocs {
		doc, err := d.doc(i)
		if err != nil {
			return nil, err
		}
		if _, dup := m.docs[doc.path]; dup {
			return nil, errDamaged
		}
		paths[i] = doc.path
		m.docs[doc.path] = &doc
	}
	for i := range d.nterms {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		t, r := d.termAt(i)
		if !r.ok {
			return nil, errDamaged
		}
		ps, err := readPostings(r, d.ndocs)
		if err != nil {
			return nil, err
		}
		term := string(t)
		for _, p := range ps {
			m.byPath[paths[p.doc]] = append(m.byPath[paths[p.doc]], termPosting{term, p.field, p.tf})
		}
	}
	return m, nil
}

// put indexes one page (replacing what the index held for its path).
func (m *memIndex) put(doc *indexDoc) {
	counts := map[termKey]uint32{}
	for f, s := range [nFields]string{doc.title, doc.tags, doc.text} {
		n := uint32(0)
		tokenize(s, func(tok token) {
			n++
			counts[termKey{tok.term, uint8(f)}]++
			for _, part := range tok.parts {
				counts[termKey{part, uint8(f)}]++
			}
		})
		doc.lens[f] = n
	}
	ps := make([]termPosting, 0, len(counts))
	for k, n := range counts {
		ps = append(ps, termPosting{k.term, k.field, n})
	}
	m.docs[doc.path] = doc
	m.byPath[doc.path] = ps
}

type termKey struct {
	term  string
	field uint8
}

func (m *memIndex) remove(path string) {
	delete(m.docs, path)
	delete(m.byPath, path)
}

// encode writes the index out in the file's layout.
func (m *memIndex) encode(tree plumbing.Hash) []byte {
	paths := make([]string, 0, len(m.docs))
	for p := range m.docs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	terms := map[string][]posting{}
	var totals [nFields]uint64
	for i, p := range paths {
		for f := range nFields {
			totals[f] += uint64(m.docs[p].lens[f])
		}
		for _, tp := range m.byPath[p] {
			terms[tp.term] = append(terms[tp.term], posting{uint32(i), tp.field, tp.tf})
		}
	}
	names := make([]string, 0, len(terms))
	for t := range terms {
		names = append(names, t)
	}
	sort.Strings(names)

	var recs bytes.Buffer
	put := func(s string) {
		recs.Write(binary.AppendUvarint(nil, uint64(len(s))))
		recs.WriteString(s)
	}
	base := len(searchVersion) + 20 + 8 + 8*nFields + 4*len(paths)*(1+nFields) + 4*len(names)
	docOffs := make([]byte, 0, 4*len(paths))
	lens := make([]byte, 0, 4*nFields*len(paths))
	for _, p := range paths {
		d := m.docs[p]
		docOffs = binary.LittleEndian.AppendUint32(docOffs, uint32(base+recs.Len()))
		for f := range nFields {
			lens = binary.LittleEndian.AppendUint32(lens, d.lens[f])
		}
		put(d.path)
		put(d.title)
		put(d.tags)
		put(d.text)
	}
	termOffs := make([]byte, 0, 4*len(names))
	for _, t := range names {
		termOffs = binary.LittleEndian.AppendUint32(termOffs, uint32(base+recs.Len()))
		put(t)
		ps := terms[t]
		sort.Slice(ps, func(i, j int) bool {
			if ps[i].doc != ps[j].doc {
				return ps[i].doc < ps[j].doc
			}
			return ps[i].field < ps[j].field
		})
		recs.Write(binary.AppendUvarint(nil, uint64(len(ps))))
		prev := uint32(0)
		for _, p := range ps {
			recs.Write(binary.AppendUvarint(nil, uint64(p.doc-prev)))
			recs.WriteByte(p.field)
			recs.Write(binary.AppendUvarint(nil, uint64(p.tf)))
			prev = p.doc
		}
	}
	out := make([]byte, 0, base+recs.Len()+4)
	out = append(out, searchVersion...)
	out = append(out, tree[:]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(paths)))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(names)))
	for f := range nFields {
		out = binary.LittleEndian.AppendUint64(out, totals[f])
	}
	out = append(out, docOffs...)
	out = append(out, lens...)
	out = append(out, termOffs...)
	out = append(out, recs.Bytes()...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli()))
}

// maxIndexBytes bounds the index file: its offsets are 32-bit.
const maxIndexBytes = math.MaxUint32 - 1<<20

// openIndex returns the search index, brought up to date with the
// committed wiki first: caught up from the tree it reflects when that
// tree is still in the vault, rebuilt when it is missing or damaged.
func (w *Wiki) openIndex(ctx context.Context) (*diskIndex, error) {
	path := w.searchPath()
	_, tree, err := w.v.NodeHead(Node)
	if err != nil {
		return nil, err
	}
	d, rerr := readIndex(path)
	if rerr == nil && d.tree == tree {
		return d, nil
	}
	var m *memIndex
	from := plumbing.ZeroHash
	if rerr == nil && d.tree != plumbing.ZeroHash && w.v.HasObject(d.tree) {
		if m, err = d.decode(ctx); err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil {
			from = d.tree
		}
	}
	if m == nil || from == plumbing.ZeroHash {
		m = &memIndex{docs: map[string]*indexDoc{}, byPath: map[string][]termPosting{}}
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
		m.remove(c.Path)
		if c.New.IsZero() {
			continue
		}
		data, err := w.v.Blob(c.New)
		if err != nil {
			return nil, err
		}
		p, err := Parse(data)
		if err != nil {
			continue // an unparsable page is not searchable; lint names it
		}
		var text strings.Builder
		for _, s := range p.Slots {
			text.WriteString(plainText(s.HTML))
			text.WriteString("\n")
		}
		m.put(&indexDoc{
			path:  c.Path,
			title: norm.NFC.String(p.Meta.Title()),
			tags:  norm.NFC.String(strings.Join(p.Meta.Tags(), " ")),
			text:  norm.NFC.String(text.String()),
		})
	}
	data := m.encode(tree)
	if len(data) > maxIndexBytes {
		return nil, fmt.Errorf("the wiki's search index would take %d bytes, more than the %d its format holds", len(data), maxIndexBytes)
	}
	if d, err = parseIndex(data); err != nil {
		return nil, err
	}
	// A cache: written whole and renamed into place (a reader sees the
	// old index or the new one), not flushed — a damaged file is rebuilt.
	if err := writeCache(path, data); err != nil {
		return nil, fmt.Errorf("write the search index %s: %w", path, err)
	}
	// The index before this format (a bleve directory) is dropped.
	dir := filepath.Dir(path)
	for _, old := range []string{"wiki.bleve", "wiki.state"} {
		if _, err := os.Lstat(filepath.Join(dir, old)); err == nil {
			os.RemoveAll(filepath.Join(dir, old))
		}
	}
	return d, nil
}

func writeCache(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// Search returns the pages matching text, best first (BM25 over title,
// tags and slot text; the title counts most), at most limit of them;
// limit 0 or less returns every page that matches. A word matches its
// stem (attention, attentions); an identifier (ffi_call, fs.realpath,
// dpkg-source, C++) matches itself, and its parts match as words.
func (w *Wiki) Search(ctx context.Context, text string, limit int) ([]Hit, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("search needs words to look for")
	}
	q := queryTerms(norm.NFC.String(text))
	if len(q) == 0 {
		return nil, fmt.Errorf("search needs words to look for; %q has none (give a word or an identifier such as ffi_call)", text)
	}
	d, err := w.openIndex(ctx)
	if err != nil {
		return nil, err
	}
	scores := map[uint32]float64{}
	n := float64(d.ndocs)
	var avg [nFields]float64
	for f := range nFields {
		if d.ndocs > 0 {
			avg[f] = float64(d.totals[f]) / n
		}
		if avg[f] == 0 {
			avg[f] = 1
		}
	}
	score := func(ps []posting, only map[uint32]bool) {
		var df [nFields]float64
		for _, p := range ps {
			df[p.field]++
		}
		for _, p := range ps {
			if only != nil && !only[p.doc] {
				continue
			}
			idf := math.Log(1 + (n-df[p.field]+0.5)/(df[p.field]+0.5))
			tf := float64(p.tf)
			dl := float64(d.docLen(int(p.doc), int(p.field)))
			scores[p.doc] += fieldBoost[p.field] * idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avg[p.field]))
		}
	}
	var wanted []string // the terms a snippet marks
	for _, t := range q {
		ps, err := d.postings(t)
		if err != nil {
			return nil, w.damaged(err)
		}
		parts := identParts(t)
		if len(ps) > 0 || len(parts) < 2 {
			score(ps, nil)
			wanted = append(wanted, t)
			continue
		}
		// An identifier no page writes whole ("BuildEnvironment.srcdir",
		// where the page heads its class and lists the member alone)
		// is looked for as its words: the pages that hold every one.
		lists := make([][]posting, len(parts))
		var all map[uint32]bool
		for i, part := range parts {
			if lists[i], err = d.postings(part); err != nil {
				return nil, w.damaged(err)
			}
			has := map[uint32]bool{}
			for _, p := range lists[i] {
				if all == nil || all[p.doc] {
					has[p.doc] = true
				}
			}
			all = has
		}
		for i := range parts {
			score(lists[i], all)
		}
		wanted = append(wanted, parts...)
	}
	type scored struct {
		doc   uint32
		score float64
		path  string
	}
	ranked := make([]scored, 0, len(scores))
	for doc, s := range scores {
		ranked = append(ranked, scored{doc: doc, score: s})
	}
	// Ties go by path (documents are numbered in path order).
	sort.Slice(ranked, func(i, j int) bool {
		if ranked[i].score != ranked[j].score {
			return ranked[i].score > ranked[j].score
		}
		return ranked[i].doc < ranked[j].doc
	})
	if limit > 0 && len(ranked) > limit {
		ranked = ranked[:limit]
	}
	want := map[string]bool{}
	for _, t := range wanted {
		want[t] = true
	}
	out := make([]Hit, 0, len(ranked))
	for _, r := range ranked {
		doc, err := d.doc(int(r.doc))
		if err != nil {
			return nil, w.damaged(err)
		}
		out = append(out, Hit{Path: doc.path, Title: doc.title, Score: r.score, Tags: append([]string{}, strings.Fields(doc.tags)...), Snippet: snippet(doc.text, want)})
	}
	return out, nil
}

// damaged drops an index found damaged while searching (the CRC passed,
// so this is a writer's bug or a disk's): the next search rebuilds it.
func (w *Wiki) damaged(err error) error {
	os.Remove(w.searchPath())
	return fmt.Errorf("the search index was damaged and is dropped; search again to rebuild it: %w", err)
}

// ReindexSearch drops the search index and builds it again.
func (w *Wiki) ReindexSearch(ctx context.Context) error {
	if err := os.Remove(w.searchPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	_, err := w.openIndex(ctx)
	return err
}

// snippetRunes is about how much text a snippet shows.
const snippetRunes = 200

// snippet returns the part of text with the most query hits, HTML-escaped,
// each hit in <mark>…</mark>; "" when text holds none.
func snippet(text string, want map[string]bool) string {
	type span struct{ start, end int }
	var hits []span
	tokenize(text, func(tok token) {
		if len(hits) >= 10000 {
			return
		}
		hit := want[tok.term]
		for _, p := range tok.parts {
			hit = hit || want[p]
		}
		if hit {
			hits = append(hits, span{tok.start, tok.end})
		}
	})
	if len(hits) == 0 {
		return ""
	}
	// The window holding the most hits, starting a little before one.
	best, bestN := 0, 0
	for i := range hits {
		n := 0
		for j := i; j < len(hits) && hits[j].end-hits[i].start <= snippetRunes*3/2; j++ {
			n++
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	start := backWords(text, hits[best].start, 6)
	end := start
	for k := 0; end < len(text) && k < snippetRunes; k++ {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
	}
	if end < hits[best].end {
		end = hits[best].end
	}
	end = forwardToSpace(text, end)
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	pos := start
	for _, h := range hits {
		if h.start < start || h.end > end {
			continue
		}
		b.WriteString(html.EscapeString(text[pos:h.start]))
		b.WriteString("<mark>")
		b.WriteString(html.EscapeString(text[h.start:h.end]))
		b.WriteString("</mark>")
		pos = h.end
	}
	b.WriteString(html.EscapeString(text[pos:end]))
	if end < len(text) {
		b.WriteString("…")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// backWords moves back from i over up to n words.
func backWords(s string, i, n int) int {
	j := i
	for n > 0 && j > 0 {
		// Skip spaces, then a word.
		for j > 0 && isSpace(s[j-1]) {
			j--
		}
		for j > 0 && !isSpace(s[j-1]) {
			j--
		}
		n--
		if i-j > snippetRunes/3 {
			break
		}
	}
	return j
}

func forwardToSpace(s string, i int) int {
	for k := 0; i < len(s) && !isSpace(s[i]) && k < 40; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }
