package forme

import (
	"testing"
	"time"
)

func TestReadRuntime(t *testing.T) {
	src := "---\nname: feed\nkind: responsibility\n---\n\n### Maintains\n\n- `items`: the items\n\n### Runtime\n\n" +
		"- render: command\n- `command`: ./render.sh feed\n- timeout: 2 minutes\n- env: FEED_URL, FEED_TOKEN\n- model: sonnet\n- persist: project\n"
	p := ParseSources([]Source{{Path: "feed.prose.md", Data: []byte(src)}}, Options{})
	cs := p.Contracts()
	if len(cs) != 1 {
		t.Fatalf("%d contracts", len(cs))
	}
	rt, diags := ReadRuntime(cs[0])
	if len(diags) != 0 {
		t.Fatalf("diagnostics %v", diags)
	}
	if rt.Render != "command" || rt.Command != "./render.sh feed" || rt.Timeout != 2*time.Minute || rt.Model != "sonnet" ||
		rt.Persist != "project" || len(rt.Env) != 2 || rt.Env[0] != "FEED_URL" || rt.Env[1] != "FEED_TOKEN" {
		t.Fatalf("%+v", rt)
	}
	// A command alone means render: command.
	p = ParseSources([]Source{{Path: "b.prose.md", Data: []byte("---\nname: b\nkind: responsibility\n---\n\n### Maintains\n\n- `x`: x\n\n### Runtime\n\n- command: ./b.sh\n")}}, Options{})
	if rt, _ := ReadRuntime(p.Contracts()[0]); rt.Render != "command" {
		t.Fatalf("render %q", rt.Render)
	}
}
