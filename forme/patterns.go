package forme

import (
	"fmt"
	"github.com/prose-store/prose/internal/lazyre"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Pattern is a kind: pattern contract's interface.
type Pattern struct {
	Name   string         `json:"name"`
	Source string         `json:"source"`
	Slots  []PatternSlot  `json:"slots"`
	Config []ConfigOption `json:"config"`
}

// PatternSlot is one ### Slots entry.
type PatternSlot struct {
	Name     string `json:"name"`
	Optional bool   `json:"optional,omitempty"`
}

// ConfigOption is one ### Config entry with its default, when written.
type ConfigOption struct {
	Name    string `json:"name"`
	Default string `json:"default,omitempty"`
}

// Instance is an expanded pattern instance: its slots bound to contracts or
// to nested instances, and its config with the pattern's defaults filled in.
// An instance is a callable helper (invoked with `call <name>`), never a
// topology node.
type Instance struct {
	Name    string         `json:"name"`
	Pattern string         `json:"pattern"`
	Owner   string         `json:"owner"`
	Source  string         `json:"source"`
	Line    int            `json:"line"`
	Slots   []SlotBinding  `json:"slots"`
	Config  map[string]any `json:"config"`
	Parent  string         `json:"parent,omitempty"`
	pos     Pos
	file    string
	with    []rawBinding
	cfgPos  map[string]Pos
	pattern string
}

// SlotBinding binds one slot to a target (a contract or instance name).
type SlotBinding struct {
	Slot    string   `json:"slot"`
	Targets []string `json:"targets"`
}

type rawBinding struct {
	slot    string
	pos     Pos
	targets []string
	targetP []Pos
}

var defaultRe = lazyre.New(`(?i)\bdefault\s*:\s*(.*)$`)

func readPattern(c *Contract) Pattern {
	p := Pattern{Name: c.Name, Source: c.File.Rel, Slots: []PatternSlot{}, Config: []ConfigOption{}}
	for _, it := range c.items("slots") {
		if it.Name == "" {
			continue
		}
		opt := strings.Contains(strings.ToLower(it.Note+" "+it.Desc), "optional")
		p.Slots = append(p.Slots, PatternSlot{Name: it.Name, Optional: opt})
	}
	for _, it := range c.items("config") {
		if it.Name == "" {
			continue
		}
		o := ConfigOption{Name: it.Name}
		if m := defaultRe().FindStringSubmatch(it.Note); m != nil {
			o.Default = strings.TrimSpace(m[1])
		}
		p.Config = append(p.Config, o)
	}
	return p
}

// readInstances finds pattern instances in a contract's fenced yaml blocks.
// A yaml block that declares no `pattern:` key is other data and is left
// alone.
func readInstances(c *Contract, report func(Diagnostic)) []*Instance {
	var out []*Instance
	for _, s := range c.Sections {
		for _, cb := range s.Code {
			if cb.Lang != "yaml" && cb.Lang != "yml" {
				continue
			}
			out = append(out, instancesIn(c, cb, report)...)
		}
	}
	return out
}

func instancesIn(c *Contract, cb *CodeBlock, report func(Diagnostic)) []*Instance {
	file := c.File.Path
	var doc yaml.Node
	lastBodyLine := cb.BodyLine + strings.Count(cb.Body, "\n")
	at := func(n *yaml.Node) Pos {
		if n == nil || n.Line == 0 {
			return cb.Pos
		}
		// YAML also breaks lines at a lone \r, the file only at \n.
		return Pos{min(cb.BodyLine+n.Line-1, lastBodyLine), n.Column}
	}
	if err := safeYAML([]byte(cb.Body), &doc); err != nil {
		if strings.Contains(cb.Body, "pattern:") {
			pos := cb.Pos
			if m := yamlLineRe().FindStringSubmatch(err.Error()); m != nil {
				if n, e := strconv.Atoi(m[1]); e == nil {
					pos = Pos{min(cb.BodyLine+n-1, lastBodyLine), 1}
				}
			}
			report(diagAt(CodePatternInstanceInvalid, file, pos,
				"%s: the yaml block is not valid YAML (%s): fix it so the pattern instance can be read", c.Name, strings.TrimPrefix(err.Error(), "yaml: ")))
		}
		return nil
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	var entries []*yaml.Node
	switch root.Kind {
	case yaml.SequenceNode:
		entries = root.Content
	case yaml.MappingNode:
		entries = []*yaml.Node{root}
	default:
		return nil
	}
	declares := false
	for _, e := range entries {
		if e.Kind == yaml.MappingNode && mapValue(e, "pattern") != nil {
			declares = true
		}
	}
	if !declares {
		return nil
	}
	var out []*Instance
	for _, e := range entries {
		out = append(out, readInstance(c, e, "", at, report)...)
	}
	return out
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// readInstance reads one instance mapping and its nested with: instances.
// slot is the slot a nested instance fills ("" at the top level).
func readInstance(c *Contract, e *yaml.Node, slot string, at func(*yaml.Node) Pos, report func(Diagnostic)) []*Instance {
	file := c.File.Path
	bad := func(n *yaml.Node, format string, args ...any) {
		report(diagAt(CodePatternInstanceInvalid, file, at(n), "%s: "+format, append([]any{c.Name}, args...)...))
	}
	if e.Kind != yaml.MappingNode {
		bad(e, "a pattern instance must be a mapping with name, pattern, with and config keys")
		return nil
	}
	inst := &Instance{Owner: c.Name, Source: c.File.Rel, pos: at(e), file: file, Config: map[string]any{}, cfgPos: map[string]Pos{}, Slots: []SlotBinding{}}
	inst.Line = inst.pos.Line
	var nested []*Instance
	var heads []nestedHead
	for i := 0; i+1 < len(e.Content); i += 2 {
		k, v := e.Content[i], e.Content[i+1]
		switch k.Value {
		case "name", "pattern":
			if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" {
				bad(v, "`%s:` must be a non-empty plain value", k.Value)
				continue
			}
			if k.Value == "name" {
				inst.Name = strings.TrimSpace(v.Value)
			} else {
				inst.pattern = strings.TrimSpace(v.Value)
			}
		case "with":
			if v.Kind != yaml.MappingNode {
				bad(v, "`with:` must map slot names to contracts or nested instances")
				continue
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				sk, sv := v.Content[j], v.Content[j+1]
				rb := rawBinding{slot: sk.Value, pos: at(sk)}
				switch sv.Kind {
				case yaml.ScalarNode:
					rb.targets = append(rb.targets, strings.TrimSpace(sv.Value))
					rb.targetP = append(rb.targetP, at(sv))
				case yaml.SequenceNode:
					for _, item := range sv.Content {
						if item.Kind == yaml.ScalarNode {
							rb.targets = append(rb.targets, strings.TrimSpace(item.Value))
							rb.targetP = append(rb.targetP, at(item))
						} else {
							bad(item, "slot %q lists a value that is not a name", sk.Value)
						}
					}
				case yaml.MappingNode:
					if mapValue(sv, "pattern") == nil {
						bad(sv, "slot %q must be a contract name or a nested instance with a `pattern:` key", sk.Value)
						continue
					}
					kids := readInstance(c, sv, sk.Value, at, report)
					if len(kids) > 0 {
						heads = append(heads, nestedHead{slot: sk.Value, inst: kids[0], binding: len(inst.with), target: len(rb.targets)})
						rb.targets = append(rb.targets, kids[0].Name)
						rb.targetP = append(rb.targetP, at(sv))
						nested = append(nested, kids...)
					}
				default:
					bad(sv, "slot %q must be a contract name or a nested instance", sk.Value)
				}
				inst.with = append(inst.with, rb)
			}
		case "config":
			if v.Kind != yaml.MappingNode {
				bad(v, "`config:` must map config keys to values")
				continue
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				ck, cv := v.Content[j], v.Content[j+1]
				if hasNestedPattern(cv) {
					bad(cv, "config %q holds a nested pattern instance; nested instances are allowed only as `with:` slot values", ck.Value)
					continue
				}
				var val any
				if err := cv.Decode(&val); err != nil {
					bad(cv, "config %q: %v", ck.Value, err)
					continue
				}
				inst.Config[ck.Value] = jsonable(val)
				inst.cfgPos[ck.Value] = at(ck)
			}
		default:
			bad(k, "unknown key %q: a pattern instance has name, pattern, with and config", k.Value)
		}
	}
	if inst.pattern == "" {
		bad(e, "the instance has no `pattern:`: name the kind: pattern contract it instantiates")
		return nested
	}
	if inst.Name == "" && slot == "" {
		bad(e, "the instance has no `name:`: give it the name renders `call`")
		return nested
	}
	// A nested instance without a name is called <parent>.<slot>.
	for _, h := range heads {
		if h.inst.Name == "" {
			h.inst.Name = inst.Name + "." + h.slot
			inst.with[h.binding].targets[h.target] = h.inst.Name
		}
		h.inst.Parent = inst.Name
	}
	inst.Pattern = inst.pattern
	return append([]*Instance{inst}, nested...)
}

type nestedHead struct {
	slot    string
	inst    *Instance
	binding int
	target  int
}

func hasNestedPattern(n *yaml.Node) bool {
	if n.Kind == yaml.MappingNode && mapValue(n, "pattern") != nil {
		return true
	}
	for _, k := range n.Content {
		if hasNestedPattern(k) {
			return true
		}
	}
	return false
}

// jsonable converts decoded YAML into values encoding/json can write.
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = jsonable(x)
		}
		return t
	case map[any]any:
		m := map[string]any{}
		for k, x := range t {
			m[fmt.Sprint(k)] = jsonable(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = jsonable(x)
		}
		return t
	}
	return v
}

