// Package fakewiki is a model for the loopback fakes of model/fakeserver
// that works the wiki pipeline by request content: it plans one concept
// page per source and writes it with the wiki tools (a page the plan
// says to update it writes again), whatever order the
// requests of parallel sources arrive in. It can answer each source's
// first plan request with invalid JSON, so the repair turn is exercised.
// An enrichment of a concept page gets a new summary.
//
// It is test and benchmark support: it never answers a real user's call.
package fakewiki

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/prose-store/prose/model/fakeserver"
)

// Model answers the requests of ingest runs.
type Model struct {
	// BadPlanOnce answers the first plan request of each source with
	// invalid JSON.
	BadPlanOnce bool

	mu   sync.Mutex
	bad  map[string]bool
	srv  *fakeserver.Server
	Plan int // plan answers given, repairs included
}

// Serve starts a fake of api answered by m, with opt's latency and rate
// limits.
func (m *Model) Serve(t interface{ Cleanup(func()) }, api string, opt fakeserver.Options) *fakeserver.Server {
	opt.Respond = m.respond
	m.srv = fakeserver.NewWith(t, api, opt)
	return m.srv
}

var (
	sourceTag = regexp.MustCompile(`<source name="([^"]*)"[^>]*>\n(?:# ([^\n]*))?`)
	analysis  = regexp.MustCompile(`(?s)<analysis>\n(.*?)\n</analysis>`)
	formatAsk = "Answer with one JSON object and nothing else (no prose"
	slotsTag  = regexp.MustCompile(`<slots path="([^"]*)" template="([^"]*)" title="([^"]*)">`)
)

func (m *Model) respond(in *fakeserver.Incoming) fakeserver.Reply {
	text := in.Text()
	if sm := slotsTag.FindStringSubmatch(text); sm != nil {
		// An enrichment: a concept page gets a new summary.
		if in.Assistant > 0 || sm[2] != "concept" {
			return fakeserver.Text("Done.")
		}
		args, _ := json.Marshal(map[string]string{"path": sm[1], "slot": "summary", "html": "<p>" + sm[3] + ", in brief: what its sources say, enriched.</p>"})
		return fakeserver.Reply{Turn: &fakeserver.Turn{Calls: []fakeserver.Call{{ID: "e1", Name: "write_slot", Args: string(args)}}}}
	}
	src := sourceTag.FindStringSubmatch(text)
	if src == nil {
		return fakeserver.Reply{Status: 400, Body: `{"error":{"message":"fakewiki: the request quotes no source"}}`}
	}
	if in.Format != "" || strings.Contains(text, formatAsk) {
		m.mu.Lock()
		m.Plan++
		first := m.bad == nil || !m.bad[src[1]]
		if m.bad == nil {
			m.bad = map[string]bool{}
		}
		m.bad[src[1]] = true
		m.mu.Unlock()
		if m.BadPlanOnce && first && in.Assistant == 0 {
			return m.srv.Answer(in, `{"pages": [{"action": "create", "path": `)
		}
		return m.srv.Answer(in, planFor(src[1], src[2]))
	}
	if in.Assistant > 0 {
		return fakeserver.Text("Done.")
	}
	am := analysis.FindStringSubmatch(text)
	if am == nil {
		return fakeserver.Text("Done: the request quoted no plan.")
	}
	var p struct {
		Pages []struct{ Action, Path, Template, Title string }
	}
	if err := json.Unmarshal([]byte(am[1]), &p); err != nil {
		return fakeserver.Text("Done: the plan did not read.")
	}
	var calls []fakeserver.Call
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for i, pg := range p.Pages {
		id := func(k string) string { return fmt.Sprintf("c%d%s", i, k) }
		if pg.Action == "update" && pg.Template == "concept" {
			// A page planned as changed is written again from the
			// source as it reads now.
			calls = append(calls, fakeserver.Call{ID: id("b"), Name: "write_slot", Args: args(map[string]string{"path": pg.Path, "slot": "body",
				"html": fmt.Sprintf("<p>The source %s explains %s, in %d bytes.</p>", htmlText(src[1]), htmlText(pg.Title), len(text))})})
			continue
		}
		if pg.Action != "create" || pg.Template != "concept" {
			continue
		}
		calls = append(calls,
			fakeserver.Call{ID: id("n"), Name: "new_page", Args: args(map[string]string{"path": pg.Path, "template": "concept", "title": pg.Title})},
			fakeserver.Call{ID: id("s"), Name: "write_slot", Args: args(map[string]string{"path": pg.Path, "slot": "summary", "html": "<p>What " + htmlText(src[1]) + " says, in brief.</p>"})},
			fakeserver.Call{ID: id("b"), Name: "write_slot", Args: args(map[string]string{"path": pg.Path, "slot": "body", "html": "<p>The source " + htmlText(src[1]) + " explains " + htmlText(pg.Title) + ".</p>"})},
		)
	}
	if len(calls) == 0 {
		return fakeserver.Text("Done.")
	}
	return fakeserver.Reply{Turn: &fakeserver.Turn{Calls: calls}}
}

func planFor(name, title string) string {
	slug := strings.TrimSuffix(path.Base(name), path.Ext(name))
	if title == "" {
		title = slug
	}
	b, _ := json.Marshal(map[string]any{
		"summary":   "About " + title + ".",
		"pages":     []any{map[string]any{"action": "create", "path": "topics/" + slug + "-notes.html", "template": "concept", "title": title + " notes", "why": "the source explains it", "links": nil}},
		"questions": nil,
	})
	return string(b)
}

func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
