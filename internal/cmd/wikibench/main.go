// Command wikibench measures `prose wiki` operations through the CLI, one
// process per operation, on wikis of two sizes (1,000 and 10,000 pages by
// default), and prints each figure with the large/small ratio. The page set
// is seeded through the package API in one receipt; every measured figure
// is a median. It is run by scripts/bench-wiki.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

var (
	sizes   = flag.String("sizes", "1000,10000", "page counts to compare (small,large)")
	runs    = flag.Int("runs", 21, "measured runs of each write")
	queries = flag.Int("queries", 100, "search queries (one process each)")
	prose   = flag.String("prose", "", "prose binary")
	work    = flag.String("dir", "", "working directory (default: a temporary one)")
	seedDir = flag.String("seed", "", "only seed a vault of the last size into `DIR` (for profiling), then exit")
)

var words = strings.Fields("attention transformer gradient sourdough pasta roman empire river mountain protocol ledger receipt " +
	"fingerprint canonical harbor violin orbit glacier compiler vector tensor bread oven salt flour castle bridge lantern " +
	"copper falcon meadow quartz saffron tundra willow zephyr amber basalt cedar delta ember fjord garnet hazel iris jasper")

func main() {
	flag.Parse()
	if *prose == "" && *seedDir == "" {
		fail(fmt.Errorf("-prose BIN is required"))
	}
	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "wikibench")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		var n int
		fmt.Sscan(s, &n)
		ns = append(ns, n)
	}
	if *seedDir != "" {
		if err := seed(*seedDir, ns[len(ns)-1]); err != nil {
			fail(err)
		}
		return
	}
	results := make([]map[string]time.Duration, len(ns))
	order := []string{"new", "write-slot", "set-meta", "search", "lint", "rebuild"}
	for i, n := range ns {
		v := filepath.Join(dir, fmt.Sprintf("v%d", n))
		start := time.Now()
		if err := seed(v, n); err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "seeded %d pages in %s\n", n, time.Since(start).Round(time.Millisecond))
		results[i] = measure(v, n)
	}
	fmt.Printf("## prose wiki through the CLI (one process per operation; medians)\n\n")
	fmt.Printf("| operation |")
	for _, n := range ns {
		fmt.Printf(" %d pages |", n)
	}
	fmt.Printf(" ratio |\n|---|")
	for range ns {
		fmt.Printf("---|")
	}
	fmt.Printf("---|\n")
	for _, op := range order {
		fmt.Printf("| %s |", op)
		for i := range ns {
			fmt.Printf(" %s |", ms(results[i][op]))
		}
		fmt.Printf(" %.2f× |\n", float64(results[len(ns)-1][op])/float64(results[0][op]))
	}
	fmt.Printf("\nCPU time (user + system) of the same processes, medians:\n\n| operation |")
	for _, n := range ns {
		fmt.Printf(" %d pages |", n)
	}
	fmt.Printf(" ratio |\n|---|")
	for range ns {
		fmt.Printf("---|")
	}
	fmt.Printf("---|\n")
	for _, op := range order {
		fmt.Printf("| %s |", op)
		var first, last time.Duration
		for i, n := range ns {
			c := median(cpuOf[fmt.Sprint(n, op)])
			if i == 0 {
				first = c
			}
			last = c
			fmt.Printf(" %s |", ms(c))
		}
		fmt.Printf(" %.2f× |\n", float64(last)/float64(max(first, time.Millisecond)))
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "wikibench:", err)
	os.Exit(1)
}

// seed makes a vault whose wiki holds n pages, 10 per folder, 10 folders
// per top-level folder, in one receipt.
func seed(dir string, n int) error {
	v, err := vault.Init(dir, vault.InitOptions{})
	if err != nil {
		return err
	}
	defer v.Close()
	w, err := wiki.Open(v)
	if err != nil {
		return err
	}
	_, err = w.Update(context.Background(), func(tx *wiki.Tx) error {
		for i := range n {
			p := pagePath(i)
			body := fmt.Sprintf("<p>Page %d about %s and %s, with %s.</p>", i, words[i%len(words)], words[(i/7)%len(words)], words[(i/49)%len(words)])
			if _, _, err := tx.New(p, wiki.NewOptions{Template: "concept", Title: fmt.Sprintf("%s %d", words[i%len(words)], i),
				Slots: map[string]string{"summary": body, "body": body}}); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

func pagePath(i int) string { return fmt.Sprintf("t%03d/s%d/p%d", i/100, (i/10)%10, i) }

// cpuOf collects the CPU time (user + system) of each measured process,
// keyed like the wall-time figures.
var cpuOf = map[string][]time.Duration{}
var cpuKey string

func run(v string, args ...string) time.Duration {
	cmd := exec.Command(*prose, append([]string{"--vault", v}, args...)...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if cmd.ProcessState != nil && cpuKey != "" {
		cpuOf[cpuKey] = append(cpuOf[cpuKey], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || args[1] != "lint" {
			fail(fmt.Errorf("prose %s: %v\n%s", strings.Join(args, " "), err, out))
		}
	}
	return d
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func measure(v string, n int) map[string]time.Duration {
	res := map[string]time.Duration{}
	// Warm the caches a long-lived vault has (sum cache, search index).
	run(v, "wiki", "search", "warm")
	var ds []time.Duration
	cpuKey = fmt.Sprint(n, "new")
	for i := range *runs {
		ds = append(ds, run(v, "wiki", "new", fmt.Sprintf("t000/s0/bench%d", i), "--template", "note"))
	}
	res["new"] = median(ds)
	ds = nil
	cpuKey = fmt.Sprint(n, "write-slot")
	for i := range *runs {
		ds = append(ds, run(v, "wiki", "write-slot", pagePath((i*37)%n), "body", "--content", fmt.Sprintf("<p>Rewritten %d.</p>", i)))
	}
	res["write-slot"] = median(ds)
	ds = nil
	cpuKey = fmt.Sprint(n, "set-meta")
	for i := range *runs {
		ds = append(ds, run(v, "wiki", "set-meta", pagePath((i*53)%n), fmt.Sprintf("rank:=%d", i)))
	}
	res["set-meta"] = median(ds)
	ds = nil
	cpuKey = fmt.Sprint(n, "search")
	for i := range *queries {
		ds = append(ds, run(v, "wiki", "search", words[i%len(words)]+" "+words[(i*3)%len(words)]))
	}
	res["search"] = median(ds)
	cpuKey = fmt.Sprint(n, "lint")
	res["lint"] = run(v, "wiki", "lint")
	// A template change, so rebuild re-renders every shell.
	tdir := filepath.Join(v, filepath.FromSlash(wiki.TemplateDir))
	os.MkdirAll(tdir, 0o755)
	src := builtinConcept(v)
	os.WriteFile(filepath.Join(tdir, "concept.html"), []byte(strings.Replace(src, `class="slot lead"`, `class="slot lead restyled"`, 1)), 0o644)
	cpuKey = fmt.Sprint(n, "rebuild")
	res["rebuild"] = run(v, "wiki", "rebuild")
	cpuKey = ""
	return res
}

// builtinConcept returns the built-in concept template's source.
func builtinConcept(v string) string {
	data, err := wiki.BuiltinTemplateSource("concept")
	if err != nil {
		fail(err)
	}
	return data
}
