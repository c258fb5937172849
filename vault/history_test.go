package vault

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// chainVault publishes n receipts over three nodes, one in three rendered.
func chainVault(t testing.TB, n int) *Vault {
	t.Helper()
	v, err := Init(filepath.Join(t.TempDir(), "vault"), InitOptions{Options: Options{NoFsync: true}})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "render")
	for i := range n {
		writeTree(t, src, map[string]string{"v.txt": fmt.Sprint(i / 3)})
		publish(t, v, fmt.Sprintf("node-%d", i%3), src, PublishOptions{})
	}
	return v
}

func hashes(t testing.TB, v *Vault) []string {
	t.Helper()
	var out []string
	if err := v.Receipts(func(r Record) error {
		out = append(out, r.Receipt.ContentHash+" "+r.Ledger.String()+" "+r.Commit.String()+" "+r.When.UTC().String())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVerifyReadsOneSnapshot: a publish that lands while verify runs is not
// reported as a damaged ledger; verify checks the ledger it read.
func TestVerifyReadsOneSnapshot(t *testing.T) {
	v := chainVault(t, 6)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"x.txt": "new"})
	landed := 0
	afterHistoryRead = func() {
		afterHistoryRead = nil
		publish(t, v, "node-0", src, PublishOptions{}) // the node's last receipt moves on
		publish(t, v, "late-node", src, PublishOptions{})
		landed = 2
	}
	defer func() { afterHistoryRead = nil }()
	rep, err := v.VerifyReceipts()
	if err != nil {
		t.Fatal(err)
	}
	if landed != 2 || len(rep.Problems) != 0 || rep.Receipts != 6 || rep.Nodes != 3 {
		t.Fatalf("verify beside a publish: %d landed, %+v", landed, rep)
	}
	if rep, err = v.VerifyReceipts(); err != nil || len(rep.Problems) != 0 || rep.Receipts != 8 {
		t.Fatalf("verify after: %v %+v", err, rep)
	}
}

// TestMissingLedgerIsNamed: a vault without its ledger ref (a plain git
// clone) makes every history reader fail with the fetch command.
func TestMissingLedgerIsNamed(t *testing.T) {
	v := chainVault(t, 2)
	if err := os.Remove(filepath.Join(v.GitDir(), filepath.FromSlash(LedgerRef))); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func() error{
		"Receipts":       func() error { return v.Receipts(func(Record) error { return nil }) },
		"AllReceipts":    func() error { _, err := v.AllReceipts(); return err },
		"VerifyReceipts": func() error { _, err := v.VerifyReceipts(); return err },
	} {
		err := read()
		if !errors.Is(err, errNoLedger) || !strings.Contains(fmt.Sprint(err), "git fetch origin "+LedgerRef+":"+LedgerRef) {
			t.Errorf("%s without a ledger: %v", name, err)
		}
	}
}

// TestHistoryCacheNeverChangesWhatIsRead: the history read through a cold,
// warm, damaged or foreign cache is the history read from git.
func TestHistoryCacheNeverChangesWhatIsRead(t *testing.T) {
	defer func(n int) { cacheAfter = n }(cacheAfter)
	cacheAfter = 0
	v := chainVault(t, 12)
	cache := v.StatePath(filepath.FromSlash(historyCacheFile))
	os.Remove(cache)
	cold := hashes(t, v)
	if len(cold) != 12 {
		t.Fatalf("%d receipts", len(cold))
	}
	data, err := os.ReadFile(cache)
	if err != nil || !bytes.HasPrefix(data, historyMagic) {
		t.Fatalf("no cache written: %v", err)
	}
	if warm := hashes(t, v); strings.Join(warm, "\n") != strings.Join(cold, "\n") {
		t.Fatal("a warm cache reads another history")
	}
	// Damage: flip a byte in every record body; cut the tail mid-record.
	bad := append([]byte{}, data...)
	for i := len(historyMagic) + 200; i < len(bad); i += 997 {
		bad[i] ^= 0x20
	}
	bad = bad[:len(bad)-7]
	os.WriteFile(cache, bad, 0o644)
	if got := hashes(t, v); strings.Join(got, "\n") != strings.Join(cold, "\n") {
		t.Fatal("a damaged cache changed the history read")
	}
	// A forged record filed under a real commit id is ignored.
	tip, _ := v.requireLedger()
	forged := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nforged\n")
	var rec []byte
	rec = append(rec, tip[:]...)
	rec = append(rec, 0, 0, 0, byte(len(forged)))
	rec = append(rec, forged...)
	os.WriteFile(cache, append(append([]byte{}, historyMagic...), rec...), 0o644)
	if got := hashes(t, v); strings.Join(got, "\n") != strings.Join(cold, "\n") {
		t.Fatal("a forged cache record changed the history read")
	}
	rep, err := v.VerifyReceipts()
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify: %v %+v", err, rep)
	}
}

