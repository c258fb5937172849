package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/durable"
)

// atStep runs fn once, the first time a publish reaches step at a path
// under the vault's .git/prefix: a git command run there interleaves with
// the publish at exactly that point.
func atStep(t *testing.T, v *Vault, step durable.Step, prefix string, fn func()) (restore func(), ran func() bool) {
	t.Helper()
	var once sync.Once
	done := false
	full := filepath.Join(v.GitDir(), filepath.FromSlash(prefix))
	restore = durable.SetFault(func(s durable.Step, path string) error {
		if s == step && strings.HasPrefix(path, full) {
			once.Do(func() { fn(); done = true })
		}
		return nil
	})
	return restore, func() bool { return done }
}

func gitTry(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// An object a publish reuses rather than writes is refreshed, as git
// refreshes an object it would write: a `git prune` or `git gc` running
// while the publish is between writing its objects and moving its refs
// keeps it. Without the refresh the blob, unreachable and old, is pruned
// and the new commit names a missing blob.
func TestReusedObjectsSurviveAConcurrentPrune(t *testing.T) {
	requireGit(t)
	old := time.Now().Add(-30 * 24 * time.Hour)
	for _, packed := range []bool{false, true} {
		name := "loose"
		if packed {
			name = "packed"
		}
		t.Run(name, func(t *testing.T) {
			v := newVault(t)
			content := "a blob git already holds, unreachable and a month old\n"
			f := filepath.Join(t.TempDir(), "blob")
			os.WriteFile(f, []byte(content), 0o644)
			oid := strings.TrimSpace(git(t, v.Root(), "hash-object", "-w", f))
			path := filepath.Join(v.GitDir(), "objects", oid[:2], oid[2:])
			if packed {
				cmd := exec.Command("git", "pack-objects", "-q", filepath.Join(v.GitDir(), "objects", "pack", "pack"))
				cmd.Dir, cmd.Stdin = v.Root(), strings.NewReader(oid+"\n")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("pack-objects: %v\n%s", err, out)
				}
				git(t, v.Root(), "prune-packed")
				packs, _ := filepath.Glob(filepath.Join(v.GitDir(), "objects", "pack", "pack-*.pack"))
				if len(packs) != 1 {
					t.Fatalf("%d packs", len(packs))
				}
				path = packs[0]
			}
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(t.TempDir(), "src")
			writeTree(t, src, map[string]string{"reused.txt": content, "new.txt": "new"})
			restore, ran := atStep(t, v, durable.StepFsync, "objects/", func() {
				git(t, v.Root(), "gc", "-q", "--prune=2.weeks.ago")
				git(t, v.Root(), "prune", "--expire=2.weeks.ago")
			})
			publish(t, v, "n", src, PublishOptions{})
			restore()
			if !ran() {
				t.Fatal("git gc never ran during the publish")
			}
			checkGitClean(t, v)
			if got := git(t, v.Root(), "cat-file", "-p", oid); got != content {
				t.Fatalf("reused blob: %q", got)
			}
			if rep, err := v.Fsck(context.Background()); err != nil || !rep.OK() {
				t.Fatalf("fsck: %+v %v", rep, err)
			}
		})
	}
}

// Publishes beside `git gc`: gc's prune-packed removes empty fan-out
// directories, and its repack replaces the packs go-git listed when the
// publish began. Both happen at fixed points inside the publish.
func TestPublishBesideGitGC(t *testing.T) {
	requireGit(t)
	for _, tc := range []struct {
		name   string
		step   durable.Step
		prefix string
	}{
		{"gc at the first object write", durable.StepWrite, "objects/"},
		{"gc at the first object rename", durable.StepRename, "objects/"},
		{"gc before the branch moves", durable.StepWrite, "refs/heads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVault(t)
			src := filepath.Join(t.TempDir(), "src")
			files := map[string]string{}
			for _, d := range []string{"a", "b", "c"} {
				for _, f := range []string{"1", "2"} {
					files[d+"/"+f+".txt"] = d + f
				}
			}
			writeTree(t, src, files)
			publish(t, v, "n", src, PublishOptions{})
			git(t, v.Root(), "gc", "-q")
			files["a/1.txt"] = "second"
			writeTree(t, src, files)
			publish(t, v, "n", src, PublishOptions{}) // go-git has listed the packs
			files["b/2.txt"] = "third"
			files["d/9.txt"] = "new directory"
			writeTree(t, src, files)
			restore, ran := atStep(t, v, tc.step, tc.prefix, func() {
				// Something new to pack, so the repack replaces the pack.
				f := filepath.Join(t.TempDir(), "tagged")
				os.WriteFile(f, []byte(tc.name), 0o644)
				oid := strings.TrimSpace(git(t, v.Root(), "hash-object", "-w", f))
				git(t, v.Root(), "tag", "t", oid)
				git(t, v.Root(), "gc", "-q")
			})
			res := publish(t, v, "n", src, PublishOptions{})
			restore()
			if !ran() {
				t.Fatal("git gc never ran during the publish")
			}
			if res.Receipt.Status != "rendered" {
				t.Fatalf("status %s", res.Receipt.Status)
			}
			checkGitClean(t, v)
			if n := receiptCount(t, v); n != 3 {
				t.Fatalf("%d receipts, want 3", n)
			}
		})
	}
}

