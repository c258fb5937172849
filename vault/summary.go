package vault

import (
	"strings"

	"github.com/prose-store/prose/receipt"
)

// RegisterSummary makes f how the summary line of a node's receipts (the
// commit message's first line, prose log) says what a receipt did, in the
// node's own words (the wiki: pages created, changed, removed). f reads the
// receipt's semantic diff and returns "" to fall back to the moved facets.
func RegisterSummary(node string, f func(diff map[string]any) string) {
	viewsMu.Lock()
	defer viewsMu.Unlock()
	summaries[node] = f
}

var summaries = map[string]func(map[string]any) string{}

// Summary says what receipt r did in a few words: the node's registered
// summary, else the facets it moved ("moved @atomic, items"), else "".
func Summary(r *receipt.Receipt) string {
	viewsMu.RLock()
	f := summaries[r.Node]
	viewsMu.RUnlock()
	if f != nil {
		if s := f(r.SemanticDiff); s != "" {
			return s
		}
	}
	var moved []string
	list, _ := r.SemanticDiff["moved"].([]any)
	for _, x := range list {
		if s, ok := x.(string); ok {
			moved = append(moved, s)
		}
	}
	if len(moved) == 0 {
		return ""
	}
	return "moved " + strings.Join(moved, ", ")
}
