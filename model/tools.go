package model

import (
	"errors"
	"fmt"

	"github.com/prose-store/prose/model/schema"
)

// WireTool is a tool as a provider sends it: its parameters in the strict
// dialect when it has fixed fields (Strict), else its canonical schema with
// the open mappings left open.
type WireTool struct {
	Name, Description string
	Parameters        map[string]any
	Strict            bool
}

// WireTools prepares req's tools for a provider. A schema the strict
// dialect cannot carry is refused before anything is sent, naming the tool
// and the JSON pointer of the spot.
func WireTools(op, provider string, tools []Tool) ([]WireTool, error) {
	out := make([]WireTool, 0, len(tools))
	seen := map[string]bool{}
	for _, t := range tools {
		if !validToolName(t.Name) {
			return nil, &Error{Op: op, Provider: provider, Kind: KindSchema, Message: fmt.Sprintf("tool name %q is not accepted by the providers", t.Name), Hint: "use 1 to 64 letters, digits, _ or -"}
		}
		if seen[t.Name] {
			return nil, &Error{Op: op, Provider: provider, Kind: KindSchema, Message: fmt.Sprintf("two tools are named %q", t.Name), Hint: "give each tool its own name"}
		}
		seen[t.Name] = true
		s, err := schema.Compile(t.Schema)
		if err != nil {
			return nil, &Error{Op: op, Provider: provider, Kind: KindSchema, Message: fmt.Sprintf("tool %s: %v", t.Name, err), Hint: "fix the tool's schema", Err: err}
		}
		params, strict, err := s.Wire()
		if err != nil {
			hint := "fix the tool's schema"
			var le *schema.LossError
			if errors.As(err, &le) {
				hint = fmt.Sprintf("remove %q at %s or express it with keywords the strict dialect carries", le.Keyword, le.Pointer)
			}
			return nil, &Error{Op: op, Provider: provider, Kind: KindSchema, Message: fmt.Sprintf("tool %s: %v", t.Name, err), Hint: hint, Err: err}
		}
		out = append(out, WireTool{Name: t.Name, Description: t.Description, Parameters: params, Strict: strict})
	}
	return out, nil
}

// validToolName is the name rule the OpenAI and Anthropic APIs share.
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
