package reactor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// CommandRenderer runs a node's ### Runtime command (docs/runtime.md
// §Command renders). The process gets a minimal environment: PATH, HOME,
// LANG, LC_ALL and TZ when set, the variables the node names in env, and
// PROSE_NODE, PROSE_INPUTS, PROSE_OUT, PROSE_CHANGED, PROSE_WORKSPACE and
// PROSE_WAKE and PROSE_NOW (the reconciler's clock, RFC 3339). It runs in PROSE_WORKSPACE, in its own process group, killed
// whole on a timeout or when the run is stopped.
type CommandRenderer struct {
	// Dir is the project directory: a relative command path is relative
	// to it.
	Dir string
	// Getenv reads the environment passed through (default os.Getenv).
	Getenv func(string) string
	// Timeout applies when the node declares none (default DefaultTimeout).
	Timeout time.Duration
}

// baseEnv are the variables every command render receives when set.
var baseEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "TZ"}

// maxStderr is how much of a failing render's stderr its reason may quote.
const maxStderr = 4096

// Render implements Renderer.
func (c *CommandRenderer) Render(ctx context.Context, req *Request) (Result, error) {
	n := req.Node
	argv := strings.Fields(n.Runtime.Command)
	if len(argv) == 0 {
		return Result{}, errors.New("### Runtime names no command")
	}
	exe := argv[0]
	if strings.ContainsRune(exe, '/') && !filepath.IsAbs(exe) {
		exe = filepath.Join(c.Dir, exe)
	}
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var env []string
	for _, k := range append(append([]string{}, baseEnv...), n.Runtime.Env...) {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, "PROSE_NODE="+n.ID, "PROSE_INPUTS="+req.InputsDir, "PROSE_OUT="+req.Out,
		"PROSE_CHANGED="+req.Changed, "PROSE_WORKSPACE="+req.Workspace, "PROSE_WAKE="+string(req.Wake.Source), "PROSE_NOW="+req.Now.UTC().Format(time.RFC3339))
	if !strings.ContainsRune(exe, '/') {
		// Look the name up on the PATH the render is given.
		path := getenv("PATH")
		found := ""
		for _, d := range filepath.SplitList(path) {
			p := filepath.Join(d, exe)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				found = p
				break
			}
		}
		if found == "" {
			return Result{}, fmt.Errorf("command %q is not on PATH", exe)
		}
		exe = found
	}
	timeout := n.Runtime.Timeout
	if timeout <= 0 {
		timeout = c.Timeout
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, exe, argv[1:]...)
	cmd.Env = env
	cmd.Dir = req.Workspace
	var stderr tailBuffer
	cmd.Stdout = &tailBuffer{} // kept for nobody: a render speaks through PROSE_OUT
	cmd.Stderr = &stderr
	setGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return Result{}, ctx.Err()
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		return Result{}, fmt.Errorf("timed out after %s (### Runtime timeout)", timeout)
	case err != nil:
		msg := lastLine(stderr.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if msg != "" {
				return Result{}, fmt.Errorf("command exited with status %d: %s", ee.ExitCode(), msg)
			}
			return Result{}, fmt.Errorf("command exited with status %d", ee.ExitCode())
		}
		return Result{}, fmt.Errorf("command: %v", err)
	}
	return Result{Provider: "command", Model: filepath.Base(exe)}, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// tailBuffer keeps the last maxStderr bytes written to it.
type tailBuffer struct{ b bytes.Buffer }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b.Write(p)
	if t.b.Len() > 2*maxStderr {
		keep := append([]byte(nil), t.b.Bytes()[t.b.Len()-maxStderr:]...)
		t.b.Reset()
		t.b.Write(keep)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	b := t.b.Bytes()
	if len(b) > maxStderr {
		b = b[len(b)-maxStderr:]
	}
	return string(b)
}

// Renderers picks each node's renderer from its ### Runtime: command
// renders through cr; model and replay renders are not available (waking
// such a node fails saying so); a node with no render has none.
func Renderers(cr *CommandRenderer) func(n *Node) (Renderer, error) {
	return RenderersOf(RenderSet{Command: cr})
}

// RenderSet holds the renderers of each render kind; a nil one makes
// waking a node of that kind fail saying it is not available.
type RenderSet struct {
	Command *CommandRenderer
	Replay  *ReplayRenderer
	Model   *ModelRenderer
}

// RenderersOf picks each node's renderer from its ### Runtime.
func RenderersOf(rs RenderSet) func(n *Node) (Renderer, error) {
	return func(n *Node) (Renderer, error) {
		switch n.Runtime.Render {
		case "command":
			if rs.Command != nil {
				return rs.Command, nil
			}
		case "replay":
			if rs.Replay != nil {
				return rs.Replay, nil
			}
		case "model":
			if rs.Model != nil {
				return rs.Model, nil
			}
		default:
			return nil, nil
		}
		return nil, fmt.Errorf("render: %s is not available here", n.Runtime.Render)
	}
}
