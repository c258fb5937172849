package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/published"
)

// ledgerTip reads the ledger ref, failing the test on error.
func ledgerTip(t testing.TB, v *Vault) string {
	t.Helper()
	h, err := v.readRef(LedgerRef)
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// branchTip reads the branch ref, failing the test on error.
func branchTip(t testing.TB, v *Vault) string {
	t.Helper()
	h, err := v.readRef(v.Branch())
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// requireUnchanged asserts that neither ref moved and fsck passes.
func requireUnchanged(t testing.TB, v *Vault, branch, ledger string) {
	t.Helper()
	if b, l := branchTip(t, v), ledgerTip(t, v); b != branch || l != ledger {
		t.Fatalf("refs moved: branch %s → %s, ledger %s → %s", branch, b, ledger, l)
	}
	fr, err := v.Fsck(context.Background())
	if err != nil || !fr.OK() {
		t.Fatalf("fsck after a refused publish: %+v %v", fr, err)
	}
}

// TestPublishRefusesGitNames: a render holding .git (or a name git reads as
// .git, or a .gitmodules link) is refused with the path rule; nothing is
// committed, and git fsck --strict keeps passing.
func TestPublishRefusesGitNames(t *testing.T) {
	v := newVault(t)
	for _, bad := range []string{".git/config", "sub/.GIT/HEAD", "git~1/config", ".git. /x", ".g\u200dit/x"} {
		src := filepath.Join(t.TempDir(), "render")
		writeTree(t, src, map[string]string{"a.md": "a", bad: "[core]\n\thooksPath = /tmp/evil\n"})
		b, l := branchTip(t, v), ledgerTip(t, v)
		_, err := v.Publish(context.Background(), "n", src, PublishOptions{})
		var pe *published.PathError
		if !errors.As(err, &pe) || pe.Rule != published.RuleGit {
			t.Fatalf("publish with %s: %v; want the rule %q", bad, err, published.RuleGit)
		}
		if !strings.Contains(err.Error(), published.RuleGit) {
			t.Errorf("the message does not name the rule: %v", err)
		}
		requireUnchanged(t, v, b, l)
	}
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.md": "a", "m.txt": "[submodule \"x\"]\n"})
	if err := os.Symlink("m.txt", filepath.Join(src, ".gitmodules")); err != nil {
		t.Skip("no symlinks:", err)
	}
	_, err := v.Publish(context.Background(), "n", src, PublishOptions{})
	var pe *published.PathError
	if !errors.As(err, &pe) || pe.Rule != published.RuleGitLink {
		t.Fatalf("publish with a .gitmodules link: %v; want the rule %q", err, published.RuleGitLink)
	}
	checkGitClean(t, v)
}

// TestPublishRefusesLinkToTheVault: a source directory that is a symlink to
// the vault's .git (or .prose, or the vault) is refused like the directory
// itself.
func TestPublishRefusesLinkToTheVault(t *testing.T) {
	v := newVault(t)
	for _, target := range []string{v.GitDir(), filepath.Join(v.GitDir(), "refs"), filepath.Join(v.Root(), StateDir), v.Root()} {
		link := filepath.Join(t.TempDir(), "g")
		if err := os.Symlink(target, link); err != nil {
			t.Skip("no symlinks:", err)
		}
		b, l := branchTip(t, v), ledgerTip(t, v)
		_, err := v.Publish(context.Background(), "e", link, PublishOptions{})
		if err == nil || !(strings.Contains(err.Error(), "bookkeeping") || strings.Contains(err.Error(), "holds the vault itself")) {
			t.Fatalf("publish of a link to %s: %v; want it refused as the vault's own", target, err)
		}
		requireUnchanged(t, v, b, l)
	}
	checkGitClean(t, v)
}

// TestPublishRefusesEmptySource: an empty source directory (what a render
// that crashed before writing leaves) does not wipe the node unless the
// caller says it means it.
func TestPublishRefusesEmptySource(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.md": "a", "d/b.json": "[1]"})
	publish(t, v, "n", src, PublishOptions{})
	empty := t.TempDir()
	os.MkdirAll(filepath.Join(empty, "only", "dirs"), 0o755) // directories without files are nothing
	b, l := branchTip(t, v), ledgerTip(t, v)
	_, err := v.Publish(context.Background(), "n", empty, PublishOptions{})
	if !errors.Is(err, ErrEmptySource) || !strings.Contains(err.Error(), "--allow-empty") {
		t.Fatalf("publish of an empty directory: %v; want ErrEmptySource naming --allow-empty", err)
	}
	requireUnchanged(t, v, b, l)
	if _, err := os.Stat(filepath.Join(v.Root(), "published", "n", "a.md")); err != nil {
		t.Fatalf("the node's files are gone: %v", err)
	}
	res := publish(t, v, "n", empty, PublishOptions{AllowEmpty: true})
	if res.Receipt.Status != "rendered" {
		t.Fatalf("publish --allow-empty: %s", res.Receipt.Status)
	}
	if _, err := os.Stat(filepath.Join(v.Root(), "published", "n", "a.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("publish --allow-empty left the node's files: %v", err)
	}
	checkGitClean(t, v)
}
