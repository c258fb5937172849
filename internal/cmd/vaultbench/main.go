// Command vaultbench measures the vault's publish paths against the git CLI
// and a bare lstat walk on identical trees, in one run on one machine. It is
// run by scripts/bench.sh; every figure is a median of several runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prose-store/prose/vault"
)

var (
	files = flag.Int("files", 10000, "files in the world-model")
	runs  = flag.Int("runs", 15, "measured runs per figure")
	chain = flag.Int("chain", 5000, "receipts in the chain for verify and log")
	prose = flag.String("prose", "", "prose binary, for the CLI figures")
	work  = flag.String("dir", "", "working directory (default: a temporary one)")
	walk  = flag.String("walk", "", "walk and lstat `DIR`, then exit (the floor of a full scan, timed as its own process)")
	first = flag.String("first", "1000,10000,20000", "tree sizes for the first-publish rows")
	parts = flag.String("sections", "api,first,shapes,chain", "which sections to run")
)

func main() {
	flag.Parse()
	if *walk != "" {
		if _, err := lstatWalk(*walk); err != nil {
			fmt.Fprintln(os.Stderr, "vaultbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "vaultbench:", err)
		os.Exit(1)
	}
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func sh(dir string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=b@x", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=b@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func timeIt(fn func() error) (time.Duration, error) {
	t := time.Now()
	err := fn()
	return time.Since(t), err
}

// timeCPU is timeIt that also returns the user+system time of the child
// processes fn ran, which other load on the machine inflates far less than
// the wall time.
func timeCPU(fn func() error) (wall, cpu time.Duration, err error) {
	c := childrenCPU()
	wall, err = timeIt(fn)
	return wall, childrenCPU() - c, err
}

// makeTree writes n files of ~1 KiB in n/100 directories.
func makeTree(dir string, n int) error {
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("facet%02d", i%10), fmt.Sprintf("d%03d", (i/10)%(n/100)), fmt.Sprintf("f%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		body := fmt.Sprintf("# item %d\n\n%s\n", i, strings.Repeat("lorem ipsum dolor sit amet ", 36))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func lstatWalk(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if _, err := os.Lstat(p); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

func edit(path string, k int) error {
	body := fmt.Sprintf("# edited %d\n", k)
	if strings.HasSuffix(path, ".json") {
		body = fmt.Sprintf("{\"edited\": %d}\n", k)
	}
	return os.WriteFile(path, []byte(body), 0o644)
}

func run() error {
	base := *work
	if base == "" {
		d, err := os.MkdirTemp("", "vaultbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		base = d
	}
	ctx := context.Background()
	fmt.Printf("vaultbench: %d files, %d runs per figure, fsync on\n\n", *files, *runs)
	section := map[string]bool{}
	for _, p := range strings.Split(*parts, ",") {
		section[strings.TrimSpace(p)] = true
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if *prose != "" && section["first"] {
		var sizes []int
		for _, f := range strings.Split(*first, ",") {
			var n int
			if _, err := fmt.Sscan(f, &n); err != nil || n < 100 {
				return fmt.Errorf("-first %q: want sizes of at least 100 files", *first)
			}
			sizes = append(sizes, n)
		}
		if err := benchFirstPublish(base, self, sizes, 3); err != nil {
			return err
		}
	}
	if *prose != "" && section["shapes"] {
		if err := benchShapes(base, self, *runs); err != nil {
			return err
		}
	}
	if !section["api"] {
		if *prose != "" && *chain > 0 && section["chain"] {
			return benchChain(ctx, base)
		}
		return nil
	}

	// The vault publishes its own working tree in place, like a user who
	// edits published/<node>/ and publishes, or git add -A && git commit.
	v, err := vault.Init(filepath.Join(base, "vault"), vault.InitOptions{})
	if err != nil {
		return err
	}
	src := filepath.Join(base, "render")
	if err := makeTree(src, *files); err != nil {
		return err
	}
	if _, err := v.Publish(ctx, "wm", src, vault.PublishOptions{}); err != nil {
		return err
	}
	inplace := filepath.Join(v.Root(), "published", "wm")
	if _, err := v.Publish(ctx, "wm", inplace, vault.PublishOptions{}); err != nil {
		return err
	}
	gitRepo := filepath.Join(base, "git")
	if err := makeTree(gitRepo, *files); err != nil {
		return err
	}
	gitFsync := filepath.Join(base, "gitfsync")
	if err := makeTree(gitFsync, *files); err != nil {
		return err
	}
	for _, r := range []string{gitRepo, gitFsync} {
		if err := sh(r, "git", "init", "-q", "-b", "main"); err != nil {
			return err
		}
		if err := sh(r, "git", "add", "-A"); err != nil {
			return err
		}
		if err := sh(r, "git", "commit", "-q", "-m", "init"); err != nil {
			return err
		}
	}
	if err := sh(gitFsync, "git", "config", "core.fsync", "all"); err != nil {
		return err
	}
	if err := sh(gitFsync, "git", "config", "core.fsyncMethod", "fsync"); err != nil {
		return err
	}
	rel := filepath.Join("facet03", "d042", "f00423.md")

	var walk, apiFull, cliFull, gitAll, gitAllSync, apiInformed, gitOne, gitOneSync, skipped []time.Duration
	for k := 0; k < *runs; k++ {
		d, err := timeIt(func() error { _, err := lstatWalk(inplace); return err })
		if err != nil {
			return err
		}
		walk = append(walk, d)

		edit(filepath.Join(inplace, rel), 3*k)
		d, err = timeIt(func() error { _, err := v.Publish(ctx, "wm", inplace, vault.PublishOptions{}); return err })
		if err != nil {
			return err
		}
		apiFull = append(apiFull, d)

		if *prose != "" {
			edit(filepath.Join(inplace, rel), 3*k+1)
			d, err = timeIt(func() error { return sh(v.Root(), *prose, "publish", "wm", inplace, "--quiet") })
			if err != nil {
				return err
			}
			cliFull = append(cliFull, d)
		}

		edit(filepath.Join(inplace, rel), 3*k+2)
		d, err = timeIt(func() error {
			_, err := v.Publish(ctx, "wm", inplace, vault.PublishOptions{Changed: []string{filepath.ToSlash(rel)}})
			return err
		})
		if err != nil {
			return err
		}
		apiInformed = append(apiInformed, d)

		d, err = timeIt(func() error { _, err := v.Publish(ctx, "wm", inplace, vault.PublishOptions{}); return err })
		if err != nil {
			return err
		}
		skipped = append(skipped, d)

		for _, g := range []struct {
			repo string
			all  *[]time.Duration
			one  *[]time.Duration
		}{{gitRepo, &gitAll, &gitOne}, {gitFsync, &gitAllSync, &gitOneSync}} {
			edit(filepath.Join(g.repo, rel), 2*k)
			d, err = timeIt(func() error {
				if err := sh(g.repo, "git", "add", "-A"); err != nil {
					return err
				}
				return sh(g.repo, "git", "commit", "-q", "-m", "edit")
			})
			if err != nil {
				return err
			}
			*g.all = append(*g.all, d)
			edit(filepath.Join(g.repo, rel), 2*k+1)
			d, err = timeIt(func() error {
				if err := sh(g.repo, "git", "add", rel); err != nil {
					return err
				}
				return sh(g.repo, "git", "commit", "-q", "-m", "edit")
			})
			if err != nil {
				return err
			}
			*g.one = append(*g.one, d)
		}
	}
	mw, ma, mg, mgs := median(walk), median(apiFull), median(gitAll), median(gitAllSync)
	fmt.Println("## Full-scan republish after a one-file in-place edit")
	fmt.Printf("%-48s %12s\n", "bare lstat walk of the tree (floor)", ms(mw))
	fmt.Printf("%-48s %12s   %.2fx the floor\n", "prose Publish, package API", ms(ma), float64(ma)/float64(mw))
	if len(cliFull) > 0 {
		mc := median(cliFull)
		fmt.Printf("%-48s %12s\n", "prose publish, CLI process", ms(mc))
		fmt.Printf("%-48s %12s   git/prose-cli %.2fx\n", "git add -A && git commit (default fsync)", ms(mg), float64(mg)/float64(mc))
		fmt.Printf("%-48s %12s   git/prose-cli %.2fx\n", "git add -A && git commit (core.fsync=all)", ms(mgs), float64(mgs)/float64(mc))
	}
	fmt.Printf("%-48s %12s   git/prose-api %.2fx\n", "  (vs package API, default fsync)", "", float64(mg)/float64(ma))
	fmt.Println()
	mi, mo, mos := median(apiInformed), median(gitOne), median(gitOneSync)
	fmt.Println("## Informed publish naming the one changed file")
	fmt.Printf("%-48s %12s\n", "prose Publish{Changed: [file]}, package API", ms(mi))
	fmt.Printf("%-48s %12s   git/prose %.2fx\n", "git add FILE && git commit (default fsync)", ms(mo), float64(mo)/float64(mi))
	fmt.Printf("%-48s %12s   git/prose %.2fx\n", "git add FILE && git commit (core.fsync=all)", ms(mos), float64(mos)/float64(mi))
	fmt.Println()
	ms2 := median(skipped)
	fmt.Println("## Skipped vs rendered republish (package API, full scan)")
	fmt.Printf("%-48s %12s\n", "skipped (no change)", ms(ms2))
	fmt.Printf("%-48s %12s   rendered/skipped %.2fx\n", "rendered (one file changed)", ms(ma), float64(ma)/float64(ms2))
	fmt.Println()

	if *prose != "" && *chain > 0 && section["chain"] {
		if err := benchChain(ctx, base); err != nil {
			return err
		}
	}
	return nil
}

// benchChain builds a vault with a long receipt chain and times
// `prose receipts verify` and `prose log` on it.
func benchChain(ctx context.Context, base string) error {
	v, err := vault.Init(filepath.Join(base, "chain"), vault.InitOptions{Options: vault.Options{NoFsync: true}})
	if err != nil {
		return err
	}
	src := filepath.Join(base, "chain-src")
	os.MkdirAll(filepath.Join(src, "f"), 0o755)
	t0 := time.Now()
	for i := 0; i < *chain; i++ {
		// Every tenth publish changes the world-model; the rest are skips.
		os.WriteFile(filepath.Join(src, "f", "v.txt"), []byte(fmt.Sprint(i/10)), 0o644)
		if _, err := v.Publish(ctx, fmt.Sprintf("node-%d", i%5), src, vault.PublishOptions{}); err != nil {
			return err
		}
	}
	build := time.Since(t0)
	var ver, lg []time.Duration
	for k := 0; k < 5; k++ {
		d, err := timeIt(func() error { return sh(v.Root(), *prose, "receipts", "verify", "--quiet") })
		if err != nil {
			return err
		}
		ver = append(ver, d)
		d, err = timeIt(func() error { return sh(v.Root(), *prose, "log", "--quiet") })
		if err != nil {
			return err
		}
		lg = append(lg, d)
	}
	fmt.Printf("## A %d-receipt chain (built in %s, fsync off for the build)\n", *chain, build.Round(time.Millisecond))
	fmt.Printf("%-48s %12s   %.1f µs/receipt\n", "prose receipts verify", ms(median(ver)), float64(median(ver).Microseconds())/float64(*chain))
	fmt.Printf("%-48s %12s   %.1f µs/receipt\n", "prose log", ms(median(lg)), float64(median(lg).Microseconds())/float64(*chain))
	fmt.Println()
	return nil
}
