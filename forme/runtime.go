package forme

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prose-store/prose/internal/lazyre"
)

// RuntimeSpec is what prose reads from a contract's ### Runtime
// (docs/diagnostics.md §Runtime keys).
type RuntimeSpec struct {
	// Render is how the node renders: "command", "model", "replay", or ""
	// when not declared (a command key alone means "command").
	Render string
	// Command is a command render's executable and arguments.
	Command string
	// Model is a model hint ("sonnet") or PROVIDER:NAME.
	Model string
	// Timeout bounds one render; 0 means the runtime's default.
	Timeout time.Duration
	// Env names environment variables passed through to a command render.
	Env []string
	// Persist is the specification's memory scope (true, project, user);
	// read and kept, not acted on by the reconciler.
	Persist string
	// Recording is a replay render's recording file (docs/runtime.md
	// §Replay renders); "" means recordings/<node>.json.
	Recording string
}

// RuntimeKeys are the ### Runtime keys prose reads.
var RuntimeKeys = []string{"render", "command", "model", "timeout", "env", "persist", "recording"}

var runtimeItemRe = lazyre.New(`^` + "`?" + `([A-Za-z_][A-Za-z0-9_-]*)` + "`?" + `\s*:\s*(.*)$`)

// ReadRuntime reads c's ### Runtime items. Unknown keys are warnings
// (runtime_key_unknown); values prose cannot use are errors
// (runtime_value_invalid).
func ReadRuntime(c *Contract) (RuntimeSpec, []Diagnostic) {
	var rt RuntimeSpec
	var diags []Diagnostic
	path := ""
	if c.File != nil {
		path = c.File.Path
	}
	bad := func(it *Item, format string, args ...any) {
		diags = append(diags, diagAt(CodeRuntimeValueInvalid, path, it.Pos, "%s: ### Runtime: "+format, append([]any{c.Name}, args...)...))
	}
	for _, it := range c.items("runtime") {
		key, val := it.Name, it.Desc
		if key == "" {
			m := runtimeItemRe().FindStringSubmatch(strings.TrimSpace(it.Head))
			if m == nil {
				diags = append(diags, diagAt(CodeRuntimeKeyUnknown, path, it.Pos,
					"%s: ### Runtime item %q is not a `key: value` line; prose reads %s", c.Name, cut(it.Head, 60), strings.Join(RuntimeKeys, ", ")))
				continue
			}
			key, val = m[1], m[2]
		}
		key = strings.ToLower(key)
		val = strings.Trim(strings.TrimSpace(val), "`")
		switch key {
		case "render":
			switch v := strings.ToLower(val); v {
			case "command", "model", "replay":
				rt.Render = v
			default:
				bad(it, "render %q is not command, model or replay", val)
			}
		case "command":
			if val == "" {
				bad(it, "command is empty: name the executable, for example `command: ./render.sh`")
				continue
			}
			rt.Command = val
		case "model":
			rt.Model = val
		case "timeout":
			d, err := parseTimeout(val)
			if err != nil {
				bad(it, "%v", err)
				continue
			}
			rt.Timeout = d
		case "env":
			for _, name := range strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == ' ' }) {
				if !envNameRe().MatchString(name) {
					bad(it, "env %q is not an environment variable name", name)
					continue
				}
				rt.Env = append(rt.Env, name)
			}
		case "persist":
			rt.Persist = val
		case "recording":
			if val == "" {
				bad(it, "recording is empty: name the file, for example `recording: recordings/%s.json`", c.Name)
				continue
			}
			rt.Recording = val
		default:
			diags = append(diags, diagAt(CodeRuntimeKeyUnknown, path, it.Pos,
				"%s: ### Runtime key %q is not one prose reads (%s); it is ignored", c.Name, key, strings.Join(RuntimeKeys, ", ")))
		}
	}
	if rt.Render == "" && rt.Command != "" {
		rt.Render = "command"
	}
	if rt.Render == "command" && rt.Command == "" {
		pos := c.Pos
		if s := c.sections("runtime"); len(s) > 0 {
			pos = s[0].Pos
		}
		diags = append(diags, diagAt(CodeRuntimeValueInvalid, path, pos, "%s: ### Runtime says render: command but names no command: add `- command: ./render.sh`", c.Name))
	}
	return rt, diags
}

var envNameRe = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseTimeout reads a Go duration ("90s", "2m") or "N seconds|minutes".
func parseTimeout(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	f := strings.Fields(s)
	if len(f) == 2 {
		if n, err := strconv.Atoi(f[0]); err == nil && n > 0 {
			switch strings.TrimSuffix(strings.ToLower(f[1]), "s") {
			case "second", "sec":
				return time.Duration(n) * time.Second, nil
			case "minute", "min":
				return time.Duration(n) * time.Minute, nil
			case "hour":
				return time.Duration(n) * time.Hour, nil
			}
		}
	}
	return 0, fmt.Errorf("timeout %q is not a positive duration (90s, 5m, \"2 minutes\")", s)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Continuity reads c's ### Continuity: its wake source and, when
// self-driven, the cadence text.
func (c *Contract) Continuity() Continuity { return readContinuity(c) }
