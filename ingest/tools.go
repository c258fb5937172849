package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/render"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/wiki"
)

// The tool schemas, in the canonical form model/schema reads: fixed-field
// objects are closed; set_meta's updates is an open mapping whose keys
// arrive at call time.
const (
	schemaNewPage = `{"type":"object","properties":{"path":{"type":"string","description":"page path under the wiki root, ending in .html"},"template":{"type":"string"},"title":{"type":"string"}},"required":["path","template","title"]}`
	schemaSlot    = `{"type":"object","properties":{"path":{"type":"string"},"slot":{"type":"string"},"html":{"type":"string"}},"required":["path","slot","html"]}`
	schemaSetMeta = `{"type":"object","properties":{"path":{"type":"string"},"updates":{"type":"object","description":"meta keys to set (null removes a key)","additionalProperties":true}},"required":["path","updates"]}`
	schemaPath    = `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`
	schemaSearch  = `{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":["integer","null"]}},"required":["query"]}`
	schemaTree    = `{"type":"object","properties":{"folder":{"type":["string","null"]}}}`
	schemaMove    = `{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"}},"required":["from","to"]}`
)

// errFatal wraps a tool failure that ends the run (the store could not
// write), as opposed to a mistake the model is told about and may fix.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// toolbox binds the wiki tools to one Tx and records what they did.
type toolbox struct {
	tx *wiki.Tx
	w  *wiki.Wiki
	// only, when set, is the one page the tools may write (enrich).
	only string
	// fail, when set, is asked before each write; an error ends the run
	// (failure injection in tests).
	fail    func(step string) error
	cancel  context.CancelCauseFunc
	created []string
	updated []string
	moved   [][2]string
	touched map[string]bool
	calls   int
	// onPage, when set, hears of each page written (progress).
	onPage func(rel string)
	// guard keeps slots a person changed; source names the source being
	// ingested (empty in enrich).
	guard  *guard
	source string
	// gone turns away writes that would re-create a page a person
	// removed (nil in enrich).
	gone *goneWrites
	// find searches the wiki.
	find func(ctx context.Context, query string, limit int) ([]searchHit, error)
	// checked holds the model's calls to the caps of toolcheck.go (every
	// model but prose's own offline engine); names is what they need.
	checked bool
	names   nameIndex
	written int // bytes of slot HTML and meta the loop's calls wrote
	// alias maps page paths the calls name to the pages they mean: the
	// kept answers of a conversation name its places, which the merge
	// may have moved (pathAlias). Nil: the paths are the pages.
	alias map[string]string
}

// searchHit is one search result as the search tool returns it.
type searchHit struct {
	Path    string `json:"path"`
	Title   string `json:"title"`
	Snippet string `json:"snippet,omitempty"`
}

func newToolbox(tx *wiki.Tx, w *wiki.Wiki) *toolbox {
	return &toolbox{tx: tx, w: w, touched: map[string]bool{}}
}

func (tb *toolbox) tools(write bool) []model.Tool {
	ts := tb.pageTools(write)
	for i := range ts {
		ts[i].Run = tb.aliased(ts[i].Run)
	}
	return ts
}

func (tb *toolbox) pageTools(write bool) []model.Tool {
	ts := []model.Tool{
		{Name: plan.ToolReadPage, Description: "Read a page: its template, meta and slots.", Schema: json.RawMessage(schemaPath), Run: tb.readPage},
		{Name: plan.ToolSearch, Description: "Search the wiki's pages by words; returns paths, titles and snippets.", Schema: json.RawMessage(schemaSearch), Run: tb.search},
		{Name: plan.ToolTree, Description: "List a folder's pages and sub-folders (the root when folder is empty).", Schema: json.RawMessage(schemaTree), Run: tb.tree},
	}
	if !write {
		return ts
	}
	return append(ts,
		model.Tool{Name: plan.ToolNewPage, Description: "Create a page from a template.", Schema: json.RawMessage(schemaNewPage), Run: tb.newPage},
		model.Tool{Name: plan.ToolWriteSlot, Description: "Replace the HTML of one declared slot of a page.", Schema: json.RawMessage(schemaSlot), Run: tb.writeSlot},
		model.Tool{Name: plan.ToolAppendSlot, Description: "Add HTML to the end of one declared slot of a page.", Schema: json.RawMessage(schemaSlot), Run: tb.appendSlot},
		model.Tool{Name: plan.ToolSetMeta, Description: "Merge keys into a page's meta; any key may be set, null removes one.", Schema: json.RawMessage(schemaSetMeta), Run: tb.setMeta},
		model.Tool{Name: plan.ToolMovePage, Description: "Move (rename) a page; links to it are rewritten.", Schema: json.RawMessage(schemaMove), Run: tb.movePage},
	)
}

