package vault

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/internal/testtmp"
)

// The crash child: publishes versions k, k+1, … of node "crash" forever,
// starting after the version the branch holds. It is this test binary,
// re-executed with PROSE_CRASH_CHILD set.
func TestMain(m *testing.M) {
	if root := os.Getenv("PROSE_CRASH_CHILD"); root != "" {
		os.Exit(crashChild(root))
	}
	if spec := os.Getenv("PROSE_CONCURRENT_CHILD"); spec != "" {
		os.Exit(concurrentChild(spec))
	}
	if spec := os.Getenv("PROSE_GITLIVE_CHILD"); spec != "" {
		os.Exit(gitLiveChild(spec))
	}
	if spec := os.Getenv("PROSE_STAGE_CRASH_CHILD"); spec != "" {
		os.Exit(stageCrashChild(spec))
	}
	if spec := os.Getenv("PROSE_STRACE_CHILD"); spec != "" {
		os.Exit(straceChild(spec))
	}
	os.Exit(testtmp.Main(m)) // a short run's temporary files on a RAM file system
}

func versionFiles(k int) map[string]string {
	files := map[string]string{
		"version.json": fmt.Sprintf(`{"k": %d}`, k),
		"facet/a.txt":  fmt.Sprintf("a%d", k),
	}
	// Every third version adds or removes a file, so deletions are exercised.
	if k%3 == 0 {
		files["facet/extra.txt"] = "extra"
	}
	for i := 0; i < 20; i++ {
		files[fmt.Sprintf("bulk/f%02d.txt", i)] = fmt.Sprintf("bulk %d %d", i, k/4)
	}
	return files
}

