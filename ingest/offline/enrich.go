package offline

import (
	"encoding/json"
	"fmt"
	"github.com/prose-store/prose/internal/lazyre"
	"html"
	"strings"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/model"
)

// SearchHit is one result of the search tool, as far as the engine reads
// it.
type SearchHit struct {
	Path    string `json:"path"`
	Title   string `json:"title"`
	Snippet string `json:"snippet,omitempty"`
}

// enrich improves one page: it searches the wiki for the page's title,
// then fills the empty slots it can derive (a summary from the body's
// first sentence, key points from the abstract, related notes from the
// search) and adds links to related pages not linked yet.
func (e Engine) enrich(prompt string, results []model.ToolResult, turns int) (model.Response, error) {
	slotsText, attrs, _ := plan.Extract(prompt, "slots")
	here, title := attrs["path"], attrs["title"]
	if here == "" {
		return model.Response{}, fmt.Errorf("the offline engine found no page path on the enrichment prompt's <slots> field")
	}
	slots := map[string]string{}
	if err := json.Unmarshal([]byte(slotsText), &slots); err != nil {
		return model.Response{}, fmt.Errorf("the offline engine cannot read the prompt's slots: %w", err)
	}
	switch turns {
	case 0:
		if title == "" {
			return end("Nothing to search for: the page has no title.", nil), nil
		}
		return calls([]model.ToolCall{call(plan.ToolSearch, plan.SearchArgs{Query: title, Limit: 8})}), nil
	case 1:
		var hits []SearchHit
		for _, r := range results {
			if !r.IsError {
				_ = json.Unmarshal([]byte(r.Content), &hits)
			}
		}
		var links []plan.Link
		for _, h := range hits {
			if h.Path != here && h.Title != "" && h.Title != title {
				links = append(links, plan.Link{Path: h.Path, Title: h.Title})
			}
		}
		cs := enrichWrites(here, slots, links)
		if len(cs) == 0 {
			return end("The page needs nothing the offline engine can add.", nil), nil
		}
		return calls(cs), nil
	}
	var review []plan.ReviewItem
	for _, f := range failures(results) {
		review = append(review, plan.ReviewItem{Page: here, Kind: "tool-error", Detail: f})
	}
	return end("Enriched "+here+".", review), nil
}

var tagRe = lazyre.New(`<[^>]*>`)

func plain(h string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tagRe().ReplaceAllString(h, " "))), " ")
}

// enrichWrites are the slot writes that improve a page; none when the page
// already has everything the engine could add.
func enrichWrites(here string, slots map[string]string, links []plan.Link) []model.ToolCall {
	var cs []model.ToolCall
	write := func(slot, h string) {
		if h != "" && strings.TrimSpace(slots[slot]) != strings.TrimSpace(h) {
			cs = append(cs, call(plan.ToolWriteSlot, plan.SlotArgs{Path: here, Slot: slot, HTML: h}))
			slots[slot] = h
		}
	}
	empty := func(slot string) bool {
		v, declared := slots[slot]
		return declared && strings.TrimSpace(plain(v)) == ""
	}
	if empty("summary") {
		for _, from := range []string{"body", "description", "steps"} {
			if s := firstSentence(slots[from]); s != "" {
				write("summary", "<p>"+html.EscapeString(s)+"</p>")
				break
			}
		}
	}
	if empty("key_points") {
		var pts []string
		for _, s := range sentences(plain(slots["abstract"])) {
			pts = append(pts, html.EscapeString(s))
		}
		write("key_points", list("ul", pts, 5))
	}
	if _, declared := slots["related_notes"]; declared {
		existing := slots["related_notes"]
		var add []string
		for _, l := range links {
			if !strings.Contains(existing, `href="`+html.EscapeString(rel(here, l.Path))+`"`) {
				add = append(add, fmt.Sprintf(`<a href="%s">%s</a>`, html.EscapeString(rel(here, l.Path)), html.EscapeString(l.Title)))
			}
		}
		if len(add) > 0 {
			if empty("related_notes") {
				write("related_notes", list("ul", add, 8))
			} else {
				cs = append(cs, call(plan.ToolAppendSlot, plan.SlotArgs{Path: here, Slot: "related_notes", HTML: list("ul", add, 8)}))
			}
		}
	}
	return cs
}

func firstSentence(h string) string {
	ss := sentences(plain(h))
	if len(ss) == 0 {
		return ""
	}
	return ss[0]
}
