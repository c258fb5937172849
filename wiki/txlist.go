package wiki

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// List returns the path of every page the Tx sees (folder indexes
// included), sorted.
func (tx *Tx) List() ([]string, error) { return tx.allPages() }

// Page returns the page at wiki path rel as the Tx sees it, without
// copying it: callers must not change it. ok is false when there is none.
func (tx *Tx) Page(rel string) (*Page, bool, error) { return tx.page(rel) }

// Linkers lists the pages, as the Tx sees them, whose slots or related
// meta link to the page at wiki path target.
func (tx *Tx) Linkers(target string) ([]string, error) {
	out, err := tx.linkers(target)
	slices.Sort(out)
	return out, err
}

// Describe writes html as the description of folder dir ("" or "." for
// the root) when the folder's index has none yet, and reports whether it
// did. A description already written — by a person or earlier — is never
// replaced.
func (tx *Tx) Describe(dir, html string) (bool, error) {
	if err := tx.check(); err != nil {
		return false, err
	}
	rel := IndexName
	if d := strings.Trim(dir, "/"); d != "" && d != "." {
		rel = d + "/" + IndexName
	}
	if err := tx.checkInside(rel); err != nil {
		return false, err
	}
	p, had, err := tx.page(rel)
	if errors.Is(err, ErrNotOwned) {
		return false, fmt.Errorf("%s/%s: %w", Dir, rel, ErrNotOwned)
	}
	if err != nil {
		return false, err
	}
	if had {
		if desc, _ := p.Slot("description"); strings.TrimSpace(desc) != "" {
			return false, nil
		}
		p = p.Clone()
	} else {
		title := "Wiki"
		if rel != IndexName {
			title = titleFromStem(rel[strings.LastIndex(strings.TrimSuffix(rel, "/"+IndexName), "/")+1 : len(rel)-len(IndexName)-1])
		}
		p = &Page{Meta: Meta{KeyTitle: title, KeyTemplate: "folder", KeyCreated: tx.w.today(), KeyUpdated: tx.w.today()}, Slots: []Slot{{ID: "description"}}}
	}
	clean, _, err := Sanitize(html)
	if err != nil {
		return false, err
	}
	p.SetSlot("description", clean)
	tx.put(rel, p, "describe "+rel)
	return true, nil
}
