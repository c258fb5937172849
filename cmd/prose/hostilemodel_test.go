package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/internal/testknob"
	"github.com/prose-store/prose/model/fakeserver"
	"github.com/prose-store/prose/wiki"
)

// The tests here drive prose with a hostile model: a scripted Chat
// Completions fake on loopback (model/fakeserver) whose turns make the tool
// calls a test names. Each asserts what the tools answered the model, what
// reached the vault, and that the run never failed for a model's mistake.

// hostile starts the fake with replies and points openai-chat at it.
func hostile(t *testing.T, replies ...fakeserver.Reply) *fakeserver.Server {
	t.Helper()
	srv := fakeserver.New(t, fakeserver.Chat, replies...)
	env := srv.Env()
	t.Setenv("OPENAI_BASE_URL", env("OPENAI_BASE_URL"))
	t.Setenv("OPENAI_API_KEY", env("OPENAI_API_KEY"))
	return srv
}

// planOf is an analysis answer planning to create the pages at paths.
func planOf(paths ...string) fakeserver.Reply {
	var pages []string
	for _, p := range paths {
		pages = append(pages, fmt.Sprintf(`{"action":"create","path":%q,"template":"concept","title":%q}`, p, strings.TrimSuffix(filepath.Base(p), ".html")))
	}
	return fakeserver.Text("```json\n{\"pages\":[" + strings.Join(pages, ",") + "]}\n```")
}

func call(id, name string, args any) fakeserver.Call {
	b, _ := json.Marshal(args)
	return fakeserver.Call{ID: id, Name: name, Args: string(b)}
}

func newPage(id, path string) fakeserver.Call {
	return call(id, "new_page", map[string]any{"path": path, "template": "concept", "title": strings.TrimSuffix(filepath.Base(path), ".html")})
}

func setMeta(id, path string, updates map[string]any) fakeserver.Call {
	return call(id, "set_meta", map[string]any{"path": path, "updates": updates})
}

func writeSlot(id, path, slot, html string) fakeserver.Call {
	return call(id, "write_slot", map[string]any{"path": path, "slot": slot, "html": html})
}

