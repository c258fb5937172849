package wiki

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/net/html"

	"github.com/prose-store/prose/internal/progress"
)

// HandEditResult is what `prose wiki commit` took in.
type HandEditResult struct {
	Result
	Pages   []string            `json:"pages"`   // pages taken in
	Removed map[string][]string `json:"removed"` // per page, what the sanitizer removed
	// Deleted are the pages a person deleted (by hand or with git), taken
	// in as removals; Broken names, per deleted page, the pages whose
	// links to it now break.
	Deleted []string            `json:"deleted"`
	Broken  map[string][]string `json:"broken"`
	// Discarded names, per page, the text a person wrote outside the
	// page's slots and meta (the shell), which the commit re-rendered.
	Discarded map[string][]string `json:"discarded"`
}

// CommitHandEdits takes in the pages people edited under published/wiki/ —
// in the working tree, or committed with git since the last receipt — as
// one receipt: each page is parsed, its slots sanitized and its shell
// re-rendered. A page whose format is broken refuses the whole commit with
// the line and the fix, and nothing is written.
func (w *Wiki) CommitHandEdits(ctx context.Context) (*HandEditResult, error) {
	return w.CommitHandEditsWith(ctx, nil)
}

// CommitHandEditsWith is CommitHandEdits whose fn, when not nil, is given
// the pages the hand edits deleted, as they were before (wiki path → page;
// nil for one that did not parse), and gives the options of the commit:
// the vault files outside the wiki that change with the removals (a review
// queue closing the items of a removed page, the record of removals).
func (w *Wiki) CommitHandEditsWith(ctx context.Context, fn func(tx *Tx, deleted map[string]*Page) (CommitOptions, error)) (*HandEditResult, error) {
	tx, err := w.begin(ctx)
	if err != nil {
		return nil, err
	}
	out := &HandEditResult{Removed: map[string][]string{}, Pages: []string{}, Deleted: []string{}, Broken: map[string][]string{}, Discarded: map[string][]string{}}
	deleted := map[string]*Page{}
	takeIn := map[string][]byte{}
	rels := map[string]bool{}
	edits, err := w.v.NodeHandEdits(Node)
	if err != nil {
		return nil, err
	}
	for _, e := range edits {
		rel := strings.TrimPrefix(e.Path, Dir+"/")
		full := filepath.Join(w.v.Root(), filepath.FromSlash(e.Path))
		if err := w.checkInside(rel); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(full)
		if errors.Is(err, os.ErrNotExist) {
			takeIn[e.Path] = nil
			rels[rel] = false
			continue
		}
		if err != nil {
			return nil, err
		}
		takeIn[e.Path] = data
		rels[rel] = true
		before, _, err := tx.st.raw(rel)
		if err != nil {
			return nil, err
		}
		if err := tx.takeIn(rel, data, before, out); err != nil {
			return nil, err
		}
	}
	// Pages committed with git since the last receipt: compare the tree of
	// the last receipt with the branch.
	if pending, err := w.committedByGit(); err != nil {
		return nil, err
	} else if pending {
		old, _, err := w.v.NodeReceiptTree(Node)
		if err != nil {
			return nil, err
		}
		before, err := w.v.NodeFiles(old)
		if err != nil {
			return nil, err
		}
		now, err := tx.st.list()
		if err != nil {
			return nil, err
		}
		for rel := range before {
			if _, ok := now[rel]; !ok && !rels[rel] && strings.HasSuffix(rel, ".html") {
				// Deleted with git: the deletion is taken in.
				tx.put(rel, nil, "rm "+rel)
				tx.removed[rel] = nil
				out.Pages = append(out.Pages, rel)
				deleted[rel] = nil
				if data, err := w.v.Blob(before[rel]); err == nil {
					if p, err := Parse(data); err == nil {
						deleted[rel] = p
					}
				}
			}
		}
		for rel, h := range now {
			if before[rel] == h || rels[rel] {
				continue
			}
			data, err := w.v.Blob(h)
			if err != nil {
				return nil, err
			}
			var prev []byte
			if bh, ok := before[rel]; ok {
				if prev, err = w.v.Blob(bh); err != nil {
					return nil, err
				}
			}
			if err := tx.takeIn(rel, data, prev, out); err != nil {
				return nil, err
			}
		}
	}
	for rel, present := range rels {
		if !present {
			// Deleted by hand: the deletion is taken in.
			if p, ok, err := tx.st.page(rel); err == nil && ok {
				deleted[rel] = p
			} else {
				deleted[rel] = nil
			}
			tx.put(rel, nil, "rm "+rel)
			tx.removed[rel] = nil
			out.Pages = append(out.Pages, rel)
		}
	}
	slices.Sort(out.Pages)
	for rel := range deleted {
		if path.Base(rel) == IndexName {
			delete(deleted, rel) // a folder index is the folder's, rewritten from what it holds
			continue
		}
		out.Deleted = append(out.Deleted, rel)
		linkers, err := tx.linkers(rel)
		if err != nil {
			return nil, err
		}
		if len(linkers) > 0 {
			out.Broken[rel] = linkers
		}
	}
	slices.Sort(out.Deleted)
	tx.takeInFiles = takeIn
	var o CommitOptions
	if fn != nil {
		if o, err = fn(tx, deleted); err != nil {
			return nil, err
		}
	}
	res, err := tx.CommitWith(o)
	if err != nil {
		return nil, err
	}
	out.Result = *res
	return out, nil
}

