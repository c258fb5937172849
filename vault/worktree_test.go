package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// A file name of 254 bytes is valid; the checkout temp file must not make a
// longer one, and no temp file may show in git status.
func TestCheckoutLongFileNameAndTempsOutOfTheWorkTree(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	long := strings.Repeat("x", 251) + ".md"
	writeTree(t, src, map[string]string{long: "one\n", "short.md": "s\n"})
	publish(t, v, "n", src, PublishOptions{})
	writeTree(t, src, map[string]string{long: "two\n", "short.md": "s\n"})
	publish(t, v, "n", src, PublishOptions{})
	if got, err := os.ReadFile(filepath.Join(v.Root(), "published", "n", long)); err != nil || string(got) != "two\n" {
		t.Fatalf("working tree: %q %v", got, err)
	}
	ents, _ := os.ReadDir(filepath.Join(v.Root(), "published", "n"))
	for _, e := range ents {
		if e.Name() != long && e.Name() != "short.md" {
			t.Fatalf("stray file in the working tree: %s", e.Name())
		}
	}
	// A temp file a crash left behind is git-ignored.
	if err := os.WriteFile(filepath.Join(v.StatePath("tmp"), "co-123"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkGitClean(t, v)
}

// The commit .prose/worktree records can vanish: the user amends it and git
// gc prunes it. Later writes bring the working tree from scratch instead of
// failing.
func TestSyncWorktreeFromAPrunedCommit(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	from, ok := v.worktreeState()
	if !ok {
		t.Fatal("no worktree state after init")
	}
	if err := os.MkdirAll(filepath.Join(v.Root(), "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.Root(), "src", "notes.md"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, v.Root(), "add", "src/notes.md")
	git(t, v.Root(), "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--amend", "-m", "Initialize, amended")
	git(t, v.Root(), "reflog", "expire", "--expire=now", "--all")
	git(t, v.Root(), "gc", "-q", "--prune=now")
	if out, err := exec.Command("git", "-C", v.Root(), "cat-file", "-e", from.String()).CombinedOutput(); err == nil {
		t.Fatalf("commit %s survived gc: %s", from, out)
	}
	v, err := Open(v.Root(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.md": "a\n"})
	publish(t, v, "n", src, PublishOptions{})
	writeTree(t, src, map[string]string{"a.md": "b\n"})
	publish(t, v, "n", src, PublishOptions{})
	if got, _ := os.ReadFile(filepath.Join(v.Root(), "src", "notes.md")); string(got) != "notes\n" {
		t.Fatalf("src/notes.md = %q", got)
	}
	checkGitClean(t, v)
}

// An index in a format prose does not write holds the user's staged changes:
// prose refuses, names the fix and changes nothing. A damaged index is
// rebuilt from the branch.
func TestUnsupportedIndexIsLeftAloneDamagedIsRebuilt(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.md": "one\n"})
	c1 := publish(t, v, "n", src, PublishOptions{}).Commit
	writeTree(t, src, map[string]string{"a.md": "two\n"})
	c2 := publish(t, v, "n", src, PublishOptions{}).Commit
	if err := os.MkdirAll(filepath.Join(v.Root(), "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.Root(), "src", "x.md"), []byte("staged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, v.Root(), "add", "src/x.md")
	aPath := filepath.Join(v.Root(), "published", "n", "a.md")
	for _, c := range []struct{ convert, fix string }{
		{"--index-version=4", "git update-index --index-version 2"},
		{"--split-index", "git update-index --no-split-index"},
	} {
		git(t, v.Root(), "update-index", c.convert)
		before, err := os.ReadFile(v.indexPath())
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.syncWorktree(c2, c1)
		if !errors.Is(err, errIndexUnsupported) || !strings.Contains(err.Error(), c.fix) {
			t.Fatalf("%s: sync error %v, want errIndexUnsupported naming %q", c.convert, err, c.fix)
		}
		writeTree(t, src, map[string]string{"a.md": "three\n"})
		if _, err := v.Publish(context.Background(), "n", src, PublishOptions{}); !errors.Is(err, errIndexUnsupported) {
			t.Fatalf("%s: publish error %v, want errIndexUnsupported", c.convert, err)
		}
		after, _ := os.ReadFile(v.indexPath())
		if !bytes.Equal(before, after) {
			t.Fatalf("%s: the index changed", c.convert)
		}
		if got, _ := os.ReadFile(aPath); string(got) != "two\n" {
			t.Fatalf("%s: working tree changed: %q", c.convert, got)
		}
		if tip, _ := v.readRef(v.Branch()); tip != c2 {
			t.Fatalf("%s: branch moved", c.convert)
		}
		if st, _ := v.worktreeState(); st != c2 {
			t.Fatalf("%s: worktree state moved", c.convert)
		}
		git(t, v.Root(), "update-index", "--index-version=2", "--no-split-index")
		if st := git(t, v.Root(), "status", "--porcelain"); st != "A  src/x.md\n" {
			t.Fatalf("%s: git status after converting back:\n%s", c.convert, st)
		}
	}
	// Converted back, prose works and the staged change survives.
	writeTree(t, src, map[string]string{"a.md": "three\n"})
	publish(t, v, "n", src, PublishOptions{})
	if st := git(t, v.Root(), "status", "--porcelain"); st != "A  src/x.md\n" {
		t.Fatalf("git status:\n%s", st)
	}
	// A damaged index is rebuilt from the branch (its staged changes are
	// lost with it).
	data, _ := os.ReadFile(v.indexPath())
	data[len(data)-1] ^= 1
	if err := os.WriteFile(v.indexPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v.StatePath("worktree"), []byte(c2.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeTree(t, src, map[string]string{"a.md": "four\n"})
	publish(t, v, "n", src, PublishOptions{})
	if st := git(t, v.Root(), "status", "--porcelain"); st != "?? src/\n" {
		t.Fatalf("git status after the rebuild:\n%s", st)
	}
}

// A file edited between checkClean and applyChanges (the window holds
// fsyncs and ref moves) is neither overwritten nor deleted, but reported.
func TestApplyChangesLeavesLateHandEdits(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.md": "a1\n", "b.md": "b1\n", "c.md": "c1\n"})
	c1 := publish(t, v, "n", src, PublishOptions{}).Commit
	writeTree(t, src, map[string]string{"a.md": "a2\n", "b.md": "b2\n", "d.md": "d2\n"})
	c2 := publish(t, v, "n", src, PublishOptions{}).Commit
	// Bring the working tree back to c1, then replay c1 → c2 by hand.
	if edits, err := v.syncWorktree(c2, c1); err != nil || len(edits) != 0 {
		t.Fatalf("sync to c1: %v %v", edits, err)
	}
	changes, idx := cleanPlan(t, v, c1, c2)
	dir := filepath.Join(v.Root(), "published", "n")
	hand := map[string]string{"a.md": "by hand\n", "c.md": "c by hand\n", "d.md": "d by hand\n"}
	for name, content := range hand {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	aBefore := idx.get("published/n/a.md")
	edits, err := v.applyChangesReport(changes, idx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range edits {
		got = append(got, e.Path)
	}
	if strings.Join(got, ",") != "published/n/a.md,published/n/c.md,published/n/d.md" {
		t.Fatalf("hand edits reported: %v", edits)
	}
	for name, content := range hand {
		if data, _ := os.ReadFile(filepath.Join(dir, name)); string(data) != content {
			t.Fatalf("%s overwritten: %q", name, data)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "b.md")); string(data) != "b2\n" {
		t.Fatalf("b.md not updated: %q", data)
	}
	if e := idx.get("published/n/a.md"); e == nil || e.OID != aBefore.OID {
		t.Fatal("index entry of a skipped file changed")
	}
	if idx.get("published/n/c.md") == nil || idx.get("published/n/d.md") != nil {
		t.Fatal("index entries of skipped files changed")
	}
}

func readWorktree(t *testing.T, v *Vault, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(v.Root(), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A file can become a directory and a directory a file between publishes.
func TestFileBecomesDirectoryAndBack(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"sub": "a file\n", "x.md": "x\n"})
	publish(t, v, "n", src, PublishOptions{})
	checkGitClean(t, v)
	writeTree(t, src, map[string]string{"sub/a.md": "a\n", "sub/deep/b.md": "b\n", "x.md": "x\n"})
	c2 := publish(t, v, "n", src, PublishOptions{}).Commit
	if got := readWorktree(t, v, "published/n/sub/deep/b.md"); got != "b\n" {
		t.Fatalf("sub/deep/b.md = %q", got)
	}
	checkGitClean(t, v)
	writeTree(t, src, map[string]string{"sub": "a file again\n", "x.md": "x\n"})
	c3 := publish(t, v, "n", src, PublishOptions{}).Commit
	if got := readWorktree(t, v, "published/n/sub"); got != "a file again\n" {
		t.Fatalf("sub = %q", got)
	}
	checkGitClean(t, v)
	writeTree(t, src, map[string]string{"sub/a.md": "a\n"})
	c4 := publish(t, v, "n", src, PublishOptions{}).Commit
	checkGitClean(t, v)
	// Repair's direction: syncWorktree across both swaps and back.
	for _, step := range [][2]plumbing.Hash{{c4, c3}, {c3, c2}, {c2, c4}} {
		if edits, err := v.syncWorktree(step[0], step[1]); err != nil || len(edits) != 0 {
			t.Fatalf("sync %s → %s: %v %v", step[0], step[1], edits, err)
		}
	}
	checkGitClean(t, v)
	fr, err := v.Fsck(context.Background())
	if err != nil || !fr.OK() {
		t.Fatalf("fsck: %+v %v", fr, err)
	}
}

// Untracked files in the way of a file ↔ directory change are hand edits:
// the publish is refused before anything moves.
func TestFileDirectorySwapKeepsUntrackedFiles(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"sub/a.md": "a\n", "x.md": "x\n"})
	tip := publish(t, v, "n", src, PublishOptions{}).Commit
	extra := filepath.Join(v.Root(), "published", "n", "sub", "extra.md")
	if err := os.WriteFile(extra, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeTree(t, src, map[string]string{"sub": "a file\n", "x.md": "x\n"})
	_, err := v.Publish(context.Background(), "n", src, PublishOptions{})
	if !errors.Is(err, ErrHandEdits) || !strings.Contains(err.Error(), "published/n/sub:") {
		t.Fatalf("directory with an untracked file → file: %v", err)
	}
	if got := readWorktree(t, v, "published/n/sub/extra.md"); got != "mine\n" {
		t.Fatal("untracked file lost")
	}
	if h, _ := v.readRef(v.Branch()); h != tip {
		t.Fatal("branch moved")
	}
	os.Remove(extra)

	// An untracked file where a directory goes.
	writeTree(t, src, map[string]string{"x.md": "x\n"})
	tip = publish(t, v, "n", src, PublishOptions{}).Commit
	if err := os.WriteFile(filepath.Join(v.Root(), "published", "n", "sub"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeTree(t, src, map[string]string{"sub/a.md": "a\n", "x.md": "x\n"})
	_, err = v.Publish(context.Background(), "n", src, PublishOptions{})
	if !errors.Is(err, ErrHandEdits) || !strings.Contains(err.Error(), "published/n/sub") {
		t.Fatalf("untracked file → directory: %v", err)
	}
	if got := readWorktree(t, v, "published/n/sub"); got != "mine\n" {
		t.Fatal("untracked file lost")
	}
	if h, _ := v.readRef(v.Branch()); h != tip {
		t.Fatal("branch moved")
	}
}

// A file created where a directory goes after checkClean is left alone too.
func TestApplyChangesLeavesLateBlockingFile(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"x.md": "x\n"})
	c1 := publish(t, v, "n", src, PublishOptions{}).Commit
	writeTree(t, src, map[string]string{"x.md": "x\n", "sub/a.md": "a\n"})
	c2 := publish(t, v, "n", src, PublishOptions{}).Commit
	if _, err := v.syncWorktree(c2, c1); err != nil {
		t.Fatal(err)
	}
	changes, idx := cleanPlan(t, v, c1, c2)
	blocker := filepath.Join(v.Root(), "published", "n", "sub")
	if err := os.WriteFile(blocker, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edits, err := v.applyChangesReport(changes, idx)
	if err != nil || len(edits) != 1 || edits[0].Path != "published/n/sub/a.md" {
		t.Fatalf("edits %v, err %v", edits, err)
	}
	if got := readWorktree(t, v, "published/n/sub"); got != "mine\n" {
		t.Fatalf("blocking file changed: %q", got)
	}
	if idx.get("published/n/sub/a.md") != nil {
		t.Fatal("index entry written for a file that was not")
	}
}

// cleanPlan lists the changes from commit c1 to c2, with the current index,
// and asserts the working tree is clean for them.
func cleanPlan(t *testing.T, v *Vault, c1, c2 plumbing.Hash) ([]change, *gitIndex) {
	t.Helper()
	t1, _ := v.commit(c1)
	t2, _ := v.commit(c2)
	var changes []change
	if err := v.diffTrees(t1.TreeHash, t2.TreeHash, "", &changes); err != nil {
		t.Fatal(err)
	}
	idx, err := v.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	if edits, err := v.checkClean(changes, idx); err != nil || len(edits) != 0 {
		t.Fatalf("checkClean: %v %v", edits, err)
	}
	return changes, idx
}

// A vault copied with `cp -a` (or restored from a backup) has new inodes
// and ctimes everywhere. The first hand-edit check hashes its files and
// stores their new stat data in the git index, as `git update-index
// --refresh` does, so later checks trust the stat data instead of reading
// every page again; a file edited after the copy is still found, and its
// entry is left as it was.
func TestACopiedVaultIsHashedOnce(t *testing.T) {
	// apart: the index is written a tick after the files. sameTick: the
	// files and the index share one mtime (a coarse clock or a fast disk),
	// so every entry is racy: the refresh still stores what it hashed, and
	// the edited file's entry, racy and not hashed, must not become trusted.
	t.Run("apart", func(t *testing.T) { testCopiedVaultHashedOnce(t, false) })
	t.Run("sameTick", func(t *testing.T) { testCopiedVaultHashedOnce(t, true) })
}

func testCopiedVaultHashedOnce(t *testing.T, sameTick bool) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	files := map[string]string{}
	for i := 0; i < 12; i++ {
		files[fmt.Sprintf("d%d/page-%02d.md", i%3, i)] = fmt.Sprintf("page %d\n", i)
	}
	writeTree(t, src, files)
	publish(t, v, "n", src, PublishOptions{})
	edited := "published/n/d1/page-04.md"
	if sameTick {
		fi, err := os.Lstat(filepath.Join(v.Root(), filepath.FromSlash(edited)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(v.indexPath(), fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	} else {
		time.Sleep(30 * time.Millisecond) // past the file system's timestamp tick: no entry is racy
	}
	dst := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", v.Root(), dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dst, filepath.FromSlash(edited)), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Open(dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stale := func() []string {
		t.Helper()
		idx, err := c.readIndex()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i := 0; i < idx.len(); i++ {
			e := idx.entry(i)
			if !strings.HasPrefix(e.Name, "published/n/") {
				continue
			}
			fi, err := os.Lstat(filepath.Join(dst, filepath.FromSlash(e.Name)))
			if err != nil || !idx.statMatches(fi, &e) {
				out = append(out, e.Name)
			}
		}
		return out
	}
	if got := stale(); len(got) != len(files) {
		t.Fatalf("before the check, %d index entries match their copied files, want none: stale %v", len(files)-len(got), got)
	}
	for round := 1; round <= 2; round++ {
		edits, err := c.NodeHandEdits("n")
		if err != nil {
			t.Fatal(err)
		}
		if len(edits) != 1 || edits[0].Path != edited || edits[0].Reason != "modified by hand" {
			t.Fatalf("round %d: hand edits %v, want only %s modified", round, edits, edited)
		}
		if got := stale(); len(got) != 1 || got[0] != edited {
			t.Fatalf("round %d: entries whose stat data is not the file's: %v, want only %s", round, got, edited)
		}
	}
}

// TestARefreshSmudgesWhatItDidNotHash: a file changed in the tick its entry
// was staged in (same size and stat data, other content) is racy, so it is
// hashed and reported; a refresh of another entry writes a newer index,
// after which that stat data would be trusted, so the refresh smudges the
// entry (size 0, as git does) and the change is still reported next time.
func TestARefreshSmudgesWhatItDidNotHash(t *testing.T) {
	// same size: only the smudge tells; empty: the entry has size 0 like
	// a smudged one, and only the empty blob may be trusted at size 0.
	for name, content := range map[string]string{"sameSize": "PAGE B\n", "empty": ""} {
		t.Run(name, func(t *testing.T) { testRefreshSmudges(t, content) })
	}
}

func testRefreshSmudges(t *testing.T, changed string) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.md": "page a\n", "b.md": "page b\n"})
	publish(t, v, "n", src, PublishOptions{})
	a := filepath.Join(v.Root(), "published", "n", "a.md")
	b := filepath.Join(v.Root(), "published", "n", "b.md")
	if err := os.WriteFile(b, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	// Times in the past: no write of this test shares their tick.
	tick, earlier := time.Now().Add(-30*time.Minute), time.Now().Add(-time.Hour)
	if err := os.Chtimes(b, tick, tick); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(a, earlier, earlier); err != nil { // a: same content, new stat data
		t.Fatal(err)
	}
	idx, err := v.openIndex()
	if err != nil {
		t.Fatal(err)
	}
	e := *idx.get("published/n/b.md")
	fi, err := os.Lstat(b)
	if err != nil {
		t.Fatal(err)
	}
	fillStat(fi, &e) // staged in the tick the file changed in: the stat data is the file's
	idx.put(e)
	if err := v.writeIndex(idx); err != nil {
		t.Fatal(err)
	}
	idx.release()
	if err := os.Chtimes(v.indexPath(), fi.ModTime(), fi.ModTime()); err != nil { // one tick
		t.Fatal(err)
	}
	for round := 1; round <= 2; round++ {
		edits, err := v.NodeHandEdits("n")
		if err != nil {
			t.Fatal(err)
		}
		if len(edits) != 1 || edits[0].Path != "published/n/b.md" {
			t.Fatalf("round %d: hand edits %v, want published/n/b.md modified", round, edits)
		}
	}
	idx, err = v.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	fi, err = os.Lstat(a)
	if err != nil {
		t.Fatal(err)
	}
	if ea := idx.get("published/n/a.md"); ea == nil || !idx.statMatches(fi, ea) {
		t.Fatal("the refresh did not store a.md's new stat data")
	}
}
