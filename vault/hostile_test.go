package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/durable"
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

// TestPublishNeverWritesThroughALinkedDirectory: a directory under
// published/ replaced by a symlink (by hand, or by a pull) makes the next
// publish refuse as for any hand edit; nothing is written or deleted at the
// link's target, and fsck reports it.
func TestPublishNeverWritesThroughALinkedDirectory(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"sub/a.md": "one", "sub/gone.md": "bye", "top.md": "t"})
	publish(t, v, "n", src, PublishOptions{})
	// The target holds files of the same names: a write or delete through
	// the link would change them.
	target := t.TempDir()
	writeTree(t, target, map[string]string{"a.md": "outside", "gone.md": "outside", "keep.md": "outside"})
	sub := filepath.Join(v.Root(), "published", "n", "sub")
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, sub); err != nil {
		t.Skip("no symlinks:", err)
	}
	writeTree(t, src, map[string]string{"sub/a.md": "two", "sub/new.md": "new", "top.md": "t"})
	b, l := branchTip(t, v), ledgerTip(t, v)
	_, err := v.Publish(context.Background(), "n", src, PublishOptions{})
	if !errors.Is(err, ErrHandEdits) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("publish over a symlinked directory: %v; want it refused as a hand edit naming the link", err)
	}
	if b2, l2 := branchTip(t, v), ledgerTip(t, v); b2 != b || l2 != l {
		t.Fatal("a refused publish moved a ref")
	}
	for name, want := range map[string]string{"a.md": "outside", "gone.md": "outside", "keep.md": "outside"} {
		if got, err := os.ReadFile(filepath.Join(target, name)); err != nil || string(got) != want {
			t.Fatalf("%s at the link's target: %q %v; want it untouched", name, got, err)
		}
	}
	if _, err := os.Stat(filepath.Join(target, "new.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("publish wrote through the link")
	}
	rep, err := v.Fsck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || !hasEdit(rep.HandEdits, "published/n/sub/a.md", "symlink") {
		t.Fatalf("fsck: %+v; want the symlinked directory reported", rep.HandEdits)
	}
	// The repair every writer runs leaves it alone too.
	if err := v.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(target, "gone.md")); string(got) != "outside" {
		t.Fatal("repair deleted through the link")
	}
}

func hasEdit(edits []HandEdit, path, reason string) bool {
	for _, e := range edits {
		if e.Path == path && strings.Contains(e.Reason, reason) {
			return true
		}
	}
	return false
}

// TestFsckSeesModeAndStagedEdits: a chmod +x of a published file, an edit
// staged with git add (git status MM), a staged new file and a file taken
// out of the index are hand edits.
func TestFsckSeesModeAndStagedEdits(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.md": "a", "b.md": "b", "c.md": "c"})
	publish(t, v, "n", src, PublishOptions{})
	pub := func(name string) string { return filepath.Join(v.Root(), "published", "n", name) }
	if err := os.Chmod(pub("a.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(pub("b.md"), []byte("staged"), 0o644)
	git(t, v.Root(), "add", "published/n/b.md")
	os.WriteFile(pub("b.md"), []byte("b"), 0o644) // back to the committed content: MM
	os.WriteFile(pub("d.md"), []byte("d"), 0o644)
	git(t, v.Root(), "add", "published/n/d.md")
	git(t, v.Root(), "rm", "-q", "--cached", "published/n/c.md")
	rep, err := v.Fsck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ path, reason string }{
		{"published/n/a.md", "executable bit"},
		{"published/n/b.md", "staged"},
		{"published/n/d.md", "staged"},
		{"published/n/c.md", "removed from the git index"},
	} {
		if !hasEdit(rep.HandEdits, want.path, want.reason) {
			t.Errorf("fsck does not report %s (%s): %+v", want.path, want.reason, rep.HandEdits)
		}
	}
	if rep.OK() {
		t.Fatal("fsck says OK")
	}
}

// TestFsckChecksWhenRepairCannotWrite: when the repair fsck starts with
// fails (a full disk), fsck still checks everything and reports the
// failure among its problems instead of stopping.
func TestFsckChecksWhenRepairCannotWrite(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.md": "one"})
	publish(t, v, "n", src, PublishOptions{})
	writeTree(t, src, map[string]string{"a.md": "two"})
	// A publish that dies between the two ref moves leaves a repair to do.
	restore := durable.SetFault(durable.FailAt(durable.StepRename, filepath.Join(v.GitDir(), "refs", "prose")))
	defer restore()
	if _, err := v.Publish(context.Background(), "n", src, PublishOptions{}); err == nil {
		t.Fatal("publish with a failing ledger ref move: no error")
	}
	os.WriteFile(filepath.Join(v.Root(), "published", "n", "a.md"), []byte("by hand"), 0o644)
	rep, err := v.Fsck(context.Background())
	if err != nil {
		t.Fatalf("fsck stopped at the failing repair: %v", err)
	}
	found := false
	for _, p := range rep.Problems {
		found = found || p.Where == "repair" && strings.Contains(p.Reason, "injected")
	}
	if !found || rep.Objects == 0 || !hasEdit(rep.HandEdits, "published/n/a.md", "modified") {
		t.Fatalf("fsck: %+v; want the repair failure reported and the vault still checked", rep)
	}
	restore()
	rep, err = v.Fsck(context.Background())
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("fsck once the disk has room: %+v %v", rep, err)
	}
}

