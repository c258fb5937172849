package forme

import (
	"encoding/json"
	"github.com/prose-store/prose/internal/lazyre"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Host lookups: declared skills and tools are checked for presence only.
// prose never installs, runs or contacts a declared tool.

// Requirement is one resolved skill or tool and the contracts that need it.
type Requirement struct {
	Kind       string   `json:"kind"` // "skill", "cli" or "mcp"
	Name       string   `json:"name"`
	RequiredBy []string `json:"requiredBy"`
}

type host struct {
	opts       Options
	skillRoots []string
	mcp        map[string]bool
	pathDirs   []string
	skillCache map[string]bool
	toolCache  map[string]bool
}

func newHost(opts Options) *host {
	h := &host{opts: opts, skillCache: map[string]bool{}, toolCache: map[string]bool{}}
	home := opts.env("HOME")
	if opts.SkillRoots != nil {
		h.skillRoots = opts.SkillRoots
	} else {
		if opts.ProjectDir != "" {
			h.skillRoots = append(h.skillRoots, filepath.Join(opts.ProjectDir, "skills"))
		}
		if home != "" {
			for _, d := range []string{".claude", ".codex", ".agents"} {
				h.skillRoots = append(h.skillRoots, filepath.Join(home, d, "skills"))
			}
		}
	}
	if opts.MCPServers != nil {
		h.mcp = map[string]bool{}
		for _, s := range opts.MCPServers {
			h.mcp[s] = true
		}
	}
	for _, d := range filepath.SplitList(opts.env("PATH")) {
		if d != "" {
			h.pathDirs = append(h.pathDirs, d)
		}
	}
	return h
}

// mcpRegistry reads registered MCP server names from the project's
// .mcp.json and the user's ~/.claude.json (the "mcpServers" object), once.
func (h *host) mcpRegistry() map[string]bool {
	if h.mcp != nil {
		return h.mcp
	}
	h.mcp = map[string]bool{}
	var files []string
	if h.opts.ProjectDir != "" {
		files = append(files, filepath.Join(h.opts.ProjectDir, ".mcp.json"))
	}
	if home := h.opts.env("HOME"); home != "" {
		files = append(files, filepath.Join(home, ".claude.json"))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var doc struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if json.Unmarshal(data, &doc) == nil {
			for name := range doc.MCPServers {
				h.mcp[name] = true
			}
		}
	}
	return h.mcp
}

var skillRe = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]*(:[A-Za-z0-9][A-Za-z0-9._-]*)?$`)

// skillPaths lists the directories that would satisfy a skill.
func (h *host) skillPaths(skill string) []string {
	ns, name := "", skill
	if i := strings.IndexByte(skill, ':'); i >= 0 {
		ns, name = skill[:i], skill[i+1:]
	}
	var out []string
	for _, root := range h.skillRoots {
		out = append(out, filepath.Join(root, name))
		if ns != "" {
			out = append(out, filepath.Join(root, ns, name))
		}
	}
	return out
}

func (h *host) hasSkill(skill string) bool {
	if v, ok := h.skillCache[skill]; ok {
		return v
	}
	found := false
	for _, p := range h.skillPaths(skill) {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			found = true
			break
		}
	}
	h.skillCache[skill] = found
	return found
}

// onPath reports whether an executable named exe is in a PATH directory.
func (h *host) onPath(exe string) bool {
	if v, ok := h.toolCache[exe]; ok {
		return v
	}
	found := false
	for _, d := range h.pathDirs {
		st, err := os.Stat(filepath.Join(d, exe))
		if err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			found = true
			break
		}
	}
	h.toolCache[exe] = found
	return found
}

// declEntries reads a ### Skills or ### Tools section: each bullet's
// backticked name, else its first word. "(none)" declares nothing.
func declEntries(c *Contract, key string) []struct {
	Value string
	Pos   Pos
} {
	var out []struct {
		Value string
		Pos   Pos
	}
	for _, s := range c.sections(key) {
		for _, it := range s.Items {
			v := it.Name
			if v == "" {
				v = declHead(it.Head)
			}
			if v == "" {
				continue
			}
			if isNone(v) || isNone(it.Head) {
				continue
			}
			out = append(out, struct {
				Value string
				Pos   Pos
			}{v, it.Pos})
		}
	}
	return out
}

// declHead reads an unbackticked declaration: the text before a
// description separator (": ", " — ", " - ").
func declHead(h string) string {
	h = strings.TrimSpace(h)
	for _, sep := range []string{": ", " — ", " – ", " - "} {
		if i := strings.Index(h, sep); i >= 0 {
			h = h[:i]
		}
	}
	return strings.Trim(strings.TrimSpace(h), "`*,;:")
}

// checkHost resolves the skills and tools of every contract and returns the
// requirements found.
func checkHost(units []*unit, opts Options, report func(Diagnostic)) []Requirement {
	h := newHost(opts)
	req := map[[2]string]map[string]bool{}
	need := func(kind, name, by string) {
		k := [2]string{kind, name}
		if req[k] == nil {
			req[k] = map[string]bool{}
		}
		req[k][by] = true
	}
	for _, u := range units {
		c := u.c
		file := c.File.Path
		for _, e := range declEntries(c, "skills") {
			if !skillRe().MatchString(e.Value) {
				report(diagAt(CodeSkillInvalid, file, e.Pos,
					"%s: skill %q is malformed: write `- namespace:name` (or `- name`) with no spaces or slashes", c.Name, e.Value))
				continue
			}
			need("skill", e.Value, c.Name)
			if !h.hasSkill(e.Value) {
				searched := h.skillPaths(e.Value)
				where := "no skill roots are configured (set HOME, or give the project a skills/ directory)"
				if len(searched) > 0 {
					where = "searched " + strings.Join(searched, ", ")
				}
				report(diagAt(CodeSkillUnresolved, file, e.Pos,
					"%s: skill %s is not installed (%s): install it in one of those places; prose never installs skills",
					c.Name, e.Value, where))
			}
		}
		for _, e := range declEntries(c, "tools") {
			kind, name, ok := strings.Cut(e.Value, ":")
			switch {
			case !ok || kind == "" || name == "" || strings.ContainsAny(name, `/\`) || strings.ContainsAny(kind, `/\ `):
				report(diagAt(CodeToolInvalid, file, e.Pos,
					"%s: tool %q is malformed: write `cli:<executable>` (found by PATH lookup, no path separators) or `mcp:<server>`", c.Name, e.Value))
			case kind != "cli" && kind != "mcp":
				report(diagAt(CodeToolUnsupportedKind, file, e.Pos,
					"%s: tool %q uses the reserved namespace %q: only `cli:` and `mcp:` tools are supported", c.Name, e.Value, kind))
			case kind == "cli":
				need("cli", name, c.Name)
				if !h.onPath(name) {
					report(diagAt(CodeToolUnresolved, file, e.Pos,
						"%s: cli tool %q is not on PATH: install it or fix PATH; prose never installs or runs declared tools", c.Name, name))
				}
			default:
				need("mcp", name, c.Name)
				if !h.mcpRegistry()[name] {
					report(diagAt(CodeToolUnresolved, file, e.Pos,
						"%s: mcp server %q is not registered (checked the project's .mcp.json and ~/.claude.json): register it with your agent host", c.Name, name))
				}
			}
		}
	}
	out := []Requirement{}
	for k, by := range req {
		r := Requirement{Kind: k[0], Name: k[1]}
		for b := range by {
			r.RequiredBy = append(r.RequiredBy, b)
		}
		sort.Strings(r.RequiredBy)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}
