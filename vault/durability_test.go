package vault

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// straceChild publishes the directory src into the vault at root (spec
// "root|src"), for a parent that traces it.
func straceChild(spec string) int {
	root, src, _ := strings.Cut(spec, "|")
	v, err := Open(root, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if _, err := v.Publish(context.Background(), "n", src, PublishOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0
}

// requireStrace returns the path of strace, skipping the test without it
// (failing it under CI, which installs it).
func requireStrace(t *testing.T) string {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("strace is required in CI (.ci/run installs it)")
		}
		t.Skip("strace not installed")
	}
	return strace
}

// tracePublish publishes src into v as node "n" in a child process traced
// by strace with the options given (plus -f -qq), and returns the trace
// file. A machine where strace cannot trace skips the test.
func tracePublish(t *testing.T, strace string, v *Vault, src string, opts ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "trace")
	args := append(append([]string{"-f", "-qq", "-o", out}, opts...), os.Args[0], "-test.run=^$")
	cmd := exec.Command(strace, args...)
	cmd.Env = append(os.Environ(), "PROSE_STRACE_CHILD="+v.Root()+"|"+src)
	if b, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(b), "ptrace") {
			t.Skipf("strace cannot trace here: %s", b)
		}
		t.Fatalf("traced publish: %v\n%s", err, b)
	}
	return out
}

// sysEvent is one traced system call that matters for durability.
type sysEvent struct {
	call     string // write, flush (fsync, fdatasync, syncfs) or rename
	path     string // the file written or flushed; a rename's source
	to       string // a rename's target
	wholeFS  bool   // syncfs: every file of the filesystem
	sequence int
}

var (
	straceLine   = regexp.MustCompile(`^(\d+)\s+(.*)$`)
	straceCall   = regexp.MustCompile(`^(\w+)\((.*)`)
	straceResume = regexp.MustCompile(`^<\.\.\. (\w+) resumed>`)
	straceFdPath = regexp.MustCompile(`^\d+<([^>]*)>`)
	straceQuoted = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
)

// lockOfProof is the lock path of a lock file written through its proof
// name (the same file, see gitLock), or path itself.
func lockOfProof(path string) string {
	dir, base := filepath.Split(path)
	parts := strings.SplitN(strings.TrimPrefix(base, gitLockTempPrefix), "_", 3)
	if !strings.HasPrefix(base, gitLockTempPrefix) || len(parts) != 3 {
		return path
	}
	rel, err := url.PathUnescape(parts[2])
	if err != nil {
		return path
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}

// parseStrace reads `strace -f -y` output into events in the order they
// took effect: a flush counts when it returned, a rename when it began, so
// overlapping calls of two threads are judged against durability.
func parseStrace(t *testing.T, path string) []sysEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []sysEvent
	pending := map[string]sysEvent{} // pid → an unfinished flush
	add := func(e sysEvent) {
		e.sequence = len(events)
		events = append(events, e)
	}
	parse := func(name, args string) (sysEvent, bool) {
		switch name {
		case "write", "pwrite64", "fsync", "fdatasync", "syncfs":
			m := straceFdPath.FindStringSubmatch(args)
			if m == nil {
				return sysEvent{}, false
			}
			e := sysEvent{call: "flush", path: lockOfProof(m[1]), wholeFS: name == "syncfs"}
			if name == "write" || name == "pwrite64" {
				e.call = "write"
			}
			return e, true
		case "rename", "renameat", "renameat2":
			q := straceQuoted.FindAllStringSubmatch(args, 2)
			if len(q) < 2 {
				return sysEvent{}, false
			}
			return sysEvent{call: "rename", path: q[0][1], to: q[1][1]}, true
		}
		return sysEvent{}, false
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := straceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, rest := m[1], m[2]
		if r := straceResume.FindStringSubmatch(rest); r != nil {
			if e, ok := pending[pid]; ok {
				delete(pending, pid)
				if !strings.Contains(rest, "= -1") {
					add(e)
				}
			}
			continue
		}
		c := straceCall.FindStringSubmatch(rest)
		if c == nil {
			continue
		}
		e, ok := parse(c[1], c[2])
		if !ok {
			continue
		}
		switch {
		case strings.HasSuffix(rest, "<unfinished ...>") && e.call == "rename":
			add(e)
		case strings.HasSuffix(rest, "<unfinished ...>"):
			pending[pid] = e
		case !strings.Contains(rest, "= -1"):
			add(e)
		}
	}
	return events
}