// hostileSource writes a small source to ingest.
func hostileSource(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "train.md")
	if err := os.WriteFile(src, []byte("# Release train\n\nWe ship every Tuesday.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

// wantRefused asserts the model was told call id failed, with want in the
// message; it returns the message.
func wantRefused(t *testing.T, srv *fakeserver.Server, id, want string) {
	t.Helper()
	r, ok := srv.Result(id)
	if !ok {
		t.Errorf("call %s: no result reached the model", id)
		return
	}
	if !r.IsError || !strings.Contains(r.Content, want) {
		t.Errorf("call %s: the model was told %q; want an error saying %q", id, r.Content, want)
	}
}

func wantDone(t *testing.T, srv *fakeserver.Server, id string) {
	t.Helper()
	if r, ok := srv.Result(id); !ok || r.IsError {
		t.Errorf("call %s: %+v, want a success", id, r)
	}
}

// wikiFiles lists the files under published/wiki of dir's working tree.
func wikiFiles(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	root := filepath.Join(dir, "published", "wiki")
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	return out
}

// TestHostileModelCallsAreCheckedWhenMade: each tool call over a cap or
// naming what a file system or a browser would misread is an error result
// to the model when it is made; the loop goes on, the model's good calls
// land, and the run commits a wiki that lints clean and passes fsck.
func TestHostileModelCallsAreCheckedWhenMade(t *testing.T) {
	nfc, nfd := "ops/caf\u00e9.html", "ops/cafe\u0301.html"
	bad := []struct {
		call fakeserver.Call
		want string
	}{
		{newPage("deep", strings.Repeat("d/", ingest.MaxToolFolders+1)+"deep.html"), "folders deep"},
		{newPage("deeper", strings.Repeat("d/", 1000)+"deep.html"), "folders deep"},
		{newPage("long", "ops/"+strings.Repeat("x", ingest.MaxToolNameBytes+1)+".html"), "bytes; names are at most"},
		{newPage("long256", strings.Repeat("y", 256)+".html"), "bytes; names are at most"},
		{newPage("longdir", strings.Repeat("z", 200)+"/page.html"), "bytes; names are at most"},
		{newPage("con", "con.html"), "device name"},
		{newPage("nul", "ops/NUL.txt.html"), "device name"},
		{newPage("com1", "com1.html"), "device name"},
		{newPage("fullwidth", "\uff43\uff4f\uff4e.html"), "device name"},
		{newPage("superscript", "lpt\u00b9.html"), "device name"},
		{newPage("bidi", "ops/abc\u202egpj.html"), "format character"},
		{newPage("isolate", "ops/a\u2066b.html"), "format character"},
		{newPage("zwj", "ops/a\u200db.html"), "format character"},
		{newPage("dot", "ops/trailing..html"), "ends in a dot"},
		{call("title", "new_page", map[string]any{"path": "ops/titled.html", "template": "concept", "title": strings.Repeat("t", ingest.MaxToolTitleBytes+1)}), "a title is at most"},
		{newPage("case", "ops/Canary.html"), "only in case or Unicode normalisation"},
		{newPage("nfd", nfd), "only in case or Unicode normalisation"},
		{newPage("folder", "OPS/other.html"), "the folder OPS differs from the folder ops"},
		{writeSlot("giant", "ops/canary.html", "body", "<p>"+strings.Repeat("a", ingest.MaxToolSlotBytes)+"</p>"), "a slot holds at most"},
		{call("app2", "append_slot", map[string]any{"path": "ops/canary.html", "slot": "examples", "html": "<p>" + strings.Repeat("b", ingest.MaxToolSlotBytes/2) + "</p>"}), "a slot holds at most"},
		{setMeta("manykeys", "ops/canary.html", manyKeys(ingest.MaxToolMetaKeys+1)), "one call sets at most"},
		{setMeta("growkeys", "ops/canary.html", moreKeys(15)), "the page's meta would hold"},
		{setMeta("bigmeta", "ops/canary.html", map[string]any{"note": strings.Repeat("m", ingest.MaxToolMetaBytes)}), "bytes as JSON"},
		{setMeta("js", "ops/canary.html", map[string]any{"related": []any{"javascript:alert(1)"}}), "not URLs"},
		{setMeta("http", "ops/canary.html", map[string]any{"related": []any{"http://evil/x"}}), "not URLs"},
		{setMeta("outside", "ops/canary.html", map[string]any{"related": []any{"../../outside/x.html"}}), "related names"},
		{setMeta("missing", "ops/canary.html", map[string]any{"related": []any{"ops/nowhere.html"}}), "existing pages"},
		{setMeta("relstring", "ops/canary.html", map[string]any{"related": "ops/canary.html"}), "is a list of page paths"},
	}
	calls := []fakeserver.Call{newPage("canary", "ops/canary.html"), newPage("cafe", nfc), setMeta("fifty", "ops/canary.html", manyKeys(50)),
		call("app1", "append_slot", map[string]any{"path": "ops/canary.html", "slot": "examples", "html": "<p>" + strings.Repeat("a", ingest.MaxToolSlotBytes/2) + "</p>"})}
	for _, b := range bad {
		calls = append(calls, b.call)
	}
	calls = append(calls, setMeta("related", "ops/canary.html", map[string]any{"related": []any{nfc}, "owner": "ops"}))
	review := `Done. <<<REVIEW_QUEUE>>>[{"page":"../../etc/passwd","kind":"check","detail":"passwd"},{"page":"ops/canary.html","kind":"<script>","detail":"scripted"},{"page":"ops/canary.html","kind":"check","detail":"kept one"}]<<<END>>>`
	srv := hostile(t, planOf("ops/canary.html"), fakeserver.Calls(calls...), fakeserver.Text(review), fakeserver.Text("Corrected."))
	dir := newIngestVault(t)
	out, errs, code := prose(t, "--vault", dir, "--json", "ingest", "--model", "openai-chat:fake-model", hostileSource(t))
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, b := range bad {
		wantRefused(t, srv, b.call.ID, b.want)
	}
	for _, id := range []string{"canary", "cafe", "fifty", "app1", "related"} {
		wantDone(t, srv, id)
	}
	files := wikiFiles(t, dir)
	for f := range files {
		if strings.HasPrefix(f, "d/") || strings.HasPrefix(f, "OPS/") || strings.Contains(f, "xxxxx") || strings.Contains(strings.ToLower(f), "canary") && f != "ops/canary.html" || strings.ContainsAny(f, "\u202e\u2066\u200d\uff43") {
			t.Errorf("a refused page was written: %q", f)
		}
	}
	if !files["ops/canary.html"] || !files[nfc] || files[nfd] {
		t.Errorf("pages written: %v", files)
	}
	meta := readPageMeta(t, dir, "ops/canary")
	if rel := meta.Related(); len(rel) != 1 || rel[0] != nfc || meta["owner"] != "ops" || meta["note"] != nil {
		t.Errorf("canary meta: related %v, owner %v, %d keys", meta.Related(), meta["owner"], len(meta))
	}
	// The refused review items were named to the model in a further turn;
	// only the sound one is queued.
	bodies := srv.Bodies()
	if len(bodies) != 4 || !strings.Contains(string(bodies[3]), "review items refused") || !strings.Contains(string(bodies[3]), "kind \\\"\\u003cscript\\u003e\\\" is none of") && !strings.Contains(string(bodies[3]), `kind \"<script>\" is none of`) {
		t.Fatalf("the model was not told of its review items (%d requests):\n%s", len(bodies), bodies[len(bodies)-1])
	}
	var doc struct {
		Review []ingest.ReviewEntry `json:"review"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Review) != 1 || doc.Review[0].Detail != "kept one" || doc.Review[0].Page != "ops/canary.html" {
		t.Errorf("review items queued: %+v", doc.Review)
	}
	mustProse(t, "--vault", dir, "wiki", "lint")
	mustProse(t, "--vault", dir, "fsck")
}

func moreKeys(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[fmt.Sprintf("more%d", i)] = i
	}
	return m
}

func manyKeys(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = i
	}
	return m
}

// TestHostileModelFloodsOneAnswer: an answer of more tool calls than the
// cap runs only the first MaxToolCallsPerTurn; one loop fills a folder
// with at most MaxToolFolderPages pages; the calls beyond are error
// results, and the run commits.
func TestHostileModelFloodsOneAnswer(t *testing.T) {
	const made = ingest.MaxToolCallsPerTurn + 40
	var calls []fakeserver.Call
	for i := range made {
		calls = append(calls, newPage(fmt.Sprintf("p%d", i), fmt.Sprintf("bulk/p%03d.html", i)))
	}
	srv := hostile(t, planOf("bulk/p000.html"), fakeserver.Calls(calls...), fakeserver.Text("Done."))
	dir := newIngestVault(t)
	if out, errs, code := prose(t, "--vault", dir, "ingest", "--model", "openai-chat:fake-model", hostileSource(t)); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	results := srv.ToolResults()
	if len(results) != made {
		t.Fatalf("%d results for %d calls", len(results), made)
	}
	for i, r := range results {
		switch {
		case i < ingest.MaxToolFolderPages:
			if r.IsError {
				t.Errorf("call %d refused: %s", i, r.Content)
			}
		case i < ingest.MaxToolCallsPerTurn:
			if !r.IsError || !strings.Contains(r.Content, "the most one run may") {
				t.Errorf("call %d over the folder cap: %q", i, r.Content)
			}
		default:
			if !r.IsError || !strings.Contains(r.Content, "not run") {
				t.Errorf("call %d over the per-answer cap: %q", i, r.Content)
			}
		}
	}
	n := 0
	for f := range wikiFiles(t, dir) {
		if strings.HasPrefix(f, "bulk/p") {
			n++
		}
	}
	if n != ingest.MaxToolFolderPages {
		t.Errorf("%d pages in bulk/, want %d", n, ingest.MaxToolFolderPages)
	}
	mustProse(t, "--vault", dir, "fsck")
}

// hostileWiki makes a vault whose pages ops/a.html and ops/b.html a
// scripted model wrote, and returns it.
func hostileWiki(t *testing.T) string {
	t.Helper()
	hostile(t, planOf("ops/a.html", "ops/b.html"), fakeserver.Calls(
		newPage("a", "ops/a.html"), writeSlot("as", "ops/a.html", "summary", "<p>Page A.</p>"),
		newPage("b", "ops/b.html"), writeSlot("bs", "ops/b.html", "summary", "<p>Page B.</p>"),
	), fakeserver.Text("Done."))
	dir := newIngestVault(t)
	mustProse(t, "--vault", dir, "ingest", "--model", "openai-chat:fake-model", hostileSource(t))
	return dir
}

// TestEnrichWritesOnlyItsTarget: enriching one page, the model's writes
// to another page, its new page and its move are error results and change
// nothing; its write to the target lands.
func TestEnrichWritesOnlyItsTarget(t *testing.T) {
	dir := hostileWiki(t)
	b := filepath.Join(dir, "published", "wiki", "ops", "b.html")
	before, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	srv := hostile(t, fakeserver.Calls(
		writeSlot("other", "ops/b.html", "summary", "<p>Taken over.</p>"),
		call("append", "append_slot", map[string]any{"path": "b", "slot": "body", "html": "<p>More.</p>"}),
		setMeta("meta", "ops/b.html", map[string]any{"owner": "intruder"}),
		newPage("new", "ops/c.html"),
		call("move", "move_page", map[string]any{"from": "ops/a.html", "to": "ops/moved.html"}),
		call("moveother", "move_page", map[string]any{"from": "ops/b.html", "to": "ops/moved.html"}),
		writeSlot("own", "ops/a.html", "summary", "<p>Page A, enriched.</p>"),
	), fakeserver.Text("Done."))
	if out, errs, code := prose(t, "--vault", dir, "enrich", "--model", "openai-chat:fake-model", "ops/a"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, id := range []string{"other", "append", "meta", "new"} {
		wantRefused(t, srv, id, "this run may write only ops/a.html")
	}
	for _, id := range []string{"move", "moveother"} {
		wantRefused(t, srv, id, "cannot be moved during enrich")
	}
	wantDone(t, srv, "own")
	after, _ := os.ReadFile(b)
	if string(after) != string(before) {
		t.Errorf("ops/b.html changed:\n%s", after)
	}
	files := wikiFiles(t, dir)
	if files["ops/c.html"] || files["ops/moved.html"] || !files["ops/a.html"] {
		t.Errorf("pages after enrich: %v", files)
	}
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "ops/a", "summary"); got != "<p>Page A, enriched.</p>" {
		t.Errorf("target not enriched: %q", got)
	}
}

// TestModelCannotForgeProvenance: a model's set_meta of sources and
// generated is ignored (the model is told prose keeps them): the page's
// provenance is what prose recorded, so a slot a person changes later is
// still seen as theirs.
func TestModelCannotForgeProvenance(t *testing.T) {
	dir := hostileWiki(t)
	before := readPageMeta(t, dir, "ops/a")
	if len(before.Strings("sources")) != 1 || before[wiki.KeyGenerated] == nil {
		t.Fatalf("no provenance to forge: %v", before)
	}
	srv := hostile(t, planOf("ops/a.html"), fakeserver.Calls(
		setMeta("forge", "ops/a.html", map[string]any{"sources": []any{}, "generated": map[string]any{}, "owner": "ops"}),
	), fakeserver.Text("Done."))
	if out, errs, code := prose(t, "--vault", dir, "ingest", "--force", "--model", "openai-chat:fake-model", hostileSource(t)); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if r, ok := srv.Result("forge"); !ok || r.IsError || !strings.Contains(r.Content, `"kept_by_prose":["generated","sources"]`) {
		t.Errorf("the model was told %+v", r)
	}
	after := readPageMeta(t, dir, "ops/a")
	if after["owner"] != "ops" {
		t.Fatalf("the rest of the call did not land: %v", after)
	}
	b1, _ := json.Marshal(before[wiki.KeyGenerated])
	b2, _ := json.Marshal(after[wiki.KeyGenerated])
	if string(b1) != string(b2) || strings.Join(after.Strings("sources"), ",") != strings.Join(before.Strings("sources"), ",") {
		t.Errorf("provenance changed: %v → %v", before, after)
	}
}

// TestMemoKeyHoldsModelAndPrompts: a source ingested once is skipped with
// the same model and prompts, and sent to the model again under another
// --model or after a vault prompt override changes.
func TestMemoKeyHoldsModelAndPrompts(t *testing.T) {
	// Each run the model is asked writes other text, so that it commits
	// (a run whose pages come out as they were records nothing).
	var script []fakeserver.Reply
	for i := range 3 {
		script = append(script, planOf("ops/train.html"), fakeserver.Calls(newPage("n", "ops/train.html"),
			writeSlot("w", "ops/train.html", "summary", fmt.Sprintf("<p>Run %d.</p>", i))), fakeserver.Text("Done."))
	}
	srv := hostile(t, script...)
	dir := newIngestVault(t)
	src := hostileSource(t)
	asked := func(spec string) int {
		t.Helper()
		n := len(srv.Bodies())
		out, errs, code := prose(t, "--vault", dir, "ingest", "--model", spec, src)
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errs)
		}
		return len(srv.Bodies()) - n
	}
	if n := asked("openai-chat:model-one"); n != 3 {
		t.Fatalf("first ingest made %d requests", n)
	}
	if n := asked("openai-chat:model-one"); n != 0 {
		t.Fatalf("the same model and prompts asked the model again (%d requests)", n)
	}
	if n := asked("openai-chat:model-two"); n == 0 {
		t.Fatal("another --model was not asked: the memo key lacks the model")
	}
	if n := asked("openai-chat:model-two"); n != 0 {
		t.Fatalf("the same model asked again (%d requests)", n)
	}
	builtin, err := os.ReadFile("../../prompt/builtin/generation.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prompts", "generation.md"), append(builtin, "\nPrefer short sentences.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := asked("openai-chat:model-two"); n == 0 {
		t.Fatal("an edited prompt override did not ask the model again: the memo key lacks the prompts")
	}
}

// TestHostileModelWriteBudget: the calls of one loop write at most
// MaxToolWriteBytes of slot HTML and meta in all, however they spread it
// over answers; the writes beyond are error results and the run commits.
// The full run writes at the product's limit in slot-sized chunks; a short
// run lowers the limit to a 32nd (internal/testknob) and writes chunks a
// 32nd the size, the same 64 writes spread over the same answers.
func TestHostileModelWriteBudget(t *testing.T) {
	budget, slot := ingest.MaxToolWriteBytes, ingest.MaxToolSlotBytes
	if testing.Short() {
		budget, slot = budget/32, slot/32
		defer testknob.SetToolWriteBytes(budget)()
	}
	chunk := "<p>" + strings.Repeat("w", slot-16) + "</p>"
	replies := []fakeserver.Reply{planOf("ops/big.html"), fakeserver.Calls(newPage("n", "ops/big.html"))}
	perAnswer := 28 // under the answer bound of the transport
	turns := budget/len(chunk)/perAnswer + 2
	for i := range turns {
		var calls []fakeserver.Call
		for j := range perAnswer {
			calls = append(calls, writeSlot(fmt.Sprintf("w%d-%d", i, j), "ops/big.html", "body", chunk))
		}
		replies = append(replies, fakeserver.Calls(calls...))
	}
	srv := hostile(t, append(replies, fakeserver.Text("Done."))...)
	dir := newIngestVault(t)
	if out, errs, code := prose(t, "--vault", dir, "ingest", "--model", "openai-chat:fake-model", hostileSource(t)); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	done, refused := 0, 0
	for _, r := range srv.ToolResults() {
		if !strings.HasPrefix(r.CallID, "w") {
			continue
		}
		switch {
		case !r.IsError:
			done++
		case strings.Contains(r.Content, "may write at most"):
			refused++
		default:
			t.Fatalf("call %s: %s", r.CallID, r.Content)
		}
	}
	if want := budget / len(chunk); done != want || refused != turns*perAnswer-want {
		t.Fatalf("%d writes done, %d refused; want %d done", done, refused, want)
	}
}

// TestHostileModelReviewFlood: an answer of 20,000 review items queues the
// first MaxReviewItems, and one whose detail is over MaxReviewDetail is
// left out; the model is told both in one more turn.
func TestHostileModelReviewFlood(t *testing.T) {
	items := []string{fmt.Sprintf(`{"detail":%q}`, strings.Repeat("long ", ingest.MaxReviewDetail))}
	for i := range 20000 {
		items = append(items, fmt.Sprintf(`{"detail":"item %d"}`, i))
	}
	srv := hostile(t, planOf("ops/r.html"), fakeserver.Calls(newPage("n", "ops/r.html")),
		fakeserver.Text("Done. <<<REVIEW_QUEUE>>>["+strings.Join(items, ",")+"]<<<END>>>"), fakeserver.Text("Understood."))
	dir := newIngestVault(t)
	out, errs, code := prose(t, "--vault", dir, "--json", "ingest", "--model", "openai-chat:fake-model", hostileSource(t))
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	var doc struct {
		Review []ingest.ReviewEntry `json:"review"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Review) != ingest.MaxReviewItems-1 || doc.Review[0].Detail != "item 0" {
		t.Fatalf("%d review items queued, want %d", len(doc.Review), ingest.MaxReviewItems-1)
	}
	bodies := srv.Bodies()
	last := string(bodies[len(bodies)-1])
	if len(bodies) != 4 || !strings.Contains(last, fmt.Sprintf("the answer holds 20001 review items; the first %d are kept", ingest.MaxReviewItems)) || !strings.Contains(last, "item 1: its detail is") {
		t.Fatalf("the model was not told (%d requests)", len(bodies))
	}
}
