package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// makeFlatTree writes 100 directories of 100 JSON files of about 1 KiB.
func makeFlatTree(dir string) error {
	for d := 0; d < 100; d++ {
		for f := 0; f < 100; f++ {
			p := filepath.Join(dir, fmt.Sprintf("d%02d", d), fmt.Sprintf("item%02d.json", f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			body := fmt.Sprintf(`{"id": %d, "dir": %d, "title": "item %d/%d", "text": %q}`+"\n", d*100+f, d, d, f, strings.Repeat("lorem ipsum dolor ", 52))
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkProcess times `vaultbench -walk DIR`: a bare walk and lstat of the
// tree as its own process, the floor of a full-scan publish from the CLI.
func walkProcess(self, dir string) (time.Duration, error) {
	return timeIt(func() error { return sh(dir, self, "-walk", dir) })
}

// gitRepoOf makes a git repository holding tree (made by mk) committed.
func gitRepoOf(dir string, mk func(string) error) error {
	if err := mk(dir); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		if err := sh(dir, "git", args...); err != nil {
			return err
		}
	}
	return nil
}

func gitAddAllCommit(dir string) error {
	if err := sh(dir, "git", "add", "-A"); err != nil {
		return err
	}
	return sh(dir, "git", "commit", "-q", "-m", "edit")
}

// benchFirstPublish times the first publish of n new files into a fresh
// vault from the CLI against `git add -A && git commit` of the same tree in
// a fresh repository.
//
// The trees are kept until the benchmark's directory is removed: ext4 does
// not reuse an inode freed in the last minute (five when its table block is
// dirty), and each file created meanwhile scans past every such inode
// (recently_deleted in the kernel's profile), so a run after removing the
// last run's 20,000 files measured that scan — 2 to 20 times slower, more
// so for whichever of prose or git came second.
func benchFirstPublish(base, self string, sizes []int, runs int) error {
	fmt.Println("## First publish of a new tree (CLI) vs git add -A && git commit")
	var prev time.Duration
	var prevN int
	for _, n := range sizes {
		src := filepath.Join(base, fmt.Sprintf("first-src-%d", n))
		if err := makeTree(src, n); err != nil {
			return err
		}
		var pt, gt, pc, gc []time.Duration
		for k := 0; k < runs; k++ {
			vdir := filepath.Join(base, fmt.Sprintf("first-vault-%d-%d", n, k))
			if err := sh(base, *prose, "init", vdir); err != nil {
				return err
			}
			syncAll()
			d, c, err := timeCPU(func() error { return sh(vdir, *prose, "publish", "wm", src, "--quiet") })
			if err != nil {
				return err
			}
			pt, pc = append(pt, d), append(pc, c)

			gdir := filepath.Join(base, fmt.Sprintf("first-git-%d-%d", n, k))
			if err := makeTree(gdir, n); err != nil {
				return err
			}
			if err := sh(gdir, "git", "init", "-q", "-b", "main"); err != nil {
				return err
			}
			syncAll()
			d, c, err = timeCPU(func() error { return gitAddAllCommit(gdir) })
			if err != nil {
				return err
			}
			gt, gc = append(gt, d), append(gc, c)
		}
		mp, mg := median(pt), median(gt)
		growth := ""
		if prev > 0 {
			growth = fmt.Sprintf("   %dk/%dk %.2fx", n/1000, prevN/1000, float64(mp)/float64(prev))
		}
		fmt.Printf("%-48s %12s   git %s, git/prose %.2fx%s\n", fmt.Sprintf("prose publish, %d new files", n), ms(mp), ms(mg), float64(mg)/float64(mp), growth)
		if cp, cg := median(pc), median(gc); cp > 0 {
			fmt.Printf("%-48s %12s   git %s, git/prose %.2fx (CPU: user+system)\n", "", ms(cp), ms(cg), float64(cg)/float64(cp))
		}
		prev, prevN = mp, n
	}
	// The kept trees' last writes (git does not fsync its loose objects)
	// are flushed here, not inside the next section's timed publishes.
	syncAll()
	fmt.Println()
	return nil
}

// flushFloor times the flushes a publish's crash order needs, made on the
// vault's filesystem the way land makes them: a syncfs for data, one for
// renames, and an fsync of each ref directory after its rename.
func flushFloor(dir string) (time.Duration, error) {
	tmp := filepath.Join(dir, "floor")
	os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "a"), 0o755); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Join(tmp, "b"), 0o755); err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	return timeIt(func() error {
		for _, f := range []string{"o", "a/r.lock", "b/r.lock"} {
			if err := os.WriteFile(filepath.Join(tmp, f), []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
				return err
			}
		}
		if err := syncFS(tmp); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(tmp, "o"), filepath.Join(tmp, "a", "o")); err != nil {
			return err
		}
		if err := syncFS(tmp); err != nil {
			return err
		}
		for _, sub := range []string{"a", "b"} {
			if err := os.Rename(filepath.Join(tmp, sub, "r.lock"), filepath.Join(tmp, sub, "r")); err != nil {
				return err
			}
			sd, err := os.Open(filepath.Join(tmp, sub))
			if err != nil {
				return err
			}
			err = sd.Sync()
			sd.Close()
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// processStart times a prose process that does nothing but start.
func processStart() (time.Duration, error) {
	return timeIt(func() error { return exec.Command(*prose, "version").Run() })
}

// benchShapes times a full-scan CLI republish after a one-file edit, and an
// informed one, on each tree shape, against the bare walk run as its own
// process and against git on an identical tree.
func benchShapes(base, self string, runs int) error {
	shapes := []struct {
		name string
		mk   func(string) error
		rel  string
	}{
		{fmt.Sprintf("nested, %d files of 1 KiB in %d dirs", *files, *files/100), func(d string) error { return makeTree(d, *files) }, filepath.Join("facet03", fmt.Sprintf("d%03d", 42%(*files/100)), "f00423.md")},
		{"flat 100 x 100 JSON files of 1 KiB", makeFlatTree, filepath.Join("d42", "item23.json")},
	}
	for si, s := range shapes {
		vdir := filepath.Join(base, fmt.Sprintf("shape-vault-%d", si))
		if err := sh(base, *prose, "init", vdir); err != nil {
			return err
		}
		src := filepath.Join(base, fmt.Sprintf("shape-src-%d", si))
		if err := s.mk(src); err != nil {
			return err
		}
		if err := sh(vdir, *prose, "publish", "wm", src, "--quiet"); err != nil {
			return err
		}
		inplace := filepath.Join(vdir, "published", "wm")
		if err := sh(vdir, *prose, "publish", "wm", inplace, "--quiet"); err != nil {
			return err
		}
		grepo := filepath.Join(base, fmt.Sprintf("shape-git-%d", si))
		if err := gitRepoOf(grepo, s.mk); err != nil {
			return err
		}
		var walk, full, informed, gitAll, gitOne, start, flush []time.Duration
		for k := 0; k < runs; k++ {
			d, err := walkProcess(self, inplace)
			if err != nil {
				return err
			}
			walk = append(walk, d)
			edit(filepath.Join(inplace, s.rel), 3*k)
			d, err = timeIt(func() error { return sh(vdir, *prose, "publish", "wm", inplace, "--quiet") })
			if err != nil {
				return err
			}
			full = append(full, d)
			edit(filepath.Join(inplace, s.rel), 3*k+1)
			d, err = timeIt(func() error {
				return sh(vdir, *prose, "publish", "wm", inplace, "--quiet", "--changed", filepath.ToSlash(s.rel))
			})
			if err != nil {
				return err
			}
			informed = append(informed, d)
			edit(filepath.Join(grepo, s.rel), 2*k)
			d, err = timeIt(func() error { return gitAddAllCommit(grepo) })
			if err != nil {
				return err
			}
			gitAll = append(gitAll, d)
			edit(filepath.Join(grepo, s.rel), 2*k+1)
			d, err = timeIt(func() error {
				if err := sh(grepo, "git", "add", s.rel); err != nil {
					return err
				}
				return sh(grepo, "git", "commit", "-q", "-m", "edit")
			})
			if err != nil {
				return err
			}
			gitOne = append(gitOne, d)
			if d, err = processStart(); err != nil {
				return err
			}
			start = append(start, d)
			if d, err = flushFloor(vdir); err != nil {
				return err
			}
			flush = append(flush, d)
		}
		mw, mf, mi, mga, mgo, mst, mfl := median(walk), median(full), median(informed), median(gitAll), median(gitOne), median(start), median(flush)
		floor := mst + mfl
		fmt.Printf("## %s: one file edited in place (CLI processes, medians of %d)\n", s.name, runs)
		fmt.Printf("%-48s %12s\n", "bare walk + lstat, its own process (floor)", ms(mw))
		fmt.Printf("%-48s %12s   %.2fx the walk\n", "prose publish (full scan)", ms(mf), float64(mf)/float64(mw))
		fmt.Printf("%-48s %12s   git/prose %.2fx\n", "git add -A && git commit", ms(mga), float64(mga)/float64(mf))
		fmt.Printf("%-48s %12s\n", "process start (prose version)", ms(mst))
		fmt.Printf("%-48s %12s\n", "the crash order's 4 flushes", ms(mfl))
		fmt.Printf("%-48s %12s   %.2fx the floor (start + flushes %s)\n", "prose publish --changed FILE", ms(mi), float64(mi)/float64(floor), ms(floor))
		fmt.Printf("%-48s %12s   git/prose %.2fx\n", "git add FILE && git commit", ms(mgo), float64(mgo)/float64(mi))
		fmt.Println()
	}
	return nil
}
