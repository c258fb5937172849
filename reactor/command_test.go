package reactor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/receipt"
)

// script writes an sh script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nset -e\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// commandWorld: gateway g → node a, rendered by a command.
func commandWorld(t *testing.T, body string, rt Runtime) (*world, *CommandRenderer) {
	proj := t.TempDir()
	rt.Render = "command"
	rt.Command = "./render.sh arg1"
	script(t, proj, "render.sh", body)
	w := newWorld(t, []Node{{ID: "g", Wake: receipt.WakeExternal}, {ID: "a", Runtime: rt}}, []Edge{{"a", "g", "@atomic"}}, nil)
	cr := &CommandRenderer{Dir: proj}
	w.rend["a"] = func(req *Request) (Result, error) { return cr.Render(context.Background(), req) }
	return w, cr
}

// A command render reads its inputs by facet, writes PROSE_OUT (seeded
// with its world-model), keeps its workspace, and gets a minimal
// environment.
func TestCommandRender(t *testing.T) {
	t.Setenv("PROSE_TEST_SECRET", "sk-shouldneverpass0123456789")
	t.Setenv("FEED_URL", "https://example.test/feed")
	w, _ := commandWorld(t, `
n=$(cat "$PROSE_WORKSPACE/count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$PROSE_WORKSPACE/count"
test "$1" = arg1
test "$(pwd)" = "$PROSE_WORKSPACE"
cp "$PROSE_INPUTS/g/in.json" "$PROSE_OUT/copy.json"
grep -q '"facet": "@atomic"' "$PROSE_INPUTS/inputs.json"
ls "$PROSE_OUT" > "$PROSE_OUT/seen.txt"
echo "renders: $n" > "$PROSE_OUT/count.txt"
env | sed 's/=.*//' | sort > "$PROSE_OUT/env.txt"
echo copy.json > "$PROSE_CHANGED"
`, Runtime{Env: []string{"FEED_URL"}})
	w.ingest("g", map[string]string{"in.json": `{"n":1}`})
	f := w.files("a")
	if f["copy.json"] != `{"n":1}` || f["count.txt"] != "renders: 1\n" {
		t.Fatalf("first render: %v", f)
	}
	env := strings.Fields(f["env.txt"])
	for _, k := range env {
		if k == "PROSE_TEST_SECRET" {
			t.Fatal("an undeclared variable reached the render")
		}
	}
	for _, k := range []string{"PATH", "PROSE_NODE", "PROSE_INPUTS", "PROSE_OUT", "PROSE_CHANGED", "PROSE_WORKSPACE", "PROSE_WAKE", "PROSE_NOW", "FEED_URL"} {
		if !strings.Contains(" "+strings.Join(env, " ")+" ", " "+k+" ") {
			t.Fatalf("%s missing from the render's environment %v", k, env)
		}
	}
	w.ingest("g", map[string]string{"in.json": `{"n":2}`})
	f = w.files("a")
	if f["copy.json"] != `{"n":2}` || f["count.txt"] != "renders: 2\n" || !strings.Contains(f["seen.txt"], "count.txt") {
		t.Fatalf("second render (seeded output, kept workspace): %v", f)
	}
	if r := w.last("a"); r.Cost.Provider != "command" || r.Cost.Model != "render.sh" {
		t.Fatalf("cost %+v", r.Cost)
	}
}

func TestCommandFailures(t *testing.T) {
	cases := []struct {
		name, body, want string
		rt               Runtime
	}{
		{"exit", "echo 'token=sk-abcdefghijklmnopqrstuvwx01 broke' >&2\nexit 3\n", "exited with status 3", Runtime{}},
		{"timeout", "sleep 30 &\nwait\n", "timed out after 300ms", Runtime{Timeout: 300 * time.Millisecond}},
		{"error file", "echo 'feed unreachable' > \"$PROSE_OUT/__error.md\"\n", "feed unreachable", Runtime{}},
		{"emptied", "rm -f \"$PROSE_OUT\"/*\n", "output empty", Runtime{}},
		{"edits inputs", "echo x >> \"$PROSE_INPUTS/g/in.json\"\n", "changed its inputs", Runtime{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, cr := commandWorld(t, `echo '{"ok":1}' > "$PROSE_OUT/v.json"`+"\n", c.rt)
			w.ingest("g", map[string]string{"in.json": `{"n":1}`})
			prior := w.files("a")
			script(t, cr.Dir, "render.sh", c.body)
			start := time.Now()
			rep := w.ingest("g", map[string]string{"in.json": `{"n":2}`})
			if c.name == "timeout" && time.Since(start) > 10*time.Second {
				t.Fatal("the timeout did not stop the render's process group")
			}
			o := outcome(t, rep, "a")
			r := w.last("a")
			reason, _ := r.SemanticDiff["failure_reason"].(string)
			if o.Disposition != Failed || r.Status != receipt.Failed || !strings.Contains(reason, c.want) {
				t.Fatalf("%+v reason %q", o, reason)
			}
			if strings.Contains(reason, "sk-abcdef") {
				t.Fatalf("secret in the reason: %q", reason)
			}
			if got := w.files("a"); got["v.json"] != prior["v.json"] || len(got) != len(prior) {
				t.Fatalf("prior truth changed: %v", got)
			}
		})
	}
}

// A render kind with no renderer configured (Renderers gives command
// only): waking such a node is a failure that says so.
func TestUnavailableRenderKinds(t *testing.T) {
	w := newWorld(t, []Node{{ID: "m", Runtime: Runtime{Render: "model"}}}, nil, nil)
	r := New(Options{Graph: w.g, Store: w.st, Renderer: Renderers(&CommandRenderer{}), TempDir: t.TempDir(), WorkDir: t.TempDir()})
	r.Wake(Seed{Node: "m", Source: receipt.WakeInput})
	rep, err := r.Drain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, rep, "m"); o.Disposition != Failed || !strings.Contains(o.Why, "render: model is not available") {
		t.Fatalf("%+v", o)
	}
}