// takeIn reads one hand-edited page into the Tx; before is the page's
// file as the last receipt left it (nil for a page added by hand).
func (tx *Tx) takeIn(rel string, data, before []byte, out *HandEditResult) error {
	if !strings.HasSuffix(rel, ".html") {
		return fmt.Errorf("%s/%s: only .html pages live in the wiki; move the file elsewhere", Dir, rel)
	}
	p, err := Parse(data)
	if errors.Is(err, ErrNotOwned) {
		return fmt.Errorf("%s/%s: %w; add a <!-- prose:meta … --> block (see docs/wiki-format.md) or move the file out of the wiki", Dir, rel, err)
	}
	if err != nil {
		return fmt.Errorf("%s/%s: %w", Dir, rel, err)
	}
	if _, err := tx.pageTemplate(rel, p); err != nil {
		return err
	}
	for k, v := range p.Meta {
		if err := checkMetaValue(k, v); err != nil {
			return fmt.Errorf("%s/%s: %w", Dir, rel, err)
		}
	}
	for i, s := range p.Slots {
		clean, removed, err := Sanitize(s.HTML)
		if err != nil {
			return fmt.Errorf("%s/%s: slot %s: %w", Dir, rel, s.ID, err)
		}
		p.Slots[i].HTML = clean
		if len(removed) > 0 {
			out.Removed[rel] = appendRemoved(out.Removed[rel], removed...)
		}
	}
	if lost := tx.discardedShell(rel, data, before, p); len(lost) > 0 {
		out.Discarded[rel] = lost
	}
	tx.put(rel, p, "commit "+rel)
	tx.force[rel] = true
	out.Pages = append(out.Pages, rel)
	return nil
}

// discardedShell names the text a person wrote into page rel's shell —
// outside its slots and meta, as in the hand-edited file data — that
// taking the page in discards: text the shell held neither before (the
// file as the last receipt left it) nor holds after (p re-rendered). Each is named with the
// element it sat in and where such text goes instead.
func (tx *Tx) discardedShell(rel string, data, before []byte, p *Page) []string {
	edited := shellTexts(data)
	if len(edited) == 0 {
		return nil
	}
	had := map[shellText]int{}
	for _, t := range shellTexts(before) {
		had[t]++
	}
	left, seen := 0, map[shellText]int{}
	for _, t := range edited {
		if seen[t]++; seen[t] > had[t] {
			left++
		}
	}
	if left == 0 {
		return nil // the shell says what it said: nothing to name
	}
	// What the re-rendered shell says is not lost (a retitle that also
	// changed the heading).
	if next, err := tx.renderPage(rel, p.Clone()); err == nil {
		for _, t := range shellTexts(next) {
			had[t]++
		}
	}
	page := strings.TrimSuffix(rel, ".html")
	var out []string
	for _, t := range edited {
		if had[t] > 0 {
			had[t]--
			continue
		}
		where := "a slot (prose wiki write-slot " + page + " ID; prose wiki list-slots " + page + " lists them)"
		if t.elem == "h1" || t.elem == "title" {
			where = "the title (prose wiki set-meta " + page + " title=…)"
		}
		s := t.text
		if r := []rune(s); len(r) > 80 {
			s = string(r[:79]) + "…"
		}
		out = appendRemoved(out, fmt.Sprintf("%q in <%s>, outside the slots: the shell is rendered from the meta and the template, so it goes; put it in %s", s, t.elem, where))
	}
	return out
}

// voidElements have no end tag.
var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// shellText is one text of a page's shell and the element it sits in.
type shellText struct{ elem, text string }

// shellTexts returns the texts of a page file outside its slots and its
// meta block, as a browser's tokenizer reads them (style and script
// content left out).
func shellTexts(data []byte) []shellText {
	var out []shellText
	var stack []string
	inSlot := false
	z := html.NewTokenizer(bytes.NewReader(data))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.CommentToken:
			raw := string(z.Raw())
			switch {
			case strings.HasPrefix(raw, slotPrefix):
				inSlot = true
			case strings.HasPrefix(raw, slotEnd):
				inSlot = false
			}
		case html.StartTagToken:
			name, _ := z.TagName()
			if !inSlot && !voidElements[string(name)] {
				stack = append(stack, string(name))
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if !inSlot {
				for i := len(stack) - 1; i >= 0; i-- {
					if stack[i] == string(name) {
						stack = stack[:i]
						break
					}
				}
			}
		case html.TextToken:
			if inSlot {
				continue
			}
			elem := "body"
			if len(stack) > 0 {
				elem = stack[len(stack)-1]
			}
			if elem == "style" || elem == "script" {
				continue
			}
			if t := strings.Join(strings.Fields(string(z.Text())), " "); t != "" {
				out = append(out, shellText{elem, t})
			}
		}
	}
}

// Rebuild re-renders every page's shell with the current templates and
// commits the result as one commit without a receipt (no fingerprint
// moves). Progress goes to progressOut when it is a terminal.
func (w *Wiki) Rebuild(ctx context.Context, progressOut io.Writer) (*Result, error) {
	tx, err := w.Begin(ctx)
	if err != nil {
		return nil, err
	}
	tx.rebuild = true
	all, err := tx.allPages()
	if err != nil {
		return nil, err
	}
	bar := progress.New(progressOut, int64(len(all)), "rebuild", progress.Items)
	defer bar.Finish()
	for _, rel := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, _, err := tx.st.page(rel)
		if errors.Is(err, ErrNotOwned) {
			bar.Add(1)
			continue
		}
		if err != nil {
			return nil, err
		}
		tx.put(rel, p.Clone(), "")
		bar.Add(1)
	}
	res, err := tx.Commit()
	if res != nil {
		res.Rendered = len(tx.order)
	}
	return res, err
}
