package model

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/prose-store/prose/model/schema"
)

// LoopOptions tunes Loop.
type LoopOptions struct {
	// MaxIterations caps the model calls; 0 means DefaultMaxIterations.
	MaxIterations int
	// MaxCallsPerTurn caps the tool calls run from one model answer; the
	// calls beyond it are not run, each answered with an error result the
	// model can act on (call them again in the next turn). 0 means
	// DefaultMaxCallsPerTurn; negative means no cap (a trusted engine).
	MaxCallsPerTurn int
	// OnToolResult, if set, sees every call and its result as they happen.
	OnToolResult func(call ToolCall, result ToolResult)
	// Final, if set, checks an answer without tool calls: a non-empty
	// complaint goes back to the model as a user message and the loop goes
	// on, while model calls remain (the last answer is final whatever it
	// holds).
	Final func(resp Response) string
}

// DefaultMaxIterations is the model-call limit of a Loop.
const DefaultMaxIterations = 50

// DefaultMaxCallsPerTurn is the most tool calls a Loop runs from one
// model answer: with DefaultMaxIterations, 3,200 calls a loop at most.
const DefaultMaxCallsPerTurn = 64

// LoopResult is what an agent loop produced.
type LoopResult struct {
	// Final is the last response, the one without tool calls when the
	// loop ended normally.
	Final Response
	// Messages is the whole conversation: the request's messages, then
	// every assistant turn and tool-result turn.
	Messages []Message
	// Usage totals every call's usage (a receipt's cost).
	Usage Usage
	// Iterations counts the model calls; ToolCalls the tool calls made,
	// ToolErrors those answered with an error.
	Iterations, ToolCalls, ToolErrors int
}

// BuiltCalls is implemented by a Model whose tool calls are marshalled
// from typed Go values that match the tools' schemas by construction
// (prose's offline engine): Loop does not check their arguments against
// the schemas again (a tenth of an offline ingest went there). A model
// whose calls come from text — any provider, an answer kept and replayed —
// must not implement it: its calls stay checked.
type BuiltCalls interface {
	// CallsMatchSchemas reports that every tool call the model makes
	// matches its tool's schema.
	CallsMatchSchemas() bool
}

// Loop runs req against m until the model answers without tool calls or
// the iteration limit is reached. Each tool call's arguments are checked
// against the tool's canonical schema (unless m is a BuiltCalls that
// vouches for them); an unknown tool, invalid arguments
// or a tool error is returned to the model as an error result it can act
// on, never to the caller. The result totals usage even when an error
// ends the loop.
func Loop(ctx context.Context, m Model, req Request, opt LoopOptions) (LoopResult, error) {
	limit := opt.MaxIterations
	if limit <= 0 {
		limit = DefaultMaxIterations
	}
	tools := map[string]*loopTool{}
	defer func() {
		for _, t := range tools {
			toolSchemas.give(t.tool.Schema, t.schema)
		}
	}()
	for i := range req.Tools {
		t := &req.Tools[i]
		s, err := toolSchemas.take(t.Schema)
		if err != nil {
			return LoopResult{}, &Error{Op: "agent loop", Kind: KindSchema, Message: fmt.Sprintf("tool %s: %v", t.Name, err), Err: err}
		}
		tools[t.Name] = &loopTool{tool: t, schema: s}
	}
	built := false
	if b, ok := m.(BuiltCalls); ok {
		built = b.CallsMatchSchemas()
	}
	perTurn := opt.MaxCallsPerTurn
	if perTurn == 0 {
		perTurn = DefaultMaxCallsPerTurn
	}
	res := LoopResult{Messages: append([]Message(nil), req.Messages...)}
	for res.Iterations < limit {
		if err := ctx.Err(); err != nil {
			return res, canceled(err)
		}
		call := req
		call.Messages = res.Messages
		resp, err := m.Call(ctx, call)
		res.Iterations++
		if err != nil {
			return res, err
		}
		res.Usage = res.Usage.Add(resp.Usage)
		res.Final = resp
		res.Messages = append(res.Messages, Message{Role: RoleAssistant, Text: resp.Text, ToolCalls: keepable(resp.ToolCalls)})
		if len(resp.ToolCalls) == 0 {
			if opt.Final != nil && res.Iterations < limit {
				if c := opt.Final(resp); c != "" {
					res.Messages = append(res.Messages, UserText(c))
					continue
				}
			}
			return res, nil
		}
		results := make([]ToolResult, 0, len(resp.ToolCalls))
		for i, tc := range resp.ToolCalls {
			var r ToolResult
			if perTurn > 0 && i >= perTurn {
				r = overTurnCap(tc, perTurn, len(resp.ToolCalls))
			} else {
				r = runTool(ctx, tools, tc, !built)
			}
			if err := ctx.Err(); err != nil {
				return res, canceled(err)
			}
			res.ToolCalls++
			if r.IsError {
				res.ToolErrors++
			}
			if opt.OnToolResult != nil {
				opt.OnToolResult(tc, r)
			}
			results = append(results, r)
		}
		res.Messages = append(res.Messages, Message{Role: RoleTool, ToolResults: results})
	}
	return res, &Error{Op: "agent loop", Kind: KindLimit, Message: fmt.Sprintf("the model was still calling tools after %d calls", limit), Hint: "raise the iteration limit or simplify the task"}
}

