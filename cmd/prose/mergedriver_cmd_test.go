package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitMergeWorld is a bare remote, a vault a with one ingested source page
// (s0/base.html), pushed, and its clone b; the prose binary is on PATH, as
// git needs it to run the merge driver, and git has an identity for the
// merge commits it makes.
func gitMergeWorld(t *testing.T) (root, a, b string) {
	needGit(t)
	bin := buildProse(t)
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	gitIdentity(t)
	return twoVaults(t, func(root, a string) { ingestText(t, root, a, "s0", "base.md", "Omega") })
}

// ingestText ingests one Markdown source about title into the vault.
func ingestText(t *testing.T, root, vaultDir, dir, name, title string) {
	t.Helper()
	src := filepath.Join(root, filepath.Base(vaultDir)+"-"+dir)
	writeFiles(t, src, map[string]string{name: "# " + title + "\n\n" + title + " is a letter of the Greek alphabet. It has a name and a place in the order.\n"})
	mustProse(t, "--vault", vaultDir, "ingest", src)
}

// gitPull is a plain git pull of origin main into dir: its output and
// whether it merged without conflict.
func gitPull(t *testing.T, dir string) (string, bool) {
	t.Helper()
	cmd := exec.Command("git", "pull", "--no-rebase", "--no-edit", "origin", "main")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return string(out), err == nil
}

// slotText is a slot's content as prose wiki slot prints it.
func slotText(t *testing.T, dir, page, slot string) string {
	t.Helper()
	return mustProse(t, "--vault", dir, "wiki", "slot", page, slot)
}

