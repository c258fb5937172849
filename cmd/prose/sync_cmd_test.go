package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// syncGit runs git in dir and returns its trimmed stdout, failing the test on
// an error.
func syncGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// refsOf is every ref of the repository at dir with its value: what must
// not change when a command is refused.
func refsOf(t *testing.T, dir string) string {
	t.Helper()
	return syncGit(t, dir, "for-each-ref", "--format=%(refname) %(objectname)")
}

// receiptHashes lists the content hashes of every receipt of a vault.
func receiptHashes(t *testing.T, dir string) []string {
	t.Helper()
	out := mustProse(t, "--vault", dir, "--json", "receipts", "list")
	var docs []map[string]any
	if err := json.Unmarshal([]byte(out), &docs); err != nil {
		t.Fatal(err)
	}
	var hs []string
	for _, d := range docs {
		hs = append(hs, d["content_hash"].(string))
	}
	return hs
}

// checkVaults runs the checks every clone, pull and merge must leave
// passing: prose fsck, prose receipts verify, git fsck --strict and a clean
// git status, on every vault named.
func checkVaults(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		mustProse(t, "--vault", dir, "fsck")
		if out := mustProse(t, "--vault", dir, "receipts", "verify"); !strings.Contains(out, " 0 problems") {
			t.Fatalf("receipts verify in %s:\n%s", dir, out)
		}
		syncGit(t, dir, "fsck", "--strict", "--no-progress")
		if st := syncGit(t, dir, "status", "--porcelain"); st != "" {
			t.Fatalf("git status in %s is not clean:\n%s", dir, st)
		}
	}
}

// hasAll fails unless every receipt in want is in got: no acknowledged
// receipt went missing.
func hasAll(t *testing.T, where string, got, want []string) {
	t.Helper()
	have := map[string]bool{}
	for _, h := range got {
		have[h] = true
	}
	for _, h := range want {
		if !have[h] {
			t.Fatalf("%s lost receipt %s", where, h)
		}
	}
}

// syncWorld is a bare remote and a first vault a with one published node,
// pushed.
//
// The sync tests built on syncWorld, twoVaults and wikiWorld run in
// parallel with one another (inParallel), after the serial tests: each has
// its own remote and vaults under its own temporary directory and sets no
// environment variable, and git never prompts for credentials because the
// test binary sets GIT_TERMINAL_PROMPT=0 for itself (main_test.go). A sync test
// that sets one (PROSE_NOW, a git identity: cloneWorld) stays serial.
func syncWorld(t *testing.T) (root, remote, a string) {
	needGit(t)
	root = t.TempDir()
	remote = filepath.Join(root, "remote.git")
	syncGit(t, root, "init", "--quiet", "--bare", remote)
	a = filepath.Join(root, "a")
	mustProse(t, "init", a)
	publishFiles(t, root, a, "notes", map[string]string{"x.txt": "first\n"})
	mustProse(t, "--vault", a, "remote", "add", "origin", remote)
	if out := mustProse(t, "--vault", a, "push"); !strings.Contains(out, "pushed 1 receipt to origin") {
		t.Fatalf("first push: %s", out)
	}
	return root, remote, a
}

// publishFiles publishes files as node's whole world-model in vault.
func publishFiles(t *testing.T, root, vaultDir, node string, files map[string]string) {
	t.Helper()
	src := filepath.Join(root, "src-"+filepath.Base(vaultDir)+"-"+node)
	writeFiles(t, src, files)
	mustProse(t, "--vault", vaultDir, "publish", node, src)
}