// TestWarmHistoryReadsNoGitObjects: once cached, reading history opens no
// git object, so its cost grows with the receipts read and nothing more.
func TestWarmHistoryReadsNoGitObjects(t *testing.T) {
	defer func(n int) { cacheAfter = n }(cacheAfter)
	cacheAfter = 0
	v := chainVault(t, 9)
	hashes(t, v) // warms the cache
	c := v.loadHistoryCache()
	misses := 0
	h, _ := v.requireLedger()
	for !h.IsZero() {
		before := len(c.pending)
		body, err := v.rawCommit(c, h)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.pending) != before {
			misses++
		}
		lc, err := parseCommitBody(h, body)
		if err != nil {
			t.Fatal(err)
		}
		h = plumbing.ZeroHash
		if len(lc.parents) > 0 {
			h = lc.parents[0]
		}
	}
	if misses != 0 {
		t.Fatalf("a warm walk read %d commits from git", misses)
	}
}

// BenchmarkHistory reads a 1,000-receipt ledger with a warm cache: the
// whole history (what `prose log` walks) and a full verification.
func BenchmarkHistory(b *testing.B) {
	v := chainVault(b, 1000)
	hashes(b, v)
	b.Run("receipts", func(b *testing.B) {
		for range b.N {
			if err := v.Receipts(func(Record) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "µs/receipt")
	})
	b.Run("verify", func(b *testing.B) {
		for range b.N {
			if _, err := v.VerifyReceipts(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "µs/receipt")
	})
}

// TestPublishReportsItsPhases: PublishOptions.Progress hears every phase the
// result lists, in order.
func TestPublishReportsItsPhases(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a/x.json": `{"n": 1}`})
	var heard []string
	res := publish(t, v, "n", src, PublishOptions{Progress: func(p string) { heard = append(heard, p) }})
	var want []string
	for _, p := range res.Phases {
		want = append(want, p.Name)
	}
	if len(want) < 3 || strings.Join(heard, ",") != strings.Join(want, ",") {
		t.Fatalf("heard %v, phases %v", heard, want)
	}
}

// TestShortWalkLeavesTheCacheAlone: reading the newest receipts (log -n 1)
// neither loads nor writes the cache, so its cost does not grow with the
// history.
func TestShortWalkLeavesTheCacheAlone(t *testing.T) {
	defer func(n int) { cacheAfter = n }(cacheAfter)
	cacheAfter = 5
	v := chainVault(t, 12)
	cache := v.StatePath(filepath.FromSlash(historyCacheFile))
	os.Remove(cache)
	stop := errors.New("stop")
	n := 0
	if err := v.Receipts(func(Record) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	}); err != stop {
		t.Fatal(err)
	}
	if _, err := os.Stat(cache); err == nil {
		t.Fatal("a short walk wrote the cache")
	}
	// A whole history that fits in the first chunk never loads it either.
	if got := hashes(t, v); len(got) != 12 {
		t.Fatalf("%d receipts", len(got))
	}
	if _, err := os.Stat(cache); err == nil {
		t.Fatal("a walk shorter than the first chunk wrote the cache")
	}
}

// TestVerifyFindsAnAlteredReceipt: a ledger commit rewritten by hand so its
// receipt no longer hashes to its content_hash is reported by verify, with
// the receipt named, whether the history cache holds the old commits or not.
func TestVerifyFindsAnAlteredReceipt(t *testing.T) {
	requireGit(t)
	defer func(n int) { cacheAfter = n }(cacheAfter)
	cacheAfter = 0
	v := chainVault(t, 6)
	if rep, err := v.VerifyReceipts(); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify before: %v %+v", err, rep)
	}
	root := v.Root()
	tip := strings.TrimSpace(git(t, root, "rev-parse", "refs/prose/ledger"))
	msg := git(t, root, "log", "-1", "--format=%B", tip)
	altered := strings.Replace(msg, `"contract_fingerprint": "none"`, `"contract_fingerprint": "nonE"`, 1)
	if altered == msg {
		t.Fatalf("no contract_fingerprint to alter in:\n%s", msg)
	}
	tree := strings.TrimSpace(git(t, root, "rev-parse", tip+"^{tree}"))
	args := []string{"commit-tree", tree, "-m", strings.TrimSuffix(altered, "\n")}
	for _, p := range strings.Fields(git(t, root, "log", "-1", "--format=%P", tip)) {
		args = append(args, "-p", p)
	}
	forged := strings.TrimSpace(git(t, root, args...))
	git(t, root, "update-ref", "refs/prose/ledger", forged, tip)
	for _, round := range []string{"cold", "cached"} {
		rep, err := v.VerifyReceipts()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range rep.Problems {
			found = found || strings.Contains(p.Where, "receipt 5 ") && strings.Contains(p.Reason, "content_hash mismatch")
		}
		if !found {
			t.Fatalf("%s: verify of an altered receipt: %+v", round, rep.Problems)
		}
	}
}