// expandInstances resolves instances against the pattern contracts and the
// names they may bind.
func expandInstances(insts []*Instance, patterns map[string]Pattern, callable map[string]bool, report func(Diagnostic)) []Instance {
	names := map[string]bool{}
	for _, in := range insts {
		names[strings.ToLower(in.Name)] = true
	}
	out := []Instance{}
	for _, in := range insts {
		key := strings.ToLower(in.pattern)
		key = key[strings.LastIndexByte(key, '/')+1:]
		key = strings.TrimSuffix(strings.TrimSuffix(key, ".md"), ".prose")
		pat, ok := patterns[key]
		if !ok {
			report(diagAt(CodePatternUnresolved, in.file, in.pos,
				"%s: instance %q names pattern %q, but no kind: pattern contract has that name among the checked sources: add the pattern's file to the paths you check, or fix the name",
				in.Owner, in.Name, in.pattern))
		}
		slots := map[string]PatternSlot{}
		for _, s := range pat.Slots {
			slots[s.Name] = s
		}
		bound := map[string]bool{}
		for _, b := range in.with {
			bound[b.slot] = true
			if ok {
				if _, known := slots[b.slot]; !known {
					report(diagAt(CodePatternSlotUnknown, in.file, b.pos,
						"%s: instance %q binds slot %q, but pattern %s declares %s: use one of those slots",
						in.Owner, in.Name, b.slot, pat.Name, slotList(pat)))
				}
			}
			for i, t := range b.targets {
				if !callable[strings.ToLower(t)] && !names[strings.ToLower(t)] {
					report(diagAt(CodePatternSlotUnresolved, in.file, b.targetP[i],
						"%s: instance %q binds slot %q to %q, which is no contract or instance among the sources: bind it to a responsibility, function or instance name",
						in.Owner, in.Name, b.slot, t))
				}
			}
			in.Slots = append(in.Slots, SlotBinding{Slot: b.slot, Targets: append([]string{}, b.targets...)})
		}
		if ok {
			for _, s := range pat.Slots {
				if !bound[s.Name] && !s.Optional {
					report(diagAt(CodePatternSlotMissing, in.file, in.pos,
						"%s: instance %q leaves slot %q of pattern %s unbound: add `%s: <contract>` under `with:`",
						in.Owner, in.Name, s.Name, pat.Name, s.Name))
				}
			}
			declared := map[string]bool{}
			for _, o := range pat.Config {
				declared[o.Name] = true
			}
			var keys []string
			for k := range in.Config {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if !declared[k] {
					report(diagAt(CodePatternConfigUnknown, in.file, in.cfgPos[k],
						"%s: instance %q sets config %q, which pattern %s does not declare (it declares %s): check the key's spelling",
						in.Owner, in.Name, k, pat.Name, configList(pat)))
				}
			}
			for _, o := range pat.Config {
				if _, set := in.Config[o.Name]; !set && o.Default != "" && !strings.EqualFold(o.Default, "none") {
					in.Config[o.Name] = defaultValue(o.Default)
				}
			}
			in.Pattern = pat.Name
		}
		sort.Slice(in.Slots, func(i, j int) bool { return in.Slots[i].Slot < in.Slots[j].Slot })
		out = append(out, *in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// defaultValue reads a ### Config default as YAML ("3" is a number,
// "plain" a string), keeping the text when it is not a plain scalar.
func defaultValue(s string) any {
	var n yaml.Node
	if safeYAML([]byte(s), &n) == nil && len(n.Content) == 1 && n.Content[0].Kind == yaml.ScalarNode {
		var v any
		if n.Content[0].Decode(&v) == nil {
			return jsonable(v)
		}
	}
	return s
}

func slotList(p Pattern) string {
	if len(p.Slots) == 0 {
		return "no slots"
	}
	var s []string
	for _, x := range p.Slots {
		s = append(s, x.Name)
	}
	return strings.Join(s, ", ")
}

func configList(p Pattern) string {
	if len(p.Config) == 0 {
		return "no config"
	}
	var s []string
	for _, x := range p.Config {
		s = append(s, x.Name)
	}
	return strings.Join(s, ", ")
}
