package ingest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/source"
)

// Two sources whose text is the same — the same document once its chrome
// and its collection's boilerplate are left out, whatever its bytes —
// make one set of pages: those of the first (its primary), which name
// both in their meta (sources, the ids; metaSourceNames, the names). The
// second is a duplicate: it is not sent to a model, and the catalog keeps
// it under catalog.Duplicates. When either changes so the texts differ,
// the duplicate gets pages of its own again. This is the one case where a
// source's pages carry another source of the run.
//
// A collection's markup source beside its rendering is a duplicate too
// (a twin): git's `git-add.txt` beside `git-add.html`, Sphinx's
// `_sources/usage.rst.txt` beside `usage.html`, a README.md beside the
// README.html made from it — one document in two forms, whose pages are
// the rendering's (twinOf says which). It stays one while both are in the
// collection; once the rendering is gone it gets pages of its own.

// metaSourceNames is the page meta key naming the sources whose text a
// page is, its origin's first, when more than one has it; prose keeps it.
const metaSourceNames = "source_names"

// dupRecord is a duplicate: a source whose pages are another's (Of, by
// name), as the catalog keeps it.
type dupRecord struct {
	ID    string `json:"id"`
	Of    string `json:"of"`
	Text  string `json:"text"`
	Kind  string `json:"kind"`
	Title string `json:"title"`
	Memo  string `json:"memo"`
	// Twin says the duplicate is Of's markup source, not its text.
	Twin bool `json:"twin,omitempty"`
}

// textKey is the token of a document's text as prompts quote it (its
// title, headings and blocks, in order): equal for two sources that say
// the same, whatever their format or chrome.
func textKey(d *source.Document) string {
	return canon.BLAKE3.Token([]byte(d.Markdown()))
}

// sameText is how the run's sources share pages: of names each duplicate
// of the run's to the name of the source whose pages hold its text, and
// leaving the duplicates the catalog knows that no longer are (by name,
// the primary they were of).
type sameText struct {
	of      map[string]string
	key     map[string]string
	leaving map[string]string
	twin    map[string]bool // the duplicates that are twins
}

// sameTextOf groups docs by text against the base state, the same
// whatever the order the sources were given in: a source whose text a
// primary of the base state has (one with pages of its own) is a
// duplicate of it, the first such primary by name; among the run's other
// sources of one text the first by name is the primary. A primary of the
// base state in the run stays one (its pages are there).
func (r *run) sameTextOf(docs []*source.Document) *sameText {
	st := &sameText{of: map[string]string{}, key: map[string]string{}, leaving: map[string]string{}, twin: map[string]bool{}}
	inRun := map[string]bool{}
	byName := map[string]*source.Document{}
	for _, d := range docs {
		inRun[d.Name] = true
		byName[d.Name] = d
		st.key[d.Name] = textKey(d)
	}
	// The base state's primaries by name, with their text as it now is.
	primaries := map[string]string{}
	for _, rec := range r.base.Sources {
		if _, dup := r.base.Duplicates[rec.Name]; dup {
			continue
		}
		if k, ok := st.key[rec.Name]; ok {
			primaries[rec.Name] = k
		} else if rec.Text != "" {
			primaries[rec.Name] = rec.Text
		}
	}
	byKey := map[string][]string{}
	for n, k := range primaries {
		byKey[k] = append(byKey[k], n)
	}
	for _, ns := range byKey {
		sort.Strings(ns)
	}
	names := make([]string, 0, len(docs))
	for n := range inRun {
		names = append(names, n) // a document given twice is one source
	}
	sort.Strings(names)
	// Twins first, among the run's sources the base state gave no pages
	// of their own (those keep them): a markup source is its rendering's
	// whatever their names' order.
	for _, n := range names {
		if _, base := primaries[n]; base {
			continue
		}
		if h := twinOf(byName[n], byName); h != "" {
			st.of[n], st.twin[n] = h, true
		}
	}
	first := map[string]string{} // a text's primary among the run's new sources
	for _, n := range names {
		if _, ok := primaries[n]; ok || st.twin[n] {
			continue
		}
		k := st.key[n]
		if ps := byKey[k]; len(ps) > 0 {
			st.of[n] = ps[0]
		} else if p, ok := first[k]; ok {
			st.of[n] = p
		} else {
			first[k] = n
		}
	}
	// A twin whose rendering is itself another's duplicate is that
	// one's too.
	for n := range st.twin {
		if p := st.of[st.of[n]]; p != "" {
			st.of[n] = p
		}
	}
	for n, rec := range r.base.Duplicates {
		if inRun[n] {
			if st.of[n] != rec.Of {
				st.leaving[n] = rec.Of
			}
			continue
		}
		if _, ok := primaries[rec.Of]; rec.Twin && ok {
			continue // its rendering is still there
		}
		if k, ok := primaries[rec.Of]; !ok || k != rec.Text {
			st.leaving[n] = rec.Of // its primary changed (or is gone)
		}
	}
	return st
}

