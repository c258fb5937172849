package wiki

import (
	"strings"

	"github.com/prose-store/prose/vault"
)

func init() {
	vault.RegisterView(Node, pageView{})
	vault.RegisterHandCommitFix(Node, "run `prose wiki commit` to take it in (a failed or refused run takes nothing in)")
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