func crashChild(root string) int {
	v, err := Open(root, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	src := filepath.Join(filepath.Dir(root), "child-src")
	for {
		k := committedVersion(v)
		files := versionFiles(k + 1)
		os.RemoveAll(src)
		for p, c := range files {
			full := filepath.Join(src, p)
			os.MkdirAll(filepath.Dir(full), 0o755)
			os.WriteFile(full, []byte(c), 0o644)
		}
		if _, err := v.Publish(context.Background(), "crash", src, PublishOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
}

// committedVersion reads k from the branch's committed version.json
// (-1 when nothing is published).
func committedVersion(v *Vault) int {
	tip, err := v.readRef(v.Branch())
	if err != nil {
		return -1
	}
	c, err := v.commit(tip)
	if err != nil {
		return -1
	}
	e, ok, err := v.lookup(c.TreeHash, "published/crash/version.json")
	if err != nil || !ok {
		return -1
	}
	data, err := v.blob(e.Hash)
	if err != nil {
		return -1
	}
	s := strings.TrimSuffix(strings.TrimPrefix(string(data), `{"k": `), "}")
	k, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return k
}

// checkCommittedState asserts the branch holds exactly version k's files.
func checkCommittedState(t *testing.T, v *Vault, k int) {
	t.Helper()
	tip, _ := v.readRef(v.Branch())
	c, err := v.commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	e, ok, err := v.lookup(c.TreeHash, "published/crash")
	if err != nil || !ok {
		t.Fatalf("published/crash missing: %v", err)
	}
	files, err := v.readFiles(e.Hash)
	if err != nil {
		t.Fatal(err)
	}
	want := versionFiles(k)
	if len(files) != len(want) {
		t.Fatalf("committed state is a mix: %d files, version %d has %d", len(files), k, len(want))
	}
	for p, content := range want {
		if string(files[p]) != content {
			t.Fatalf("committed state is a mix: %s = %q, version %d has %q", p, files[p], k, content)
		}
	}
}

func TestCrashSafetySIGKILL(t *testing.T) {
	requireGit(t)
	kills := 200
	if testing.Short() {
		kills = 20
	}
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, versionFiles(0))
	publish(t, v, "crash", src, PublishOptions{})
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	before, gcs, userCommits := 0, 0, 0
	for i := 0; i < kills; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "PROSE_CRASH_CHILD="+v.Root())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Every fourth child publishes beside a `git gc`.
		var gc *exec.Cmd
		if i%4 == 1 {
			gc = exec.Command("git", "gc", "-q")
			gc.Dir = v.Root()
			if err := gc.Start(); err != nil {
				t.Fatal(err)
			}
		}
		// Kill at a random moment: mostly mid-publish, sometimes at start-up.
		delay := time.Duration(rng.Intn(40000)) * time.Microsecond
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			t.Fatalf("child exited by itself: %v\n%s", err, stderr.String())
		case <-time.After(delay):
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		if gc != nil {
			_ = gc.Wait() // may find a lock a killed child held
			gcs++
		}
		// Every fifth kill, a user commit with a committer date long past
		// lands between two publishes (refused while a killed child's
		// index.lock stands, as git refuses it).
		if i%5 == 2 {
			notes := filepath.Join(v.Root(), "src", "notes.md")
			old, oldErr := os.ReadFile(notes)
			os.MkdirAll(filepath.Dir(notes), 0o755)
			os.WriteFile(notes, []byte(fmt.Sprint("note ", i)), 0o644)
			committed := false
			added := false
			if _, err := gitTry(v.Root(), "add", "src/notes.md"); err == nil {
				added = true
				c := exec.Command("git", "commit", "-qm", "user note")
				c.Dir = v.Root()
				c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x",
					"GIT_COMMITTER_DATE=1999-01-01T00:00:00Z", "GIT_AUTHOR_DATE=1999-01-01T00:00:00Z")
				committed = c.Run() == nil
			}
			if added && !committed {
				gitTry(v.Root(), "reset", "-q", "--", "src/notes.md")
			}
			switch {
			case committed:
				userCommits++
			case oldErr == nil:
				os.WriteFile(notes, old, 0o644) // the user gives up the edit
			default:
				os.Remove(notes)
			}
		}

		v2, err := Open(v.Root(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		k := committedVersion(v2)
		if k < before {
			t.Fatalf("kill %d: committed version went back from %d to %d", i, before, k)
		}
		checkCommittedState(t, v2, k)
		if err := v2.Repair(context.Background()); err != nil {
			t.Fatalf("kill %d: repair: %v", i, err)
		}
		rep, err := v2.Fsck(context.Background())
		if err != nil {
			t.Fatalf("kill %d: fsck: %v", i, err)
		}
		if !rep.OK() {
			t.Fatalf("kill %d: fsck: %+v receipts %+v", i, rep, rep.Receipts)
		}
		if i%10 == 0 || i == kills-1 {
			checkGitClean(t, v2)
		}
		before = k
	}
	t.Logf("%d kills (%d beside git gc, %d user commits dated 1999 between them); final version %d", kills, gcs, userCommits, before)
}

// Fault injection at each write step of a publish. A fault before the
// branch ref moves (both refs' lock files are written and flushed with the
// objects) leaves the previous committed state and the ledger as it was. A
// fault once the branch has moved (at its directory fsync, or at the
// ledger's rename) leaves the new version committed: the publish
// says so with a *LandedError naming the receipt, and the next writer's
// repair records the receipt in the ledger. Paths are matched under the
// vault's .git, so a case never matches another directory by accident.
func TestFaultInjectionLeavesPreviousState(t *testing.T) {
	requireGit(t)
	steps := []struct {
		step   durable.Step
		path   string
		landed bool
	}{
		{durable.StepWrite, "objects/", false},
		{durable.StepFsync, "objects/", false},
		{durable.StepRename, "objects/", false},
		{durable.StepDirSync, "objects", false},
		{durable.StepWrite, "refs/heads", false},
		{durable.StepFsync, "refs/heads", false},
		{durable.StepRename, "refs/heads", false},
		{durable.StepDirSync, "refs/heads", true},
		{durable.StepWrite, "refs/prose", false},
		{durable.StepFsync, "refs/prose", false},
		{durable.StepRename, "refs/prose", true},
	}
	for _, s := range steps {
		t.Run(string(s.step)+"@"+strings.ReplaceAll(s.path, "/", "_"), func(t *testing.T) {
			v := newVault(t)
			src := filepath.Join(t.TempDir(), "src")
			writeTree(t, src, versionFiles(0))
			publish(t, v, "crash", src, PublishOptions{})
			ledgerBefore, _ := v.readRef(LedgerRef)
			writeTree(t, src, versionFiles(1))
			prefix := filepath.Join(v.GitDir(), filepath.FromSlash(s.path))
			var hits atomic.Int32
			restore := durable.SetFault(func(step durable.Step, path string) error {
				if step == s.step && strings.HasPrefix(path, prefix) {
					hits.Add(1)
					return durable.ErrInjected
				}
				return nil
			})
			res, err := v.Publish(context.Background(), "crash", src, PublishOptions{})
			restore()
			if hits.Load() == 0 {
				t.Fatalf("the fault at %s %s was never reached", s.step, prefix)
			}
			if !errors.Is(err, durable.ErrInjected) {
				t.Fatalf("publish error = %v, want the injected fault", err)
			}
			var le *LandedError
			if got := errors.As(err, &le); got != s.landed {
				t.Fatalf("publish error %q: landed = %v, want %v", err, got, s.landed)
			}
			if s.landed && (res == nil || !strings.Contains(err.Error(), res.Receipt.ContentHash) || !strings.Contains(err.Error(), "prose fsck")) {
				t.Fatalf("a landed failure must name the receipt and the command that finishes it: %v", err)
			}
			if err := v.Repair(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := 0
			if s.landed {
				want = 1
			}
			if k := committedVersion(v); k != want {
				t.Fatalf("committed version %d after the fault, want %d", k, want)
			}
			checkCommittedState(t, v, want)
			l, _ := v.readRef(LedgerRef)
			if !s.landed && l != ledgerBefore {
				t.Fatalf("ledger moved to %s after a failed publish", l)
			}
			if s.landed {
				last, err := v.LastReceipt("crash")
				if err != nil || last == nil || last.ContentHash != res.Receipt.ContentHash {
					t.Fatalf("the landed receipt is not the node's last after repair: %v %v", last, err)
				}
			}
			rep, err := v.Fsck(context.Background())
			if err != nil || !rep.OK() {
				t.Fatalf("fsck after fault: %+v %v", rep, err)
			}
			checkGitClean(t, v)
			// The next publish goes on from there.
			writeTree(t, src, versionFiles(2))
			if r := publish(t, v, "crash", src, PublishOptions{}); r.Receipt.Status != "rendered" {
				t.Fatal("publish after the fault did not render")
			}
			checkCommittedState(t, v, 2)
			if recs, err := v.AllReceipts(); err != nil || len(recs) != 2+want {
				t.Fatalf("%d receipts after the fault (%v), want %d", len(recs), err, 2+want)
			}
		})
	}
}

// concurrentChild publishes n versions of a node: spec is "root|node|n|id".
func concurrentChild(spec string) int {
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[2])
	v, err := Open(parts[0], Options{LockTimeout: 2 * time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	src := filepath.Join(filepath.Dir(parts[0]), "src-"+parts[3])
	for i := 0; i < n; i++ {
		os.RemoveAll(src)
		os.MkdirAll(filepath.Join(src, "f"), 0o755)
		os.WriteFile(filepath.Join(src, "f", "v.txt"), []byte(fmt.Sprintf("%s %s %d", parts[1], parts[3], i)), 0o644)
		if _, err := v.Publish(context.Background(), parts[1], src, PublishOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
	return 0
}

func TestConcurrentPublishers(t *testing.T) {
	requireGit(t)
	procs, each := 8, 10
	if testing.Short() {
		procs, each = 4, 5 // -short: two processes on each of two nodes
	}
	v := newVault(t)
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		// Two processes share each node, so chains interleave.
		node := fmt.Sprintf("node-%d", p/2)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("PROSE_CONCURRENT_CHILD=%s|%s|%d|%d", v.Root(), node, each, p))
		cmd.Stderr = os.Stderr
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("publisher failed: %v", err)
		}
	}
	recs, err := v.AllReceipts()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != procs*each {
		t.Fatalf("%d receipts, want %d", len(recs), procs*each)
	}
	rep, err := v.VerifyReceipts()
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	fr, err := v.Fsck(context.Background())
	if err != nil || !fr.OK() {
		t.Fatalf("fsck: %+v %v", fr, err)
	}
	checkGitClean(t, v)
}