// TestFsckOnAPlainClone: a clone without the ledger ref is reported with
// the command that fetches it, never as "read commit 0000…".
func TestFsckOnAPlainClone(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.md": "one"})
	publish(t, v, "n", src, PublishOptions{})
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, t.TempDir(), "clone", "-q", v.Root(), clone)
	c, err := Open(clone, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Fsck(context.Background())
	if err == nil || strings.Contains(err.Error(), "0000000") || !strings.Contains(err.Error(), "git fetch origin "+string(LedgerRef)) {
		t.Fatalf("fsck of a plain clone: %v; want the missing ledger and its fetch command", err)
	}
}

// TestRepairRemovesKilledCompileLeftovers: the temporary manifest a killed
// compile leaves in dist/ is removed once it is old enough to be no write
// in progress.
func TestRepairRemovesKilledCompileLeftovers(t *testing.T) {
	v := newVault(t)
	dist := filepath.Join(v.Root(), "dist")
	os.MkdirAll(dist, 0o755)
	old := filepath.Join(dist, ".tmp-manifest.next.json-0123456789ab")
	fresh := filepath.Join(dist, ".tmp-manifest.next.json-ba9876543210")
	os.WriteFile(old, []byte("{"), 0o644)
	os.WriteFile(fresh, []byte("{"), 0o644)
	long := time.Now().Add(-time.Hour)
	os.Chtimes(old, long, long)
	if err := v.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("leftover of a killed compile kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("a temporary file that may be in use was removed: %v", err)
	}
}

