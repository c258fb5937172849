// Command bench-parallel measures parallel ingest against a loopback fake
// provider (not a test; minutes): N sources, a fixed latency per call, at
// each --jobs, wall time against the ideal (calls × latency ÷ jobs). With
// -prefix it also reports, per API, how much of each request repeats the
// one before it in the provider's cache order (tools, system, messages).
// With -estimate it reports, per API, `prose ingest --estimate` beside the
// calls and tokens the run then used (the fake's count). With -enrich it
// measures `prose enrich --all` after an ingest at each --jobs instead.
//
//	go build -o /tmp/prose ./cmd/prose
//	go run ./scripts/bench-parallel -prose /tmp/prose -sources 40 -latency 1s -jobs 1,2,4,8
//	go run ./scripts/bench-parallel -prose /tmp/prose -prefix
//	go run ./scripts/bench-parallel -prose /tmp/prose -estimate
//	go run ./scripts/bench-parallel -prose /tmp/prose -enrich -latency 500ms -jobs 1,8
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prose-store/prose/internal/fakewiki"
	"github.com/prose-store/prose/model/fakeserver"
)

type cleanup struct{ fns []func() }

func (c *cleanup) Cleanup(f func()) { c.fns = append(c.fns, f) }

func main() {
	bin := flag.String("prose", "/tmp/prose", "the prose binary")
	n := flag.Int("sources", 40, "number of sources")
	latency := flag.Duration("latency", time.Second, "latency of each call")
	jobsList := flag.String("jobs", "1,2,4,8", "the --jobs values")
	prefix := flag.Bool("prefix", false, "report prefix stability per API instead")
	prefixJobs := flag.String("prefix-jobs", "4", "the --jobs of the -prefix runs")
	estimate := flag.Bool("estimate", false, "report --estimate beside the tokens used per API instead")
	enrich := flag.Bool("enrich", false, "measure enrich --all at each --jobs instead")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "bench-parallel")
	check(err)
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "docs")
	check(os.MkdirAll(src, 0o755))
	for i := 0; i < *n; i++ {
		body := fmt.Sprintf("# Runbook %02d\n\nStep %d of the on-call rota: check the queue depth, then page the owner of service %02d.\n\n## Escalation\n\nAfter %d minutes, escalate to the duty manager.\n", i, i, i, 10+i)
		check(os.WriteFile(filepath.Join(src, fmt.Sprintf("runbook-%02d.md", i)), []byte(body), 0o644))
	}
	var c cleanup
	defer func() {
		for _, f := range c.fns {
			f()
		}
	}()
	if *estimate {
		fmt.Printf("%d sources, --jobs %s; tokens by the fake's rule (four bytes each), input as sent\n\n", *n, *prefixJobs)
		fmt.Println("| API | calls estimated | calls made | input estimated | input used | input est. ÷ used | output estimated | output used | output est. ÷ used |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|")
		for _, api := range []struct{ api, spec string }{{fakeserver.Responses, "openai:fake"}, {fakeserver.Chat, "openai-chat:fake"}, {fakeserver.Anthropic, "anthropic:fake"}} {
			fm := &fakewiki.Model{}
			srv := fm.Serve(&c, api.api, fakeserver.Options{})
			est := estimateOf(*bin, tmp, api.api, srv, api.spec, src)
			if len(srv.Bodies()) != 0 {
				fail("--estimate asked the model")
			}
			run(*bin, tmp, api.api, srv, api.spec, *prefixJobs, src)
			u := srv.Used()
			fmt.Printf("| %s | %d | %d | %d | %d | %.2f | %d | %d | %.2f |\n", api.api, est.Calls, len(srv.Bodies()), est.Input, u.Input,
				float64(est.Input)/float64(u.Input), est.Output, u.Output, float64(est.Output)/float64(u.Output))
		}
		return
	}
	if *prefix {
		fmt.Printf("%d sources, --jobs %s; requests in arrival order\n\n", *n, *prefixJobs)
		fmt.Println("| API | requests | median shared with the previous request | smallest shared with the previous request | median fixed part (tools + system) | start with the previous request's whole fixed part | start with the whole fixed part of the last request of their kind |")
		fmt.Println("|---|---|---|---|---|---|---|")
		for _, api := range []struct{ api, spec string }{{fakeserver.Responses, "openai:fake"}, {fakeserver.Chat, "openai-chat:fake"}, {fakeserver.Anthropic, "anthropic:fake"}} {
			fm := &fakewiki.Model{}
			srv := fm.Serve(&c, api.api, fakeserver.Options{})
			run(*bin, tmp, api.api, srv, api.spec, *prefixJobs, src)
			var shared, fixed []int
			whole, least := 0, -1
			for _, p := range srv.Prefixes() {
				shared = append(shared, p.Shared)
				fixed = append(fixed, p.Fixed)
				if p.Whole {
					whole++
				}
				if least < 0 || p.Shared < least {
					least = p.Shared
				}
			}
			kinds := 0
			for _, k := range srv.Kinds() {
				if k.Whole {
					kinds++
				}
			}
			fmt.Printf("| %s | %d | %d B | %d B | %d B | %d of %d | %d of %d |\n", api.api, len(shared)+1, median(shared), least, median(fixed), whole, len(shared), kinds, len(srv.Kinds()))
		}
		return
	}
	if *enrich {
		fmt.Printf("enrich --all of the wiki of %d sources, %s per call\n\n", *n, *latency)
		jobsTable(*jobsList, *latency, "the first row", func(js string) (time.Duration, int) {
			fm := &fakewiki.Model{}
			srv := fm.Serve(&c, fakeserver.Responses, fakeserver.Options{})
			run(*bin, tmp, "enrich"+js, srv, "openai:fake", "8", src)
			slow := fm.Serve(&c, fakeserver.Responses, fakeserver.Options{Latency: *latency})
			wall := runArgs(*bin, filepath.Join(tmp, "vault-enrich"+js), slow, "enrich", "--all", "--jobs", js, "--model", "openai:fake")
			return wall, len(slow.Bodies())
		})
		return
	}
	fmt.Printf("%d sources, %s per call\n\n", *n, *latency)
	jobsTable(*jobsList, *latency, "--jobs 1", func(js string) (time.Duration, int) {
		fm := &fakewiki.Model{}
		srv := fm.Serve(&c, fakeserver.Responses, fakeserver.Options{Latency: *latency})
		wall := run(*bin, tmp, "jobs"+js, srv, "openai:fake", js, src)
		return wall, len(srv.Bodies())
	})
}