// twinOf is the name of the run's HTML document that d is the markup
// source of, "" when there is none: in d's collection, the page of d's
// path as HTML (`git-add.txt` → `git-add.html`; a Sphinx source
// `_sources/usage.rst.txt` → `usage.html`), whose text says at least
// nine in ten of d's runs of eight words: a file that only shares a name
// is no twin, and neither is a source whose markup the rendering expands
// or leaves out (Sphinx's autodoc and toctree directives): it keeps its
// own page, so nothing it says is lost.
func twinOf(d *source.Document, byName map[string]*source.Document) string {
	if d == nil || !d.Collection || d.Kind == source.HTML || d.Kind == source.Conversation {
		return ""
	}
	for _, h := range twinNames(d.Name) {
		t := byName[h]
		if t == nil || !t.Collection || t.Kind != source.HTML {
			continue
		}
		if sharedRuns(d.Prose(), t.Title+" "+t.Prose()) >= 0.9 {
			return h
		}
	}
	return ""
}

// twinNames are the names of the renderings a markup source's name may
// have.
func twinNames(name string) []string {
	low := strings.ToLower(name)
	var stems []string
	for _, ext := range []string{".rst.txt", ".md.txt", ".txt", ".md", ".markdown", ".rst", ".adoc", ".asciidoc"} {
		if strings.HasSuffix(low, ext) {
			stems = append(stems, name[:len(name)-len(ext)])
			break
		}
	}
	if len(stems) == 0 {
		return nil
	}
	stem := stems[0]
	if i := strings.LastIndex(stem, "_sources/"); i >= 0 && (i == 0 || stem[i-1] == '/') {
		stems = append(stems, stem[:i]+stem[i+len("_sources/"):])
	}
	var out []string
	for _, s := range stems {
		out = append(out, s+".html", s+".htm")
	}
	return out
}

// sharedRuns is the share of a's runs of eight words that b has, in the
// same words in the same order (1 when a has none): how much of what a
// says b says too.
func sharedRuns(a, b string) float64 {
	const n = 8
	runs := func(s string) []string {
		ws := strings.FieldsFunc(strings.ToLower(s), notWordRune)
		var out []string
		for i := 0; i+n <= len(ws); i++ {
			out = append(out, strings.Join(ws[i:i+n], " "))
		}
		return out
	}
	ra := runs(a)
	if len(ra) == 0 {
		return 1
	}
	have := map[string]bool{}
	for _, r := range runs(b) {
		have[r] = true
	}
	k := 0
	for _, r := range ra {
		if have[r] {
			k++
		}
	}
	return float64(k) / float64(len(ra))
}

// skip reports whether d, of memo key memo, is skipped: a duplicate when
// the catalog has it as the same duplicate of the same bytes, any other
// source as before (its bytes known) unless it was a duplicate.
func (r *run) skipSame(d *source.Document, memo string, st *sameText) bool {
	if r.opt.Force {
		return false
	}
	dr, wasDup := r.cat.Duplicates[d.Name]
	if of := st.of[d.Name]; of != "" {
		return wasDup && dr.ID == d.ID && dr.Of == of && dr.Memo == memo && st.leaving[d.Name] == ""
	}
	rec, ok := r.cat.Sources[d.ID]
	return ok && rec.Memo == memo && !wasDup
}

// orderSame puts the sources that were duplicates and now have a text of
// their own after the other sources, and the run's duplicates last (each
// in name order): a primary takes back its earlier bytes before a former
// duplicate holding them gets its own pages, and a duplicate joins the
// pages its primary planned.
func orderSame(todo []*source.Document, st *sameText) []*source.Document {
	var out, former, dups []*source.Document
	for _, d := range todo {
		switch {
		case st.of[d.Name] != "":
			dups = append(dups, d)
		case st.leaving[d.Name] != "":
			former = append(former, d)
		default:
			out = append(out, d)
		}
	}
	return append(append(out, former...), dups...)
}

