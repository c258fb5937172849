package wiki

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/vault"
)

// newWiki makes a fresh vault and opens its wiki with a fixed date.
func newWiki(t *testing.T) *Wiki {
	t.Helper()
	v, err := vault.Init(t.TempDir(), vault.InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(v)
	if err != nil {
		t.Fatal(err)
	}
	w.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	return w
}

func mustUpdate(t *testing.T, w *Wiki, fn func(tx *Tx) error) *Result {
	t.Helper()
	res, err := w.Update(context.Background(), fn)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// gitStatusClean fails when `git status --porcelain` shows anything.
func gitStatusClean(t *testing.T, w *Wiki) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	out, err := exec.Command("git", "-C", w.Vault().Root(), "status", "--porcelain").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	if len(out) > 0 {
		t.Fatalf("git status is not clean:\n%s", out)
	}
}

func fsckOK(t *testing.T, w *Wiki) {
	t.Helper()
	rep, err := w.Vault().Fsck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("fsck: %+v", rep)
	}
}

func TestWriteCommitsOnceAndIdenticalWriteNothing(t *testing.T) {
	w := newWiki(t)
	res := mustUpdate(t, w, func(tx *Tx) error {
		_, _, err := tx.New("ml/attention", NewOptions{Template: "concept", Title: "Attention"})
		return err
	})
	if res.Receipt == nil || res.Commit == "" {
		t.Fatalf("new page: no receipt: %+v", res)
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
	res = mustUpdate(t, w, func(tx *Tx) error {
		_, err := tx.WriteSlot("attention", "summary", "<p>Weights {tokens} &lt;!-- prose:slot id=\"x\" --&gt;</p>")
		return err
	})
	if res.Receipt == nil {
		t.Fatal("write-slot: no receipt")
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
	got, err := w.SlotOf("ml/attention", "summary")
	if err != nil {
		t.Fatal(err)
	}
	res = mustUpdate(t, w, func(tx *Tx) error {
		_, err := tx.WriteSlot("attention", "summary", got)
		return err
	})
	if res.Commit != "" || res.Receipt != nil {
		t.Fatalf("writing back what slot returned committed: %+v", res)
	}
	_, data, err := w.ReadFile("ml/attention")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "<title>Attention</title>") {
		t.Fatalf("page:\n%s", data)
	}
	t.Logf("%s", data)
}
