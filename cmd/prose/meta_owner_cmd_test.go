package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/model/fakeserver"
)

// fakeIngest ingests a source named name through a scripted Chat
// Completions fake answering with a plan, then calls, then a final text.
func fakeIngest(t *testing.T, dir, name, planJSON string, calls []fakeserver.Call) string {
	t.Helper()
	srv := fakeserver.New(t, fakeserver.Chat,
		fakeserver.Reply{Turn: &fakeserver.Turn{Text: planJSON}},
		fakeserver.Reply{Turn: &fakeserver.Turn{Calls: calls}},
		fakeserver.Reply{Turn: &fakeserver.Turn{Text: "Done."}},
	)
	env := srv.Env()
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY"} {
		t.Setenv(k, env(k))
	}
	src := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(src, []byte("# "+name+"\n\nWhat "+name+" says.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return mustProse(t, "--vault", dir, "ingest", "--model", "openai-chat:fake-model", src)
}

// TestAPersonsMetaIsKeptLikeTheirSlots: a model's set_meta of title or
// template, and its move_page, on a page a person created (wiki new) or
// whose title a person set, are queued for review, not applied; on a page
// the pipeline wrote and nobody changed since, and on a page of the same
// run, they are applied, and the record of what the pipeline wrote follows.
func TestAPersonsMetaIsKeptLikeTheirSlots(t *testing.T) {
	dir := newIngestVault(t)
	mustProse(t, "--vault", dir, "wiki", "new", "ops/ours", "--template", "concept", "--title", "Our page")
	mustProse(t, "--vault", dir, "wiki", "write-slot", "ops/ours", "summary", "--content", "<p>Ours.</p>")
	mustProse(t, "--vault", dir, "wiki", "write-slot", "ops/ours", "examples", "--content", "<p>Our examples.</p>")
	fakeIngest(t, dir, "first.md",
		`{"pages":[{"action":"create","path":"ops/pipe.html","template":"concept","title":"Pipe"},{"action":"create","path":"ops/pipe2.html","template":"concept","title":"Pipe two"}]}`,
		[]fakeserver.Call{
			{ID: "a1", Name: "new_page", Args: `{"path":"ops/pipe.html","template":"concept","title":"Pipe"}`},
			{ID: "a2", Name: "write_slot", Args: `{"path":"ops/pipe.html","slot":"summary","html":"<p>The pipe.</p>"}`},
			{ID: "a3", Name: "new_page", Args: `{"path":"ops/pipe2.html","template":"concept","title":"Pipe two"}`},
			{ID: "a4", Name: "write_slot", Args: `{"path":"ops/pipe2.html","slot":"summary","html":"<p>The second pipe.</p>"}`},
		})
	if g, _ := readPageMeta(t, dir, "ops/pipe2")["generated"].(map[string]any); g["meta.title"] == nil || g["meta.template"] == nil {
		t.Fatalf("a page the pipeline created records no meta it wrote: %v", readPageMeta(t, dir, "ops/pipe2"))
	}
	mustProse(t, "--vault", dir, "wiki", "set-meta", "ops/pipe", "title=Our pipe")

	fakeIngest(t, dir, "second.md",
		`{"pages":[{"action":"update","path":"ops/ours.html"},{"action":"update","path":"ops/pipe.html"},{"action":"update","path":"ops/pipe2.html"},{"action":"create","path":"ops/fresh.html","template":"note","title":"Fresh"}]}`,
		[]fakeserver.Call{
			{ID: "b1", Name: "set_meta", Args: `{"path":"ops/ours.html","updates":{"title":"Model title","template":"note","owner":"model"}}`},
			{ID: "b2", Name: "move_page", Args: `{"from":"ops/ours.html","to":"ops/moved.html"}`},
			{ID: "b3", Name: "set_meta", Args: `{"path":"ops/pipe.html","updates":{"title":"Model pipe"}}`},
			{ID: "b4", Name: "move_page", Args: `{"from":"ops/pipe.html","to":"ops/pipe-moved.html"}`},
			{ID: "b5", Name: "set_meta", Args: `{"path":"ops/pipe2.html","updates":{"title":"Pipe two, renamed"}}`},
			{ID: "b6", Name: "move_page", Args: `{"from":"ops/pipe2.html","to":"ops/pipe2-moved.html"}`},
			{ID: "b7", Name: "new_page", Args: `{"path":"ops/fresh.html","template":"note","title":"Fresh"}`},
			{ID: "b8", Name: "set_meta", Args: `{"path":"ops/fresh.html","updates":{"title":"Fresh, renamed","template":"concept"}}`},
		})

	// The person's page: title, template and place kept; its slots are
	// still declared; the key it does not own was set.
	ours := readPageMeta(t, dir, "ops/ours")
	if ours.Title() != "Our page" || ours.Template() != "concept" || ours["owner"] != "model" {
		t.Errorf("the person's page after the model's set_meta: %v", ours)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "ops/ours", "examples"); s != "<p>Our examples.</p>" {
		t.Errorf("the person's slot: %q", s)
	}
	if p := pageTitled(t, dir, "Our page"); p != "ops/ours.html" {
		t.Errorf("the person's page was moved to %q", p)
	}
	// The pipeline's page a person retitled: title and place kept.
	if p := pageTitled(t, dir, "Our pipe"); p != "ops/pipe.html" {
		t.Errorf("the retitled page: found at %q, want ops/pipe.html titled Our pipe", p)
	}
	// The pipeline's own pages: changed as asked.
	if p := pageTitled(t, dir, "Pipe two, renamed"); p != "ops/pipe2-moved.html" {
		t.Errorf("the pipeline's page: found at %q, want ops/pipe2-moved.html", p)
	}
	if m := readPageMeta(t, dir, "ops/fresh"); m.Title() != "Fresh, renamed" || m.Template() != "concept" {
		t.Errorf("the page of the same run: %v", m)
	}
	g, _ := readPageMeta(t, dir, "ops/pipe2-moved")["generated"].(map[string]any)
	before, _ := readPageMeta(t, dir, "ops/fresh")["generated"].(map[string]any)
	if g["meta.title"] == nil || before["meta.title"] == nil || before["meta.template"] == nil {
		t.Errorf("the record of what the pipeline wrote: %v / %v", g, before)
	}

	// Each change kept back is a review item naming the page.
	want := map[string][]string{
		"ops/ours.html": {"meta title", "meta template", "not moved", "ops/moved"},
		"ops/pipe.html": {"meta title", "Model pipe", "not moved", "ops/pipe-moved"},
	}
	got := map[string]string{}
	for _, it := range reviewItems(t, dir) {
		if it.Kind == ingest.ReviewKeptMeta {
			got[it.Page] += it.Detail + "\n"
		}
	}
	for page, parts := range want {
		for _, p := range parts {
			if !strings.Contains(got[page], p) {
				t.Errorf("no kept-meta item for %s saying %q: %q", page, p, got[page])
			}
		}
	}
	for page := range got {
		if _, ok := want[page]; !ok {
			t.Errorf("a kept-meta item for %s, whose meta is the pipeline's: %q", page, got[page])
		}
	}
	cleanAndFsck(t, dir)
}
