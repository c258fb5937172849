package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/refdata"
)

// shopStep is one scripted change to fixtures/runtime/shop and the
// disposition table prose prints after it.
type shopStep struct {
	name  string
	now   string
	args  []string
	files map[string]string // the inbox payload, when the step triggers it
	code  int
	want  string
}

// TestRuntimeFixtureThroughTheCLI drives the shop fixture (a gateway with
// two facets, a diamond, a node that fails, a self-driven node with a
// valid_until, command renders in sh) through prose trigger and prose run,
// and checks the disposition table after each change exactly.
func TestRuntimeFixtureThroughTheCLI(t *testing.T) {
	needGit(t)
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	if out, err := exec.Command("date", "-u", "-d", "2026-01-01T12:00:00Z + 90 minutes", "+%H:%M").Output(); err != nil || strings.TrimSpace(string(out)) != "13:30" {
		if os.Getenv("CI") == "true" {
			t.Fatal("the shop fixture's render needs GNU date -d")
		}
		t.Skip("the shop fixture's render needs GNU date -d")
	}
	root := refdata.RepoRoot(t)
	dir := t.TempDir()
	v := filepath.Join(dir, "v")
	mustProse(t, "init", v)
	cp := exec.Command("cp", "-r", filepath.Join(root, "fixtures/runtime/shop/src"), filepath.Join(root, "fixtures/runtime/shop/render.sh"), v)
	if out, err := cp.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	mustProse(t, "--vault", v, "compile", "--activate")
	payload := filepath.Join(dir, "payload")
	one := map[string]string{"orders/a.json": `{"id":"a"}`, "notes/n1.txt": "first note\n"}
	two := map[string]string{"orders/a.json": `{"id":"a"}`, "notes/n1.txt": "first note\n", "notes/n2.txt": "second note\n"}
	three := map[string]string{"orders/a.json": `{"id":"a"}`, "orders/b.json": `{"id":"b"}`, "orders/c.json": `{"id":"c"}`,
		"notes/n1.txt": "first note\n", "notes/n2.txt": "second note\n"}
	steps := []shopStep{
		{name: "first payload", files: one, want: `
inbox     rendered   outside input; moved @atomic, orders, notes
journal   rendered   cold start: no receipt yet; moved @atomic
register  rendered   cold start: no receipt yet; moved @atomic
totals    rendered   cold start: no receipt yet; moved @atomic
audit     rendered   cold start: no receipt yet; moved @atomic
flaky     rendered   cold start: no receipt yet; moved @atomic
`},
		{name: "cold start of the rest", args: []string{"run"}, want: `
clock  rendered   cold start: no receipt yet; moved @atomic, status
board  rendered   cold start: no receipt yet; moved @atomic
`},
		{name: "nothing dirty", args: []string{"run"}, want: ``},
		{name: "a note only", files: two, want: `
inbox     rendered   outside input; moved @atomic, notes
journal   rendered   input moved: inbox.notes; moved @atomic
audit     rendered   input moved: journal.@atomic; moved @atomic
register  pruned     no producer propagated to it: inbox moved @atomic, notes, not orders
totals    pruned     no producer propagated to it: inbox moved @atomic, notes, not orders
flaky     pruned     no producer propagated to it: totals pruned
`},
		{name: "three orders: flaky refuses", files: three, code: 1, want: `
inbox     rendered   outside input; moved @atomic, orders
register  rendered   input moved: inbox.orders; moved @atomic
totals    rendered   input moved: inbox.orders; moved @atomic
audit     rendered   input moved: totals.@atomic; moved @atomic
flaky     failed     input moved: totals.@atomic; failed: the render wrote __error.md: refused: three or more orders need a person
journal   pruned     no producer propagated to it: inbox moved @atomic, orders, not notes
`},
		{name: "a failure is not retried while nothing moves", args: []string{"run"}, want: ``},
		{name: "named, it is retried", args: []string{"run", "flaky"}, code: 1, want: `
flaky  failed     its last render failed; failed: the render wrote __error.md: refused: three or more orders need a person
`},
		{name: "the same payload again", files: three, want: `
inbox     skipped    outside input moved no fingerprint
journal   pruned     no producer propagated to it: inbox skipped
register  pruned     no producer propagated to it: inbox skipped
totals    pruned     no producer propagated to it: inbox skipped
audit     pruned     no producer propagated to it: journal pruned; totals pruned
flaky     pruned     no producer propagated to it: totals pruned
`},
		{name: "half an hour later", now: "2026-01-01T12:30:00Z", args: []string{"run"}, want: ``},
		{name: "a cadence later: a plain tick", now: "2026-01-01T13:01:00Z", args: []string{"run"}, want: `
clock  skipped    cadence 1h0m0s passed: memo key unmoved (contract and 0 input(s) as at its last receipt)
board  pruned     no producer propagated to it: clock skipped
`},
		{name: "valid_until lapsed", now: "2026-01-01T13:31:00Z", args: []string{"run"}, want: `
clock  rendered   valid_until lapsed at status.now.valid_until; moved @atomic, status
board  rendered   input moved: clock.status; moved @atomic
`},
	}
	for _, s := range steps {
		now := s.now
		if now == "" {
			now = "2026-01-01T12:00:00Z"
		}
		t.Setenv("PROSE_NOW", now)
		args := append([]string{"--vault", v}, s.args...)
		if s.files != nil {
			writeFiles(t, payload, s.files)
			args = append([]string{"--vault", v}, "trigger", "inbox", payload)
		}
		out, errs, code := prose(t, args...)
		if code != s.code {
			t.Fatalf("%s: exit %d, want %d\n%s%s", s.name, code, s.code, out, errs)
		}
		if want := strings.TrimPrefix(s.want, "\n"); out != want {
			t.Fatalf("%s: the table is\n%s\nwant\n%s\n(stderr %s)", s.name, out, want, errs)
		}
	}
	// The vault is consistent: every receipt verifies, fsck is clean.
	if out := mustProse(t, "--vault", v, "receipts", "verify"); !strings.Contains(out, "0 problems") {
		t.Fatalf("verify: %s", out)
	}
	mustProse(t, "--vault", v, "fsck")
	// status and inspect say what the runtime believes, and write nothing.
	t.Setenv("PROSE_NOW", "2026-01-01T13:40:00Z")
	out := mustProse(t, "--vault", v, "status")
	for _, want := range []string{
		"flaky     input     command   failed    its last render failed at these inputs",
		"clock     self      command   rendered  memo key unmoved: a wake would skip; next tick due 2026-01-01T14:31:00Z",
		"inbox     external  none      skipped   memo key unmoved",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("status lacks %q:\n%s", want, out)
		}
	}
	out = mustProse(t, "--vault", v, "inspect", "flaky")
	for _, want := range []string{"node:      flaky (height 2, input-driven)", "render:    command ./render.sh (timeout 5m0s)",
		"totals.@atomic  blake3:", "(unmoved since the last receipt)", "failed    input", "refused: three or more orders need a person",
		"would render on prose run: no"} {
		if !strings.Contains(out, want) {
			t.Fatalf("inspect lacks %q:\n%s", want, out)
		}
	}
	writeFiles(t, payload, one)
	mustProse(t, "--vault", v, "publish", "inbox", payload)
	out = mustProse(t, "--vault", v, "status")
	if !strings.Contains(out, "totals    input     command   rendered  dirty: inputs moved") || !strings.Contains(out, "journal   input     command   rendered  dirty: inputs moved") {
		t.Fatalf("after a hand publish:\n%s", out)
	}
	// --json, --all after the hand publish: one payload back, flaky recovers
	// to the truth it held before it failed (its render moves nothing).
	out, _, code := prose(t, "--vault", v, "--json", "run", "--all")
	var doc struct {
		Outcomes []struct{ Node, Disposition, Why string }
		Skipped  int
		Failed   int
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if code != 0 || doc.Failed != 0 || doc.Skipped != 4 || len(doc.Outcomes) != 8 || doc.Outcomes[7].Why != "its last render failed; rendered, but the output moved no fingerprint" {
		t.Fatalf("--all: exit %d %+v", code, doc)
	}

	// A render that breaks a checked postcondition (register's orders
	// unique by id) fails naming it: nothing is published, the prior
	// truth stands, nobody downstream of register is woken.
	registerFile := filepath.Join(v, "published", "register", "orders.json")
	before, err := os.ReadFile(registerFile)
	if err != nil || string(before) != "[{\"id\":\"a\"}]\n" {
		t.Fatalf("register before: %q %v", before, err)
	}
	dup := map[string]string{"orders/a.json": `{"id":"a"}`, "orders/a2.json": `{"id":"a"}`, "notes/n1.txt": "first note\n"}
	fixed := map[string]string{"orders/a.json": `{"id":"a"}`, "orders/a2.json": `{"id":"b"}`, "notes/n1.txt": "first note\n"}
	noID := map[string]string{"orders/a.json": `{"id":"a"}`, "orders/x.json": `{"name":"x"}`, "notes/n1.txt": "first note\n"}
	for _, s := range []shopStep{
		{name: "a payload breaking the gateway's postcondition", files: noID, code: 1, want: `
inbox     failed     outside input; failed: postcondition broken: each ` + "`orders` has: `id`" + ` (orders.x has no id)
journal   pruned     no producer propagated to it: inbox failed
register  pruned     no producer propagated to it: inbox failed
totals    pruned     no producer propagated to it: inbox failed
audit     pruned     no producer propagated to it: journal pruned; totals pruned
flaky     pruned     no producer propagated to it: totals pruned
`},
		{name: "a duplicate order id", files: dup, code: 1, want: `
inbox     rendered   outside input; moved @atomic, orders
register  failed     input moved: inbox.orders; failed: postcondition broken: ` + "`orders` are unique by `id`" + ` (orders[1] repeats id "a" of orders[0])
totals    rendered   input moved: inbox.orders; moved @atomic
audit     rendered   input moved: totals.@atomic; moved @atomic
flaky     rendered   input moved: totals.@atomic; moved @atomic
journal   pruned     no producer propagated to it: inbox moved @atomic, orders, not notes
`},
		{name: "the duplicate fixed", files: fixed, want: `
inbox     rendered   outside input; moved @atomic, orders
register  rendered   its last render failed; moved @atomic
totals    skipped    input moved: inbox.orders; rendered, but the output moved no fingerprint
journal   pruned     no producer propagated to it: inbox moved @atomic, orders, not notes
audit     pruned     no producer propagated to it: journal pruned; totals skipped
flaky     pruned     no producer propagated to it: totals skipped
`},
	} {
		writeFiles(t, payload, s.files)
		out, errs, code := prose(t, "--vault", v, "trigger", "inbox", payload)
		if code != s.code {
			t.Fatalf("%s: exit %d, want %d\n%s%s", s.name, code, s.code, out, errs)
		}
		if want := strings.TrimPrefix(s.want, "\n"); out != want {
			t.Fatalf("%s: the table is\n%s\nwant\n%s\n(stderr %s)", s.name, out, want, errs)
		}
		if s.code == 0 {
			break
		}
		if _, err := os.Stat(filepath.Join(v, "published", "inbox", "orders", "x.json")); err == nil {
			t.Fatal("the refused payload was published")
		}
		if after, _ := os.ReadFile(registerFile); string(after) != string(before) {
			t.Fatalf("the broken render published: %q", after)
		}
		// inspect says which postconditions are checked and which are not.
		out = mustProse(t, "--vault", v, "inspect", "register")
		for _, want := range []string{"postconditions:", "checked:    each `orders` has: `id`", "checked:    `orders` are unique by `id`.",
			"unchecked:  an order is never dropped from the register. (the render's to keep; prose does not check it)"} {
			if !strings.Contains(out, want) {
				t.Fatalf("inspect register lacks %q:\n%s", want, out)
			}
		}
	}
	if after, _ := os.ReadFile(registerFile); string(after) != "[{\"id\":\"a\"},{\"id\":\"b\"}]\n" {
		t.Fatalf("register after the fix: %q", after)
	}
	// The rendered receipt says what was checked and what was not.
	var rec struct {
		SemanticDiff struct {
			Postconditions struct{ Checked, Unchecked []string }
		} `json:"semantic_diff"`
	}
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", v, "receipts", "show", "register")), &rec); err != nil {
		t.Fatal(err)
	}
	if pc := rec.SemanticDiff.Postconditions; len(pc.Checked) != 2 || len(pc.Unchecked) != 1 || pc.Unchecked[0] != "an order is never dropped from the register." {
		t.Fatalf("receipt postconditions: %+v", pc)
	}
}

func TestRunRefusesAStaleManifest(t *testing.T) {
	needGit(t)
	root := refdata.RepoRoot(t)
	v := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", v)
	if out, err := exec.Command("cp", "-r", filepath.Join(root, "fixtures/runtime/shop/src"), v).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	_, errs, code := prose(t, "--vault", v, "run")
	if code != 1 || !strings.Contains(errs, "no manifest is active") || !strings.Contains(errs, "prose compile --activate") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	mustProse(t, "--vault", v, "compile", "--activate")
	os.WriteFile(filepath.Join(v, "src", "extra.prose.md"), []byte("---\nname: extra\nkind: responsibility\n---\n\n### Maintains\n\n- `x`: x\n"), 0o644)
	_, errs, code = prose(t, "--vault", v, "run")
	if code != 1 || !strings.Contains(errs, "is stale") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	os.Remove(filepath.Join(v, "src", "extra.prose.md"))
	_, errs, code = prose(t, "--vault", v, "run", "nosuch")
	if code != 2 || !strings.Contains(errs, "no node \"nosuch\"") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}