// jobsTable prints the table of one run a --jobs value of jobsList: its
// calls, wall time, the ideal (calls × latency ÷ jobs), their ratio and
// the speed-up over the first row (named first in the header).
func jobsTable(jobsList string, latency time.Duration, first string, runJobs func(js string) (wall time.Duration, calls int)) {
	fmt.Println("| --jobs | calls | wall | ideal (calls × latency ÷ jobs) | wall ÷ ideal | speed-up over " + first + " |")
	fmt.Println("|---|---|---|---|---|---|")
	var base time.Duration
	for _, js := range strings.Split(jobsList, ",") {
		jobs, err := strconv.Atoi(js)
		check(err)
		wall, calls := runJobs(js)
		ideal := time.Duration(calls) * latency / time.Duration(jobs)
		if base == 0 {
			base = wall
		}
		fmt.Printf("| %d | %d | %.1f s | %.1f s | %.2f× | %.2f× |\n", jobs, calls, wall.Seconds(), ideal.Seconds(), wall.Seconds()/ideal.Seconds(), base.Seconds()/wall.Seconds())
	}
}

func run(bin, tmp, name string, srv *fakeserver.Server, spec, jobs, src string) time.Duration {
	vault := filepath.Join(tmp, "vault-"+name)
	env := srv.Env()
	cmdEnv := append(os.Environ(), "OPENAI_BASE_URL="+env("OPENAI_BASE_URL"), "OPENAI_API_KEY="+env("OPENAI_API_KEY"),
		"ANTHROPIC_BASE_URL="+env("ANTHROPIC_BASE_URL"), "ANTHROPIC_API_KEY="+env("ANTHROPIC_API_KEY"), "PROSE_NOW=2026-01-31")
	initCmd := exec.Command(bin, "init", vault)
	initCmd.Env = cmdEnv
	out, err := initCmd.CombinedOutput()
	if err != nil {
		fail("init: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--vault", vault, "ingest", "--jobs", jobs, "--model", spec, src)
	cmd.Env = cmdEnv
	start := time.Now()
	out, err = cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		fail("ingest --jobs %s: %v\n%s", jobs, err, out)
	}
	return wall
}

type estimateTotal struct {
	Calls  int   `json:"calls"`
	Input  int64 `json:"input_tokens"`
	Output int64 `json:"output_tokens"`
}

// estimateOf runs `prose ingest --estimate --json` in a fresh vault of
// the name the run will use, and returns its totals.
func estimateOf(bin, tmp, name string, srv *fakeserver.Server, spec, src string) estimateTotal {
	vault := filepath.Join(tmp, "vault-"+name)
	env := srv.Env()
	cmdEnv := append(os.Environ(), "OPENAI_BASE_URL="+env("OPENAI_BASE_URL"), "OPENAI_API_KEY="+env("OPENAI_API_KEY"),
		"ANTHROPIC_BASE_URL="+env("ANTHROPIC_BASE_URL"), "ANTHROPIC_API_KEY="+env("ANTHROPIC_API_KEY"), "PROSE_NOW=2026-01-31")
	initCmd := exec.Command(bin, "init", vault)
	initCmd.Env = cmdEnv
	if out, err := initCmd.CombinedOutput(); err != nil {
		fail("init: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--vault", vault, "--json", "ingest", "--estimate", "--model", spec, src)
	cmd.Env = cmdEnv
	out, err := cmd.Output()
	if err != nil {
		fail("ingest --estimate: %v\n%s", err, out)
	}
	var doc struct {
		Total estimateTotal `json:"total"`
	}
	check(json.Unmarshal(out, &doc))
	os.RemoveAll(vault) // the run makes its own
	return doc.Total
}

// runArgs runs prose with args in vault against srv and returns its wall time.
func runArgs(bin, vault string, srv *fakeserver.Server, args ...string) time.Duration {
	env := srv.Env()
	cmd := exec.Command(bin, append([]string{"--vault", vault}, args...)...)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+env("OPENAI_BASE_URL"), "OPENAI_API_KEY="+env("OPENAI_API_KEY"), "PROSE_NOW=2026-01-31")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		fail("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return wall
}

func median(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int(nil), xs...)
	sort.Ints(s)
	return s[len(s)/2]
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-parallel: "+format+"\n", args...)
	os.Exit(1)
}