// aliasedKeys are the arguments of the page tools that name a page.
var aliasedKeys = []string{"path", "from", "to"}

// aliased is run with the page paths of its arguments taken through
// tb.alias first (a path named with or without ".html" alike). Arguments
// that are not an object, or name no aliased page, go as they came.
func (tb *toolbox) aliased(run func(context.Context, json.RawMessage) (string, error)) func(context.Context, json.RawMessage) (string, error) {
	return func(ctx context.Context, args json.RawMessage) (string, error) {
		if len(tb.alias) == 0 {
			return run(ctx, args)
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(args, &fields) != nil {
			return run(ctx, args)
		}
		changed := false
		var page string // the page the call writes, as the conversation named it
		if raw, ok := fields["path"]; ok {
			_ = json.Unmarshal(raw, &page)
		}
		for _, k := range aliasedKeys {
			var p string
			if raw, ok := fields[k]; !ok || json.Unmarshal(raw, &p) != nil {
				continue
			}
			to, ok := tb.alias[p]
			if !ok && !strings.HasSuffix(p, ".html") {
				to, ok = tb.alias[p+".html"]
			}
			if ok {
				fields[k], _ = json.Marshal(to)
				changed = true
			}
		}
		var h string
		if raw, ok := fields["html"]; ok && page != "" && json.Unmarshal(raw, &h) == nil {
			var now string
			_ = json.Unmarshal(fields["path"], &now)
			if moved := aliasLinks(h, page, now, tb.alias); moved != h {
				fields["html"], _ = json.Marshal(moved)
				changed = true
			}
		}
		if changed {
			if out, err := json.Marshal(fields); err == nil {
				args = out
			}
		}
		return run(ctx, args)
	}
}

// aliasLinks rewrites the relative links of h, HTML the conversation
// wrote for its page at from, for the page's place in the merge (to):
// a link to a page the alias moved goes to where it is now, and every
// relative link is made relative to to. Links with a scheme, to an
// anchor alone, or absolute stay as they are.
func aliasLinks(h, from, to string, alias map[string]string) string {
	from, to = withHTML(from), withHTML(to)
	return render.Hrefs(h, "", func(href string) string { return aliasHref(href, from, to, alias) })
}

// aliasHref is aliasLinks for one href (as written: entities kept).
func aliasHref(href, from, to string, alias map[string]string) string {
	target, anchor, hasAnchor := strings.Cut(href, "#")
	if target == "" || strings.HasPrefix(target, "/") || strings.ContainsAny(target, ":?&") {
		return href
	}
	abs := path.Join(path.Dir(from), target)
	if strings.HasPrefix(abs, "../") || abs == ".." {
		return href // outside the wiki: not a page
	}
	if moved, ok := alias[abs]; ok {
		abs = withHTML(moved)
	} else if from == to {
		return href
	}
	out := relPath(to, abs)
	if hasAnchor {
		out += "#" + anchor
	}
	return out
}

// withHTML is a page path with its ".html".
func withHTML(p string) string {
	if p == "" || strings.HasSuffix(p, ".html") {
		return p
	}
	return p + ".html"
}

// step runs the failure hook for one write and counts it.
func (tb *toolbox) step(name string) error {
	tb.calls++
	if tb.fail != nil {
		if err := tb.fail(fmt.Sprintf("tool:%s:%d", name, tb.calls)); err != nil {
			return tb.fatal(err)
		}
	}
	return nil
}

// fatal ends the run: the loop stops at once and the error is what the
// caller reports.
func (tb *toolbox) fatal(err error) error {
	fe := &fatalError{err}
	if tb.cancel != nil {
		tb.cancel(fe)
	}
	return fe
}

// classify passes a store error to the model, which may fix its call:
// every Tx operation works in memory, so its errors are about the call.
func (tb *toolbox) classify(err error) error { return err }

func (tb *toolbox) writable(path string) error {
	if tb.only != "" && path != tb.only && strings.TrimSuffix(path, ".html") != strings.TrimSuffix(tb.only, ".html") {
		return fmt.Errorf("this run may write only %s", tb.only)
	}
	return nil
}

func (tb *toolbox) mark(rel string, created bool) {
	if tb.touched[rel] {
		return
	}
	tb.touched[rel] = true
	if tb.onPage != nil {
		tb.onPage(rel)
	}
	if created {
		tb.created = append(tb.created, rel)
	} else {
		tb.updated = append(tb.updated, rel)
	}
}

func decode(args json.RawMessage, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("arguments: %v", err)
	}
	return nil
}

