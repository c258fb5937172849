package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
)

// gitIn runs git in dir.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command(needGit(t), append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// What wiki slot prints and what review show proposes is sanitized slot
// HTML whoever wrote the file: a page and a review queue committed with
// git, holding event handlers and a script, print none.
func TestSlotAndProposalsPrintSanitized(t *testing.T) {
	dir, _ := vaultWithAKeptEdit(t)
	canary := pageTitled(t, dir, "Canary")
	var item ingest.ReviewEntry
	for _, it := range keptItems(t, dir) {
		if it.Resolved == "" {
			item = it
		}
	}
	if item.ID == "" || canary == "" {
		t.Fatalf("no open kept-edit item or Canary page: %+v", keptItems(t, dir))
	}
	hostile := `<p onclick="alert(1)">x</p><img src="a.png" onerror="alert(2)"><script>alert(3)</script>`
	// The review queue, edited and committed with git.
	qfile := filepath.Join(dir, filepath.FromSlash(ingest.ReviewFile))
	data, err := os.ReadFile(qfile)
	if err != nil {
		t.Fatal(err)
	}
	var q map[string]any
	if err := json.Unmarshal(data, &q); err != nil {
		t.Fatal(err)
	}
	for _, it := range q["items"].([]any) {
		if m := it.(map[string]any); m["id"] == item.ID {
			m["proposed"] = hostile
		}
	}
	data, _ = json.Marshal(q)
	if err := os.WriteFile(qfile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// A page, edited and committed with git (not taken in yet).
	pfile := filepath.Join(dir, "published", "wiki", filepath.FromSlash(canary))
	page, err := os.ReadFile(pfile)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(page), "<p>Ours.</p>", hostile, 1)
	if edited == string(page) {
		t.Fatal("the page holds no <p>Ours.</p> to edit")
	}
	if err := os.WriteFile(pfile, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "commit", "-qam", "by hand")

	bad := []string{"onclick", "onerror", "<script", "alert(3)"}
	for _, args := range [][]string{
		{"wiki", "review", "show", item.ID},
		{"--json", "wiki", "review", "show", item.ID},
		{"--json", "wiki", "review", "list", "--all"},
		{"wiki", "slot", canary, "summary"},
		{"--json", "wiki", "slot", canary, "summary"},
	} {
		out := mustProse(t, append([]string{"--vault", dir}, args...)...)
		if !strings.Contains(out, `x</p>`) {
			t.Errorf("prose %v does not print the text: %s", args, out)
		}
		for _, b := range bad {
			if strings.Contains(out, b) {
				t.Errorf("prose %v prints %s:\n%s", args, b, out)
			}
		}
	}
}
