package vault

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// renameObject creates the fan-out directory a `git prune-packed` removed,
// and names a temporary object that is itself gone rather than retrying.
func TestRenameObjectMakesTheDirectoryAndNamesAMissingTemp(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, looseTempPrefix+"x")
	if err := os.WriteFile(tmp, []byte("obj"), 0o444); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, "0e", "662d014283786963b0b63045e24d86a01aa3b1")
	if err := renameObject(tmp, final); err != nil {
		t.Fatalf("rename into a missing fan-out directory: %v", err)
	}
	if b, err := os.ReadFile(final); err != nil || string(b) != "obj" {
		t.Fatalf("object: %q %v", b, err)
	}
	err := renameObject(tmp, filepath.Join(dir, "1f", "x"))
	if err == nil || !strings.Contains(err.Error(), "was removed while prose wrote it") {
		t.Fatalf("a missing temporary object: %v", err)
	}
}

// Edits found by a write whose branch moved meanwhile (a `git commit`
// landed after the write read the tip) are the working tree of the commit
// before, not hand edits: the write says the ref moved, which callers
// retry; with the branch where the write began they are hand edits.
func TestHandEditsOfAMovedBranchAreAMovedRef(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"f.md": "one\n"})
	publish(t, v, "n", src, PublishOptions{})
	tip, err := v.readRef(v.Branch())
	if err != nil {
		t.Fatal(err)
	}
	edits := []HandEdit{{"published/n/f.md", "modified by hand since the last commit"}}
	if err := v.handEditsAt(edits, tip); !errors.Is(err, ErrHandEdits) || errors.Is(err, ErrRefMoved) {
		t.Fatalf("branch where the write began: %v", err)
	}
	if err := os.WriteFile(filepath.Join(v.Root(), "notes.md"), []byte("n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, v.Root(), "add", "notes.md")
	git(t, v.Root(), "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "user note")
	err = v.handEditsAt(edits, tip)
	if !errors.Is(err, ErrRefMoved) || errors.Is(err, ErrHandEdits) || !strings.Contains(err.Error(), "run the command again") {
		t.Fatalf("branch moved by a commit: %v", err)
	}
}