func (tb *toolbox) newPage(_ context.Context, args json.RawMessage) (string, error) {
	var a plan.NewPageArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	if err := tb.writable(a.Path); err != nil {
		return "", err
	}
	if tb.checked {
		rel, err := checkName(a.Path)
		if err != nil {
			return "", err
		}
		if len(a.Title) > MaxToolTitleBytes {
			return "", fmt.Errorf("the title is %d bytes; a title is at most %d bytes: shorten it", len(a.Title), MaxToolTitleBytes)
		}
		if err := tb.checkNewPage(rel, ""); err != nil {
			return "", err
		}
	}
	if err := tb.step(plan.ToolNewPage); err != nil {
		return "", err
	}
	if out, refused := tb.gone.refuseNew(a.Path, a.Title, tb.source); refused {
		return out, nil
	}
	rel, removed, err := tb.tx.New(a.Path, wiki.NewOptions{Template: a.Template, Title: a.Title})
	if err := tb.classify(err); err != nil {
		return "", err
	}
	tb.placed(rel)
	tb.guard.createdPage(rel)
	tb.mark(rel, true)
	return result(map[string]any{"created": rel, "removed": removed}), nil
}

func (tb *toolbox) writeSlot(_ context.Context, args json.RawMessage) (string, error) {
	return tb.slot(args, false)
}

func (tb *toolbox) appendSlot(_ context.Context, args json.RawMessage) (string, error) {
	return tb.slot(args, true)
}

func (tb *toolbox) slot(args json.RawMessage, appendTo bool) (string, error) {
	var a plan.SlotArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	if err := tb.writable(a.Path); err != nil {
		return "", err
	}
	if a.Slot == render.DocumentSlot {
		return "", errors.New("the document slot holds the source's own text, which prose renders itself: write the other slots")
	}
	if tb.checked {
		if err := tb.checkSlotSize(a, appendTo); err != nil {
			return "", err
		}
	}
	name := plan.ToolWriteSlot
	if appendTo {
		name = plan.ToolAppendSlot
	}
	if err := tb.step(name); err != nil {
		return "", err
	}
	if out, refused := tb.gone.refuseWrite(a.Path, a.Slot, a.HTML, appendTo); refused {
		return out, nil
	}
	if tb.guard != nil {
		if rel, err := tb.tx.Resolve(a.Path); err == nil && tb.guard.decide(tb.tx, rel, a.Slot) {
			// A person changed this slot since prose last wrote it: it
			// stays as they left it, and the text goes to review.
			if err := tb.guard.propose(tb.tx, rel, a.Slot, a.HTML, appendTo, tb.source); err != nil {
				return "", err
			}
			tb.mark(rel, false)
			return result(map[string]any{"page": rel, "slot": a.Slot, "kept": "a person changed this slot since prose last wrote it; it is kept, and this text goes to the review queue"}), nil
		}
	}
	var r wiki.SlotResult
	var err error
	if appendTo {
		r, err = tb.tx.AppendSlot(a.Path, a.Slot, a.HTML)
	} else {
		r, err = tb.tx.WriteSlot(a.Path, a.Slot, a.HTML)
	}
	if err := tb.classify(err); err != nil {
		return "", err
	}
	tb.mark(r.Page, false)
	return result(map[string]any{"page": r.Page, "slot": r.Slot, "removed": r.Removed}), nil
}

