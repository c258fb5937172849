package program

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/schema"
)

// Program is something an agent may run.
type Program struct {
	Name        string
	Description string
	// Params is the JSON Schema of the keyword arguments: an object with
	// declared properties (closed: a keyword not declared is refused).
	Params json.RawMessage
	// Run executes the program with arguments that passed the check.
	Run func(ctx context.Context, args map[string]any) (string, error)
}

// Param describes one keyword argument.
type Param struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Description string `json:"description,omitempty"`
}

// Info describes a registered program.
type Info struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Params      []Param        `json:"params"`
	Schema      map[string]any `json:"schema"`
}

type entry struct {
	prog   Program
	schema *schema.Schema
	info   Info
}

// Registry holds programs by name. The zero value is not usable; call
// NewRegistry.
type Registry struct {
	mu    sync.RWMutex
	progs map[string]*entry
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{progs: map[string]*entry{}} }

// Default is the registry the prose command offers agents.
var Default = NewRegistry()

// Register adds p. Its parameter schema must be an object schema with
// declared properties.
func (r *Registry) Register(p Program) error {
	if p.Name == "" || p.Run == nil {
		return fmt.Errorf("register program: a program needs a name and a Run function")
	}
	s, err := schema.Compile(p.Params)
	if err != nil {
		return fmt.Errorf("register program %s: %v", p.Name, err)
	}
	c := s.Canonical()
	props, ok := c["properties"].(map[string]any)
	if !ok || s.HasOpenMapping() && slices.Contains(s.OpenMappings(), "/") {
		return fmt.Errorf("register program %s: its parameters must be an object with declared properties", p.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.progs[p.Name]; dup {
		return fmt.Errorf("register program %s: already registered", p.Name)
	}
	r.progs[p.Name] = &entry{prog: p, schema: s, info: info(p, c, props)}
	return nil
}

func info(p Program, c, props map[string]any) Info {
	required := map[string]bool{}
	if req, ok := c["required"].([]any); ok {
		for _, x := range req {
			if s, ok := x.(string); ok {
				required[s] = true
			}
		}
	}
	in := Info{Name: p.Name, Description: p.Description, Schema: c, Params: []Param{}}
	for _, name := range sortedKeys(props) {
		prop, _ := props[name].(map[string]any)
		typ := fmt.Sprint(prop["type"])
		if ts, ok := prop["type"].([]any); ok {
			parts := make([]string, len(ts))
			for i, t := range ts {
				parts[i] = fmt.Sprint(t)
			}
			typ = strings.Join(parts, "|")
		}
		if prop["type"] == nil {
			typ = "any"
		}
		desc, _ := prop["description"].(string)
		in.Params = append(in.Params, Param{Name: name, Type: typ, Required: required[name], Description: desc})
	}
	return in
}

// List describes every program, by name.
func (r *Registry) List() []Info {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Info, 0, len(r.progs))
	for _, name := range r.names() {
		out = append(out, r.progs[name].info)
	}
	return out
}

// Get describes one program.
func (r *Registry) Get(name string) (Info, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.progs[name]
	if !ok {
		return Info{}, r.unknown(name)
	}
	return e.info, nil
}

func (r *Registry) names() []string {
	names := make([]string, 0, len(r.progs))
	for n := range r.progs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (r *Registry) unknown(name string) error {
	if len(r.progs) == 0 {
		return fmt.Errorf("unknown program %q: no programs are registered", name)
	}
	return fmt.Errorf("unknown program %q; the programs are: %s", name, strings.Join(r.names(), ", "))
}

// Call checks args against program name's parameters and runs it.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	r.mu.RLock()
	e, ok := r.progs[name]
	var unknownErr error
	if !ok {
		unknownErr = r.unknown(name)
	}
	r.mu.RUnlock()
	if unknownErr != nil {
		return "", unknownErr
	}
	var kw map[string]any
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.UseNumber()
	if err := dec.Decode(&kw); err != nil || kw == nil {
		return "", fmt.Errorf("program %s: args must be an object of keyword arguments", name)
	}
	var unsupported []string
	for k := range kw {
		if !slices.ContainsFunc(e.info.Params, func(p Param) bool { return p.Name == k }) {
			unsupported = append(unsupported, k)
		}
	}
	if len(unsupported) > 0 {
		sort.Strings(unsupported)
		names := make([]string, len(e.info.Params))
		for i, p := range e.info.Params {
			names[i] = p.Name
		}
		return "", fmt.Errorf("program %s does not take %s; its parameters are: %s", name, quoteAll(unsupported), strings.Join(names, ", "))
	}
	if err := e.schema.Validate(args); err != nil {
		return "", fmt.Errorf("program %s: invalid args: %v", name, err)
	}
	return e.prog.Run(ctx, kw)
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// toolSchema is the program tool's argument schema: args is an open
// mapping, checked per program by Call.
const toolSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "the program to run"},
    "args": {"type": "object", "additionalProperties": true, "description": "the program's keyword arguments, e.g. {\"task\": \"…\"}"}
  },
  "required": ["name", "args"]
}`

// Tool returns the "program" tool for an agent: it runs any program of r
// by name with keyword arguments.
func (r *Registry) Tool() model.Tool {
	desc := "Run a registered program by name with its keyword arguments."
	if list := r.List(); len(list) > 0 {
		var b strings.Builder
		b.WriteString(desc + " Programs:")
		for _, p := range list {
			fmt.Fprintf(&b, "\n- %s(", p.Name)
			for i, prm := range p.Params {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(prm.Name + ": " + prm.Type)
				if !prm.Required {
					b.WriteString("?")
				}
			}
			b.WriteString(")")
			if p.Description != "" {
				b.WriteString(": " + p.Description)
			}
		}
		desc = b.String()
	}
	return model.Tool{
		Name:        "program",
		Description: desc,
		Schema:      json.RawMessage(toolSchema),
		Run: func(ctx context.Context, raw json.RawMessage) (string, error) {
			var call struct {
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			}
			if err := json.Unmarshal(raw, &call); err != nil {
				return "", err
			}
			return r.Call(ctx, call.Name, call.Args)
		},
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
