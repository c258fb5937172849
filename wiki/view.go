package wiki

import (
	"fmt"
	"strings"

	"github.com/prose-store/prose/vault"
)

func init() {
	vault.RegisterView(Node, pageView{})
	vault.RegisterHandCommitFix(Node, "run `prose wiki commit` to take it in (a failed or refused run takes nothing in)")
	vault.RegisterSummary(Node, pageSummary)
}

// pageSummary says what a wiki receipt did to pages: "1 page created:
// ops/a.html; 2 pages changed: …", from its semantic diff.
func pageSummary(diff map[string]any) string {
	strs := func(k string) []string {
		var out []string
		l, _ := diff[k].([]any)
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	created, removed := strs("created"), strs("removed")
	done := map[string]bool{}
	for _, p := range append(append([]string{}, created...), removed...) {
		done[p] = true
	}
	var changed []string
	for _, p := range strs("pages") {
		if !done[p] {
			done[p] = true
			changed = append(changed, p)
		}
	}
	var parts []string
	for _, g := range []struct {
		what  string
		pages []string
	}{{"created", created}, {"changed", changed}, {"removed", removed}} {
		if len(g.pages) == 0 {
			continue
		}
		noun := "pages"
		if len(g.pages) == 1 {
			noun = "page"
		}
		names := g.pages
		more := ""
		if len(names) > 3 {
			names, more = names[:3], ", …"
		}
		parts = append(parts, fmt.Sprintf("%d %s %s: %s%s", len(g.pages), noun, g.what, strings.Join(names, ", "), more))
	}
	return strings.Join(parts, "; ")
}

// pageView reads a page file as its structured truth: its meta without the
// updated date, and its non-empty slots. The rendered shell is not part of
// it, so restyling a template moves no fingerprint. A file that is not a
// page prose owns reads by the default rule (its text).
type pageView struct{}

func (pageView) ViewName() string { return "wiki-page-v1" }

func (pageView) Value(p string, data []byte) (any, bool, error) {
	if !strings.HasSuffix(p, ".html") {
		return nil, false, nil
	}
	pg, err := Parse(data)
	if err != nil {
		return nil, false, nil
	}
	return pageTruth(pg), true, nil
}

// pageTruth is a page's structured truth.
func pageTruth(p *Page) map[string]any {
	slots := map[string]any{}
	for _, s := range p.Slots {
		if s.HTML != "" {
			slots[s.ID] = s.HTML
		}
	}
	return map[string]any{"meta": p.Meta.material(), "slots": slots}
}
