package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIExitCodes: the commands docs/ci.md runs on a pull request exit 0
// with no finding, 1 with findings and 2 on a usage error, so a CI log
// tells a broken vault from a misconfigured step. A revision that names
// nothing (a base branch the checkout did not fetch) or a BASE...HEAD of
// two unrelated histories is the command line's fault: exit 2, as a usage
// error, under --json too. A vault with no contracts and no active
// manifest (a wiki-only vault) passes compile --check.
func TestCIExitCodes(t *testing.T) {
	git := needGit(t)
	vdir := newIngestVault(t)
	mustProse(t, "--vault", vdir, "ingest", ingestSource(t))
	// An unrelated history the vault can name: another repository's
	// branch, fetched as a remote-tracking ref.
	other := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", other},
		{"-C", other, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "unrelated"},
		{"-C", vdir, "fetch", "-q", other, "main:refs/remotes/other/main"},
	} {
		if out, err := exec.Command(git, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	cases := []struct {
		args []string
		code int
		want string // on stderr, or on stdout for code 0
	}{
		{[]string{"check"}, 0, "no_sources"},
		{[]string{"compile", "--check"}, 0, "nothing to compile"},
		{[]string{"receipts", "verify"}, 0, "0 problems"},
		{[]string{"fsck"}, 0, "ok"},
		{[]string{"diff", "--format", "markdown", "HEAD~1...HEAD"}, 0, "1 page created"},
		{[]string{"diff", "--format", "markdown", "main...HEAD"}, 0, "no material change"},

		{[]string{"check", "--strictly"}, 2, "flag provided but not defined"},
		{[]string{"compile", "--check", "--activate"}, 2, "exclude each other"},
		{[]string{"receipts", "verify", "extra"}, 2, "takes no arguments"},
		{[]string{"fsck", "extra"}, 2, "takes no arguments"},
		{[]string{"diff", "origin/main...HEAD"}, 2, `unknown revision "origin/main"`},
		{[]string{"diff", "nosuchbranch"}, 2, `unknown revision "nosuchbranch"`},
		{[]string{"diff", "other/main...HEAD"}, 2, "share no history"},
		{[]string{"diff", "--format", "xml"}, 2, "--format"},
	}
	for _, c := range cases {
		out, errs, code := prose(t, append([]string{"--vault", vdir}, c.args...)...)
		where := errs
		if c.code == 0 {
			where = out
		}
		if code != c.code || !strings.Contains(where, c.want) {
			t.Errorf("prose %s: exit %d, stdout %q, stderr %q; want exit %d with %q", strings.Join(c.args, " "), code, out, errs, c.code, c.want)
		}
	}
	out, _, code := prose(t, "--vault", vdir, "--json", "diff", "origin/main...HEAD")
	if code != 2 || !strings.Contains(out, `"code": "usage"`) {
		t.Errorf("--json diff of an unknown revision: exit %d, %s; want exit 2 with code usage", code, out)
	}
	out, _, code = prose(t, "--vault", vdir, "--json", "compile", "--check")
	if code != 0 || !strings.Contains(out, `"current": true`) {
		t.Errorf("--json compile --check with no contracts: exit %d, %s; want current", code, out)
	}

	// Findings: exit 1, for each command.
	contracts, _ := filepath.Glob("../../fixtures/contracts/wiring/*.prose.md")
	src := map[string]string{}
	for _, f := range contracts {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src[filepath.Base(f)] = string(data)
	}
	writeFiles(t, filepath.Join(vdir, "src"), src)
	if _, errs, code := prose(t, "--vault", vdir, "compile", "--check"); code != 1 || !strings.Contains(errs, "no manifest is active") {
		t.Errorf("compile --check with contracts and no active manifest: exit %d, %q; want 1", code, errs)
	}
	page := filepath.Join(vdir, "published", "wiki", "README.html")
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, append(data, "<p>hand edit</p>\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := prose(t, "--vault", vdir, "fsck"); code != 1 || !strings.Contains(errs, "README.html") {
		t.Errorf("fsck with a hand edit: exit %d, %q; want 1", code, errs)
	}
}