// originPages are the pages whose origin is the source named name's (its
// source page, section pages and the pages of its sections; not terms):
// in the base state and among the pages the run planned.
func (r *run) originPages(name string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(o, p string) {
		if (o == name || strings.HasPrefix(o, name+"#")) && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for o, p := range r.placed.origins {
		add(o, p)
	}
	for p, rec := range r.base.Pages {
		add(rec.Origin, p)
	}
	sort.Strings(out)
	return out
}

// duplicate takes in d, whose text is the source named of's: its id joins
// the pages of that source, which name both, and the catalog keeps it as
// a duplicate. No model is asked.
func (r *run) duplicate(d *source.Document, of string, st *sameText) error {
	sr := &r.res.Sources[r.sourceIndex(d)]
	sr.SameAs, sr.MarkupOf = of, st.twin[d.Name]
	pages := r.originPages(of)
	sr.Pages = pages
	for _, p := range pages {
		if !contains(r.res.Created, p) {
			r.addOnce(&r.res.Updated, p)
		}
	}
	if r.opt.DryRun {
		sr.Status = "planned"
		return nil
	}
	if r.cat.Duplicates == nil {
		r.cat.Duplicates = map[string]*dupRecord{}
	}
	r.cat.Duplicates[d.Name] = &dupRecord{ID: d.ID, Of: of, Text: st.key[d.Name], Kind: string(d.Kind), Title: d.Title, Memo: r.memoOf(d), Twin: st.twin[d.Name]}
	for _, p := range pages {
		pg, ok, err := r.tx.Page(p)
		if err != nil || !ok {
			continue
		}
		if ids := pg.Meta.Strings(metaSources); !contains(ids, d.ID) {
			ids = append(ids, d.ID)
			sort.Strings(ids)
			if _, err := r.tx.SetMeta(p, map[string]any{metaSources: anyList(ids)}, nil); err != nil {
				return &StepError{"bookkeeping of " + d.Name, err}
			}
		}
		r.touched[p] = true
	}
	sr.Status = "ingested"
	r.keepBoilerplate(d)
	r.storeSource(d)
	return nil
}

// leave gives up the duplicates the catalog knows that no longer are:
// their ids leave their primary's pages (unless the primary's own), and
// a duplicate not in the run (its primary changed) is named in a review
// item: ingest it again to give it pages of its own.
func (r *run) leave(st *sameText) error {
	names := make([]string, 0, len(st.leaving))
	for n := range st.leaving {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		of, dr := st.leaving[n], r.base.Duplicates[n]
		own := map[string]bool{}
		for id, rec := range r.base.Sources {
			if rec.Name == of {
				own[id] = true
			}
		}
		for _, s := range r.res.Sources {
			if s.Name == of {
				own[s.ID] = true
			}
		}
		pages := r.originPages(of)
		_, inRun := st.key[n]
		for _, p := range pages {
			if !contains(r.res.Created, p) {
				r.addOnce(&r.res.Updated, p) // its name (and id) leave the page
			}
		}
		if !inRun {
			if len(pages) > 0 {
				r.review = append(r.review, plan.ReviewItem{Page: pages[0], Kind: "check",
					Detail: fmt.Sprintf("%s had the same text as %s, which changed: this page no longer holds %s's text. Ingest %s again to give it pages of its own.", n, of, n, n)})
			}
		}
		if r.opt.DryRun {
			continue
		}
		delete(r.cat.Duplicates, n)
		if own[dr.ID] {
			continue // the primary's own bytes: its id stays
		}
		for _, p := range pages {
			pg, ok, err := r.tx.Page(p)
			if err != nil || !ok {
				continue
			}
			ids := pg.Meta.Strings(metaSources)
			if !contains(ids, dr.ID) {
				continue
			}
			var keep []string
			for _, id := range ids {
				if id != dr.ID {
					keep = append(keep, id)
				}
			}
			if _, err := r.tx.SetMeta(p, map[string]any{metaSources: anyList(keep)}, nil); err != nil {
				return &StepError{"bookkeeping of " + n, err}
			}
			r.touched[p] = true
		}
	}
	return nil
}

// nameSame writes metaSourceNames on the pages of every primary whose
// duplicates the run changed: the primary's name, then its duplicates'
// in name order; none when it has no duplicate left.
func (r *run) nameSame(st *sameText) error {
	if r.opt.DryRun {
		return nil
	}
	primaries := map[string]bool{}
	for _, of := range st.of {
		primaries[of] = true
	}
	for _, of := range st.leaving {
		primaries[of] = true
	}
	list := make([]string, 0, len(primaries))
	for p := range primaries {
		list = append(list, p)
	}
	sort.Strings(list)
	for _, of := range list {
		var names []string
		for n, dr := range r.cat.Duplicates {
			if dr.Of == of {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, p := range r.originPages(of) {
			pg, ok, err := r.tx.Page(p)
			if err != nil || !ok {
				continue
			}
			var err2 error
			switch {
			case len(names) == 0 && pg.Meta[metaSourceNames] != nil:
				_, err2 = r.tx.SetMeta(p, nil, []string{metaSourceNames})
			case len(names) > 0:
				want := anyList(append([]string{of}, names...))
				if fmt.Sprint(pg.Meta[metaSourceNames]) != fmt.Sprint(want) {
					_, err2 = r.tx.SetMeta(p, map[string]any{metaSourceNames: want}, nil)
				}
			}
			if err2 != nil {
				return &StepError{"bookkeeping of " + of, err2}
			}
			r.touched[p] = true
			r.cat.note(r.tx, p)
		}
	}
	return nil
}

// sameAsEarlier reports whether id, held by a source of the run, is held
// only by sources that were duplicates of d: d's earlier bytes, which it
// may take its pages back from.
func (r *run) sameAsEarlier(id string, d *source.Document) bool {
	holders := r.runNames[id]
	if len(holders) == 0 {
		return false
	}
	for _, n := range holders {
		dr, ok := r.base.Duplicates[n]
		if n == d.Name || !ok || dr.Of != d.Name {
			return false
		}
	}
	return true
}
