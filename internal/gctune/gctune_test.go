package gctune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func percent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func limit() int64 { return debug.SetMemoryLimit(-1) }

var sink [][]byte

// percentAtInit is the GC percent once the package has initialized.
var percentAtInit = percent()

// TestCommand: importing the package turned the collector off; Command
// lets a small command grow to eleven times its live heap under the soft
// limit, and a collection that finds a large live heap puts Go's defaults
// back. History then sets its own tuning, which the hook leaves alone.
func TestCommand(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("the environment sets the collector")
	}
	if p := percentAtInit; p != -1 {
		t.Fatalf("after init the GC percent is %d, want -1 (off)", p)
	}
	Command()
	if p, l := percent(), limit(); p != 1000 || l != SoftLimit {
		t.Fatalf("after Command: GOGC %d, limit %d; want 1000, %d", p, l, SoftLimit)
	}
	// A small live heap: collections leave the tuning as it is.
	runtime.GC()
	time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine
	if p := percent(); p != 1000 {
		t.Fatalf("a small live heap changed GOGC to %d", p)
	}
	// A large live heap: the next collection goes back to the defaults.
	for i := 0; i < 2*LargeLive/(1<<20); i++ {
		sink = append(sink, make([]byte, 1<<20))
	}
	deadline := time.Now().Add(5 * time.Second)
	for percent() != 100 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if p, l := percent(), limit(); p != 100 || l != math.MaxInt64 {
		t.Fatalf("with %d MiB live: GOGC %d, limit %d; want 100 and no limit", len(sink), p, l)
	}
	sink = nil
	// History after Command: the hook Command armed must leave History's
	// tuning alone, even when a collection then finds a large live heap.
	runtime.GC()
	Command()
	History()
	for i := 0; i < 2*LargeLive/(1<<20); i++ {
		sink = append(sink, make([]byte, 1<<20))
	}
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if p, l := percent(), limit(); p != 400 || l != 1<<30 {
		t.Fatalf("after History: GOGC %d, limit %d; want 400, 1 GiB", p, l)
	}
	sink = nil
}

// TestPipeline: ingest and enrich run with Go's GC percent under
// PipelineLimit, and a collection that finds a large live heap leaves
// that limit in force (it does not fall back to no limit).
func TestPipeline(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("the environment sets the collector")
	}
	defer debug.SetGCPercent(percent())
	defer debug.SetMemoryLimit(limit())
	Command()
	Pipeline()
	if p, l := percent(), limit(); p != 100 || l != PipelineLimit {
		t.Fatalf("after Pipeline: GOGC %d, limit %d; want 100, %d", p, l, PipelineLimit)
	}
	sink = append(sink, make([]byte, 2*LargeLive))
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	sink = nil
	if l := limit(); l != PipelineLimit {
		t.Fatalf("after a large collection the limit is %d, want %d", l, PipelineLimit)
	}
}