// prose holds git's index.lock from reading the index to writing it, as
// git does: a `git add` during a publish waits or fails saying so, and is
// never silently undone by the publish's index write.
func TestGitAddDuringAPublishIsNeverLost(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "one"})
	publish(t, v, "n", src, PublishOptions{})
	writeTree(t, filepath.Join(v.Root(), "src"), map[string]string{"s.md": "staged by the user"})
	writeTree(t, src, map[string]string{"a.txt": "two"})
	var addOut string
	var addErr error
	restore, ran := atStep(t, v, durable.StepFsync, "objects/", func() {
		addOut, addErr = gitTry(v.Root(), "add", "src/s.md")
	})
	publish(t, v, "n", src, PublishOptions{})
	restore()
	if !ran() {
		t.Fatal("git add never ran during the publish")
	}
	staged := git(t, v.Root(), "diff", "--cached", "--name-only")
	switch {
	case addErr == nil && staged != "src/s.md\n":
		t.Fatalf("git add succeeded during the publish, then the publish lost it: staged %q", staged)
	case addErr != nil && !strings.Contains(addOut, "index.lock"):
		t.Fatalf("git add failed for another reason: %v\n%s", addErr, addOut)
	}
	if addErr == nil {
		t.Fatal("git add ran while the publish held the index; it must wait for index.lock")
	}
	// Once the publish is done, the user's git add goes through.
	git(t, v.Root(), "add", "src/s.md")
	if got := git(t, v.Root(), "diff", "--cached", "--name-only"); got != "src/s.md\n" {
		t.Fatalf("staged %q", got)
	}
}

// An index.lock held by a git command (git status refreshing the index)
// makes a publish wait, then fail before anything is published, naming the
// lock; nothing lands that the working tree could not follow.
func TestHeldIndexLockFailsBeforeAnythingLands(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "one"})
	publish(t, v, "n", src, PublishOptions{})
	lock := v.indexPath() + ".lock"
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	v2, err := Open(v.Root(), Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, src, map[string]string{"a.txt": "two"})
	_, err = v2.Publish(context.Background(), "n", src, PublishOptions{})
	var le *LandedError
	if err == nil || errors.As(err, &le) || !strings.Contains(err.Error(), lock) {
		t.Fatalf("publish beside a held index.lock: %v, want a failure naming %s before anything landed", err, lock)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatal("the git-held index.lock was removed")
	}
	if n := receiptCount(t, v2); n != 1 {
		t.Fatalf("%d receipts, want 1", n)
	}
	os.Remove(lock)
	if r := publish(t, v2, "n", src, PublishOptions{}); r.Receipt.Status != "rendered" {
		t.Fatal("publish after the lock was released did not render")
	}
	checkGitClean(t, v2)
}

