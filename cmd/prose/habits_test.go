package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestUsageHabits: the command line behaves as users of other tools expect,
// and every usage error is exit 2 in our wording.
func TestUsageHabits(t *testing.T) {
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	cases := []struct {
		args []string
		code int
		want string // in stdout+stderr
	}{
		{[]string{"receipts", "frob"}, 2, `unknown command "frob" for prose receipts`},
		{[]string{"cas", "frob"}, 2, `unknown command "frob" for prose cas`},
		{[]string{"help", "nosuch"}, 2, `no command "nosuch"`},
		{[]string{"help", "receipts", "nosuch"}, 2, `no command "receipts nosuch"`},
		{[]string{"help", "receipts", "verify"}, 0, "prose receipts verify - verify every receipt chain"},
		{[]string{"help"}, 0, "COMMANDS:"},
		{[]string{"--version"}, 0, "prose " + version},
		{[]string{"--json", "--version"}, 0, `"version": "` + version},
		{[]string{"receipts"}, 0, "verify"},
		// Extra arguments are refused alike by every command that takes none.
		{[]string{"fsck", "extra", "--vault", vdir}, 2, `fsck takes no arguments, got "extra"`},
		{[]string{"log", "extra", "--vault", vdir}, 2, `log takes no arguments, got "extra"`},
		{[]string{"version", "extra"}, 2, `version takes no arguments`},
		{[]string{"receipts", "list", "x", "--vault", vdir}, 2, `receipts list takes no arguments`},
		{[]string{"receipts", "verify", "x", "--vault", vdir}, 2, `receipts verify takes no arguments`},
		{[]string{"cas", "verify", "x", "--vault", vdir}, 2, `cas verify takes no arguments`},
		{[]string{"cas", "gc", "x", "--vault", vdir}, 2, `cas gc takes no arguments`},
	}
	for _, c := range cases {
		out, errs, code := prose(t, c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("prose %s: exit %d\n%s%s\nwant exit %d with %q", strings.Join(c.args, " "), code, out, errs, c.code, c.want)
		}
		if c.code == 2 && (!strings.HasPrefix(errs, "prose: ") || strings.Count(errs, "\n") != 1) {
			t.Errorf("prose %s: a usage error is one line of ours, got %q", strings.Join(c.args, " "), errs)
		}
	}
}

// TestNoColorAnyValue: NO_COLOR set to any non-empty value means no color,
// it is never parsed as a boolean (no-color.org).
func TestNoColorAnyValue(t *testing.T) {
	for _, v := range []string{"yes", "1", "true", "anything"} {
		t.Setenv("NO_COLOR", v)
		if _, errs, code := prose(t, "--help"); code != 0 {
			t.Errorf("NO_COLOR=%s prose --help: exit %d %q", v, code, errs)
		}
	}
}

// habitVault publishes node n three times (two rendered, one skipped) and
// returns the vault directory.
func habitVault(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"a.json": `{"n": 1}`})
	mustProse(t, "publish", "n", src, "--vault", vdir)
	mustProse(t, "publish", "n", src, "--vault", vdir)
	writeFiles(t, src, map[string]string{"a.json": `{"n": 2}`})
	mustProse(t, "publish", "n", src, "--vault", vdir)
	return vdir
}

func TestLogLimitShortForm(t *testing.T) {
	vdir := habitVault(t)
	for _, args := range [][]string{{"-n1"}, {"-n", "1"}, {"--limit=1"}, {"-n=1"}} {
		out, errs, code := prose(t, append([]string{"log", "--vault", vdir}, args...)...)
		if code != 0 || strings.Count(out, "\n") != 1 {
			t.Errorf("log %s: exit %d, %q %q", strings.Join(args, " "), code, out, errs)
		}
	}
	if out := mustProse(t, "log", "-n2", "--vault", vdir); strings.Count(out, "\n") != 2 {
		t.Errorf("log -n2: %q", out)
	}
}

