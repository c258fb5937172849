package forme

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// legacyDir is fixtures/contracts/legacy: one legacy-form source per rule of
// the migration map.
func legacyDir(t *testing.T) string { return filepath.Join(fixturesDir(t), "legacy") }

// upgradeLegacy plans the upgrade of every legacy fixture, by file name.
func upgradeLegacy(t *testing.T) map[string]*Upgrade {
	t.Helper()
	entries, err := os.ReadDir(legacyDir(t))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Upgrade{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(legacyDir(t), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = UpgradeSource(e.Name(), data)
	}
	if len(out) < 8 {
		t.Fatalf("only %d legacy fixtures", len(out))
	}
	return out
}

// TestUpgradeGoldenDiffs: the plan of each legacy fixture, as the unified
// diff `prose upgrade --dry-run` prints, with its changes and review items.
func TestUpgradeGoldenDiffs(t *testing.T) {
	for name, u := range upgradeLegacy(t) {
		var b strings.Builder
		b.WriteString(UnifiedDiff("a/"+u.Path, "b/"+u.NewPath, u.Old, u.New))
		for _, c := range u.Changes {
			b.WriteString("# change: " + c + "\n")
		}
		for _, d := range u.Review {
			b.WriteString("# review: " + d.String() + "\n")
		}
		golden := filepath.Join("testdata", "upgrade", name+".diff")
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./forme -run TestUpgradeGoldenDiffs -update)", err)
		}
		if b.String() != string(want) {
			t.Errorf("%s: the plan differs from %s\n--- got\n%s--- want\n%s", name, golden, b.String(), want)
		}
	}
}