// flushedBetween reports whether some flush in events[from:to] covers path:
// an fsync of the path itself, or a syncfs.
func flushedBetween(events []sysEvent, from, to int, path string) bool {
	for _, e := range events[from:to] {
		if e.call == "flush" && (e.wholeFS || e.path == path) {
			return true
		}
	}
	return false
}

// The durability of a publish, checked on the system calls it really
// makes (strace -f), for a small publish (loose objects) and a large one
// (a pack): every object file's data is flushed after its last write and
// before its rename, and every renamed object's directory is flushed before
// the first ref names it; each ref's lock file is fsynced before its rename;
// the branch moves before the ledger, its directory fsynced between.
func TestPublishSyscallOrderIsDurable(t *testing.T) {
	strace := requireStrace(t)
	requireGit(t)
	for _, files := range []int{3, 2 * packThreshold} {
		t.Run(fmt.Sprint(files, " files"), func(t *testing.T) {
			v := newVault(t)
			src := filepath.Join(t.TempDir(), "src")
			tree := map[string]string{}
			for i := 0; i < files; i++ {
				tree[fmt.Sprintf("d%d/f%d.txt", i%5, i)] = fmt.Sprint("one ", i)
			}
			writeTree(t, src, tree)
			publish(t, v, "n", src, PublishOptions{})
			for p := range tree {
				tree[p] += " two"
			}
			writeTree(t, src, tree)
			out := tracePublish(t, strace, v, src, "-y", "-e", "trace=write,pwrite64,fsync,fdatasync,syncfs,rename,renameat,renameat2")
			events := parseStrace(t, out)
			checkDurableOrder(t, v, events)
			checkGitClean(t, v)
		})
	}
}

func checkDurableOrder(t *testing.T, v *Vault, events []sysEvent) {
	t.Helper()
	objects := filepath.Join(v.GitDir(), "objects") + "/"
	branch := filepath.Join(v.GitDir(), "refs", "heads", "main")
	ledger := filepath.Join(v.GitDir(), "refs", "prose", "ledger")
	lastWrite := map[string]int{}
	refMove := map[string]int{}
	var objectRenames []sysEvent
	for _, e := range events {
		switch {
		case e.call == "write":
			lastWrite[e.path] = e.sequence
		case e.call == "rename" && strings.HasPrefix(e.to, objects):
			objectRenames = append(objectRenames, e)
		case e.call == "rename" && (e.to == branch || e.to == ledger):
			if _, seen := refMove[e.to]; !seen {
				refMove[e.to] = e.sequence
			}
		}
	}
	if len(objectRenames) == 0 {
		t.Fatal("the trace shows no object written")
	}
	for _, ref := range []string{branch, ledger} {
		if _, ok := refMove[ref]; !ok {
			t.Fatalf("the trace shows no move of %s", ref)
		}
	}
	if refMove[branch] > refMove[ledger] {
		t.Fatal("the ledger moved before the branch")
	}
	first := min(refMove[branch], refMove[ledger])
	for _, r := range objectRenames {
		if r.sequence > first {
			t.Fatalf("object %s was renamed into place after a ref moved", r.to)
		}
		w, ok := lastWrite[r.path]
		if !ok {
			t.Fatalf("the trace shows no write of %s", r.path)
		}
		if !flushedBetween(events, w, r.sequence, r.path) {
			t.Fatalf("object data %s was not flushed between its last write and its rename to %s", r.path, r.to)
		}
		if !flushedBetween(events, r.sequence, first, filepath.Dir(r.to)) {
			t.Fatalf("the rename to %s was not made durable (its directory flushed) before a ref moved", r.to)
		}
	}
	for _, ref := range []string{branch, ledger} {
		lock := ref + ".lock"
		w, ok := lastWrite[lock]
		if !ok {
			t.Fatalf("the trace shows no write of %s", lock)
		}
		if !flushedBetween(events, w, refMove[ref], lock) {
			t.Fatalf("%s was not fsynced before its rename", lock)
		}
		if ref == ledger {
			// After the branch's move the ledger's rename is not flushed:
			// repair puts a lost one back exactly
			// (TestALostLedgerRenameIsPutBackExactly).
			continue
		}
		if !flushedBetween(events, refMove[ref], refMove[ledger], filepath.Dir(ref)) {
			t.Fatalf("the directory of %s was not fsynced after its rename (before the ledger moved)", ref)
		}
	}
}

