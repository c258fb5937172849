package reactor

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// PayloadError is a payload that cannot be a gateway's world-model; its
// text names the problem and the fix.
type PayloadError struct{ Msg string }

func (e *PayloadError) Error() string { return e.Msg }

// PayloadFiles turns a delivered JSON payload into a gateway's world-model:
// a JSON object is the structured truth itself, one file <key>.json per
// top-level key (so a gateway's #### facets, which are top-level keys, move
// one by one); any other JSON value is the single file payload.json. The
// payload must be valid JSON as the vault reads it (canon.Decode), not
// empty, and every top-level key must be a usable file name.
func PayloadFiles(data []byte) (map[string][]byte, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, &PayloadError{"the payload is empty: send a JSON document"}
	}
	v, err := canon.Decode(data)
	if err != nil {
		return nil, &PayloadError{fmt.Sprintf("the payload is not valid JSON: %v", err)}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return map[string][]byte{"payload.json": data}, nil
	}
	if len(obj) == 0 {
		return nil, &PayloadError{"the payload is an empty object: it carries no truth; send at least one key"}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &PayloadError{fmt.Sprintf("the payload is not valid JSON: %v", err)}
	}
	files := make(map[string][]byte, len(raw))
	names := make([]string, 0, len(raw))
	for k, val := range raw {
		name := k + ".json"
		switch {
		case k == "" || strings.ContainsAny(k, `/\`) || strings.HasPrefix(k, ".") || k == receipt.AtomicFacet || strings.HasPrefix(k, "__"):
			return nil, &PayloadError{fmt.Sprintf("top-level key %q cannot name a file of the gateway's world-model (no slash, no leading dot or __, not @atomic): nest it under another key", k)}
		}
		if n, err := published.NormalizePath(name); err != nil || n != name {
			return nil, &PayloadError{fmt.Sprintf("top-level key %q cannot name a file of the gateway's world-model: nest it under another key", k)}
		}
		files[name] = append([]byte(nil), val...)
		names = append(names, name)
	}
	sort.Strings(names)
	if err := published.CheckCollisions(names); err != nil {
		return nil, &PayloadError{fmt.Sprintf("the payload's top-level keys collide as file names (%v): rename one", err)}
	}
	return files, nil
}

// WriteWorldModel writes files (path → bytes) under dir.
func WriteWorldModel(dir string, files map[string][]byte) error { return writeFiles(dir, files) }
