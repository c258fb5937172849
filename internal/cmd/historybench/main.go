// Command historybench measures reading history: `prose receipts verify`
// and `prose log` on vaults of growing receipt chains (by default 5,000 and
// 50,000 receipts), each figure the median of several runs of the CLI
// process. The chain grows through each size in one vault, so the larger
// sizes reuse the smaller ones' receipts. It is run by scripts/bench.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prose-store/prose/vault"
)

var (
	sizes = flag.String("chains", "5000,50000", "receipt counts at which the history is timed, ascending")
	runs  = flag.Int("runs", 5, "measured runs per figure")
	prose = flag.String("prose", "", "prose binary (required)")
	work  = flag.String("dir", "", "directory for the vault (default: a temporary one, removed after)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "historybench:", err)
		os.Exit(1)
	}
}

func run() error {
	if *prose == "" {
		return fmt.Errorf("-prose BINARY is required")
	}
	var counts []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-chains: %q is not a receipt count", s)
		}
		counts = append(counts, n)
	}
	sort.Ints(counts)
	base := *work
	if base == "" {
		d, err := os.MkdirTemp("", "historybench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		base = d
	}
	ctx := context.Background()
	v, err := vault.Init(filepath.Join(base, "chain"), vault.InitOptions{Options: vault.Options{NoFsync: true}})
	if err != nil {
		return err
	}
	src := filepath.Join(base, "chain-src")
	if err := os.MkdirAll(filepath.Join(src, "f"), 0o755); err != nil {
		return err
	}
	fmt.Println("## Reading history: the CLI on a receipt chain (5 nodes, one publish in ten rendered)")
	fmt.Printf("%-10s %-24s %12s %14s\n", "receipts", "command", "median", "per receipt")
	built, start := 0, time.Now()
	for _, n := range counts {
		for ; built < n; built++ {
			// Every tenth publish changes the world-model; the rest are skips.
			if err := os.WriteFile(filepath.Join(src, "f", "v.txt"), []byte(fmt.Sprint(built/10)), 0o644); err != nil {
				return err
			}
			if _, err := v.Publish(ctx, fmt.Sprintf("node-%d", built%5), src, vault.PublishOptions{}); err != nil {
				return err
			}
		}
		for _, args := range [][]string{{"receipts", "verify"}, {"log"}} {
			d, err := medianRun(v.Root(), args)
			if err != nil {
				return err
			}
			fmt.Printf("%-10d %-24s %9.1f ms %11.1f µs\n", n, "prose "+strings.Join(args, " "), float64(d.Microseconds())/1000, float64(d.Nanoseconds())/1000/float64(n))
		}
	}
	fmt.Printf("(chain built in %s with fsync off)\n\n", time.Since(start).Round(time.Second))
	return nil
}

// medianRun runs prose with args in dir *runs times, after one warm-up,
// and returns the median wall time; output is discarded.
func medianRun(dir string, args []string) (time.Duration, error) {
	var ds []time.Duration
	for k := 0; k <= *runs; k++ {
		cmd := exec.Command(*prose, append(args, "--quiet")...)
		cmd.Dir = dir
		t := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("prose %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if k > 0 {
			ds = append(ds, time.Since(t))
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], nil
}
