package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/fakewiki"
	"github.com/prose-store/prose/model/fakeserver"
)

// scaleSources writes n small Markdown sources into a fresh directory.
func scaleSources(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "docs")
	os.MkdirAll(dir, 0o755)
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("# Runbook %02d\n\nStep %d of the on-call rota: check the queue depth, then page the owner of service %02d.\n\n## Escalation\n\nAfter %d minutes, escalate to the duty manager.\n", i, i, i, 10+i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("runbook-%02d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func pointAt(t *testing.T, srv *fakeserver.Server) {
	env := srv.Env()
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"} {
		t.Setenv(k, env(k))
	}
}

var scaleAPIs = []struct{ api, spec string }{
	{fakeserver.Responses, "openai:fake-model"},
	{fakeserver.Chat, "openai-chat:fake-model"},
	{fakeserver.Anthropic, "anthropic:fake-model"},
}

// TestIngestRepairsABadPlan: every provider is asked for the plan in its
// structured form (the fake refuses other shapes); a plan answered as
// invalid JSON gets one repair turn and the run lands.
func TestIngestRepairsABadPlan(t *testing.T) {
	for _, tc := range scaleAPIs {
		t.Run(tc.api, func(t *testing.T) {
			fm := &fakewiki.Model{BadPlanOnce: true}
			srv := fm.Serve(t, tc.api, fakeserver.Options{})
			pointAt(t, srv)
			dir := newIngestVault(t)
			src := scaleSources(t, 2)
			out := mustProse(t, "--vault", dir, "ingest", "--model", tc.spec, src)
			if fm.Plan != 4 {
				t.Errorf("%d plan answers; want a bad one and its repair per source (4)", fm.Plan)
			}
			if !strings.Contains(out, "runbook-00-notes.html") {
				t.Errorf("the repaired plan's page is not in the output:\n%s", out)
			}
			formats := 0
			for _, b := range srv.Bodies() {
				if strings.Contains(string(b), `"json_schema"`) || strings.Contains(string(b), `"tool_choice"`) {
					formats++
				}
			}
			if formats != 4 {
				t.Errorf("%d requests asked for a structured plan, want 4", formats)
			}
		})
	}
}

// TestIngestFailsOnAPlanThatNeverParses: a model that answers a bad plan
// twice fails the run with an error saying so; nothing lands.
func TestIngestFailsOnAPlanThatNeverParses(t *testing.T) {
	bad := fakeserver.Text(`{"pages": [`)
	srv := fakeserver.New(t, fakeserver.Responses, bad, bad)
	pointAt(t, srv)
	dir := newIngestVault(t)
	before := headOf(t, dir)
	_, errs, code := prose(t, "--vault", dir, "ingest", "--model", "openai:fake-model", scaleSources(t, 1))
	if code != 1 || !strings.Contains(errs, "after a repair turn") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if headOf(t, dir) != before {
		t.Error("the branch moved")
	}
}