// TestPlainGitPullMergesWikiSlotBySlot: two vaults ingest different
// sources and edit different slots of the same page; a plain git pull
// merges through the merge driver, every prose writer refuses until
// prose pull --continue records the merge receipt, and the checks pass.
// The same slot edited on both sides leaves a conflict git shows; settled
// and committed, prose pull --continue takes it in too.
func TestPlainGitPullMergesWikiSlotBySlot(t *testing.T) {
	root, a, b := gitMergeWorld(t)
	const page = "a-s0/base.html"
	if got := syncGit(t, b, "config", "merge.prose.driver"); got != "prose merge-driver %O %A %B %P" {
		t.Fatalf("clone registered driver %q", got)
	}
	if got := syncGit(t, b, "check-attr", "merge", "--", "published/wiki/"+page, "sources/index.json", "review/queue.json"); strings.Count(got, "merge: prose") != 3 {
		t.Fatalf("attributes in the clone:\n%s", got)
	}

	// Different slots of one page, and one more source on each side.
	ingestText(t, root, a, "s1", "alpha.md", "Alpha")
	mustProse(t, "--vault", a, "wiki", "write-slot", page, "abstract", "-c", "<p>Written on side A.</p>")
	mustProse(t, "--vault", a, "push")
	ingestText(t, root, b, "s2", "beta.md", "Beta")
	mustProse(t, "--vault", b, "wiki", "write-slot", page, "key_points", "-c", "<ul><li>Written on side B.</li></ul>")
	want := append(receiptHashes(t, a), receiptHashes(t, b)...)

	out, ok := gitPull(t, b)
	if !ok {
		t.Fatalf("git pull with the merge driver did not merge:\n%s", out)
	}
	merge := syncGit(t, b, "rev-parse", "HEAD")
	writeFiles(t, filepath.Join(root, "b-s3"), map[string]string{"gamma.md": "# Gamma\n\nGamma is a letter.\n"})
	for _, w := range [][]string{
		{"wiki", "write-slot", page, "citation", "-c", "<p>x</p>"},
		{"ingest", filepath.Join(root, "b-s3")},
	} {
		_, errs, code := prose(t, append([]string{"--vault", b}, w...)...)
		if code == 0 || !strings.Contains(errs, "prose pull --continue") || !strings.Contains(errs, "a merge git made") {
			t.Fatalf("prose %s before pull --continue: exit %d\n%s", w[0], code, errs)
		}
	}
	if got := syncGit(t, b, "rev-parse", "HEAD"); got != merge {
		t.Fatalf("a refused write moved the branch")
	}
	out = mustProse(t, "--vault", b, "pull", "--continue")
	if !strings.Contains(out, "joined: node wiki (taken merged)") || !strings.Contains(out, "again after the page merge") {
		t.Fatalf("pull --continue:\n%s", out)
	}
	// On top of git's merge: the merge receipt's commit, then the commit
	// that renders the merged pages' shells again.
	if got := syncGit(t, b, "rev-parse", "HEAD~2"); got != merge {
		t.Fatalf("the merge receipt's commit is not on top of git's merge %s (HEAD~1 %s)", merge, got)
	}
	if m := mergeOf(t, lastOf(t, b, "wiki")); m["taken"] != "merged" {
		t.Fatalf("merge receipt: %v", m)
	}
	if s := slotText(t, b, page, "abstract"); !strings.Contains(s, "Written on side A.") {
		t.Fatalf("abstract after the merge: %q", s)
	}
	if s := slotText(t, b, page, "key_points"); !strings.Contains(s, "Written on side B.") {
		t.Fatalf("key_points after the merge: %q", s)
	}
	for _, p := range []string{"a-s1/alpha.html", "b-s2/beta.html"} {
		if _, err := os.Stat(filepath.Join(b, "published", "wiki", p)); err != nil {
			t.Fatalf("page %s of one side is missing after the merge: %v", p, err)
		}
	}
	catalog := syncGit(t, b, "show", "HEAD:sources/index.json")
	if !strings.Contains(catalog, "alpha.md") || !strings.Contains(catalog, "beta.md") {
		t.Fatalf("the merged catalog lacks a side's source:\n%s", catalog)
	}
	hasAll(t, "b after pull --continue", receiptHashes(t, b), want)
	checkVaults(t, a, b)
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	hasAll(t, "a after pulling the merge", receiptHashes(t, a), want)
	checkVaults(t, a, b)

	// The same slot on both sides: a conflict git shows.
	mustProse(t, "--vault", a, "wiki", "write-slot", page, "abstract", "-c", "<p>Second from A.</p>")
	mustProse(t, "--vault", a, "push")
	mustProse(t, "--vault", b, "wiki", "write-slot", page, "abstract", "-c", "<p>Second from B.</p>")
	want = append(receiptHashes(t, a), receiptHashes(t, b)...)
	bLedger := syncGit(t, b, "rev-parse", "refs/prose/ledger")
	out, ok = gitPull(t, b)
	if ok || !strings.Contains(out, "published/wiki/"+page) || !strings.Contains(out, "slot abstract") {
		t.Fatalf("git pull of one slot changed on both sides: merged %v\n%s", ok, out)
	}
	file, err := os.ReadFile(filepath.Join(b, "published", "wiki", page))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(file), "<<<<<<<") || !strings.Contains(string(file), "Second from A.") || !strings.Contains(string(file), "Second from B.") {
		t.Fatalf("the conflict git shows lacks markers or a side:\n%s", file)
	}
	if st := syncGit(t, b, "status", "--porcelain", "--", "published/wiki/"+page); !strings.HasPrefix(st, "UU ") {
		t.Fatalf("git status of the conflicted page: %q", st)
	}
	_, errs, code := prose(t, "--vault", b, "wiki", "write-slot", page, "citation", "-c", "<p>x</p>")
	if code == 0 || !strings.Contains(errs, "git merge is in progress") || !strings.Contains(errs, "prose pull --continue") {
		t.Fatalf("a write during git's conflicted merge: exit %d\n%s", code, errs)
	}
	if got := syncGit(t, b, "rev-parse", "refs/prose/ledger"); got != bLedger {
		t.Fatalf("the conflicted git pull moved the ledger")
	}
	syncGit(t, b, "fsck", "--strict", "--no-progress")
	if out := mustProse(t, "--vault", b, "receipts", "verify"); !strings.Contains(out, " 0 problems") {
		t.Fatalf("receipts verify during the conflict:\n%s", out)
	}
	// Settle it as git users do: take theirs' file, commit.
	syncGit(t, b, "checkout", "--theirs", "--", "published/wiki/"+page)
	syncGit(t, b, "add", "--", "published/wiki/"+page)
	syncGit(t, b, "commit", "--quiet", "--no-edit")
	out = mustProse(t, "--vault", b, "pull", "--continue")
	if !strings.Contains(out, "joined: node wiki (taken") {
		t.Fatalf("pull --continue after a settled conflict:\n%s", out)
	}
	if s := slotText(t, b, page, "abstract"); !strings.Contains(s, "Second from A.") {
		t.Fatalf("abstract after taking theirs: %q", s)
	}
	hasAll(t, "b after the settled conflict", receiptHashes(t, b), want)
	checkVaults(t, a, b)
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	checkVaults(t, a, b)
	mustProse(t, "--vault", b, "wiki", "write-slot", page, "citation", "-c", "<p>After the merge.</p>")
	checkVaults(t, b)
}

