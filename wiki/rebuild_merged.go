package wiki

import (
	"context"
	"errors"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// RebuildMerged re-renders the derived shell a merge can have changed,
// with the same result as Rebuild at a cost that follows the merge, not
// the wiki. sides are the branch commits the merge joined (this vault's
// and the remote's), each a wiki whose shells were current. A page's
// shell is its own data (the merged file), its "Referenced by" (the pages
// linking to it and their titles) and, for a folder index, the folder's
// pages, subfolders, terms and contents page. So against each side, what
// can differ is: the pages that differ between the side and the merged
// wiki, the pages those link to in either version (their "Referenced by"
// and the terms of their folders), and the folder indexes of every
// changed path's folder up to the root. A page's shell shows nothing of
// the pages it links to (related links show their file names), so the
// pages linking to a changed page keep theirs.
//
// When the vault's own templates (TemplateDir) differ between a side and
// the merged branch, every page may render differently: it is Rebuild.
// Rendered in the result counts the pages re-rendered.
func (w *Wiki) RebuildMerged(ctx context.Context, sides ...plumbing.Hash) (*Result, error) {
	tx, err := w.Begin(ctx)
	if err != nil {
		return nil, err
	}
	tmpl, _, err := w.v.EntryAt(tx.st.base, TemplateDir)
	if err != nil {
		return nil, err
	}
	whole := len(sides) == 0
	for _, s := range sides {
		t, _, err := w.v.EntryAt(s, TemplateDir)
		if err != nil {
			return nil, err
		}
		whole = whole || s.IsZero() || t != tmpl
	}
	if whole {
		tx.Discard()
		return w.Rebuild(ctx, nil)
	}
	tx.rebuild = true
	tx.marked = map[string]bool{}
	pages := map[string]bool{}
	linksOf := func(rel string, data []byte) {
		if p, err := Parse(data); err == nil {
			for _, t := range pageLinks(rel, p).targets {
				if strings.HasSuffix(t, ".html") { // an image has no shell
					pages[t] = true
				}
			}
		}
	}
	for _, s := range sides {
		tree, _, err := w.v.EntryAt(s, Dir)
		if err != nil {
			return nil, err
		}
		changes, err := w.v.DiffNodeTrees(tree, tx.st.tree)
		if err != nil {
			return nil, err
		}
		for _, c := range changes {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			// Any file counts for its folder: a folder holding nothing
			// else leaves its parent's listing with its last file.
			for d := path.Dir(c.Path); ; d = path.Dir(d) {
				tx.marked[d] = true
				if d == "." {
					break
				}
			}
			if !strings.HasSuffix(c.Path, ".html") {
				continue
			}
			pages[c.Path] = true
			if old, ok, err := w.v.NodeFile(tree, c.Path); err != nil {
				return nil, err
			} else if ok {
				linksOf(c.Path, old)
			}
			if !c.New.IsZero() {
				data, err := w.v.Blob(c.New)
				if err != nil {
					return nil, err
				}
				linksOf(c.Path, data)
			}
		}
	}
	n := 0
	for _, rel := range slices.Sorted(maps.Keys(pages)) {
		p, ok, err := tx.st.page(rel)
		if errors.Is(err, ErrNotOwned) || err == nil && !ok {
			continue // gone in the merged wiki (its folder is marked), or not prose's
		}
		if err != nil {
			return nil, err
		}
		tx.put(rel, p.Clone(), "")
		n++
	}
	res, err := tx.Commit()
	if res != nil {
		res.Rendered = n
	}
	return res, err
}
