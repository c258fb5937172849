package wiki

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// UnlinkMissing turns every link to a wiki page that does not exist —
// in slots and in related — into plain text, as `rm --unlink` does for
// the page it removes, and returns the pages it rewrote with the targets
// unlinked in each. A link to a folder that holds pages is not missing.
func (tx *Tx) UnlinkMissing() (map[string][]string, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	all, err := tx.allPages()
	if err != nil {
		return nil, err
	}
	exists, folders := map[string]bool{}, map[string]bool{}
	for _, rel := range all {
		exists[rel] = true
		for d := path.Dir(rel); d != "." && !folders[d]; d = path.Dir(d) {
			folders[d] = true
		}
	}
	missing := func(t string) bool {
		return !exists[t] && !folders[strings.TrimSuffix(t, "/"+IndexName)]
	}
	targets := map[string]bool{}
	for _, rel := range all {
		p, ok, err := tx.page(rel)
		if err != nil || !ok {
			continue
		}
		for _, s := range p.Slots {
			for _, h := range links(s.HTML) {
				if t, ok := resolveLink(rel, h); ok && missing(t) {
					targets[t] = true
				}
			}
		}
		for _, r := range p.Meta.Related() {
			if t, err := cleanPagePath(r); err == nil && missing(t) {
				targets[t] = true
			}
		}
	}
	fixed := map[string][]string{}
	for _, t := range slices.Sorted(maps.Keys(targets)) {
		pages, err := tx.relink(t, func(string) (string, bool) { return "", false })
		if err != nil {
			return nil, err
		}
		for _, p := range pages {
			fixed[p] = append(fixed[p], t)
		}
	}
	return fixed, nil
}
