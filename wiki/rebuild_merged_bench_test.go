package wiki_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/prose-store/prose/mergefile" // pull merges the wiki page by page
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// BenchmarkShellAfterMerge is the shell rendered again after a pull
// merged two sides of a wiki of 1,000 pages (10 per folder, pages
// linking to their neighbours), each side having changed 5 pages, 2 of
// them the same ones: RebuildMerged (what pull does) beside Rebuild of
// the whole wiki (what it did before), on the same merged vault. Each
// iteration renders and compares; the shells were made current once
// before the timing, so no iteration commits.
func BenchmarkShellAfterMerge(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	b.Setenv("GIT_TERMINAL_PROMPT", "0")
	ctx := context.Background()
	root := b.TempDir()
	remote := filepath.Join(root, "remote.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", remote).CombinedOutput(); err != nil {
		b.Fatal(err, string(out))
	}
	va, err := vault.Init(filepath.Join(root, "a"), vault.InitOptions{})
	if err != nil {
		b.Fatal(err)
	}
	wa := openWiki(b, va)
	const n = 1000
	page := func(i int) string { return fmt.Sprintf("t%02d/p%d", i/10, i) }
	update(b, wa, func(tx *wiki.Tx) error {
		for i := range n {
			body := fmt.Sprintf(`<p>Page %d, next to <a href="p%d.html">its neighbour</a>.</p>`, i, i/10*10+(i+1)%10)
			if _, _, err := tx.New(page(i), wiki.NewOptions{Template: "concept", Title: fmt.Sprintf("Page %d", i), Slots: map[string]string{"summary": body}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err := va.AddRemote(ctx, "origin", remote); err != nil {
		b.Fatal(err)
	}
	if _, err := va.Push(ctx, "origin", false); err != nil {
		b.Fatal(err)
	}
	vb, err := vault.Clone(ctx, remote, filepath.Join(root, "b"), vault.CloneOptions{})
	if err != nil {
		b.Fatal(err)
	}
	wb := openWiki(b, vb)
	edit := func(w *wiki.Wiki, slot string, pages ...int) {
		update(b, w, func(tx *wiki.Tx) error {
			for _, i := range pages {
				if _, err := tx.WriteSlot(page(i), slot, fmt.Sprintf(`<p>Changed, see <a href="../%s.html">page %d</a>.</p>`, page((i+500)%n), (i+500)%n)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	edit(wa, "body", 1, 2, 300, 301, 302)
	edit(wb, "summary", 1, 2, 700, 701, 702)
	if _, err := va.Push(ctx, "origin", false); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	res, err := vb.Pull(ctx, "origin", vault.PullOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("the pull merged %d pages in %v (the shell not yet rendered)", len(res.Pages), time.Since(t0))
	wb = openWiki(b, vb)
	if r, err := wb.RebuildMerged(ctx, res.Sides[:]...); err != nil {
		b.Fatal(err)
	} else {
		b.Logf("RebuildMerged after the pull: %d pages rendered, %d files changed", r.Rendered, len(r.Changed))
	}
	for _, c := range []struct {
		name string
		fn   func() (*wiki.Result, error)
	}{
		{"merged", func() (*wiki.Result, error) { return wb.RebuildMerged(ctx, res.Sides[:]...) }},
		{"whole", func() (*wiki.Result, error) { return wb.Rebuild(ctx, nil) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				r, err := c.fn()
				if err != nil {
					b.Fatal(err)
				}
				if r.Commit != "" {
					b.Fatalf("%s committed %v: the merged shell was not what a whole rebuild gives", c.name, r.Changed)
				}
			}
		})
	}
}

func openWiki(b *testing.B, v *vault.Vault) *wiki.Wiki {
	b.Helper()
	w, err := wiki.Open(v)
	if err != nil {
		b.Fatal(err)
	}
	w.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	return w
}

func update(b *testing.B, w *wiki.Wiki, fn func(tx *wiki.Tx) error) {
	b.Helper()
	if _, err := w.Update(context.Background(), fn); err != nil {
		b.Fatal(err)
	}
}
