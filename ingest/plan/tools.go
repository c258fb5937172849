package plan

import (
	"encoding/json"
	"github.com/prose-store/prose/internal/lazyre"
	"regexp"
	"strings"
	"sync"
)

// The wiki tools a generation or enrichment run offers. Paths are relative
// to the wiki root.
const (
	ToolNewPage    = "new_page"    // NewPageArgs
	ToolWriteSlot  = "write_slot"  // SlotArgs
	ToolAppendSlot = "append_slot" // SlotArgs
	ToolSetMeta    = "set_meta"    // SetMetaArgs
	ToolReadPage   = "read_page"   // PathArgs
	ToolSearch     = "search"      // SearchArgs
	ToolTree       = "tree"        // TreeArgs
	ToolMovePage   = "move_page"   // MoveArgs
)

// NewPageArgs creates a page from a template.
type NewPageArgs struct {
	Path     string `json:"path"`
	Template string `json:"template"`
	Title    string `json:"title"`
}

// SlotArgs writes or appends HTML to one declared slot.
type SlotArgs struct {
	Path string `json:"path"`
	Slot string `json:"slot"`
	HTML string `json:"html"`
}

// SetMetaArgs merges updates into a page's meta: an open mapping whose
// keys need no schema; a null value removes the key.
type SetMetaArgs struct {
	Path    string         `json:"path"`
	Updates map[string]any `json:"updates"`
}

// PathArgs names one page.
type PathArgs struct {
	Path string `json:"path"`
}

// SearchArgs searches the wiki.
type SearchArgs struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

// TreeArgs lists a folder (the root when empty).
type TreeArgs struct {
	Folder string `json:"folder,omitempty"`
}

// MoveArgs moves a page.
type MoveArgs struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Call builds a tool call's arguments.
func Call(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// ReviewItem is one thing a model asks a person to look at.
type ReviewItem struct {
	Page   string `json:"page,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Detail string `json:"detail"`
}

var reviewBlock = lazyre.New(`(?s)<<<REVIEW_QUEUE>>>(.*?)<<<END>>>`)

// ReviewQueue reads the items of every <<<REVIEW_QUEUE>>>[…]<<<END>>>
// block in a model's text. Items may be objects or plain strings; a block
// that is not a JSON array becomes one item holding its text.
func ReviewQueue(text string) []ReviewItem {
	var out []ReviewItem
	for _, m := range reviewBlock().FindAllStringSubmatch(text, -1) {
		body := strings.TrimSpace(m[1])
		var raw []json.RawMessage
		if json.Unmarshal([]byte(body), &raw) != nil {
			if body != "" {
				out = append(out, ReviewItem{Detail: body})
			}
			continue
		}
		for _, r := range raw {
			var s string
			if json.Unmarshal(r, &s) == nil {
				if s != "" {
					out = append(out, ReviewItem{Detail: s})
				}
				continue
			}
			var it ReviewItem
			var loose map[string]any
			if json.Unmarshal(r, &it) == nil && it.Detail != "" {
				out = append(out, it)
			} else if json.Unmarshal(r, &loose) == nil && reasonItem(loose, &it) {
				out = append(out, it)
			} else if json.Unmarshal(r, &loose) == nil {
				b, _ := json.Marshal(loose)
				it.Detail = string(b)
				out = append(out, it)
			}
		}
	}
	return out
}

// Field wraps a prompt field's value in markers: <name>value</name>.
func Field(name, value string) string {
	return "<" + name + ">\n" + value + "\n</" + name + ">"
}

// Extract finds the value of the first <name>…</name> field in a prompt,
// and the attributes of its opening tag (<source name="…" id="…">).
func Extract(prompt, name string) (value string, attrs map[string]string, ok bool) {
	loc := openTag(name).FindStringSubmatchIndex(prompt)
	if loc == nil {
		return "", nil, false
	}
	rest := prompt[loc[1]:]
	end := lastLineIndex(rest, "</"+name+">")
	if end < 0 {
		return "", nil, false
	}
	attrs = map[string]string{}
	for _, a := range attrPattern().FindAllStringSubmatch(prompt[loc[2]:loc[3]], -1) {
		attrs[a[1]] = unescapeAttr(a[2])
	}
	return rest[:end], attrs, true
}

// lastLineIndex is strings.LastIndex(s, "\n"+tag), found by the forward
// search, which runs many times faster on a long text: a field's closing
// tag often comes long before the prompt's end (a generation prompt's
// analysis comes before the source it quotes, of up to 16 MiB), where the
// backward search read all of what follows it. The search runs on the
// tag (its '<' is rarer than a newline) and keeps the matches a newline
// comes before.
func lastLineIndex(s, tag string) int {
	last := -1
	for from := 1; from <= len(s); {
		i := strings.Index(s[from:], tag)
		if i < 0 {
			break
		}
		if s[from+i-1] == '\n' {
			last = from + i - 1
		}
		from += i + 1
	}
	return last
}

var attrPattern = lazyre.New(`([a-z_]+)="([^"]*)"`)

// openTags are the compiled opening-tag patterns of the fields Extract
// was asked for, by name: a model call extracts a few fields of each
// prompt, and compiling the pattern each time was half of Extract's time.
var openTags sync.Map // name → *regexp.Regexp

func openTag(name string) *regexp.Regexp {
	if re, ok := openTags.Load(name); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(`<` + regexp.QuoteMeta(name) + `((?:\s+[a-z_]+="[^"]*")*)\s*>\n`)
	openTags.Store(name, re)
	return re
}

// Attr escapes an attribute value for Extract.
func Attr(s string) string {
	return attrEscaper.Replace(s)
}

// The replacers of Attr and unescapeAttr, built once: building one took
// longer than most of its uses.
var (
	attrEscaper   = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "\n", " ")
	attrUnescaper = strings.NewReplacer("&quot;", `"`, "&amp;", "&")
)

func unescapeAttr(s string) string {
	return attrUnescaper.Replace(s)
}

// reasonItem reads the {"path", "reason"} form of a review item.
func reasonItem(m map[string]any, it *ReviewItem) bool {
	reason, _ := m["reason"].(string)
	if reason == "" {
		return false
	}
	it.Detail = reason
	if p, ok := m["path"].(string); ok {
		it.Page = p
	}
	if k, ok := m["kind"].(string); ok {
		it.Kind = k
	}
	return true
}
