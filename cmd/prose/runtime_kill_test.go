//go:build linux

package main

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/refdata"
)

// TestRuntimeKillAndResume SIGKILLs prose trigger and prose run at random
// moments of the shop fixture's runs (PROSE_KILLS times, default 30) and
// checks after each kill that the vault is consistent (fsck repairs and
// passes, every receipt chain verifies), then resumes with prose run and
// checks that the world-models are what the payload implies and that a
// second run finds nothing dirty: nothing lost, nothing published twice.
func TestRuntimeKillAndResume(t *testing.T) {
	needGit(t)
	if out, err := exec.Command("date", "-u", "-d", "2026-01-01T12:00:00Z + 90 minutes", "+%H:%M").Output(); err != nil || strings.TrimSpace(string(out)) != "13:30" {
		if os.Getenv("CI") == "true" {
			t.Fatal("the shop fixture's render needs GNU date -d")
		}
		t.Skip("the shop fixture's render needs GNU date -d")
	}
	kills := 30
	if testing.Short() {
		kills = 4 // -short: a few kills; the full run makes 30
	}
	if n, err := strconv.Atoi(os.Getenv("PROSE_KILLS")); err == nil && n > 0 {
		kills = n
	}
	root := refdata.RepoRoot(t)
	dir := t.TempDir()
	v := filepath.Join(dir, "v")
	mustProse(t, "init", v)
	if out, err := exec.Command("cp", "-r", filepath.Join(root, "fixtures/runtime/shop/src"), filepath.Join(root, "fixtures/runtime/shop/render.sh"), v).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	mustProse(t, "--vault", v, "compile", "--activate")
	t.Setenv("PROSE_NOW", "2026-01-01T12:00:00Z")
	rng := rand.New(rand.NewPCG(22, 7))
	payload := filepath.Join(dir, "payload")
	killed := 0
	for i := 0; i < kills; i++ {
		files := map[string]string{}
		for o := 0; o < 1+rng.IntN(2); o++ {
			files["orders/"+strconv.Itoa(rng.IntN(4))+".json"] = `{"id":1}`
		}
		for n := 0; n < rng.IntN(3); n++ {
			files["notes/"+strconv.Itoa(n)+".txt"] = "note " + strconv.Itoa(rng.IntN(3)) + "\n"
		}
		writeFiles(t, payload, files)
		args := []string{"--vault", v, "trigger", "inbox", payload}
		if rng.IntN(3) == 0 {
			mustProse(t, "--vault", v, "publish", "--allow-empty", "inbox", payload)
			args = []string{"--vault", v, "run"}
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "PROSE_TEST_CHILD=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(250)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++ // the kill landed mid-command
		}
		// Consistent after the kill: fsck repairs what a writer left
		// (a ledger behind the branch) and passes; every chain verifies.
		if out, errs, code := prose(t, "--vault", v, "fsck"); code != 0 {
			t.Fatalf("kill %d: fsck exit %d\n%s%s", i, code, out, errs)
		}
		if out := mustProse(t, "--vault", v, "receipts", "verify"); !strings.Contains(out, " 0 problems") {
			t.Fatalf("kill %d: verify: %s", i, out)
		}
		// Resume: the run recomputes the dirty set from the receipts.
		if _, errs, code := prose(t, "--vault", v, "run"); code > 1 {
			t.Fatalf("kill %d: resume exit %d: %s", i, code, errs)
		}
		if out, _, _ := prose(t, "--vault", v, "run"); out != "" {
			t.Fatalf("kill %d: a second run found work after the resume:\n%s", i, out)
		}
		checkShop(t, v, i)
	}
	t.Logf("%d kills (%d of them landed mid-command), every vault consistent, every resume complete", kills, killed)
}

// checkShop compares the shop's world-models with what inbox implies.
func checkShop(t *testing.T, v string, i int) {
	t.Helper()
	pub := filepath.Join(v, "published")
	orders, _ := filepath.Glob(filepath.Join(pub, "inbox", "orders", "*"))
	notes, _ := filepath.Glob(filepath.Join(pub, "inbox", "notes", "*"))
	var entries strings.Builder
	for _, n := range notes {
		b, _ := os.ReadFile(n)
		entries.Write(b)
	}
	read := func(p string) string { b, _ := os.ReadFile(filepath.Join(pub, p)); return string(b) }
	if got, want := read("totals/count.json"), `{"count":`+strconv.Itoa(len(orders))+"}\n"; got != want {
		t.Fatalf("kill %d: totals holds %q, inbox implies %q", i, got, want)
	}
	if got := read("journal/entries.txt"); got != entries.String() {
		t.Fatalf("kill %d: journal holds %q, inbox implies %q", i, got, entries.String())
	}
	lines := strings.Count(entries.String(), "\n")
	if got, want := read("audit/summary.json"), `{"orders":`+strconv.Itoa(len(orders))+`,"entries":`+strconv.Itoa(lines)+"}\n"; got != want {
		t.Fatalf("kill %d: audit holds %q, want %q", i, got, want)
	}
}
