package ingest

import (
	"fmt"
	"path"
	"strings"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/wiki"
)

// file moves the pages plan p creates out of folders that would hold more
// than wiki.MaxFolderPages pages directly, so that an ingest of many
// sources leaves folders lint accepts. The pages planned into one folder
// move as a group: they stay there when the folder has room for all of
// them, else they all go into the first subfolder that has, named by the
// next of the source's keys (placeKeys) that the folder's path does not
// already name, and deeper while that is full too; past the keys, into a
// numbered sibling ("alpha-2"). So a source's pages stay together; only a
// group larger than a folder holds is split, filling its folder first. The
// same wiki and the same sources always give the same folders. Pages that
// exist already stay where they are. Links between the plan's pages follow
// the moves.
func (r *run) file(d *source.Document, p *plan.Plan) {
	ix := r.cat.pages()
	added := map[string]int{}
	planned := map[string]bool{}
	count := func(dir string) int { return len(ix.byDir[dir]) + added[dir] }
	taken := func(rel string) bool { _, ok := r.cat.Pages[rel]; return ok || planned[rel] }
	keys := placeKeys(d)
	// The created pages by the folder they were planned into, in the
	// plan's order.
	groups := map[string][]int{}
	var dirs []string
	for i, pg := range p.Pages {
		if pg.Action != plan.Create {
			continue
		}
		dir := path.Dir(pg.Path)
		if _, ok := groups[dir]; !ok {
			dirs = append(dirs, dir)
		}
		groups[dir] = append(groups[dir], i)
	}
	moved := map[string]string{}
	for _, dir := range dirs {
		group := groups[dir]
		f := folderFor(dir, keys, count, min(len(group), wiki.MaxFolderPages))
		for _, i := range group {
			pg := &p.Pages[i]
			if count(f) >= wiki.MaxFolderPages {
				f = folderFor(f, keys, count, 1) // a group larger than a folder
			}
			if f != dir {
				stem := strings.TrimSuffix(path.Base(pg.Path), ".html")
				to := joinPath(f, stem+".html")
				for n := 2; taken(to); n++ {
					to = joinPath(f, fmt.Sprintf("%s-%d.html", stem, n))
				}
				moved[pg.Path] = to
				pg.Path = to
			}
			added[f]++
			planned[pg.Path] = true
		}
	}
	if len(moved) == 0 {
		return
	}
	for i := range p.Pages {
		for j, l := range p.Pages[i].Links {
			if to, ok := moved[l.Path]; ok {
				p.Pages[i].Links[j].Path = to
			}
		}
	}
}

// folderFor is the folder need pages planned into dir go to: dir while it
// has room for them, else the first subfolder down the source's keys that
// has.
func folderFor(dir string, keys []string, count func(string) int, need int) string {
	full := func(f string) bool { return count(f)+need > wiki.MaxFolderPages }
	f := dir
	k := 0
	for full(f) {
		for k < len(keys) && names(f, keys[k]) {
			k++
		}
		if k < len(keys) {
			f = joinPath(f, keys[k])
			k++
			continue
		}
		parent, base := path.Dir(f), path.Base(f)
		if f == "." {
			parent, base = ".", "pages"
		}
		for n := 2; ; n++ {
			if g := joinPath(parent, fmt.Sprintf("%s-%d", base, n)); !full(g) {
				return g
			}
		}
	}
	return f
}

// names reports whether folder f has a segment named s.
func names(f, s string) bool {
	for _, seg := range strings.Split(f, "/") {
		if seg == s {
			return true
		}
	}
	return false
}

// placeKeys are the subfolder names a source's pages may be filed under,
// in order: the folders of the source's own name below the one it was
// found in ("docs/api/v2/auth.md" → api, v2), then the words of its title
// worth a folder (plan.Words).
func placeKeys(d *source.Document) []string {
	var keys []string
	seen := map[string]bool{}
	add := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	dirs := strings.Split(path.Dir(d.Name), "/")
	if len(dirs) > 1 {
		for _, seg := range dirs[1:] {
			add(plan.Slug(seg))
		}
	}
	for _, w := range plan.Words(d.Title) {
		add(w)
	}
	return keys
}

func joinPath(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}
