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
	// A chain left in -dir by an earlier run is reused and grown.
	v, err := vault.Open(filepath.Join(base, "chain"), vault.Options{NoFsync: true})
	if err != nil {
		v, err = vault.Init(filepath.Join(base, "chain"), vault.InitOptions{Options: vault.Options{NoFsync: true}})
	}
	if err != nil {
		return err
	}
	built := 0
	if err := v.Receipts(func(vault.Record) error { built++; return nil }); err != nil {
		return err
	}
	src := filepath.Join(base, "chain-src")
	if err := os.MkdirAll(filepath.Join(src, "f"), 0o755); err != nil {
		return err
	}
	fmt.Println("## Reading history: the CLI on a receipt chain (5 nodes, one publish in ten rendered)")
	fmt.Println("# wall: median elapsed time; cpu: median user+system time of the process, which")
	fmt.Println("# other load on the machine does not inflate")
	fmt.Printf("%-10s %-24s %12s %14s %12s %14s\n", "receipts", "command", "wall", "wall/receipt", "cpu", "cpu/receipt")
	start := time.Now()
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
		if built > n {
			continue // the reused chain is already longer
		}
		for _, args := range [][]string{{"receipts", "verify"}, {"log"}} {
			wall, cpu, err := medianRun(v.Root(), args)
			if err != nil {
				return err
			}
			fmt.Printf("%-10d %-24s %9.1f ms %11.1f µs %9.1f ms %11.1f µs\n", n, "prose "+strings.Join(args, " "),
				ms(wall), us(wall, n), ms(cpu), us(cpu, n))
		}
	}
	fmt.Printf("(chain read and grown in %s, fsync off)\n\n", time.Since(start).Round(time.Second))
	return nil
}

func ms(d time.Duration) float64        { return float64(d.Microseconds()) / 1000 }
func us(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / 1000 / float64(n) }

// medianRun runs prose with args in dir *runs times, after one warm-up,
// and returns the median wall time and the median CPU time (user+system);
// output is discarded.
func medianRun(dir string, args []string) (wall, cpu time.Duration, err error) {
	var walls, cpus []time.Duration
	for k := 0; k <= *runs; k++ {
		cmd := exec.Command(*prose, append(args, "--quiet")...)
		cmd.Dir = dir
		t := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, 0, fmt.Errorf("prose %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if k > 0 {
			walls = append(walls, time.Since(t))
			cpus = append(cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	return median(walls), median(cpus), nil
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}
