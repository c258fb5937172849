package wiki

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A Tx's tool calls look at each folder on the way to their pages once,
// not once a page: an ingest's 2,500 pages made 22,755 lstat calls of
// published/ alone.
func TestCheckInsideLooksAtAFolderOnce(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "f/p0", "note", nil)
	const n = 40
	calls := 0
	lstat = func(p string) (os.FileInfo, error) { calls++; return os.Lstat(p) }
	defer func() { lstat = os.Lstat }()
	tx, err := w.begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	calls = 0
	for i := 1; i <= n; i++ {
		if _, _, err := tx.New(fmt.Sprintf("f/p%d", i), NewOptions{Template: "note"}); err != nil {
			t.Fatal(err)
		}
	}
	// published, wiki and f once, then the page file each time.
	if calls > n+3 {
		t.Fatalf("%d lstat calls for %d new pages in one folder, want at most %d", calls, n, n+3)
	}
	if _, err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// A folder replaced by a symlink after a tool call looked at it is still
// refused: the commit looks at every path again.
func TestSymlinkAfterToolCallRefusedAtCommit(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "g/x", "note", nil)
	head, _ := w.Head()
	tx, err := w.begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tx.New("g/a", NewOptions{Template: "note"}); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	g := filepath.Join(w.Root(), "g")
	if err := os.Rename(g, filepath.Join(t.TempDir(), "g")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, g); err != nil {
		t.Fatal(err)
	}
	tx.New("g/b", NewOptions{Template: "note"}) // refused now or at the commit
	if _, err := tx.Commit(); err == nil {
		t.Fatal("a write through a symlinked folder was committed")
	} else if !errors.Is(err, ErrUnsafe) && !errors.Is(err, ErrHandEdits) {
		t.Logf("refused: %v", err)
	}
	if h, _ := w.Head(); h != head {
		t.Fatal("a refused write committed")
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Fatal("a refused write wrote through the symlink")
	}
}
