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
	for _, t := range tools {
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