func TestSyncCloneFastForwardPushPull(t *testing.T) {
	inParallel(t)
	root, remote, a := syncWorld(t)
	// remote add wrote the refspecs: plain git push carries the ledger.
	cfg := syncGit(t, a, "config", "--get-all", "remote.origin.push")
	if !strings.Contains(cfg, "refs/prose/*:refs/prose/*") || !strings.Contains(cfg, "refs/heads/main:refs/heads/main") {
		t.Fatalf("remote add wrote no push refspecs:\n%s", cfg)
	}
	if got, want := syncGit(t, remote, "rev-parse", "refs/prose/ledger"), syncGit(t, a, "rev-parse", "refs/prose/ledger"); got != want {
		t.Fatalf("push did not carry the ledger: remote %s, local %s", got, want)
	}
	b := filepath.Join(root, "b")
	if out := mustProse(t, "clone", remote, b); !strings.Contains(out, "1 receipt") {
		t.Fatalf("clone: %s", out)
	}
	if got, want := receiptHashes(t, b), receiptHashes(t, a); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("clone's receipts %v, want %v", got, want)
	}
	checkVaults(t, a, b)

	publishFiles(t, root, a, "notes", map[string]string{"x.txt": "first\n", "y.txt": "second\n"})
	publishFiles(t, root, a, "deploys", map[string]string{"d.json": `{"n": 1}`})
	before := refsOf(t, remote)
	if out := mustProse(t, "--vault", a, "push", "--dry-run"); !strings.Contains(out, "would push 2 receipts") {
		t.Fatalf("push --dry-run: %s", out)
	}
	if refsOf(t, remote) != before {
		t.Fatal("push --dry-run sent something")
	}
	mustProse(t, "--vault", a, "push")
	if out := mustProse(t, "--vault", b, "pull"); !strings.Contains(out, "pulled 2 receipts from origin") {
		t.Fatalf("pull: %s", out)
	}
	if data, err := os.ReadFile(filepath.Join(b, "published", "notes", "y.txt")); err != nil || string(data) != "second\n" {
		t.Fatalf("the pull did not bring the working tree: %q %v", data, err)
	}
	hasAll(t, "b after pull", receiptHashes(t, b), receiptHashes(t, a))
	checkVaults(t, a, b)
	if out := mustProse(t, "--vault", b, "pull"); !strings.Contains(out, "already up to date") {
		t.Fatalf("second pull: %s", out)
	}

	// b writes, pushes; a's pull takes it in.
	publishFiles(t, root, b, "deploys", map[string]string{"d.json": `{"n": 2}`})
	if out := mustProse(t, "--vault", a, "pull"); !strings.Contains(out, "already up to date") {
		t.Fatalf("pull before b pushed: %s", out)
	}
	mustProse(t, "--vault", b, "push", "origin")
	mustProse(t, "--vault", a, "pull", "origin")
	hasAll(t, "a after pull", receiptHashes(t, a), receiptHashes(t, b))
	checkVaults(t, a, b)

	// Plain git carries the prose refs too: a git clone with the refspecs
	// written fetches the ledger beside the branch.
	publishFiles(t, root, a, "notes", map[string]string{"x.txt": "third\n"})
	syncGit(t, a, "push", "origin")
	if got, want := syncGit(t, remote, "rev-parse", "refs/prose/ledger"), syncGit(t, a, "rev-parse", "refs/prose/ledger"); got != want {
		t.Fatalf("plain git push did not carry the ledger")
	}
	syncGit(t, b, "fetch", "origin")
	if got, want := syncGit(t, b, "rev-parse", "refs/remotes/origin/prose/ledger"), syncGit(t, a, "rev-parse", "refs/prose/ledger"); got != want {
		t.Fatalf("plain git fetch did not carry the ledger")
	}
	mustProse(t, "--vault", b, "pull")
	checkVaults(t, a, b)
}