// TestUpgradeLeavesOnlyReviewItems: after the upgrade, check reports no
// retired form except the manual-review items, each of which the upgrade
// reported; and no rule is left unexercised by the fixtures.
func TestUpgradeLeavesOnlyReviewItems(t *testing.T) {
	dir := t.TempDir()
	review := map[string]bool{} // file:line of each review item, after the upgrade
	changed := 0
	for _, u := range upgradeLegacy(t) {
		if u.Changed() {
			changed++
		}
		if err := os.WriteFile(filepath.Join(dir, u.NewPath), u.New, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, d := range u.Review {
			review[u.NewPath+":"+reviewHeading(u.Old, d.Line)] = true
		}
	}
	p, err := LoadProject([]string{dir}, hermetic())
	if err != nil {
		t.Fatal(err)
	}
	_, diags := Compile(p)
	left := map[string]bool{}
	for _, d := range diags {
		if d.Code != CodeSectionRetired && d.Code != CodeKindRetired {
			if d.Severity == SeverityError {
				t.Errorf("after the upgrade: %s", d)
			}
			continue
		}
		src, err := os.ReadFile(d.File)
		if err != nil {
			t.Fatal(err)
		}
		key := filepath.Base(d.File) + ":" + reviewHeading(src, d.Line)
		if !review[key] {
			t.Errorf("a retired form the upgrade should have rewritten or reported: %s", d)
		}
		left[key] = true
	}
	for k := range review {
		if !left[k] {
			t.Errorf("review item %s is not a retired form check reports", k)
		}
	}
	if changed < 6 || len(review) != 5 {
		t.Errorf("%d files changed, %d review items; want ≥ 6 and 5 (system, Services, Wiring, Fulfillment, Memory)", changed, len(review))
	}
	// Upgrading the upgraded sources changes nothing more.
	for _, u := range upgradeLegacy(t) {
		again := UpgradeSource(u.NewPath, u.New)
		if again.Changed() {
			t.Errorf("%s: a second upgrade still changes it:\n%s", u.NewPath, UnifiedDiff(u.NewPath, again.NewPath, u.New, again.New))
		}
	}
}

// reviewHeading names the line of a review item by its text, which the
// upgrade keeps though line numbers shift.
func reviewHeading(src []byte, line int) string {
	lines := strings.Split(string(src), "\n")
	if line < 1 || line > len(lines) {
		return "?"
	}
	return strings.TrimSpace(lines[line-1])
}

// TestUpgradeKeepsEveryLine: every line of content and every id of a legacy
// source is in its upgrade; only headings, the kind and the Postcondition
// prefixes differ.
func TestUpgradeKeepsEveryLine(t *testing.T) {
	heading := regexp.MustCompile(`^#{3} `)
	for name, u := range upgradeLegacy(t) {
		newText := string(u.New)
		for _, l := range strings.Split(string(u.Old), "\n") {
			t0 := strings.TrimSpace(l)
			if t0 == "" || heading.MatchString(t0) || strings.HasPrefix(t0, "kind:") {
				continue
			}
			item := strings.TrimSpace(strings.TrimLeft(t0, "-*+ "))
			if !strings.Contains(newText, item) {
				t.Errorf("%s: line %q is lost", name, l)
			}
		}
		for _, m := range regexp.MustCompile(`(?m)^id: .*$`).FindAllString(string(u.Old), -1) {
			if !strings.Contains(newText, m+"\n") {
				t.Errorf("%s: %s is lost", name, m)
			}
		}
	}
}

// TestUpgradeRules checks each rule on its fixture through the parsed
// result: the sections, kinds and postconditions a compile sees.
func TestUpgradeRules(t *testing.T) {
	ups := upgradeLegacy(t)
	parse := func(name string) *Contract {
		u := ups[name]
		f := ParseFile(u.NewPath, u.New)
		return f.Contracts[0]
	}
	keys := func(c *Contract) string {
		var k []string
		for _, s := range c.Sections {
			k = append(k, s.Key)
		}
		return strings.Join(k, ",")
	}
	cases := []struct {
		file, kind, sections string
		posts                []string
	}{
		{"service.prose.md", "function", "parameters,returns", nil},
		{"report.prose.md", "responsibility", "requires,maintains,invariants", []string{"the report cites its sources", "every team appears once"}},
		{"triage.prose.md", "responsibility", "requires,maintains", []string{"Each ticket has exactly one owner.", "urgent tickets are answered within a day"}},
		{"board.prose.md", "responsibility", "maintains", []string{"no escalation is older than a week"}},
		{"inbox.prose.md", "gateway", "maintains,emits,continuity", nil},
		{"signals.md", "responsibility", "maintains", nil},
		{"pipeline.prose.md", "unknown", "services,wiring", nil},
		{"archivist.prose.md", "responsibility", "maintains,fulfillment,memory", nil},
	}
	for _, c := range cases {
		con := parse(c.file)
		if string(con.Kind) != c.kind || keys(con) != c.sections {
			t.Errorf("%s: kind %s, sections %s; want %s, %s", c.file, con.Kind, keys(con), c.kind, c.sections)
		}
		posts := postconditions(con)
		sort.Strings(posts)
		want := append([]string{}, c.posts...)
		sort.Strings(want)
		if strings.Join(posts, "|") != strings.Join(want, "|") {
			t.Errorf("%s: postconditions %q, want %q", c.file, posts, want)
		}
	}
	if u := ups["signals.md"]; u.NewPath != "signals.prose.md" {
		t.Errorf("signals.md moves to %s", u.NewPath)
	}
	if con := parse("inbox.prose.md"); con.Sections[2].Value != "external-driven" {
		t.Errorf("the gateway's continuity: %+v", con.Sections[2])
	}
}

// TestUpgradeDiffApplies: git applies the printed diff to the old text and
// gets the new one (an independent reader of the unified format).
func TestUpgradeDiffApplies(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required under CI")
		}
		t.Skip("git not installed")
	}
	for name, u := range upgradeLegacy(t) {
		if !u.Changed() || u.NewPath != u.Path {
			continue
		}
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, name), u.Old, 0o644)
		patch := filepath.Join(t.TempDir(), "p.diff")
		os.WriteFile(patch, []byte(UnifiedDiff("a/"+name, "b/"+name, u.Old, u.New)), 0o644)
		cmd := exec.Command(git, "apply", "--unidiff-zero", patch)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: git apply: %v\n%s", name, err, out)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != string(u.New) {
			t.Errorf("%s: the applied diff gives\n%s\nwant\n%s", name, got, u.New)
		}
	}
}