func TestReceiptsShowAcceptsWhatListPrints(t *testing.T) {
	vdir := habitVault(t)
	var logged []struct {
		Receipt map[string]any `json:"receipt"`
		Commit  string         `json:"commit"`
	}
	if err := json.Unmarshal([]byte(mustProse(t, "log", "--json", "--vault", vdir)), &logged); err != nil || len(logged) != 3 {
		t.Fatalf("log --json: %v %d", err, len(logged))
	}
	// The oldest receipt: rendered, with a commit; not the node's last.
	first := logged[2]
	hash := first.Receipt["content_hash"].(string)
	hexHash := strings.TrimPrefix(hash, "blake3:")
	if first.Commit == "" || hash == hexHash {
		t.Fatalf("oldest receipt: %+v", first)
	}
	// receipts list prints the blake3: form; show takes it back.
	if list := mustProse(t, "receipts", "list", "--vault", vdir); !strings.Contains(list, hash) {
		t.Fatalf("receipts list lacks %s:\n%s", hash, list)
	}
	for _, want := range []string{hash, hexHash, hexHash[:8], "blake3:" + hexHash[:10], first.Commit, first.Commit[:10], strings.ToUpper(hexHash[:12])} {
		out, errs, code := prose(t, "receipts", "show", want, "--vault", vdir)
		if code != 0 || !strings.Contains(out, hash) {
			t.Errorf("receipts show %s: exit %d %q %q", want, code, out, errs)
		}
	}
	// A node name means its last receipt.
	if out := mustProse(t, "receipts", "show", "n", "--vault", vdir); !strings.Contains(out, logged[0].Receipt["content_hash"].(string)) {
		t.Errorf("receipts show n: %s", out)
	}
	_, errs, code := prose(t, "receipts", "show", hexHash[:4], "--vault", vdir)
	if code != 2 || !strings.Contains(errs, "too short") || !strings.Contains(errs, "at least 6") {
		t.Errorf("a 4-digit prefix: exit %d %q", code, errs)
	}
	_, errs, code = prose(t, "receipts", "show", "blake3:ffffffffffff", "--vault", vdir)
	if hexHash[:12] != "ffffffffffff" && (code != 1 || !strings.Contains(errs, "no receipt matches")) {
		t.Errorf("an unknown hash: exit %d %q", code, errs)
	}
}

func TestCountsSpeakSingularAndPlural(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"a.json": `{"n": 1}`})
	mustProse(t, "publish", "n", src, "--vault", vdir)
	if out := mustProse(t, "receipts", "verify", "--vault", vdir); out != "1 receipt, 1 node, 0 problems\n" {
		t.Errorf("receipts verify: %q", out)
	}
	if out := mustProse(t, "fsck", "--vault", vdir); !strings.Contains(out, ", 1 receipt, 1 node, 0 cas objects\n") {
		t.Errorf("fsck: %q", out)
	}
}

// TestFsckJSON: problems are a list (never null) in a stable order, with a
// count.
func TestFsckJSON(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	type doc struct {
		OK       bool              `json:"ok"`
		Count    *int              `json:"count"`
		Problems []json.RawMessage `json:"problems"`
	}
	out := mustProse(t, "fsck", "--json", "--vault", vdir)
	var d doc
	if err := json.Unmarshal([]byte(out), &d); err != nil || !d.OK || d.Count == nil || *d.Count != 0 || !strings.Contains(out, `"problems": []`) {
		t.Fatalf("fsck --json of a clean vault: %v\n%s", err, out)
	}

	src := filepath.Join(tmp, "src")
	files := map[string]string{}
	for i := range 5 {
		files[fmt.Sprintf("f%d.txt", i)] = "x"
	}
	writeFiles(t, src, files)
	mustProse(t, "publish", "n", src, "--vault", vdir)
	// Hand edits in an order that is not the sorted one.
	for _, i := range []int{3, 0, 4, 1} {
		os.WriteFile(filepath.Join(vdir, "published", "n", fmt.Sprintf("f%d.txt", i)), []byte("edited"), 0o644)
	}
	var first string
	for range 3 {
		out, _, code := prose(t, "fsck", "--json", "--vault", vdir)
		d = doc{}
		if err := json.Unmarshal([]byte(out), &d); err != nil || code != 1 || d.OK || *d.Count != 4 || len(d.Problems) != 4 {
			t.Fatalf("fsck --json with hand edits: exit %d %v\n%s", code, err, out)
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Fatalf("fsck --json changed between runs:\n%s\n%s", first, out)
		}
	}
	var where []string
	for _, p := range d.Problems {
		var x struct{ Kind, Where string }
		json.Unmarshal(p, &x)
		where = append(where, x.Kind+" "+x.Where)
	}
	want := "hand_edit published/n/f0.txt,hand_edit published/n/f1.txt,hand_edit published/n/f3.txt,hand_edit published/n/f4.txt"
	if strings.Join(where, ",") != want {
		t.Errorf("problems in order %v, want %s", where, want)
	}
}

// TestManyFacetPublishSummarizes: a node with 100 facets prints a short
// summary; --verbose prints every token.
func TestManyFacetPublishSummarizes(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("facet%03d/x.json", i)] = fmt.Sprintf(`{"i": %d}`, i)
	}
	writeFiles(t, src, files)
	out := mustProse(t, "publish", "n", src, "--vault", vdir)
	if lines := strings.Count(out, "\n"); lines > 6 || !strings.Contains(out, "and 93 more") || !strings.Contains(out, "and 100 facet tokens (--verbose") {
		t.Errorf("100-facet publish printed %d lines:\n%s", lines, out)
	}
	for i := range 100 {
		files[fmt.Sprintf("facet%03d/x.json", i)] = fmt.Sprintf(`{"i": %d}`, i+1)
	}
	writeFiles(t, src, files)
	out = mustProse(t, "publish", "n", src, "--vault", vdir, "--verbose")
	if lines := strings.Count(out, "\n"); lines != 104 || strings.Contains(out, "more") {
		t.Errorf("publish --verbose printed %d lines, want 104", lines)
	}
}

