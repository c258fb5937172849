package vault

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/receipt"
)

// stagedFiles is a node of n files in n/20 directories and one executable.
func stagedFiles(n int, tag string) map[string]string {
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("d%02d/f%03d.json", i/20, i)] = fmt.Sprintf(`{"f": %d, "tag": %q}`, i, tag)
	}
	return files
}

// checkWorktreeHolds asserts every file of files is in the working tree
// under published/node with its content, and the executable keeps its bit.
func checkWorktreeHolds(t *testing.T, v *Vault, node string, files map[string]string, exe string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(v.Root(), "published", node, filepath.FromSlash(p))
		data, err := os.ReadFile(full)
		if err != nil || string(data) != c {
			t.Fatalf("%s: %q, %v; want %q", p, data, err, c)
		}
		fi, _ := os.Stat(full)
		want := os.FileMode(0o644)
		if p == exe {
			want = 0o755
		}
		if fi.Mode().Perm() != want {
			t.Fatalf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

// checkIndexStat asserts the stat data the index holds matches every
// file: git diff-files compares it without refreshing the index (git
// status would refresh it and hide a mismatch).
func checkIndexStat(t *testing.T, v *Vault) {
	t.Helper()
	if out := git(t, v.Root(), "diff-files", "--name-only"); out != "" {
		t.Fatalf("index stat data does not match:\n%s", out)
	}
}

func checkNoTemps(t *testing.T, v *Vault) {
	t.Helper()
	ents, _ := os.ReadDir(v.StatePath("tmp"))
	for _, e := range ents {
		t.Fatalf("left in .prose/tmp: %s", e.Name())
	}
}

// A first publish writes its files inside one staged directory and renames
// it into place: no file goes by temp file and rename of its own. A new
// directory with many files in an existing node is staged too; a few files
// go one by one.
func TestCheckoutStagesNewDirectories(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	files := stagedFiles(300, "one")
	files["run.sh"] = "#!/bin/sh\n"
	writeTree(t, src, files)
	if err := os.Chmod(filepath.Join(src, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	publish(t, v, "wm", src, PublishOptions{})
	if s, o := v.stagedDirs.Load(), v.filesOneByOne.Load(); s != 1 || o != 0 {
		t.Fatalf("first publish: %d directories staged, %d files one by one; want 1 and 0", s, o)
	}
	checkWorktreeHolds(t, v, "wm", files, "run.sh")
	checkNoTemps(t, v)
	checkIndexStat(t, v)
	checkGitClean(t, v)

	// A new directory of 40 files and one of 3 in the same node.
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("new/deep/g%02d.json", i)] = fmt.Sprintf(`{"g": %d}`, i)
	}
	for i := 0; i < 3; i++ {
		files[fmt.Sprintf("few/h%d.json", i)] = fmt.Sprintf(`{"h": %d}`, i)
	}
	files["d00/f000.json"] = `{"changed": true}`
	writeTree(t, src, files)
	os.Chmod(filepath.Join(src, "run.sh"), 0o755)
	publish(t, v, "wm", src, PublishOptions{})
	if s, o := v.stagedDirs.Load(), v.filesOneByOne.Load(); s != 2 || o != 4 {
		t.Fatalf("second publish: %d directories staged, %d files one by one in all; want 2 and 4", s, o)
	}
	checkWorktreeHolds(t, v, "wm", files, "run.sh")
	checkNoTemps(t, v)
	checkIndexStat(t, v)
	checkGitClean(t, v)
	if res := publish(t, v, "wm", src, PublishOptions{}); res.Receipt.Status != receipt.Skipped {
		t.Fatalf("republish: %s", res.Receipt.Status)
	}
}

// When something appears where the staged directory goes while its files
// are written, nothing staged is placed: the files go one by one, which
// leaves the hand-made file alone, and the staged directory is removed.
func TestStagingFallsBackWhenTheDirectoryAppears(t *testing.T) {
	requireGit(t)
	for _, hand := range []string{"file in the directory", "file at the directory"} {
		t.Run(hand, func(t *testing.T) {
			v := newVault(t)
			src := filepath.Join(t.TempDir(), "src")
			files := stagedFiles(100, "x")
			writeTree(t, src, files)
			root := filepath.Join(v.Root(), "published", "wm")
			beforeStageRename = func(string) {
				os.MkdirAll(filepath.Dir(root), 0o755)
				if hand == "file at the directory" {
					os.WriteFile(root, []byte("by hand\n"), 0o644)
					return
				}
				os.MkdirAll(root, 0o755)
				os.WriteFile(filepath.Join(root, "hand.txt"), []byte("by hand\n"), 0o644)
			}
			defer func() { beforeStageRename = nil }()
			res, err := v.Publish(context.Background(), "wm", src, PublishOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if s := v.stagedDirs.Load(); s != 0 {
				t.Fatalf("%d directories staged over a hand edit", s)
			}
			checkNoTemps(t, v)
			if hand == "file at the directory" {
				if data, _ := os.ReadFile(root); string(data) != "by hand\n" {
					t.Fatalf("the hand-made file was replaced: %q", data)
				}
				if len(res.HandEdits) != len(files) {
					t.Fatalf("%d hand edits reported, want %d", len(res.HandEdits), len(files))
				}
				return
			}
			if o := v.filesOneByOne.Load(); o != int64(len(files)) {
				t.Fatalf("%d files one by one, want %d", o, len(files))
			}
			checkWorktreeHolds(t, v, "wm", files, "")
			if data, _ := os.ReadFile(filepath.Join(root, "hand.txt")); string(data) != "by hand\n" {
				t.Fatalf("hand.txt: %q", data)
			}
			if st := git(t, v.Root(), "status", "--porcelain"); st != "?? published/wm/hand.txt\n" {
				t.Fatalf("git status:\n%s", st)
			}
		})
	}
}

// A crash while the staged directory is written leaves the working tree as
// it was and the directory under .prose/tmp: the next writer removes it and
// brings the working tree to the branch. The crash is real: a child process
// publishing kills itself when the staged files are written.
func TestStagedCheckoutCrash(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	files := stagedFiles(100, "crash")
	writeTree(t, src, files)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROSE_STAGE_CRASH_CHILD="+v.Root()+"\n"+src)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || !killed(ee) {
		t.Fatalf("the child was not killed at the rename: %v\n%s", err, out)
	}
	staged, _ := filepath.Glob(filepath.Join(v.Root(), ".prose", "tmp", "st-*"))
	if len(staged) != 1 {
		t.Fatalf("the crash left %d staged directories, want 1", len(staged))
	}
	if _, err := os.Lstat(filepath.Join(v.Root(), "published")); !os.IsNotExist(err) {
		t.Fatalf("published/ visible before its rename: %v", err)
	}
	w, err := Open(v.Root(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkWorktreeHolds(t, w, "wm", files, "")
	checkNoTemps(t, w)
	checkGitClean(t, w)
	if st := git(t, w.Root(), "log", "--format=%s", "-1"); !strings.Contains(st, "wm") {
		t.Fatalf("the publish's commit is not the branch tip: %s", st)
	}
}

// stageCrashChild publishes "ROOT\nSRC" as node wm and is killed when the
// staged files are written.
func stageCrashChild(spec string) int {
	root, src, _ := strings.Cut(spec, "\n")
	v, err := Open(root, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	beforeStageRename = func(string) {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Kill()
		}
	}
	if _, err := v.Publish(context.Background(), "wm", src, PublishOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0
}

func TestSpreadByDir(t *testing.T) {
	var rels []string
	for i := 0; i < 70; i++ {
		rels = append(rels, fmt.Sprintf("a/f%02d", i))
	}
	for i := 0; i < 5; i++ {
		rels = append(rels, fmt.Sprintf("b/g%d", i), fmt.Sprintf("f%d", i))
	}
	work := spreadByDir(rels)
	seen := map[int]bool{}
	var firsts []string
	for _, run := range work {
		if len(run) == 0 || len(run) > spreadChunk {
			t.Fatalf("run of %d files", len(run))
		}
		d := path.Dir(rels[run[0]])
		for _, i := range run {
			if seen[i] || path.Dir(rels[i]) != d {
				t.Fatalf("run %v: index repeated or directories mixed", run)
			}
			seen[i] = true
		}
		firsts = append(firsts, d)
	}
	if len(seen) != len(rels) {
		t.Fatalf("%d of %d files in the runs", len(seen), len(rels))
	}
	if got := strings.Join(firsts, " "); got != "a b . a a" {
		t.Fatalf("runs by directory: %s; want every directory's first run before any second", got)
	}
}

// Under a umask that takes bits away, staged files still get 0644/0755,
// and the index holds their stat data after the chmod.
func TestStagedModesUnderAUmask(t *testing.T) {
	requireGit(t)
	withUmask(t, 0o077)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	files := stagedFiles(40, "umask")
	files["run.sh"] = "#!/bin/sh\n"
	writeTree(t, src, files)
	if err := os.Chmod(filepath.Join(src, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	publish(t, v, "wm", src, PublishOptions{})
	if s := v.stagedDirs.Load(); s != 1 {
		t.Fatalf("%d directories staged, want 1", s)
	}
	checkWorktreeHolds(t, v, "wm", files, "run.sh")
	checkIndexStat(t, v)
}