func TestSyncDivergedMergesNodesChangedOnOneSide(t *testing.T) {
	inParallel(t)
	root, remote, a := syncWorld(t)
	b := filepath.Join(root, "b")
	mustProse(t, "clone", remote, b)
	publishFiles(t, root, a, "notes", map[string]string{"x.txt": "from a\n"})
	publishFiles(t, root, b, "other", map[string]string{"o.txt": "from b\n"})
	mustProse(t, "--vault", a, "push")
	remoteRefs := refsOf(t, remote)
	aReceipts, bReceipts := receiptHashes(t, a), receiptHashes(t, b)

	// b's push would drop a's receipt: refused, by prose and by plain git.
	_, errs, code := prose(t, "--vault", b, "push")
	if code != 1 || !strings.Contains(errs, "push refused") || !strings.Contains(errs, "prose pull origin") || !strings.Contains(errs, "never forces") {
		t.Fatalf("diverged push: exit %d\n%s", code, errs)
	}
	if refsOf(t, remote) != remoteRefs {
		t.Fatal("a refused push changed the remote")
	}
	cmd := exec.Command("git", "push", "origin")
	cmd.Dir = b
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "rejected") || refsOf(t, remote) != remoteRefs {
		t.Fatalf("plain git push of a diverged vault was not rejected: %v\n%s", err, out)
	}

	// b pulls: notes changed there only, other here only: one merge.
	out := mustProse(t, "--vault", b, "pull")
	if !strings.Contains(out, "merged 1 receipt from origin") || !strings.Contains(out, "from origin: node notes") || !strings.Contains(out, "from here: node other") {
		t.Fatalf("merge pull:\n%s", out)
	}
	if parents := strings.Fields(syncGit(t, b, "log", "-1", "--format=%P")); len(parents) != 2 {
		t.Fatalf("the pull made no merge commit: parents %v", parents)
	}
	if msg := syncGit(t, b, "log", "-1", "--format=%B"); !strings.Contains(msg, "from origin: node notes") {
		t.Fatalf("merge commit message does not say what came from where:\n%s", msg)
	}
	for p, want := range map[string]string{"published/notes/x.txt": "from a\n", "published/other/o.txt": "from b\n"} {
		if data, err := os.ReadFile(filepath.Join(b, p)); err != nil || string(data) != want {
			t.Fatalf("%s after the merge: %q %v", p, data, err)
		}
	}
	hasAll(t, "b after the merge", receiptHashes(t, b), append(aReceipts, bReceipts...))
	checkVaults(t, a, b)

	// The merge travels: b pushes it, a fast-forwards to it.
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	hasAll(t, "a after pulling the merge", receiptHashes(t, a), append(aReceipts, bReceipts...))
	checkVaults(t, a, b)
	// Later work goes on from the merge on both sides.
	publishFiles(t, root, a, "other", map[string]string{"o.txt": "from b\n", "p.txt": "a again\n"})
	mustProse(t, "--vault", a, "push")
	mustProse(t, "--vault", b, "pull")
	checkVaults(t, a, b)
}

