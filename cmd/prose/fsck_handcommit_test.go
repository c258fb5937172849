package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// handCommitSlot edits the content of the first filled slot of a content
// page under published/wiki/ and commits it with git, outside prose; it
// returns the page's vault path.
func handCommitSlot(t *testing.T, dir string) string {
	t.Helper()
	slot := regexp.MustCompile(`(<!-- prose:slot id="[a-z_]+" -->)([^<][^\n]*?|<p>[^\n]*?)(<!-- /prose:slot)`)
	var page string
	root := filepath.Join(dir, "published", "wiki")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || page != "" || !strings.HasSuffix(p, ".html") || d.Name() == "README.html" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if loc := slot.FindSubmatchIndex(data); loc != nil {
			edited := string(data[:loc[3]]) + "<p>A sentence a person wrote and committed with git.</p>" + string(data[loc[5]:])
			if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
				return err
			}
			page, _ = filepath.Rel(dir, p)
		}
		return nil
	})
	if err != nil || page == "" {
		t.Fatalf("no content page with a filled slot to edit (%v)", err)
	}
	cmd := exec.Command("git", "-c", "user.name=A Person", "-c", "user.email=person@example.com", "commit", "-q", "-m", "a hand edit", "--", page)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	return filepath.ToSlash(page)
}

// TestFsckFindingOfAHandCommitStandsUntilWikiCommit: a `git commit` under
// published/wiki/ makes fsck exit 1; a refused ingest after it records a
// failed receipt, which publishes nothing and so takes nothing in: fsck
// still exits 1, naming `prose wiki commit`, until that command takes the
// commit in.
func TestFsckFindingOfAHandCommitStandsUntilWikiCommit(t *testing.T) {
	requireGitCLI(t)
	dir := newIngestVault(t)
	mustProse(t, "--vault", dir, "ingest", "../../fixtures/sources/deploy-guide.md")
	mustProse(t, "--vault", dir, "fsck")
	page := handCommitSlot(t, dir)

	fsckFinds := func(when string) {
		t.Helper()
		out, errs, code := prose(t, "--vault", dir, "fsck")
		if code != 1 || !strings.Contains(errs, "published/wiki") || !strings.Contains(errs, "a commit outside prose changed the node") || !strings.Contains(errs, "`prose wiki commit`") {
			t.Fatalf("fsck %s: exit %d, want 1 naming the hand commit and prose wiki commit\n%s%s", when, code, out, errs)
		}
	}
	fsckFinds("after the hand commit")

	out, errs, code := prose(t, "--vault", dir, "ingest", "../../fixtures/sources/incident-glossary.html")
	if code != 1 || !strings.Contains(errs, "prose wiki commit") || !strings.Contains(errs, "failed receipt") {
		t.Fatalf("an ingest over a hand commit: exit %d, want 1, refused naming prose wiki commit and recording a failed receipt\n%s%s", code, out, errs)
	}
	if r := lastReceipt(t, dir); r.Status != "failed" {
		t.Fatalf("the refused ingest recorded a %s receipt, want failed", r.Status)
	}
	fsckFinds("after a refused ingest recorded a failed receipt")
	// A second refusal, one failed receipt on another: still found.
	if _, _, code := prose(t, "--vault", dir, "ingest", "../../fixtures/sources/incident-glossary.html"); code != 1 {
		t.Fatalf("a second ingest over the hand commit: exit %d, want 1", code)
	}
	fsckFinds("after two failed receipts")

	out = mustProse(t, "--vault", dir, "wiki", "commit")
	if !strings.Contains(out, strings.TrimPrefix(page, "published/wiki/")) {
		t.Fatalf("wiki commit did not take in %s:\n%s", page, out)
	}
	mustProse(t, "--vault", dir, "fsck")
	mustProse(t, "--vault", dir, "ingest", "../../fixtures/sources/incident-glossary.html")
	mustProse(t, "--vault", dir, "fsck")
}

// TestAHandCommittedWikiIsNotTakenInByAFailedRun: pages committed with git
// into a vault whose wiki has no receipt yet are refused by an ingest,
// whose failed receipt publishes nothing: fsck keeps finding the pages and
// the next ingest is refused as well, until `prose wiki commit`.
func TestAHandCommittedWikiIsNotTakenInByAFailedRun(t *testing.T) {
	requireGitCLI(t)
	donor := newIngestVault(t)
	mustProse(t, "--vault", donor, "ingest", "../../fixtures/sources/deploy-guide.md")
	dir := filepath.Join(t.TempDir(), "vault")
	mustProse(t, "init", dir)
	if out, err := exec.Command("cp", "-a", filepath.Join(donor, "published"), filepath.Join(dir, "published")).CombinedOutput(); err != nil {
		t.Fatalf("copy the pages: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"add", "published"}, {"-c", "user.name=A Person", "-c", "user.email=person@example.com", "commit", "-q", "-m", "pages by hand"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args, err, out)
		}
	}
	if _, errs, code := prose(t, "--vault", dir, "fsck"); code != 1 || !strings.Contains(errs, "published/wiki") {
		t.Fatalf("fsck of pages committed by hand: exit %d\n%s", code, errs)
	}
	for i := 0; i < 2; i++ {
		out, errs, code := prose(t, "--vault", dir, "ingest", "../../fixtures/sources/incident-glossary.html")
		if code != 1 || !strings.Contains(errs, "prose wiki commit") {
			t.Fatalf("ingest %d over pages committed by hand: exit %d, want 1 naming prose wiki commit\n%s%s", i+1, code, out, errs)
		}
		if r := lastReceipt(t, dir); r.Status != "failed" {
			t.Fatalf("ingest %d recorded a %s receipt, want failed", i+1, r.Status)
		}
		if _, errs, code := prose(t, "--vault", dir, "fsck"); code != 1 || !strings.Contains(errs, "published/wiki") {
			t.Fatalf("fsck after failed receipt %d: exit %d, want 1: the pages are still not taken in\n%s", i+1, code, errs)
		}
	}
	mustProse(t, "--vault", dir, "wiki", "commit")
	mustProse(t, "--vault", dir, "fsck")
	mustProse(t, "--vault", dir, "ingest", "../../fixtures/sources/incident-glossary.html")
	mustProse(t, "--vault", dir, "fsck")
}