// TestMergeDriverRegistration: a vault that lacks the driver (a plain git
// clone, a vault made before it) is named by doctor with its fix; doctor
// --fix, prose remote add and prose pull register it.
func TestMergeDriverRegistration(t *testing.T) {
	root, remote, a := syncWorld(t)
	if got := syncGit(t, a, "show", "HEAD:.gitattributes"); !strings.Contains(got, "/published/wiki/**/*.html merge=prose") {
		t.Fatalf("prose init committed no attributes:\n%s", got)
	}
	c := filepath.Join(root, "c")
	syncGit(t, root, "clone", "--quiet", "-b", "main", remote, c)
	syncGit(t, c, "fetch", "origin", "refs/prose/ledger:refs/prose/ledger")
	out, _, code := prose(t, "--vault", c, "doctor")
	if code != 1 || !strings.Contains(out, "merge      driver not registered") || !strings.Contains(out, "`prose doctor --fix`") {
		t.Fatalf("doctor on a clone without the driver: exit %d\n%s", code, out)
	}
	out, _, _ = prose(t, "--vault", c, "doctor", "--fix")
	if !strings.Contains(out, "fixed      registered the merge driver") || !strings.Contains(out, "merge      driver registered") {
		t.Fatalf("doctor --fix:\n%s", out)
	}
	if got := syncGit(t, c, "config", "merge.prose.driver"); got != "prose merge-driver %O %A %B %P" {
		t.Fatalf("doctor --fix wrote driver %q", got)
	}

	// A vault without the committed attributes (made before them) gets
	// them in .git/info/attributes from remote add, and pull restores the
	// config.
	d := filepath.Join(root, "d")
	mustProse(t, "init", d)
	syncGit(t, d, "rm", "--quiet", ".gitattributes")
	syncGit(t, d, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "as before the driver")
	syncGit(t, d, "config", "--remove-section", "merge.prose")
	mustProse(t, "--vault", d, "remote", "add", "origin", remote)
	if got := syncGit(t, d, "check-attr", "merge", "--", "published/wiki/x/y.html", "sources/pages/x.tsv"); strings.Count(got, "merge: prose") != 2 {
		t.Fatalf("remote add registered no attributes:\n%s", got)
	}
	syncGit(t, d, "config", "--remove-section", "merge.prose")
	_, _, _ = prose(t, "--vault", d, "pull") // unrelated histories: refused or not, it registers first
	if got := syncGit(t, d, "config", "merge.prose.driver"); got != "prose merge-driver %O %A %B %P" {
		t.Fatalf("pull registered driver %q", got)
	}
}

// TestFsckReportsACatalogNamingMissingPages: a page table row whose page
// the wiki lacks, and a source whose bytes are gone, are fsck findings
// that name their fix; the vault without them is clean.
func TestFsckReportsACatalogNamingMissingPages(t *testing.T) {
	needGit(t)
	root := t.TempDir()
	v := filepath.Join(root, "v")
	mustProse(t, "init", v)
	ingestText(t, root, v, "s0", "base.md", "Omega")
	mustProse(t, "--vault", v, "fsck")
	table := filepath.Join(v, "sources", "pages", "v-s0.tsv")
	data, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(table, append(data, "v-s0/gone.html\tGone\tsource\t\t\n"...), 0o644)
	src := strings.Fields(syncGit(t, v, "ls-files", "sources/"))[0] // sources/<hex>, sorted first
	syncGit(t, v, "rm", "--quiet", src)
	syncGit(t, v, "add", "sources/pages")
	syncGit(t, v, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "catalog by hand")
	_, errs, code := prose(t, "--vault", v, "fsck")
	if code != 1 || !strings.Contains(errs, "sources/pages/v-s0.tsv: names page v-s0/gone.html, which the wiki lacks") ||
		!strings.Contains(errs, "sources/index.json: names source blake3:"+strings.TrimPrefix(src, "sources/")+", whose bytes "+src+" are not on the branch") {
		t.Fatalf("fsck of a catalog naming what is missing: exit %d\n%s", code, errs)
	}
	for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
		if strings.Contains(l, "sources/") && !namesCommand(l) {
			t.Fatalf("a catalog finding names no fix: %s", l)
		}
	}
}
