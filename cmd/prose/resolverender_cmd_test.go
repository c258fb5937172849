package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/refdata"
)

// TestSyncResolveRenderRendersAgainstTheMergedVault: with the shop
// fixture on two vaults and a bare remote, totals (a command render
// counting the inbox's orders) is advanced on both sides by hand while
// the inbox moves on one side only. The pull is refused naming --render;
// --render with --ours is a usage error; a failing render changes
// nothing; then prose resolve totals --render renders totals against the
// merged inbox — output neither side had — and lands the merge with a
// merge receipt taken "rendered" naming both heads and the render's memo
// key, every check passing and no receipt lost. Another node in conflict
// (register) makes --render wait until it is settled (--theirs, recorded),
// and that choice lands with the render.
func TestSyncResolveRenderRendersAgainstTheMergedVault(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	t.Setenv("PROSE_NOW", "2026-01-01T12:00:00Z")
	root, remote, a := syncWorld(t)
	repo := refdata.RepoRoot(t)
	cp := exec.Command("cp", "-r", filepath.Join(repo, "fixtures/runtime/shop/src"), filepath.Join(repo, "fixtures/runtime/shop/render.sh"), a)
	if out, err := cp.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	syncGit(t, a, "add", "src", "render.sh")
	syncGit(t, a, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "the shop's contracts and render")
	mustProse(t, "--vault", a, "compile", "--activate")
	payload := filepath.Join(root, "payload")
	writeFiles(t, payload, map[string]string{"orders/a.json": `{"id":"a"}`, "notes/n1.txt": "a note\n"})
	mustProse(t, "--vault", a, "trigger", "inbox", payload)
	mustProse(t, "--vault", a, "push")
	b := filepath.Join(root, "b")
	mustProse(t, "clone", remote, b)

	// a: a second order (inbox and totals move), then totals by hand;
	// b: totals by hand. Only totals is advanced on both sides.
	writeFiles(t, payload, map[string]string{"orders/a.json": `{"id":"a"}`, "orders/b.json": `{"id":"b"}`, "notes/n1.txt": "a note\n"})
	mustProse(t, "--vault", a, "trigger", "inbox", payload)
	publishFiles(t, root, a, "totals", map[string]string{"count.json": "{\"count\":5}\n"})
	mustProse(t, "--vault", a, "push")
	publishFiles(t, root, b, "totals", map[string]string{"count.json": "{\"count\":7}\n"})
	// register too, so --render must wait for it to be settled.
	publishFiles(t, root, a, "register", map[string]string{"orders.json": "[\"a\"]\n"})
	publishFiles(t, root, b, "register", map[string]string{"orders.json": "[\"b\"]\n"})
	mustProse(t, "--vault", a, "push")
	ours, theirs := lastOf(t, b, "totals")["content_hash"].(string), lastOf(t, a, "totals")["content_hash"].(string)
	all := append(receiptHashes(t, a), receiptHashes(t, b)...)

	_, errs, code := prose(t, "--vault", b, "pull")
	if code != 1 || !strings.Contains(errs, "node totals advanced on both sides") || !strings.Contains(errs, "prose resolve NODE --render") || !strings.Contains(errs, "node register advanced on both sides") {
		t.Fatalf("pull of a node advanced on both sides: exit %d\n%s", code, errs)
	}
	refs := refsOf(t, b)
	if _, errs, code := prose(t, "--vault", b, "resolve", "totals", "--render", "--ours"); code != 2 || !strings.Contains(errs, "drop --ours/--theirs") {
		t.Fatalf("--render with --ours: exit %d\n%s", code, errs)
	}
	// Another node still in conflict: --render waits for it, recording nothing.
	if _, errs, code := prose(t, "--vault", b, "resolve", "totals", "--render"); code != 1 || !strings.Contains(errs, "every other conflict must be settled first") || !strings.Contains(errs, "node register advanced on both sides") {
		t.Fatalf("resolve --render with another conflict: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(b, ".prose", "resolve.json")); err == nil {
		t.Fatal("a refused --render recorded a choice")
	}
	if _, errs, code := prose(t, "--vault", b, "resolve", "register", "--theirs"); code != 1 || !strings.Contains(errs, "recorded; the merge still waits") {
		t.Fatalf("resolve register --theirs: exit %d\n%s", code, errs)
	}
	refs = refsOf(t, b)
	// A failing render changes nothing.
	script := filepath.Join(b, "render.sh")
	if err := os.Chmod(script, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := prose(t, "--vault", b, "resolve", "totals", "--render"); code != 1 || !strings.Contains(errs, "the render failed, nothing changed") {
		t.Fatalf("resolve --render with a failing render: exit %d\n%s", code, errs)
	}
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := refsOf(t, b); got != refs {
		t.Fatalf("a refused or failed resolve moved refs:\n%s\nwas\n%s", got, refs)
	}
	if data, _ := os.ReadFile(filepath.Join(b, "published", "totals", "count.json")); string(data) != "{\"count\":7}\n" {
		t.Fatalf("a failed resolve changed totals: %q", data)
	}

	out := mustProse(t, "--vault", b, "resolve", "totals", "--render")
	if !strings.Contains(out, "resolved node totals (--render") || !strings.Contains(out, "joined: node totals (taken rendered)") || !strings.Contains(out, "joined: node register (taken theirs)") {
		t.Fatalf("resolve --render:\n%s", out)
	}
	// The render counted the merged inbox's two orders: neither side's 5 or 7.
	if data, _ := os.ReadFile(filepath.Join(b, "published", "totals", "count.json")); string(data) != "{\"count\":2}\n" {
		t.Fatalf("totals after resolve --render: %q, want the render's {\"count\":2}", data)
	}
	if data, _ := os.ReadFile(filepath.Join(b, "published", "register", "orders.json")); string(data) != "[\"a\"]\n" {
		t.Fatalf("register after the recorded --theirs: %q", data)
	}
	r := lastOf(t, b, "totals")
	m := mergeOf(t, r)
	if r["prev"] != ours || m["ours"] != ours || m["theirs"] != theirs || m["taken"] != "rendered" {
		t.Fatalf("merge receipt prev %v, merge %v; want prev/ours %s, theirs %s, taken rendered", r["prev"], m, ours, theirs)
	}
	if refs := r["wake"].(map[string]any)["refs"].([]any); len(refs) != 1 || refs[0] != theirs {
		t.Fatalf("merge receipt wake.refs %v, want [%s]", refs, theirs)
	}
	// Its memo key is the render's: totals is not dirty on the merged vault.
	inbox := lastOf(t, b, "inbox")["fingerprints"].(map[string]any)
	if in := r["input_fingerprints"].([]any); len(in) != 1 || in[0] != inbox["orders"] {
		t.Fatalf("merge receipt input_fingerprints %v, want the merged inbox's orders token %v", in, inbox["orders"])
	}
	if st := mustProse(t, "--vault", b, "status"); !strings.Contains(st, "totals    input     command   rendered  memo key unmoved") {
		t.Fatalf("status after resolve --render:\n%s", st)
	}
	hasAll(t, "b after resolve --render", receiptHashes(t, b), all)
	checkVaults(t, a, b)
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	if data, _ := os.ReadFile(filepath.Join(a, "published", "totals", "count.json")); string(data) != "{\"count\":2}\n" {
		t.Fatalf("a after pulling the resolve: %q", data)
	}
	checkVaults(t, a, b)
}