// overTurnCap answers a call beyond the per-turn cap without running it
// (its arguments are not even parsed).
func overTurnCap(tc ToolCall, limit, made int) ToolResult {
	return ToolResult{CallID: tc.ID, Name: tc.Name, IsError: true,
		Content: fmt.Sprintf("error: not run: this answer made %d tool calls and at most %d are run from one answer; make the rest again in your next answer, at most %d at a time", made, limit, limit)}
}

// toolSchemas keeps the compiled schemas of finished loops for the next
// loop with the same tools (an ingest runs a loop per source, each with
// the same tool schemas; compiling them was a twentieth of an offline
// ingest). A compiled schema is used by one loop at a time: validation
// may fill the schema's caches, so loops running side by side each take
// their own.
var toolSchemas schemaPool

type schemaPool struct {
	sync.Mutex
	free map[string][]*schema.Schema // by the schema's text
}

// take is a compiled schema of raw, kept or compiled now.
func (p *schemaPool) take(raw json.RawMessage) (*schema.Schema, error) {
	p.Lock()
	if l := p.free[string(raw)]; len(l) > 0 {
		s := l[len(l)-1]
		p.free[string(raw)] = l[:len(l)-1]
		p.Unlock()
		return s, nil
	}
	p.Unlock()
	return schema.Compile(raw)
}

// give keeps s, the compiled schema of raw, for a later take: at most
// maxPooledSchemas of one text and of maxPooledTexts texts.
func (p *schemaPool) give(raw json.RawMessage, s *schema.Schema) {
	const maxPooledSchemas, maxPooledTexts = 16, 256
	p.Lock()
	defer p.Unlock()
	if p.free == nil || len(p.free) >= maxPooledTexts && p.free[string(raw)] == nil {
		p.free = map[string][]*schema.Schema{}
	}
	if l := p.free[string(raw)]; len(l) < maxPooledSchemas {
		p.free[string(raw)] = append(l, s)
	}
}

type loopTool struct {
	tool   *Tool
	schema *schema.Schema
}

func runTool(ctx context.Context, tools map[string]*loopTool, tc ToolCall, check bool) ToolResult {
	r := ToolResult{CallID: tc.ID, Name: tc.Name}
	t, ok := tools[tc.Name]
	if !ok {
		names := make([]string, 0, len(tools))
		for n := range tools {
			names = append(names, n)
		}
		sort.Strings(names)
		r.IsError = true
		r.Content = fmt.Sprintf("error: there is no tool named %q; the tools are: %s", tc.Name, strings.Join(names, ", "))
		return r
	}
	args := tc.Arguments
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	if check { // unless the model vouches for its arguments (BuiltCalls)
		if err := t.schema.Validate(args); err != nil {
			r.IsError = true
			r.Content = fmt.Sprintf("error: the arguments of %s are invalid: %v; call %s again with arguments that match its schema", tc.Name, err, tc.Name)
			return r
		}
	}
	if t.tool.Run == nil {
		r.IsError = true
		r.Content = fmt.Sprintf("error: tool %s cannot be run here", tc.Name)
		return r
	}
	out, err := t.tool.Run(ctx, args)
	if err != nil {
		r.IsError = true
		r.Content = fmt.Sprintf("error: %s failed: %v", tc.Name, err)
		return r
	}
	r.Content = out
	return r
}

func canceled(err error) error {
	return &Error{Op: "agent loop", Kind: KindCanceled, Message: "stopped: " + err.Error(), Err: err}
}

// keepable returns calls with arguments that are not JSON kept as a JSON
// string of their text, so the conversation stays encodable (for the next
// request and for recordings) while the model still sees what it sent.
func keepable(calls []ToolCall) []ToolCall {
	out := calls
	for i, c := range calls {
		if json.Valid(c.Arguments) {
			continue
		}
		if &out[0] == &calls[0] {
			out = append([]ToolCall(nil), calls...)
		}
		text, _ := json.Marshal(string(c.Arguments))
		out[i].Arguments = text
	}
	return out
}