// A first publish looks at each working-tree directory a bounded number of
// times, not once per file below it: the symlink check and the directory
// creation of a checkout remember the directories they have seen (counted
// on the stat calls strace sees, for 600 files in 5 directories).
func TestCheckoutLooksAtEachDirectoryOnce(t *testing.T) {
	strace := requireStrace(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	tree := map[string]string{}
	for i := 0; i < 600; i++ {
		tree[fmt.Sprintf("d%d/f%d.txt", i%5, i)] = fmt.Sprint("file ", i)
	}
	writeTree(t, src, tree)
	out := tracePublish(t, strace, v, src, "-e", "trace=stat,lstat,newfstatat,statx,fstatat64")
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]int{}
	for _, d := range []string{"published", "published/n", "published/n/d0", "published/n/d3"} {
		dirs[`"`+filepath.Join(v.Root(), d)+`"`] = 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		for q := range dirs {
			if strings.Contains(line, q) {
				dirs[q]++
			}
		}
	}
	for q, n := range dirs {
		// Until the first worker has made and recorded the directory,
		// each checkout worker may look at it on its own: once checking
		// the directories on the way to its first file, and again inside
		// MkdirAll (seen up to 18 times with 8 workers on a loaded
		// machine). The bound is about workers, far from one look per
		// file (600).
		if n > 3*checkoutWorkers {
			t.Errorf("%s was looked at %d times during a 600-file first publish; want a few, not one per file below it", q, n)
		}
	}
	checkGitClean(t, v)
}

// A first publish reads each small source file's content once for its
// blob and writes the working tree from those bytes: no source file is
// opened by path more than once (the scan opens them relative to their
// directory), and none is opened again by the checkout.
func TestPublishOpensEachSourceFileOnce(t *testing.T) {
	strace := requireStrace(t)
	v := newVault(t)
	src, tree := writeNumberedTree(t, 3*packThreshold)
	out := tracePublish(t, strace, v, src, "-e", "trace=open,openat")
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	opens := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		for _, m := range straceQuoted.FindAllStringSubmatch(line, -1) {
			if rel, err := filepath.Rel(src, m[1]); err == nil && filepath.IsAbs(m[1]) && !strings.HasPrefix(rel, "..") && strings.HasSuffix(rel, ".txt") {
				opens[filepath.ToSlash(rel)]++
			}
		}
	}
	if len(opens) == 0 {
		t.Fatalf("no source file opened by path in the trace; the test sees nothing:\n%.2000s", data)
	}
	for p, n := range opens {
		if n > 1 {
			t.Errorf("%s was opened %d times by path during its first publish; want once", p, n)
		}
	}
	checkGitClean(t, v)
	for p, c := range tree {
		if got, err := os.ReadFile(filepath.Join(v.Root(), "published", "n", filepath.FromSlash(p))); err != nil || string(got) != c {
			t.Fatalf("working tree %s = %q (%v), want %q", p, got, err, c)
		}
	}
}
