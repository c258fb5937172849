package offline

import (
	"encoding/json"
	"fmt"
	"github.com/prose-store/prose/internal/lazyre"
	"html"
	"path"
	"strings"
	"sync"
	"unicode"

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

// enrich improves one page: it fills the empty slots it can derive (a
// summary from the body's first sentence) and, when the page's related
// notes are empty, searches the wiki for the page's title, reads the
// pages found and lists them as its related notes. A slot that holds
// something — what the ingest wrote, what a person wrote — is left as it
// is, so enrich after an ingest that left nothing undone changes nothing,
// and the same wiki enriched again adds nothing. A page found only through
// the titles its own related notes list is no related note of this one.
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
	v, declared := slots["related_notes"]
	related := declared && strings.TrimSpace(plain(v)) == ""
	wrote := false
	for _, r := range results {
		wrote = wrote || r.Name == plan.ToolWriteSlot || r.Name == plan.ToolAppendSlot
	}
	switch {
	case turns == 0:
		if !related && len(enrichWrites(here, copySlots(slots), nil)) == 0 {
			return end("The page needs nothing the offline engine can add.", nil), nil
		}
		if title == "" {
			return end("Nothing to search for: the page has no title.", nil), nil
		}
		return calls([]model.ToolCall{call(plan.ToolSearch, plan.SearchArgs{Query: title, Limit: 2 * maxRelated})}), nil
	case turns == 1 || turns == 2 && !wrote:
		var hits []SearchHit
		read := map[string]PageView{}
		for _, r := range results {
			if r.IsError {
				continue
			}
			switch r.Name {
			case plan.ToolSearch:
				_ = json.Unmarshal([]byte(r.Content), &hits)
			case plan.ToolReadPage:
				var v PageView
				if json.Unmarshal([]byte(r.Content), &v) == nil && v.Path != "" {
					read[v.Path] = v
				}
			}
		}
		links := relatedLinks(here, title, slots["related_notes"], hits)
		if turns == 1 && related && len(links) > 0 {
			var cs []model.ToolCall
			for _, l := range links {
				cs = append(cs, call(plan.ToolReadPage, plan.PathArgs{Path: l.Path}))
			}
			return calls(cs), nil
		}
		var keep []plan.Link
		for _, l := range links {
			if v, ok := read[l.Path]; !ok || !foundOnlyThroughRelatedNotes(v, title) {
				keep = append(keep, l)
			}
		}
		cs := enrichWrites(here, slots, keep)
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

// relatedLinks are the search hits that may become related notes of the
// page here titled title: other pages (never a folder's README.html
// index), each title once, none the related notes (existing) link by path
// or by title already.
func relatedLinks(here, title, existing string, hits []SearchHit) []plan.Link {
	var out []plan.Link
	seen := map[string]bool{strings.ToLower(title): true}
	for _, t := range linkTexts(existing) {
		seen[strings.ToLower(t)] = true
	}
	for _, h := range hits {
		key := strings.ToLower(h.Title)
		if h.Path == here || path.Base(h.Path) == "README.html" || h.Title == "" || seen[key] ||
			strings.Contains(existing, `href="`+html.EscapeString(rel(here, h.Path))+`"`) {
			continue
		}
		seen[key] = true
		out = append(out, plan.Link{Path: h.Path, Title: h.Title})
	}
	return out
}

func copySlots(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// maxRelated is the most related notes enrich lists on a page.
const maxRelated = 8

var anchorRe = lazyre.New(`(?s)<a\b[^>]*>(.*?)</a>`)

// linkTexts are the texts of the links in h.
func linkTexts(h string) []string {
	var out []string
	for _, m := range anchorRe().FindAllStringSubmatch(h, -1) {
		out = append(out, plain(m[1]))
	}
	return out
}

// foundOnlyThroughRelatedNotes reports whether page v says none of the
// words of title outside its related notes (in its title, tags or other
// slots): a search for the title finds it only because of the titles its
// related notes list.
func foundOnlyThroughRelatedNotes(v PageView, title string) bool {
	words := titleWords(title)
	var sb strings.Builder
	sb.WriteString(metaString(v.Meta, "title") + " " + strings.Join(metaStrings(v.Meta, "tags"), " "))
	for _, id := range sortedKeys(v.Slots) {
		if id != "related_notes" {
			sb.WriteString(" " + plain(v.Slots[id]))
		}
	}
	for _, tok := range strings.FieldsFunc(strings.ToLower(sb.String()), notLetterOrDigit) {
		for _, w := range words {
			if sameStem(tok, w) {
				return false
			}
		}
	}
	return true
}

// titleWords are the words of a title a search matches on: lower case,
// without common words.
func titleWords(title string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(title), notLetterOrDigit) {
		if len(w) > 2 && !stopWords()[w] {
			out = append(out, w)
		}
	}
	return out
}

// sameStem reports whether two lower-case words are one word in another
// form, roughly as the search's stemmer would ("worker", "workers").
func sameStem(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || len(a) >= 4 && strings.HasPrefix(b, a) && len(b)-len(a) <= 3
}

func notLetterOrDigit(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// stopWords are words too common for the search to match on.
var stopWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for with from into onto over under about above below after before again
		against between through during until while this that these those then than there here where when which what who
		whom whose why how all any both each few more most other some such only own same very can will just should now
		are was were been being have has had having does did doing not nor too off out our ours your yours their theirs
		them they you him his her hers its itself she because would could also`) {
		m[w] = true
	}
	return m
})

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
	// Related notes only where the slot is empty: a list the pipeline
	// wrote (an ingest's links) or a person wrote is theirs, and adding
	// search hits to it would re-derive, one run after another, what the
	// ingest already decided (and each run's additions move the next
	// run's search results). Key points are never derived from the
	// abstract: that would say the abstract twice on one page.
	if empty("related_notes") && len(links) > 0 {
		var add []string
		for _, l := range links {
			add = append(add, fmt.Sprintf(`<a href="%s">%s</a>`, html.EscapeString(rel(here, l.Path)), html.EscapeString(l.Title)))
		}
		write("related_notes", list("ul", add, maxRelated))
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
