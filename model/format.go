package model

import (
	"context"
	"fmt"
	"strings"

	"github.com/prose-store/prose/model/schema"
)

// WireFormat is the schema of req.Format in the strict dialect, as
// providers send it. A schema that is not an object of declared fields
// or that the strict dialect cannot carry is refused before anything is
// sent.
func WireFormat(op, provider string, f *Format) (map[string]any, error) {
	if !validToolName(f.Name) {
		return nil, &Error{Op: op, Provider: provider, Kind: KindSchema, Message: fmt.Sprintf("answer format name %q is not accepted by the providers", f.Name), Hint: "use 1 to 64 letters, digits, _ or -"}
	}
	s, err := schema.Compile(f.Schema)
	if err != nil {
		return nil, &Error{Op: op, Provider: provider, Kind: KindSchema, Message: fmt.Sprintf("answer format %s: %v", f.Name, err), Hint: "fix the format's schema", Err: err}
	}
	params, strict, err := s.Wire()
	if err != nil {
		return nil, &Error{Op: op, Provider: provider, Kind: KindSchema, Message: fmt.Sprintf("answer format %s: %v", f.Name, err), Hint: "express the schema with keywords the strict dialect carries", Err: err}
	}
	if !strict {
		return nil, &Error{Op: op, Provider: provider, Kind: KindSchema, Message: fmt.Sprintf("answer format %s holds an open mapping", f.Name), Hint: "give every object of an answer format declared properties"}
	}
	return params, nil
}

// FormatPrompt is the instruction a provider adds when it cannot ask for
// f in a structured form: answer with one JSON object of the schema.
func FormatPrompt(f *Format) string {
	return "Answer with one JSON object and nothing else (no prose, no code fence), matching this JSON Schema:\n" + strings.TrimSpace(string(f.Schema))
}

// CallChecked sends req (which should carry a Format) and checks the
// answer's text with check. An answer that fails the check gets one
// repair turn quoting the problem; a second failure is an error of kind
// response naming both. The usage of every call is returned, also on
// failure.
func CallChecked(ctx context.Context, m Model, req Request, check func(text string) error) (Response, Usage, error) {
	resp, err := m.Call(ctx, req)
	usage := resp.Usage
	if err != nil {
		return resp, usage, err
	}
	first := check(resp.Text)
	if first == nil {
		return resp, usage, nil
	}
	repair := req
	repair.Messages = append(append([]Message(nil), req.Messages...),
		Message{Role: RoleAssistant, Text: resp.Text},
		UserText(fmt.Sprintf("error: that answer cannot be used: %v. Answer again with the whole corrected JSON object and nothing else.", first)))
	resp, err = m.Call(ctx, repair)
	usage = usage.Add(resp.Usage)
	if err != nil {
		return resp, usage, err
	}
	if second := check(resp.Text); second != nil {
		return resp, usage, &Error{Op: "call " + m.Name(), Kind: KindResponse,
			Message: fmt.Sprintf("the answer did not check after a repair turn: %v (the first answer: %v)", second, first),
			Hint:    "try again, or use a model that follows JSON schemas (see docs/models.md)"}
	}
	return resp, usage, nil
}