func TestSyncSameNodeOnBothSidesIsRefusedAndChangesNothing(t *testing.T) {
	inParallel(t)
	root, remote, a := syncWorld(t)
	b := filepath.Join(root, "b")
	mustProse(t, "clone", remote, b)
	publishFiles(t, root, a, "notes", map[string]string{"x.txt": "from a\n"})
	publishFiles(t, root, b, "notes", map[string]string{"x.txt": "from b\n"})
	mustProse(t, "--vault", a, "push")
	bRefs, bReceipts := refsOf(t, b), receiptHashes(t, b)
	_, errs, code := prose(t, "--vault", b, "pull")
	if code != 1 || !strings.Contains(errs, "node notes advanced on both sides") || !strings.Contains(errs, "nothing changed in this vault") ||
		!strings.Contains(errs, "prose resolve notes --theirs") || !strings.Contains(errs, "prose resolve NODE --ours") || !strings.Contains(errs, lastOf(t, b, "notes")["content_hash"].(string)[:20]) {
		t.Fatalf("same-node pull: exit %d\n%s", code, errs)
	}
	// The fetch moved b's remote-tracking refs only.
	after := refsOf(t, b)
	for _, line := range strings.Split(bRefs, "\n") {
		if !strings.HasPrefix(line, "refs/remotes/") && !strings.Contains(after, line) {
			t.Fatalf("a refused pull moved %s:\n%s", line, after)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(b, "published", "notes", "x.txt")); string(data) != "from b\n" {
		t.Fatalf("a refused pull changed the working tree: %q", data)
	}
	hasAll(t, "b after a refused pull", receiptHashes(t, b), bReceipts)
	checkVaults(t, a, b)
}

func TestSyncRejectedPushAndUnreachableRemote(t *testing.T) {
	inParallel(t)
	root, remote, a := syncWorld(t)
	publishFiles(t, root, a, "notes", map[string]string{"x.txt": "second\n"})
	hook := filepath.Join(remote, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'policy: pushes are closed today' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	localRefs, remoteRefs := refsOf(t, a), refsOf(t, remote)
	_, errs, code := prose(t, "--vault", a, "push")
	if code != 1 || !strings.Contains(errs, "push rejected by remote origin") || !strings.Contains(errs, "nothing changed in this vault") {
		t.Fatalf("rejected push: exit %d\n%s", code, errs)
	}
	if refsOf(t, a) != localRefs || refsOf(t, remote) != remoteRefs {
		t.Fatal("a rejected push moved a ref")
	}
	os.Remove(hook)

	// An unreachable remote: a port nothing listens on, and a missing path.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("git://%s/vault.git", l.Addr())
	l.Close()
	mustProse(t, "--vault", a, "remote", "add", "dead", dead)
	mustProse(t, "--vault", a, "remote", "add", "gone", filepath.Join(root, "no-such.git"))
	for _, r := range []string{"dead", "gone"} {
		for _, cmd := range []string{"push", "pull"} {
			_, errs, code := prose(t, "--vault", a, cmd, r)
			if code != 1 || !strings.Contains(errs, "cannot reach remote "+r) || !strings.Contains(errs, "nothing changed in this vault") || strings.Contains(errs, "goroutine") {
				t.Fatalf("%s %s: exit %d\n%s", cmd, r, code, errs)
			}
			if refsOf(t, a) != localRefs {
				t.Fatalf("%s to an unreachable remote moved a ref", cmd)
			}
		}
	}
	dst := filepath.Join(root, "c")
	if _, errs, code := prose(t, "clone", dead, dst); code != 1 || !strings.Contains(errs, "cannot clone") {
		t.Fatalf("clone of an unreachable remote: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatalf("a failed clone left %s", dst)
	}
	// A clone into a directory that holds files is refused, leaving them.
	full := filepath.Join(root, "full")
	writeFiles(t, full, map[string]string{"keep.txt": "mine\n"})
	if _, errs, code := prose(t, "clone", remote, full); code != 1 || !strings.Contains(errs, "not empty") {
		t.Fatalf("clone into a non-empty directory: exit %d\n%s", code, errs)
	}
	if data, err := os.ReadFile(filepath.Join(full, "keep.txt")); err != nil || string(data) != "mine\n" {
		t.Fatalf("a refused clone touched the directory's files: %q %v", data, err)
	}
	// A clone of a git repository that is no vault removes what it made.
	plain := filepath.Join(root, "plain.git")
	syncGit(t, root, "init", "--quiet", "--bare", plain)
	work := filepath.Join(root, "plainwork")
	syncGit(t, root, "init", "--quiet", "-b", "main", work)
	writeFiles(t, filepath.Join(work, "d"), map[string]string{"f.txt": "x\n"})
	syncGit(t, work, "add", ".")
	syncGit(t, work, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "x")
	syncGit(t, work, "push", "--quiet", plain, "main")
	if _, errs, code := prose(t, "clone", plain, filepath.Join(root, "np")); code != 1 || !strings.Contains(errs, "not a prose vault") {
		t.Fatalf("clone of a plain repository: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(root, "np")); !os.IsNotExist(err) {
		t.Fatal("a refused clone left its directory")
	}
	if _, errs, code := prose(t, "clone", remote); code != 2 || !strings.Contains(errs, "clone needs URL and DIR") {
		t.Fatalf("clone with one argument: exit %d\n%s", code, errs)
	}
	if _, errs, code := prose(t, "--vault", a, "push", "nosuch"); code != 1 || !strings.Contains(errs, "prose remote add nosuch URL") {
		t.Fatalf("push to an unknown remote: exit %d\n%s", code, errs)
	}
	checkVaults(t, a)
}

func TestDoctorNamesARemoteWithoutProseRefspecs(t *testing.T) {
	inParallel(t)
	root, remote, a := syncWorld(t)
	// A clone by plain git, its remote added by git: no prose refspecs.
	c := filepath.Join(root, "c")
	syncGit(t, root, "clone", "--quiet", "-b", "main", remote, c)
	syncGit(t, c, "fetch", "origin", "refs/prose/ledger:refs/prose/ledger")
	out, _, code := prose(t, "--vault", c, "doctor")
	if code != 1 || !strings.Contains(out, "remote     origin") || !strings.Contains(out, "lacks 3 refspecs") {
		t.Fatalf("doctor on a plain clone: exit %d\n%s", code, out)
	}
	mustProse(t, "--vault", c, "pull")
	if out := mustProse(t, "--vault", c, "doctor"); !strings.Contains(out, "refspecs carry refs/prose/*") {
		t.Fatalf("doctor after prose pull:\n%s", out)
	}
	if out := mustProse(t, "--vault", a, "remote", "list"); !strings.Contains(out, "origin\t"+remote+"\n") {
		t.Fatalf("remote list: %q", out)
	}
	checkVaults(t, a, c)
}

// waitListening waits until addr accepts connections (the server started).
func waitListening(t *testing.T, addr string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s", addr)
}

func TestSyncOverGitDaemonAndSmartHTTP(t *testing.T) {
	inParallel(t)
	root, remote, a := syncWorld(t)
	syncGit(t, remote, "config", "http.receivepack", "true")
	syncGit(t, remote, "config", "daemon.receivepack", "true")

	// git daemon on loopback.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	daemon := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), "--base-path="+root, root)
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill(); daemon.Wait() })
	waitListening(t, fmt.Sprintf("127.0.0.1:%d", port))

	// git http-backend behind net/http/cgi.
	execPath := syncGit(t, root, "--exec-path")
	srv := httptest.NewServer(&cgi.Handler{
		Path: filepath.Join(execPath, "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=tester"},
	})
	t.Cleanup(srv.Close)

	urls := map[string]string{
		"daemon": fmt.Sprintf("git://127.0.0.1:%d/remote.git", port),
		"http":   srv.URL + "/remote.git",
	}
	for _, name := range []string{"daemon", "http"} {
		url := urls[name]
		t.Run(name, func(t *testing.T) {
			b := filepath.Join(root, "b-"+name)
			mustProse(t, "clone", url, b)
			hasAll(t, "clone over "+name, receiptHashes(t, b), receiptHashes(t, a))
			publishFiles(t, root, b, "from-"+name, map[string]string{"f.txt": name + "\n"})
			mustProse(t, "--vault", b, "push")
			if got, want := syncGit(t, remote, "rev-parse", "refs/prose/ledger"), syncGit(t, b, "rev-parse", "refs/prose/ledger"); got != want {
				t.Fatalf("push over %s did not carry the ledger", name)
			}
			mustProse(t, "--vault", a, "pull")
			hasAll(t, "a after pull over "+name, receiptHashes(t, a), receiptHashes(t, b))
			checkVaults(t, a, b)
		})
	}
}

// cloneWorld is syncWorld with a second vault b cloned from the remote and
// a git identity for the plain git commands the tests run.
func cloneWorld(t *testing.T) (root, remote, a, b string) {
	root, remote, a = syncWorld(t)
	gitIdentity(t)
	b = filepath.Join(root, "b")
	mustProse(t, "clone", remote, b)
	return root, remote, a, b
}

// gitIdentity sets the author and committer plain git commits take.
func gitIdentity(t *testing.T) {
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
}

func TestPullContinueTakesInAMergeGitMade(t *testing.T) {
	root, _, a, b := cloneWorld(t)
	publishFiles(t, root, a, "notes", map[string]string{"x.txt": "from a\n"})
	publishFiles(t, root, b, "other", map[string]string{"o.txt": "from b\n"})
	mustProse(t, "--vault", a, "push")
	want := append(receiptHashes(t, a), receiptHashes(t, b)...)

	// A plain git pull merges the branch (the refspecs fetch the ledger
	// beside it), but git does not merge the ledger.
	syncGit(t, b, "pull", "--quiet", "--no-rebase", "--no-edit", "origin", "main")
	merge := syncGit(t, b, "rev-parse", "HEAD")
	_, errs, code := prose(t, "--vault", b, "pull")
	if code != 1 || !strings.Contains(errs, "prose pull --continue") || !strings.Contains(errs, "a merge git made") {
		t.Fatalf("pull after a git merge: exit %d\n%s", code, errs)
	}
	out := mustProse(t, "--vault", b, "pull", "--continue")
	if !strings.Contains(out, "from origin: node notes") || !strings.Contains(out, "from here: node other") {
		t.Fatalf("pull --continue:\n%s", out)
	}
	if got := syncGit(t, b, "rev-parse", "HEAD"); got != merge {
		t.Fatalf("pull --continue moved the branch git made: %s, was %s", got, merge)
	}
	hasAll(t, "b after pull --continue", receiptHashes(t, b), want)
	checkVaults(t, a, b)
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	hasAll(t, "a after pulling the merge", receiptHashes(t, a), want)
	checkVaults(t, a, b)
}

// lastOf is node's last receipt in the vault at dir, as JSON.
func lastOf(t *testing.T, dir, node string) map[string]any {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", dir, "receipts", "show", node)), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// mergeOf is the semantic_diff.merge of a receipt, failing unless it has one.
func mergeOf(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	sd, _ := r["semantic_diff"].(map[string]any)
	m, ok := sd["merge"].(map[string]any)
	if !ok {
		t.Fatalf("receipt %v is no merge receipt", r["content_hash"])
	}
	return m
}

// TestSyncResolveWorldModelNodeBothWays: a node advanced on both sides is
// refused, then settled by prose resolve --theirs and, in a second round,
// --ours; each writes a merge receipt (prev ours, theirs in wake.refs)
// whose diff names the head not taken, and every check passes on every
// side with no receipt lost.
func TestSyncResolveWorldModelNodeBothWays(t *testing.T) {
	inParallel(t)
	root, remote, a := syncWorld(t)
	b := filepath.Join(root, "b")
	mustProse(t, "clone", remote, b)
	for round, side := range []string{"theirs", "ours"} {
		publishFiles(t, root, a, "notes", map[string]string{"x.txt": fmt.Sprintf("a %d\n", round)})
		publishFiles(t, root, a, "other", map[string]string{"o.txt": fmt.Sprintf("a %d\n", round)})
		publishFiles(t, root, b, "notes", map[string]string{"x.txt": fmt.Sprintf("b %d\n", round)})
		mustProse(t, "--vault", a, "push")
		ours, theirs := lastOf(t, b, "notes")["content_hash"].(string), lastOf(t, a, "notes")["content_hash"].(string)
		all := append(receiptHashes(t, a), receiptHashes(t, b)...)
		bRefs := refsOf(t, b)
		if _, errs, code := prose(t, "--vault", b, "pull"); code != 1 || !strings.Contains(errs, "prose resolve notes --theirs") {
			t.Fatalf("round %d: same-node pull: exit %d\n%s", round, code, errs)
		}
		checkVaults(t, a, b)
		// A wrong resolve changes nothing.
		if _, errs, code := prose(t, "--vault", b, "resolve", "other", "--ours"); code != 1 || !strings.Contains(errs, "nothing to resolve for it") {
			t.Fatalf("resolve of a node advanced on one side: exit %d\n%s", code, errs)
		}
		if _, errs, code := prose(t, "--vault", b, "resolve", "notes"); code != 2 || !strings.Contains(errs, "--ours") {
			t.Fatalf("resolve without a side: exit %d\n%s", code, errs)
		}
		if got := refsOf(t, b); got != syncGit(t, b, "for-each-ref", "--format=%(refname) %(objectname)") || !strings.Contains(got, strings.Split(bRefs, "\n")[0]) {
			t.Fatalf("a refused resolve moved refs")
		}
		out := mustProse(t, "--vault", b, "resolve", "notes", "--"+side)
		if !strings.Contains(out, "resolved node notes") || !strings.Contains(out, "joined: node notes (taken "+side+")") || !strings.Contains(out, "from origin: node notes, node other") {
			t.Fatalf("round %d resolve:\n%s", round, out)
		}
		want := fmt.Sprintf("b %d\n", round)
		notTaken := theirs
		if side == "theirs" {
			want, notTaken = fmt.Sprintf("a %d\n", round), ours
		}
		if data, _ := os.ReadFile(filepath.Join(b, "published", "notes", "x.txt")); string(data) != want {
			t.Fatalf("round %d: notes after resolve --%s: %q, want %q", round, side, data, want)
		}
		if data, _ := os.ReadFile(filepath.Join(b, "published", "other", "o.txt")); string(data) != fmt.Sprintf("a %d\n", round) {
			t.Fatalf("round %d: the node advanced on one side was not merged: %q", round, data)
		}
		r := lastOf(t, b, "notes")
		m := mergeOf(t, r)
		if r["prev"] != ours || m["ours"] != ours || m["theirs"] != theirs || m["taken"] != side || m["not_taken"] != notTaken {
			t.Fatalf("round %d: merge receipt prev %v, merge %v; want prev/ours %s, theirs %s, not_taken %s", round, r["prev"], m, ours, theirs, notTaken)
		}
		if refs := r["wake"].(map[string]any)["refs"].([]any); len(refs) != 1 || refs[0] != theirs {
			t.Fatalf("round %d: merge receipt wake.refs %v, want [%s]", round, refs, theirs)
		}
		hasAll(t, "b after resolve", receiptHashes(t, b), all)
		checkVaults(t, a, b)
		mustProse(t, "--vault", b, "push")
		mustProse(t, "--vault", a, "pull")
		hasAll(t, "a after pulling the resolve", receiptHashes(t, a), receiptHashes(t, b))
		if data, _ := os.ReadFile(filepath.Join(a, "published", "notes", "x.txt")); string(data) != want {
			t.Fatalf("round %d: a after pulling the resolve: %q", round, data)
		}
		checkVaults(t, a, b)
	}
}

// TestSyncSameFilesOnBothSidesJoinWithAMergeReceipt: a node both sides
// published with the same files merges without a resolve, joined by a
// merge receipt taken "both".
func TestSyncSameFilesOnBothSidesJoinWithAMergeReceipt(t *testing.T) {
	inParallel(t)
	root, remote, a := syncWorld(t)
	b := filepath.Join(root, "b")
	mustProse(t, "clone", remote, b)
	publishFiles(t, root, a, "other", map[string]string{"o.txt": "a\n"})
	publishFiles(t, root, a, "notes", map[string]string{"x.txt": "same\n"})
	publishFiles(t, root, b, "notes", map[string]string{"x.txt": "same\n", "y.txt": "b\n"})
	publishFiles(t, root, b, "notes", map[string]string{"x.txt": "same\n"})
	mustProse(t, "--vault", a, "push")
	ours, theirs := lastOf(t, b, "notes")["content_hash"].(string), lastOf(t, a, "notes")["content_hash"].(string)
	if ours == theirs {
		t.Fatal("the two sides wrote the same receipt; the test needs two heads")
	}
	all := append(receiptHashes(t, a), receiptHashes(t, b)...)
	out := mustProse(t, "--vault", b, "pull")
	if !strings.Contains(out, "joined: node notes (taken both)") {
		t.Fatalf("pull of the same files:\n%s", out)
	}
	m := mergeOf(t, lastOf(t, b, "notes"))
	if m["ours"] != ours || m["theirs"] != theirs || m["taken"] != "both" || m["not_taken"] != nil {
		t.Fatalf("merge %v", m)
	}
	hasAll(t, "b after the join", receiptHashes(t, b), all)
	checkVaults(t, a, b)
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	checkVaults(t, a, b)
}

// TestSyncResolveTwoNodesOneAtATime: with two nodes advanced on both
// sides, the first resolve is kept and lands nothing, naming the node
// still to settle; the second lands the merge with both choices.
func TestSyncResolveTwoNodesOneAtATime(t *testing.T) {
	inParallel(t)
	root, remote, a := syncWorld(t)
	b := filepath.Join(root, "b")
	mustProse(t, "clone", remote, b)
	for _, v := range []string{a, b} {
		publishFiles(t, root, v, "notes", map[string]string{"x.txt": filepath.Base(v) + "\n"})
		publishFiles(t, root, v, "deploys", map[string]string{"d.txt": filepath.Base(v) + "\n"})
	}
	mustProse(t, "--vault", a, "push")
	all := append(receiptHashes(t, a), receiptHashes(t, b)...)
	if _, errs, code := prose(t, "--vault", b, "pull"); code != 1 || !strings.Contains(errs, "node deploys advanced on both sides") || !strings.Contains(errs, "node notes advanced on both sides") {
		t.Fatalf("pull: exit %d\n%s", code, errs)
	}
	before := refsOf(t, b)
	_, errs, code := prose(t, "--vault", b, "resolve", "notes", "--theirs")
	if code != 1 || !strings.Contains(errs, "recorded; the merge still waits") || !strings.Contains(errs, "node deploys advanced on both sides") || strings.Contains(errs, "node notes advanced") {
		t.Fatalf("first resolve: exit %d\n%s", code, errs)
	}
	if refsOf(t, b) != before {
		t.Fatal("a resolve that left a conflict moved a ref")
	}
	checkVaults(t, a, b)
	out := mustProse(t, "--vault", b, "resolve", "deploys", "--ours")
	if !strings.Contains(out, "joined: node deploys (taken ours)") || !strings.Contains(out, "joined: node notes (taken theirs)") {
		t.Fatalf("second resolve:\n%s", out)
	}
	for p, want := range map[string]string{"published/notes/x.txt": "a\n", "published/deploys/d.txt": "b\n"} {
		if data, _ := os.ReadFile(filepath.Join(b, p)); string(data) != want {
			t.Fatalf("%s after both resolves: %q, want %q", p, data, want)
		}
	}
	if _, err := os.Stat(filepath.Join(b, ".prose", "resolve.json")); !os.IsNotExist(err) {
		t.Fatalf("the resolve record outlived the merge: %v", err)
	}
	hasAll(t, "b after both resolves", receiptHashes(t, b), all)
	checkVaults(t, a, b)
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	checkVaults(t, a, b)
}

// TestPullContinueJoinsANodeCreatedOnBothSides: a node both sides created
// (no shared chain), merged by git file by file, is joined by prose pull
// --continue with a merge receipt (taken merged) and every check passes.
func TestPullContinueJoinsANodeCreatedOnBothSides(t *testing.T) {
	root, _, a, b := cloneWorld(t)
	publishFiles(t, root, a, "fresh", map[string]string{"a.txt": "from a\n"})
	publishFiles(t, root, b, "fresh", map[string]string{"b.txt": "from b\n"})
	mustProse(t, "--vault", a, "push")
	syncGit(t, b, "pull", "--quiet", "--no-rebase", "--no-edit", "origin", "main")
	out := mustProse(t, "--vault", b, "pull", "--continue")
	if !strings.Contains(out, "joined: node fresh (taken merged)") {
		t.Fatalf("pull --continue:\n%s", out)
	}
	for f, want := range map[string]string{"a.txt": "from a\n", "b.txt": "from b\n"} {
		if data, _ := os.ReadFile(filepath.Join(b, "published", "fresh", f)); string(data) != want {
			t.Fatalf("fresh/%s after pull --continue: %q", f, data)
		}
	}
	mergeOf(t, lastOf(t, b, "fresh"))
	checkVaults(t, a, b)
}

// TestPullContinueRefusalSaysHowToGoOn: a merge git made that holds
// files of a node other than the side that advanced it published (a hand
// edit amended into the merge) is refused by prose pull --continue with
// nothing changed, naming the commit to go back to; following the hint
// (git reset --hard to it, then prose pull) lands the merge.
func TestPullContinueRefusalSaysHowToGoOn(t *testing.T) {
	root, _, a, b := cloneWorld(t)
	publishFiles(t, root, a, "notes", map[string]string{"x.txt": "from a\n"})
	publishFiles(t, root, b, "other", map[string]string{"o.txt": "from b\n"})
	mustProse(t, "--vault", a, "push")
	before := syncGit(t, b, "rev-parse", "HEAD")
	syncGit(t, b, "pull", "--quiet", "--no-rebase", "--no-edit", "origin", "main")
	if err := os.WriteFile(filepath.Join(b, "published", "notes", "x.txt"), []byte("edited in the merge\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	syncGit(t, b, "commit", "--quiet", "--amend", "--no-edit", "-a")
	// The vault's own refs; --continue may fetch the remote's.
	own := func() string {
		return syncGit(t, b, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/prose")
	}
	refs := own()
	_, errs, code := prose(t, "--vault", b, "pull", "--continue")
	if code != 1 || !strings.Contains(errs, "node notes") || !strings.Contains(errs, "nothing changed") {
		t.Fatalf("pull --continue of an edited merge: exit %d\n%s", code, errs)
	}
	if got := own(); got != refs {
		t.Fatalf("a refused pull --continue moved refs:\n%s\nwas\n%s", got, refs)
	}
	hint := "git reset --hard " + before[:12]
	if !strings.Contains(errs, hint) || !strings.Contains(errs, "prose pull origin") {
		t.Fatalf("the refusal does not say how to go on (want %q and prose pull origin):\n%s", hint, errs)
	}
	syncGit(t, b, "reset", "--quiet", "--hard", before)
	mustProse(t, "--vault", b, "pull", "origin")
	if data, _ := os.ReadFile(filepath.Join(b, "published", "notes", "x.txt")); string(data) != "from a\n" {
		t.Fatalf("notes after following the hint: %q", data)
	}
	checkVaults(t, a, b)
}