// TestDamagedCacheRecordDeepInTheWalk: a forged cache record far down the
// ledger, whose parent skips thirty receipts, is found when its batch is
// parsed — after the walk has read on from it — and what the walk read on
// from it is dropped: the history read is git's, receipt for receipt.
func TestDamagedCacheRecordDeepInTheWalk(t *testing.T) {
	defer func(n int) { cacheAfter = n }(cacheAfter)
	cacheAfter = 0
	v := chainVault(t, 90)
	cold := hashes(t, v)
	if len(cold) != 90 {
		t.Fatalf("%d receipts", len(cold))
	}
	ledger := func(i int) plumbing.Hash { return plumbing.NewHash(strings.Fields(cold[i])[1]) }
	for _, at := range []int{20, 40, 70} {
		parent := "" // the last one claims to be the ledger's root
		if at+30 < len(cold) {
			parent = "parent " + ledger(at+30).String() + "\n"
		}
		forged := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n" + parent + "committer x <x> 1 +0000\n\nforged\n")
		id := ledger(at)
		rec := append([]byte{}, id[:]...)
		rec = binary.BigEndian.AppendUint32(rec, uint32(len(forged)))
		rec = append(rec, forged...)
		cache := v.StatePath(filepath.FromSlash(historyCacheFile))
		data, err := os.ReadFile(cache)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(cache, append(data, rec...), 0o644) // the later record wins
		if got := hashes(t, v); strings.Join(got, "\n") != strings.Join(cold, "\n") {
			t.Fatalf("forged record at receipt %d: read %d receipts, want git's %d", at, len(got), len(cold))
		}
		rep, err := v.VerifyReceipts()
		if err != nil || len(rep.Problems) != 0 || rep.Receipts != 90 {
			t.Fatalf("verify with a forged record at %d: %v %+v", at, err, rep)
		}
	}
}

// TestVerifyFindsABranchCommitCarryingAnotherReceipt: a ledger commit
// pointing at the branch commit of another receipt is reported at that
// receipt, whether the branch commits are read from git or from the cache.
func TestVerifyFindsABranchCommitCarryingAnotherReceipt(t *testing.T) {
	requireGit(t)
	defer func(n int) { cacheAfter = n }(cacheAfter)
	cacheAfter = 0
	v := chainVault(t, 6)
	root := v.Root()
	tip := strings.TrimSpace(git(t, root, "rev-parse", "refs/prose/ledger"))
	parents := strings.Fields(git(t, root, "log", "-1", "--format=%P", tip))
	var other string
	for _, c := range strings.Fields(git(t, root, "rev-list", "--first-parent", tip+"~1")) {
		if ps := strings.Fields(git(t, root, "log", "-1", "--format=%P", c)); len(ps) == 2 && ps[1] != parents[1] {
			other = ps[1]
			break
		}
	}
	if len(parents) != 2 || other == "" {
		t.Fatalf("tip parents %v, other branch commit %q", parents, other)
	}
	msg := git(t, root, "log", "-1", "--format=%B", tip)
	tree := strings.TrimSpace(git(t, root, "rev-parse", tip+"^{tree}"))
	forged := strings.TrimSpace(git(t, root, "commit-tree", tree, "-m", strings.TrimSuffix(msg, "\n"), "-p", parents[0], "-p", other))
	git(t, root, "update-ref", "refs/prose/ledger", forged, tip)
	os.Remove(v.StatePath(filepath.FromSlash(historyCacheFile)))
	for _, round := range []string{"from git", "from the cache"} {
		rep, err := v.VerifyReceipts()
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) != 1 || !strings.HasPrefix(rep.Problems[0].Where, "receipt 5 ") ||
			rep.Problems[0].Reason != "branch commit "+other+" does not carry this receipt" {
			t.Fatalf("%s: %+v", round, rep.Problems)
		}
	}
}