// TestPlainCloneNamesTheFetch: a plain `git clone` of a vault has no ledger
// ref; log, receipts list and verify say so with the fetch command and
// exit 1, instead of printing an empty history.
func TestPlainCloneNamesTheFetch(t *testing.T) {
	git := needGit(t)
	vdir := habitVault(t)
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command(git, "clone", "-q", vdir, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"log"}, {"receipts", "list"}, {"receipts", "verify"}, {"receipts", "show", "n"}} {
		out, errs, code := prose(t, append(args, "--vault", clone)...)
		if code != 1 || out != "" || !strings.Contains(errs, "git fetch origin refs/prose/ledger:refs/prose/ledger") {
			t.Errorf("prose %s in a plain clone: exit %d, %q %q", strings.Join(args, " "), code, out, errs)
		}
	}
}

// TestCasGetJSONStreams: `cas get --json` of a large object encodes as it
// reads — what it allocates stays a small fraction of the object — and
// the document decodes to the object.
func TestCasGetJSONStreams(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	const size = 24 << 20
	blob := make([]byte, size)
	for i := range blob {
		blob[i] = byte(i*7 + i>>9)
	}
	f := filepath.Join(tmp, "blob")
	os.WriteFile(f, blob, 0o644)
	id := strings.TrimSpace(mustProse(t, "cas", "put", f, "--vault", vdir))
	outFile, err := os.Create(filepath.Join(tmp, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code := run([]string{"prose", "cas", "get", id, "--json", "--vault", vdir}, outFile, &errb)
	runtime.ReadMemStats(&after)
	outFile.Close()
	if code != 0 {
		t.Fatalf("cas get --json: exit %d %s", code, errb.String())
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/4 {
		t.Errorf("cas get --json of %d bytes allocated %d bytes: it does not stream", size, alloc)
	}
	data, _ := os.ReadFile(filepath.Join(tmp, "out.json"))
	var doc struct {
		ID      string `json:"id"`
		Size    int    `json:"size"`
		Content []byte `json:"content_base64"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.ID != id || doc.Size != size || !bytes.Equal(doc.Content, blob) {
		t.Fatalf("the document: %v id %s size %d", err, doc.ID, doc.Size)
	}
}

// TestLogReportsARewrittenBranch: after `git commit --amend` of prose's
// last commit, the receipt stays in the ledger and prose log says its
// commit left the branch (and fsck reports it), exit 0 for log.
func TestLogReportsARewrittenBranch(t *testing.T) {
	git := needGit(t)
	vdir := habitVault(t)
	if out, err := exec.Command(git, "-C", vdir, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--amend", "-m", "reworded by hand").CombinedOutput(); err != nil {
		t.Fatalf("git commit --amend: %v\n%s", err, out)
	}
	out, errs, code := prose(t, "log", "--vault", vdir)
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(errs, "is not on the branch") {
		t.Fatalf("log after an amend: exit %d\n%s\n%s", code, out, errs)
	}
	_, errs, code = prose(t, "log", "--vault", habitVault(t))
	if code != 0 || strings.Contains(errs, "not on the branch") {
		t.Fatalf("log of an untouched vault warns: %d %s", code, errs)
	}
	_, ferrs, fcode := prose(t, "fsck", "--vault", vdir)
	fout, _, _ := prose(t, "fsck", "--vault", vdir)
	if fcode != 1 || !strings.Contains(fout+ferrs, "not on the branch") {
		t.Fatalf("fsck after an amend: exit %d\n%s%s", fcode, fout, ferrs)
	}
}

// TestPositionalNamedLikeAShortFlag: a page whose name starts with the
// letter of a one-letter flag (canary and -c, file-map and -f) is an
// argument, not that flag with its value attached.
func TestPositionalNamedLikeAShortFlag(t *testing.T) {
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	mustProse(t, "--vault", vdir, "wiki", "new", "ops/canary", "--template", "note")
	mustProse(t, "--vault", vdir, "wiki", "new", "ops/fleet", "--template", "note")
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "canary", "body", "--content", "<p>Canary.</p>")
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "-c", "<p>Fleet.</p>", "fleet", "body")
	for page, want := range map[string]string{"canary": "<p>Canary.</p>", "fleet": "<p>Fleet.</p>"} {
		if got := mustProse(t, "--vault", vdir, "wiki", "slot", page, "body"); got != want {
			t.Errorf("slot %s body = %q, want %q", page, got, want)
		}
	}
}
