package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file name of 254 bytes is valid; the checkout temp file must not make a
// longer one, and no temp file may show in git status.
func TestCheckoutLongFileNameAndTempsOutOfTheWorkTree(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	long := strings.Repeat("x", 251) + ".md"
	writeTree(t, src, map[string]string{long: "one\n", "short.md": "s\n"})
	publish(t, v, "n", src, PublishOptions{})
	writeTree(t, src, map[string]string{long: "two\n", "short.md": "s\n"})
	publish(t, v, "n", src, PublishOptions{})
	if got, err := os.ReadFile(filepath.Join(v.Root(), "published", "n", long)); err != nil || string(got) != "two\n" {
		t.Fatalf("working tree: %q %v", got, err)
	}
	ents, _ := os.ReadDir(filepath.Join(v.Root(), "published", "n"))
	for _, e := range ents {
		if e.Name() != long && e.Name() != "short.md" {
			t.Fatalf("stray file in the working tree: %s", e.Name())
		}
	}
	// A temp file a crash left behind is git-ignored.
	if err := os.WriteFile(filepath.Join(v.StatePath("tmp"), "co-123"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkGitClean(t, v)
}
