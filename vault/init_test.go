package vault

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func initIn(t *testing.T, files map[string]string) (string, *Vault, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	writeTree(t, dir, files)
	v, err := Init(dir, InitOptions{})
	return dir, v, err
}

func TestInitKeepsTheUsersGitignore(t *testing.T) {
	requireGit(t)
	for _, c := range []struct{ name, old, want string }{
		{"no trailing newline", "node_modules/\n*.log", "node_modules/\n*.log\n\n" + gitignore},
		{"trailing newline", "*.log\n", "*.log\n\n" + gitignore},
		{"already ignores .prose", "*.log\n.prose/\n", "*.log\n.prose/\n"},
		{"crlf", "*.log\r\n", "*.log\r\n\r\n" + strings.ReplaceAll(gitignore, "\n", "\r\n")},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, v, err := initIn(t, map[string]string{".gitignore": c.old, "notes.txt": "mine\n"})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
			if string(got) != c.want {
				t.Fatalf(".gitignore = %q, want %q", got, c.want)
			}
			committed, ok, err := v.ReadFile(".gitignore")
			if err != nil || !ok || string(committed) != c.want {
				t.Fatalf("committed .gitignore = %q %v %v", committed, ok, err)
			}
			if st := git(t, dir, "status", "--porcelain"); st != "?? notes.txt\n" {
				t.Fatalf("git status:\n%s", st)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != "mine\n" {
				t.Fatal("notes.txt changed")
			}
		})
	}
}

func TestInitRefusesToClobber(t *testing.T) {
	dir, _, err := initIn(t, map[string]string{ConfigFile: "# mine\n"})
	if err == nil || !strings.Contains(err.Error(), ConfigFile) {
		t.Fatalf("init over a prose.yaml: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ConfigFile)); string(got) != "# mine\n" {
		t.Fatalf("prose.yaml overwritten: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		t.Fatal(".git created by a refused init")
	}
	dir, _, err = initIn(t, map[string]string{".gitignore/x": "a directory\n"})
	if err == nil || !strings.Contains(err.Error(), ".gitignore") {
		t.Fatalf("init with a .gitignore directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		t.Fatal(".git created by a refused init")
	}
}

// A new vault holds the 256 loose-object directories, so its first writes
// make none; a write whose directory is gone (git gc removes the empty
// ones) makes it again, and git reads the vault.
func TestInitMakesTheLooseObjectDirectories(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	objects := filepath.Join(v.Root(), ".git", "objects")
	for i := range 256 {
		if fi, err := os.Stat(filepath.Join(objects, fmt.Sprintf("%02x", i))); err != nil || !fi.IsDir() {
			t.Fatalf("objects/%02x: %v", i, err)
		}
	}
	git(t, v.Root(), "prune") // removes the empty ones, as gc does
	if ents, _ := os.ReadDir(objects); len(ents) > 40 {
		t.Fatalf("git prune left %d entries in objects/", len(ents))
	}
	changes := map[string][]byte{}
	for i := range 30 {
		changes[fmt.Sprintf("f%02d.txt", i)] = []byte(fmt.Sprintf("file %d\n", i))
	}
	if _, err := v.WriteNode(context.Background(), "notes", changes, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	checkGitClean(t, v)
}

// A loose object of up to storeBelow bytes is written in zlib's stored
// blocks (it takes one file-system block either way), a larger one
// compressed; git reads both.
func TestSmallLooseObjectsAreStored(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	small := []byte(strings.Repeat("small and very repetitive text ", 60))[:1500]
	large := []byte(strings.Repeat("large and very repetitive text ", 400))
	if _, err := v.WriteNode(context.Background(), "notes", map[string][]byte{"small.txt": small, "large.txt": large}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		data   []byte
		stored bool
	}{{small, true}, {large, false}} {
		h := objectHash(plumbing.BlobObject, c.data)
		fi, err := os.Stat(v.objectPath(h))
		if err != nil {
			t.Fatal(err)
		}
		header := len(fmt.Sprintf("blob %d\x00", len(c.data)))
		if stored := fi.Size() >= int64(header+len(c.data)); stored != c.stored {
			t.Errorf("%d-byte blob: loose file of %d bytes, stored %v, want %v", len(c.data), fi.Size(), stored, c.stored)
		}
		if got := git(t, v.Root(), "cat-file", "blob", h.String()); got != string(c.data) {
			t.Errorf("git reads the %d-byte blob as %d bytes", len(c.data), len(got))
		}
	}
	checkGitClean(t, v)
}
