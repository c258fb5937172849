package vault

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// The source catalog beside the wiki (ingest's books, docs/wiki.md): its
// page tables name pages of the wiki, its index names sources whose bytes
// the vault keeps. A merge, a resolve or a hand commit can leave them
// naming what is not there; fsck says so. The names are ingest's (the
// vault does not import it).
const (
	catalogIndex = "sources/index.json"
	catalogPages = "sources/pages"
	catalogWiki  = "published/wiki"
	// catalogRemoved records the pages a person removed (prose wiki rm):
	// a page table may go on naming them, so an ingest knows them again
	// and never re-creates them.
	catalogRemoved = "sources/removed.json"
)

// catalogProblemCap bounds the findings of one catalog file: the first
// few name the fix, the rest are counted.
const catalogProblemCap = 20

// checkCatalog reports page-table rows naming a page the wiki lacks and
// index entries whose source bytes are missing, in the tree root.
func (v *Vault) checkCatalog(root plumbing.Hash) ([]Problem, error) {
	var probs []Problem
	pe, ok, err := v.lookup(root, catalogPages)
	if err != nil {
		return nil, err
	}
	if ok && pe.Mode == filemode.Dir {
		removed, err := v.removedPages(root)
		if err != nil {
			return nil, err
		}
		t, err := v.tree(pe.Hash)
		if err != nil {
			return nil, err
		}
		for _, e := range t.Entries {
			if !e.Mode.IsFile() || path.Ext(e.Name) != ".tsv" {
				continue
			}
			data, err := v.blob(e.Hash)
			if err != nil {
				return nil, err
			}
			file := catalogPages + "/" + e.Name
			var gone []string
			for _, line := range strings.Split(string(data), "\n") {
				if line == "" || line[0] == '#' {
					continue
				}
				page, _, _ := strings.Cut(line, "\t")
				if page == "" || removed[page] {
					continue
				}
				if _, ok, err := v.lookup(root, catalogWiki+"/"+page); err != nil {
					return nil, err
				} else if !ok {
					gone = append(gone, page)
				}
			}
			probs = append(probs, catalogFindings(file, gone, "page", func(p string) string {
				return fmt.Sprintf("names page %s, which the wiki lacks (%s/%s is not on the branch): restore the page (`git log --all -- %s/%s` finds it; `git checkout COMMIT -- %s/%s`, then `prose wiki commit`), or remove its line from %s and commit (`git commit -m 'drop gone pages' %s`)", p, catalogWiki, p, catalogWiki, p, catalogWiki, p, file, file)
			})...)
		}
	}
	ie, ok, err := v.lookup(root, catalogIndex)
	if err != nil || !ok || !ie.Mode.IsFile() {
		return probs, err
	}
	data, err := v.blob(ie.Hash)
	if err != nil {
		return nil, err
	}
	var idx struct {
		Sources map[string]json.RawMessage `json:"sources"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return append(probs, Problem{catalogIndex, fmt.Sprintf("not a catalog (%v): restore it from history (`git log -- %s`; `git checkout COMMIT -- %s`, then commit), or remove it with `git rm %s` and commit, and the next `prose ingest` re-reads every source", err, catalogIndex, catalogIndex, catalogIndex)}), nil
	}
	var missing []string
	for id := range idx.Sources {
		_, hex, ok := strings.Cut(id, ":")
		if !ok || hex == "" || strings.Contains(hex, "/") {
			continue
		}
		if _, ok, err := v.lookup(root, "sources/"+hex); err != nil {
			return nil, err
		} else if !ok {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	probs = append(probs, catalogFindings(catalogIndex, missing, "source", func(id string) string {
		_, hex, _ := strings.Cut(id, ":")
		return fmt.Sprintf("names source %s, whose bytes sources/%s are not on the branch: restore them (`git log --all -- sources/%s` finds them; `git checkout COMMIT -- sources/%s`, then commit), or ingest the source again with `prose ingest FILE`", id, hex, hex, hex)
	})...)
	return probs, nil
}

// catalogFindings is one finding per name, up to the cap, then one that
// counts the rest.
func catalogFindings(file string, names []string, what string, reason func(string) string) []Problem {
	var out []Problem
	for i, n := range names {
		if i == catalogProblemCap {
			out = append(out, Problem{file, fmt.Sprintf("and %d more %ss it names are missing in the same way (the fix above settles each)", len(names)-i, what)})
			break
		}
		out = append(out, Problem{file, reason(n)})
	}
	return out
}

// removedPages are the wiki paths catalogRemoved names in the tree root;
// an unreadable record names none (fsck reports the pages then).
func (v *Vault) removedPages(root plumbing.Hash) (map[string]bool, error) {
	e, ok, err := v.lookup(root, catalogRemoved)
	if err != nil || !ok || !e.Mode.IsFile() {
		return nil, err
	}
	data, err := v.blob(e.Hash)
	if err != nil {
		return nil, err
	}
	var book struct {
		Pages map[string]json.RawMessage `json:"pages"`
	}
	if json.Unmarshal(data, &book) != nil {
		return nil, nil
	}
	out := make(map[string]bool, len(book.Pages))
	for p := range book.Pages {
		out[p] = true
	}
	return out, nil
}