// TestPublishRestoresAHandCommit: a commit made with git under published/
// is reported by fsck with the command that fixes it, and the next publish
// of the true render restores the branch and says so, unless the node's
// policy keeps such commits.
func TestPublishRestoresAHandCommit(t *testing.T) {
	requireGit(t)
	for _, policy := range []HandCommitPolicy{RestoreHandCommits, KeepHandCommits} {
		root := filepath.Join(t.TempDir(), "vault")
		if _, err := Init(root, InitOptions{}); err != nil {
			t.Fatal(err)
		}
		v, err := Open(root, Options{HandCommits: func(node string) HandCommitPolicy {
			if node == "n" {
				return policy
			}
			return RestoreHandCommits
		}})
		if err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(t.TempDir(), "render")
		writeTree(t, src, map[string]string{"a.json": `{"x": 1}`, "b.md": "b"})
		first := publish(t, v, "n", src, PublishOptions{})
		os.WriteFile(filepath.Join(root, "published", "n", "a.json"), []byte(`{"x": 2}`), 0o644)
		git(t, root, "commit", "-qam", "edit by hand")
		rep, err := v.Fsck(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		named := false
		for _, p := range rep.Problems {
			named = named || strings.Contains(p.Reason, "prose publish n DIR")
		}
		if !named {
			t.Fatalf("fsck does not name the command that repairs a hand commit: %+v", rep.Problems)
		}
		res := publish(t, v, "n", src, PublishOptions{})
		data, _, _ := v.ReadFile("published/n/a.json")
		if policy == KeepHandCommits {
			if res.Receipt.Status != "skipped" || string(data) != `{"x": 2}` {
				t.Fatalf("KeepHandCommits: %s, branch holds %s; want skipped and the commit kept", res.Receipt.Status, data)
			}
			continue
		}
		if res.Receipt.Status != "rendered" || len(res.Repaired) == 0 || !strings.Contains(res.Repaired[0], "restored") {
			t.Fatalf("republish over a hand commit: %s, repaired %q; want rendered and the repair named", res.Receipt.Status, res.Repaired)
		}
		if string(data) != `{"x": 1}` {
			t.Fatalf("branch holds %s after the repair; want the published truth", data)
		}
		if res.Receipt.Fingerprints["@atomic"] != first.Receipt.Fingerprints["@atomic"] {
			t.Fatal("the restoring receipt moved a fingerprint")
		}
		if fr, err := v.Fsck(context.Background()); err != nil || !fr.OK() {
			t.Fatalf("fsck after the repair: %+v %v", fr, err)
		}
		checkGitClean(t, v)
		if again := publish(t, v, "n", src, PublishOptions{}); again.Receipt.Status != "skipped" {
			t.Fatalf("publish after the repair: %s", again.Receipt.Status)
		}
	}
}

// TestFsckStopsWhenCancelled: an interrupted fsck returns the context's
// error, never a verdict from half a check.
func TestFsckStopsWhenCancelled(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.md": "a"})
	publish(t, v, "n", src, PublishOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if rep, err := v.Fsck(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("fsck with a cancelled context: %+v, %v", rep, err)
	}
	if _, err := v.Publish(ctx, "n", src, PublishOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("publish with a cancelled context: %v", err)
	}
}

// TestPublishStopsWhileWritingObjects: Ctrl-C while a publish writes its
// blobs stops it before the next file, and the loose objects and the pack
// written so far are removed: the object store and the refs are as before.
func TestPublishStopsWhileWritingObjects(t *testing.T) {
	v := newVault(t)
	src, _ := writeNumberedTree(t, 3*packThreshold)
	objects := func() string {
		var out []string
		filepath.WalkDir(filepath.Join(v.gitDir, "objects"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, strings.TrimPrefix(p, v.gitDir))
			}
			return nil
		})
		return strings.Join(out, "\n")
	}
	refs := func() string { return git(t, v.root, "for-each-ref") }
	// Node n has a tree already, so its blobs go loose first, then into a
	// pack; node m is new, so its blobs go straight into a pack.
	small := filepath.Join(t.TempDir(), "small")
	writeTree(t, small, map[string]string{"a.md": "a"})
	publish(t, v, "n", small, PublishOptions{})
	beforeObjects, beforeRefs := objects(), refs()
	for _, tc := range []struct {
		node  string
		after int
	}{{"n", packThreshold / 2}, {"n", 2 * packThreshold}, {"m", packThreshold / 2}} { // loose only; loose and a pack; a pack only
		after := tc.after
		ctx, cancel := context.WithCancel(context.Background())
		writes := 0
		restore := durable.SetFault(func(step durable.Step, path string) error {
			if step == durable.StepWrite {
				if writes++; writes == after {
					cancel()
				}
			}
			return nil
		})
		_, err := v.Publish(ctx, tc.node, src, PublishOptions{})
		restore()
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled after %d object writes: %v", after, err)
		}
		if writes != after {
			t.Errorf("cancelled after %d object writes, the publish went on to %d", after, writes)
		}
		if got := objects(); got != beforeObjects {
			t.Errorf("cancelled after %d object writes, the object store changed:\nbefore:\n%s\nafter:\n%s", after, beforeObjects, got)
		}
		if got := refs(); got != beforeRefs {
			t.Errorf("refs moved:\n%s", got)
		}
	}
	publish(t, v, "n", src, PublishOptions{})
	checkGitClean(t, v)
}