// A lock file is removed by another writer only when the owner record
// proves it is the one a dead prose process created; a lock file git
// created under a leftover record, or whose holder lives, is kept, waited
// for and named.
func TestGitLockFilesAreRemovedOnlyWhenProvablyStale(t *testing.T) {
	requireGit(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPid := dead.Process.Pid
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	for _, kind := range []string{"ref.lock", "index.lock"} {
		for _, tc := range []struct {
			name    string
			pid     int
			sameIno bool
			removed bool
		}{
			{"dead prose holder", deadPid, true, true},
			{"git's lock under a leftover record", deadPid, false, false},
			{"live holder", live.Process.Pid, true, false},
		} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				v := newVault(t)
				src := filepath.Join(t.TempDir(), "src")
				writeTree(t, src, map[string]string{"a.txt": "one"})
				publish(t, v, "n", src, PublishOptions{})
				target := v.indexPath()
				if kind == "ref.lock" {
					target = filepath.Join(v.GitDir(), "refs", "heads", "main")
				}
				lock := target + ".lock"
				if err := os.WriteFile(lock, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				fi, _ := os.Stat(lock)
				id := fileIdentity(fi)
				if !tc.sameIno {
					// The prose lock was renamed away; git made a new one.
					// Renaming keeps the old inode in use, so the new
					// file cannot reuse it (removing it and creating
					// another file could not promise that).
					if err := os.Rename(lock, lock+".other"); err != nil {
						t.Fatal(err)
					}
					os.WriteFile(lock, []byte("git"), 0o644)
				}
				record := []byte(strings.Join([]string{itoa(tc.pid), lock, id}, "\n") + "\n")
				if err := os.WriteFile(v.StatePath(kind+".owner"), record, 0o644); err != nil {
					t.Fatal(err)
				}
				v2, _ := Open(v.Root(), Options{LockTimeout: 100 * time.Millisecond})
				writeTree(t, src, map[string]string{"a.txt": "two"})
				_, err := v2.Publish(context.Background(), "n", src, PublishOptions{})
				_, statErr := os.Stat(lock)
				if tc.removed {
					if err != nil || statErr == nil {
						t.Fatalf("a dead prose writer's lock: publish %v, lock still there: %v", err, statErr == nil)
					}
					checkGitClean(t, v2)
					return
				}
				if statErr != nil {
					t.Fatalf("%s was removed although it is not provably a dead prose writer's", lock)
				}
				if err == nil || !strings.Contains(err.Error(), lock) {
					t.Fatalf("publish: %v, want a failure naming %s", err, lock)
				}
				if n := receiptCount(t, v2); n != 1 {
					t.Fatalf("%d receipts, want 1", n)
				}
			})
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// gitLiveChild publishes n versions of a node (spec "root|node|n"),
// retrying a version that another command's ref move or lock refused, and
// prints the content hash of every receipt it was told is stored.
func gitLiveChild(spec string) int {
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[2])
	v, err := Open(parts[0], Options{LockTimeout: 2 * time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	src := filepath.Join(filepath.Dir(parts[0]), "src-"+parts[1])
	for i := 0; i < n; i++ {
		os.RemoveAll(src)
		os.MkdirAll(filepath.Join(src, "f"), 0o755)
		os.WriteFile(filepath.Join(src, "f", "v.txt"), []byte(fmt.Sprintf("%s %d", parts[1], i)), 0o644)
		for attempt := 0; ; attempt++ {
			res, err := v.Publish(context.Background(), parts[1], src, PublishOptions{})
			var le *LandedError
			if err == nil || errors.As(err, &le) {
				fmt.Println(res.Receipt.ContentHash)
				break
			}
			if attempt < 50 && (errors.Is(err, ErrRefMoved) || strings.Contains(err.Error(), ".lock exists")) {
				continue
			}
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
	return 0
}

// Publishes beside the git commands people run in a vault — git gc, git
// add, git commit with a committer date years old, git prune, git status —
// lose no receipt they acknowledged, and leave a vault git and prose both
// find sound.
func TestPublishesBesideGitCommands(t *testing.T) {
	requireGit(t)
	procs, each := 3, 30
	if testing.Short() {
		each = 10 // -short: a third of the publishes beside the same git commands
	}
	v := newVault(t)
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("PROSE_GITLIVE_CHILD=%s|node-%d|%d", v.Root(), p, each))
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	done := make(chan struct{})
	userCommits := 0
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		old := []string{"GIT_COMMITTER_DATE=1999-01-01T00:00:00Z", "GIT_AUTHOR_DATE=1999-01-01T00:00:00Z"}
		var stopBy time.Time
		for k := 0; ; k++ {
			select {
			case <-done:
				// On a loaded machine every commit beside the publishes can
				// lose its index.lock race: keep trying (bounded) until one
				// landed, so the checks below see a user commit.
				if userCommits > 0 {
					return
				}
				if stopBy.IsZero() {
					stopBy = time.Now().Add(30 * time.Second)
				} else if time.Now().After(stopBy) {
					return
				}
			default:
			}
			os.MkdirAll(filepath.Join(v.Root(), "src"), 0o755)
			os.WriteFile(filepath.Join(v.Root(), "src", "notes.md"), []byte(fmt.Sprint("note ", k)), 0o644)
			if _, err := gitTry(v.Root(), "add", "src/notes.md"); err == nil {
				cmd := exec.Command("git", "commit", "-qm", "user note")
				cmd.Dir = v.Root()
				cmd.Env = append(append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x"), old...)
				if cmd.Run() == nil {
					userCommits++
				}
			}
			gitTry(v.Root(), "status", "--porcelain")
			switch k % 6 {
			case 0:
				gitTry(v.Root(), "gc", "-q")
			case 2:
				gitTry(v.Root(), "prune", "--expire=2.weeks.ago")
			case 4:
				gitTry(v.Root(), "repack", "-a", "-d", "-q")
			}
		}
	}()
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			close(done)
			wg.Wait()
			t.Fatalf("publisher failed: %v", err)
		}
	}
	close(done)
	wg.Wait()
	acked := map[string]bool{}
	for _, o := range outs {
		for _, h := range strings.Fields(o.String()) {
			acked[h] = true
		}
	}
	if len(acked) != procs*each {
		t.Fatalf("%d receipts acknowledged, want %d", len(acked), procs*each)
	}
	if err := v.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs, err := v.AllReceipts()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		delete(acked, r.Receipt.ContentHash)
	}
	if len(acked) != 0 {
		t.Fatalf("%d acknowledged receipts are not in the ledger: %v", len(acked), acked)
	}
	if userCommits == 0 {
		t.Fatal("no user commit landed beside the publishes")
	}
	rep, err := v.Fsck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// git commit reads the index before it locks it and, when its refresh
	// changed anything, writes back the index it read: a commit racing a
	// publish can undo the publish's index update (git's own race; a
	// `git add` beside it is lost the same way), and the user's next
	// commit then reverts the node. fsck must say so, for exactly those
	// nodes; anything else is prose's fault.
	byUser, _ := gitTry(v.Root(), "log", "--author=u@x", "--format=", "--name-only", "--", "published/")
	reverted := map[string]bool{}
	for _, p := range strings.Fields(byUser) {
		if parts := strings.SplitN(p, "/", 3); len(parts) == 3 {
			reverted["published/"+parts[1]] = true
		}
	}
	var unexplained []Problem
	for _, p := range rep.Problems {
		if !reverted[p.Where] || !strings.Contains(p.Reason, "a commit outside prose changed the node") {
			unexplained = append(unexplained, p)
		}
	}
	if len(unexplained) > 0 || len(rep.HandEdits) > 0 || (rep.Receipts != nil && len(rep.Receipts.Problems) > 0) {
		out, _ := gitTry(v.Root(), "log", "--format=%h %an %s", "--stat", "--", "published/")
		t.Logf("commits that touched published/ (author, subject):\n%s", out)
		t.Fatalf("fsck: %+v; not explained by a user commit: %v", rep, unexplained)
	}
	if len(reverted) > 0 {
		t.Logf("user commits reverted %d nodes through git commit's index race; fsck named them", len(reverted))
	}
	git(t, v.Root(), "fsck", "--strict", "--no-progress")
	t.Logf("%d receipts beside %d user commits with a 1999 committer date, git gc, prune and repack", len(recs), userCommits)
}

// A read that loses to a repack beside it fails while the pack list it
// holds names a deleted pack; read lists the packs again and retries, more
// than once, since one fresh list can still predate the deletion.
func TestReadRetriesOnFreshPackLists(t *testing.T) {
	v := newVault(t)
	calls := 0
	err := v.read(func() error {
		calls++
		if calls <= readRetries {
			return errors.New("packfile not found")
		}
		return nil
	})
	if err != nil || calls != readRetries+1 {
		t.Fatalf("read after %d failures: err %v after %d calls", readRetries, err, calls)
	}
	calls = 0
	if err := v.read(func() error { calls++; return errors.New("object not found") }); err == nil || calls != readRetries+1 {
		t.Fatalf("a read that always fails: err %v after %d calls, want an error after %d", err, calls, readRetries+1)
	}
}