func (tb *toolbox) setMeta(_ context.Context, args json.RawMessage) (string, error) {
	var a plan.SetMetaArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	if err := tb.writable(a.Path); err != nil {
		return "", err
	}
	if tb.checked {
		if err := tb.checkMetaSize(a); err != nil {
			return "", err
		}
	}
	if err := tb.step(plan.ToolSetMeta); err != nil {
		return "", err
	}
	if out, refused := tb.gone.refuseWrite(a.Path, "", "", false); refused {
		return out, nil
	}
	set := map[string]any{}
	var remove, ignored []string
	keys := make([]string, 0, len(a.Updates))
	for k := range a.Updates {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == metaSources || k == metaGenerated || k == plan.MetaOrigin || k == metaSourceNames {
			// prose records the sources a page came from itself.
			ignored = append(ignored, k)
			continue
		}
		switch {
		case a.Updates[k] == nil:
			remove = append(remove, k)
		case k == wiki.KeyRelated && tb.checked:
			list, err := tb.checkRelated(a.Updates[k])
			if err != nil {
				return "", err
			}
			set[k] = list
		default:
			set[k] = a.Updates[k]
		}
	}
	set, kept := tb.guard.keepMeta(tb.tx, a.Path, set, tb.source)
	rel, err := tb.tx.SetMeta(a.Path, set, remove)
	if err := tb.classify(err); err != nil {
		return "", err
	}
	tb.mark(rel, false)
	out := map[string]any{"page": rel, "set": keys}
	if ignored != nil {
		out["kept_by_prose"] = ignored
	}
	if kept != nil {
		out["kept_for_review"] = kept
	}
	return result(out), nil
}

func (tb *toolbox) movePage(_ context.Context, args json.RawMessage) (string, error) {
	var a plan.MoveArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	if tb.only != "" {
		return "", errors.New("pages cannot be moved during enrich")
	}
	if tb.checked {
		to, err := checkName(a.To)
		if err != nil {
			return "", err
		}
		from, _ := tb.tx.Resolve(a.From)
		if err := tb.checkNewPage(to, from); err != nil {
			return "", err
		}
	}
	if err := tb.step(plan.ToolMovePage); err != nil {
		return "", err
	}
	if tb.guard.keepMove(tb.tx, a.From, a.To, tb.source) {
		return result(map[string]any{"moved": nil, "kept_for_review": "the page is a person's: it stays where it is, and the move goes to the review queue"}), nil
	}
	from, to, relinked, err := tb.tx.Move(a.From, a.To)
	if err := tb.classify(err); err != nil {
		return "", err
	}
	tb.placed(to)
	tb.moved = append(tb.moved, [2]string{from, to})
	if tb.guard != nil {
		tb.guard.moved(from, to)
	}
	if tb.touched[from] {
		delete(tb.touched, from)
		tb.touched[to] = true
		for i, c := range tb.created {
			if c == from {
				tb.created[i] = to
			}
		}
		for i, c := range tb.updated {
			if c == from {
				tb.updated[i] = to
			}
		}
	}
	return result(map[string]any{"moved": from, "to": to, "relinked": relinked}), nil
}

func (tb *toolbox) readPage(_ context.Context, args json.RawMessage) (string, error) {
	var a plan.PathArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	rel, p, err := tb.tx.Read(a.Path)
	if err := tb.classify(err); err != nil {
		return "", err
	}
	slots := map[string]string{}
	for _, s := range p.Slots {
		slots[s.ID] = s.HTML
	}
	return result(map[string]any{"path": rel, "template": p.Meta.Template(), "meta": map[string]any(p.Meta), "slots": slots}), nil
}

func (tb *toolbox) search(ctx context.Context, args json.RawMessage) (string, error) {
	var a plan.SearchArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	if a.Limit <= 0 || a.Limit > 50 {
		a.Limit = 10
	}
	hits, err := tb.find(ctx, a.Query, a.Limit)
	if err != nil {
		return "", tb.fatal(err)
	}
	if hits == nil {
		hits = []searchHit{}
	}
	return result(hits), nil
}

func (tb *toolbox) tree(_ context.Context, args json.RawMessage) (string, error) {
	var a plan.TreeArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	t, err := tb.w.Tree()
	if err != nil {
		return "", tb.fatal(err)
	}
	n := t
	if f := strings.Trim(a.Folder, "/"); f != "" {
		n = nil
		for _, seg := range strings.Split(f, "/") {
			cur := t
			if n != nil {
				cur = n
			}
			n = nil
			for _, c := range cur.Folders {
				if c.Name == seg {
					n = c
				}
			}
			if n == nil {
				return "", fmt.Errorf("%w: folder %s", wiki.ErrNotFound, f)
			}
		}
	}
	var folders, pages []string
	for _, f := range n.Folders {
		folders = append(folders, f.Path)
	}
	for _, p := range n.Pages {
		pages = append(pages, p.Path+" — "+p.Title)
	}
	return result(map[string]any{"folder": n.Path, "folders": folders, "pages": pages}), nil
}

func result(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
