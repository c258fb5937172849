package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/prose-store/prose/internal/lazyre"
	"strings"
)

// Plan is the answer to an analysis prompt: the pages a source should
// create or update.
type Plan struct {
	Pages []Page `json:"pages"`
}

// Page is one planned page. Path is relative to the wiki root
// (published/wiki/), slash-separated, ending in .html.
type Page struct {
	Action   string `json:"action"` // "create" or "update"
	Path     string `json:"path"`
	Template string `json:"template"`
	Title    string `json:"title"`
	Why      string `json:"why,omitempty"`
	// Origin is the page's identity (MetaOrigin): "#" and an anchor for
	// a page of one of the source's sections, TermOrigin for a term
	// page; empty, the pipeline derives it from the template and title.
	// The pipeline decides where a page goes from it.
	Origin string `json:"origin,omitempty"`
	// Links are pages this page should link to.
	Links []Link `json:"links,omitempty"`
}

// Link names a page to link to.
type Link struct {
	Path  string `json:"path"`
	Title string `json:"title"`
}

// The actions a planned page may have.
const (
	Create = "create"
	Update = "update"
)

// jsonFence is the fenced block Parse takes (found by fencedJSON, a scan
// the tests hold to this expression).
var jsonFence = lazyre.New("(?s)```(?:json)?\\s*\\n(.*?)\\n\\s*```")

// Parse reads a plan from a model's answer: the whole text as JSON, or the
// first fenced JSON block in it, or the outermost {…} in it. Every page
// needs a path, a template and an action of create or update.
func Parse(text string) (*Plan, error) {
	candidates := []string{strings.TrimSpace(text)}
	if body, ok := fencedJSON(text); ok { // jsonFence's submatch
		candidates = append(candidates, body)
	}
	if i, j := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && j > i {
		candidates = append(candidates, text[i:j+1])
	}
	var lastErr error = errors.New("the answer holds no JSON object")
	for _, c := range candidates {
		var p Plan
		dec := json.NewDecoder(bytes.NewReader([]byte(c)))
		if err := dec.Decode(&p); err != nil {
			lastErr = err
			continue
		}
		if err := p.check(); err != nil {
			return nil, err
		}
		return &p, nil
	}
	return nil, fmt.Errorf(`the analysis answer is not a plan (%v); a plan is {"pages": [{"action": "create", "path": "folder/page.html", "template": "concept", "title": "…"}]}`, lastErr)
}

func (p *Plan) check() error {
	if p.Pages == nil {
		return errors.New(`the analysis answer has no "pages" list`)
	}
	for i, pg := range p.Pages {
		switch {
		case pg.Action != Create && pg.Action != Update:
			return fmt.Errorf("plan page %d (%s): action %q is neither create nor update", i+1, pg.Path, pg.Action)
		case pg.Path == "":
			return fmt.Errorf("plan page %d: no path", i+1)
		case pg.Template == "" && pg.Action == Create:
			return fmt.Errorf("plan page %d (%s): no template", i+1, pg.Path)
		}
	}
	return nil
}

// JSON is the plan as indented JSON, as prompts quote it.
func (p *Plan) JSON() string {
	b, _ := json.MarshalIndent(p, "", "  ")
	return string(b)
}
