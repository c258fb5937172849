package forme

import (
	"github.com/prose-store/prose/internal/refdata"

	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestCodesDocumented keeps docs/diagnostics.md and the catalog in step:
// every code has a "### code" section stating its severity, and every such
// section is a code.
func TestCodesDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(refdata.RepoRoot(t), "docs", "diagnostics.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	sections := map[string]string{}
	parts := regexp.MustCompile(`(?m)^### `).Split(doc, -1)
	for _, p := range parts[1:] {
		name, body, _ := strings.Cut(p, "\n")
		sections[strings.TrimSpace(name)] = body
	}
	for _, c := range Codes() {
		body, ok := sections[c.Code]
		if !ok {
			t.Errorf("code %s is not documented in docs/diagnostics.md", c.Code)
			continue
		}
		if !strings.Contains(body, "**"+string(c.Severity)+".**") {
			t.Errorf("docs/diagnostics.md gives %s a severity other than %s", c.Code, c.Severity)
		}
	}
	for name := range sections {
		if !IsDocumentedCode(name) {
			t.Errorf("docs/diagnostics.md documents %q, which is not a code", name)
		}
	}
}

// TestEveryCodeExercised checks that the fixture projects produce every
// code, except those only a unit test can provoke.
func TestEveryCodeExercised(t *testing.T) {
	// upgrade_review is prose upgrade's, not a compile's: the upgrade tests
	// produce it from fixtures/contracts/legacy.
	unitOnly := map[string]bool{CodeSourceUnreadable: true, CodeUpgradeReview: true}
	seen := map[string]bool{}
	for _, name := range fixtureNames(t) {
		_, diags, _ := compileFixture(t, name)
		for _, d := range diags {
			seen[d.Code] = true
		}
	}
	var missing []string
	for _, c := range Codes() {
		if !seen[c.Code] && !unitOnly[c.Code] {
			missing = append(missing, c.Code)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("no fixture under fixtures/contracts produces: %s", strings.Join(missing, ", "))
	}
}

func TestSourceUnreadable(t *testing.T) {
	p := ParseSources([]Source{{Path: "gone.prose.md", Err: os.ErrPermission}}, hermetic())
	diags := p.Diagnostics()
	if len(diags) != 1 || diags[0].Code != CodeSourceUnreadable || diags[0].Severity != SeverityError {
		t.Fatalf("got %v", diags)
	}
	if !strings.HasPrefix(diags[0].String(), "gone.prose.md: error: source_unreadable: ") {
		t.Errorf("String() = %q", diags[0].String())
	}
}
