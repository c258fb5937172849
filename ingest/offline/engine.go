package offline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/model"
)

// Name is the provider and model name the engine reports.
const Name = "offline"

func init() {
	model.Register(model.Offline, func(name string, _ model.Config) (model.Model, error) {
		if name != "" && name != Name {
			return nil, &model.Error{Op: "open model", Provider: model.Offline, Kind: model.KindConfig,
				Message: fmt.Sprintf("the offline engine has no model %q", name), Hint: "write --model offline"}
		}
		return Engine{}, nil
	})
}

// Revision names how the engine derives pages from a source, and is part
// of each source's memo key (ingest reads it through a Revision method),
// so a vault the engine wrote before a change gets the new pages on its
// next ingest. Revision 2 writes each procedure from its own numbered
// list (several lists under one heading had each been given the last);
// revision 3 gives a plain lower-case word or a short label a list defines
// ("abort", "W1") a page only in a glossary; revision 4 none to a
// numbered label ("Case 2"), a field beside its placeholder ("nonce
// <nonce>"), a declaration or a command line; revision 5 takes the terms
// of a definition list that holds an option or a path among them only in
// a glossary (gitglossary's, whose "<pathspec>" had hidden the rest), and
// none from a manual page's examples, a quoted value, a path, a label
// ending in a colon or a term beside its classifier ("major : integer");
// revision 6 quotes a description of several blocks whole on its term's
// page (its later paragraphs, lists and code), not its first paragraph
// alone.
const Revision = "offline-6"

// Engine is the offline model.
type Engine struct{}

// Name reports "offline".
func (Engine) Name() string { return Name }

// Revision reports Revision.
func (Engine) Revision() string { return Revision }

// Call answers an analysis prompt with a plan, a generation prompt with
// the tool calls that write the plan's pages, and an enrichment prompt
// with a search and then the slot writes. After its tool calls have been
// answered it ends the turn, reporting what needs a person's review.
func (e Engine) Call(ctx context.Context, req model.Request) (model.Response, error) {
	if err := ctx.Err(); err != nil {
		return model.Response{}, err
	}
	prompt := promptText(req)
	var results []model.ToolResult
	turns := 0
	for _, m := range req.Messages {
		if m.Role == model.RoleTool {
			results = append(results, m.ToolResults...)
			turns++
		}
	}
	switch {
	case has(prompt, "slots"):
		return e.enrich(prompt, results, turns)
	case has(prompt, "analysis"):
		return e.generate(prompt, results, turns)
	case has(prompt, "source"):
		return e.analyse(prompt)
	}
	return model.Response{}, errors.New("the offline engine found no <source>, <analysis> or <slots> field in the prompt; a prompt override must keep the fields of the built-in prompt")
}

func has(prompt, field string) bool {
	_, _, ok := plan.Extract(prompt, field)
	return ok
}

// promptText is the system text and every user message.
func promptText(req model.Request) string {
	if req.System == "" && len(req.Messages) > 0 && req.Messages[0].Role == model.RoleUser {
		only := true
		for _, m := range req.Messages[1:] {
			only = only && m.Role != model.RoleUser
		}
		if only {
			return req.Messages[0].Text // one prompt: no copy of a long one
		}
	}
	var sb strings.Builder
	n := len(req.System)
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			n += 1 + len(m.Text)
		}
	}
	sb.Grow(n)
	sb.WriteString(req.System)
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			sb.WriteString("\n")
			sb.WriteString(m.Text)
		}
	}
	return sb.String()
}

// end finishes a turn with a summary and the review queue, if any.
func end(summary string, review []plan.ReviewItem) model.Response {
	text := summary
	if len(review) > 0 {
		b, _ := json.Marshal(review)
		text += "\n\n<<<REVIEW_QUEUE>>>" + string(b) + "<<<END>>>"
	}
	return model.Response{Text: text, StopReason: model.StopEnd}
}

// failures lists the tool results that were errors.
func failures(results []model.ToolResult) []string {
	var out []string
	for _, r := range results {
		if r.IsError {
			out = append(out, r.Name+": "+r.Content)
		}
	}
	return out
}

func calls(cs []model.ToolCall) model.Response {
	for i := range cs {
		cs[i].ID = fmt.Sprintf("call_%d", i+1)
	}
	return model.Response{ToolCalls: cs, StopReason: model.StopToolUse}
}

func call(name string, args any) model.ToolCall {
	return model.ToolCall{Name: name, Arguments: plan.Call(args)}
}

// CallsMatchSchemas reports true (model.BuiltCalls): every tool call the
// engine makes is marshalled by call from one of plan's argument types,
// whose required fields are always present and of the schema's type, so
// the agent loop does not validate them again. TestOfflineCallsMatchSchemas
// checks every call of an ingest and an enrichment against the schemas.
func (Engine) CallsMatchSchemas() bool { return true }
