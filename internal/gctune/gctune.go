// Package gctune sets how the garbage collector runs in a prose process.
//
// Go's collector is tuned for long-running servers: it keeps the heap
// within twice what is live, collecting as often as that takes. A prose
// command lives for tens of milliseconds and most of what it allocates
// stays live until it exits, so those collections free little and cost a
// lot: about 15 % of a one-file publish of a 10,000-file tree.
//
//   - While the packages initialize (importing this package turns the
//     collector off): the libraries behind the wiki, search and model
//     commands build their tables then, a few MB of which nothing is
//     garbage yet. A package initializes once its imports have, and among
//     the packages ready, in order of import path: this one, importing
//     only a few standard packages, runs before those whose paths sort
//     after it and that are not ready before it (the JSON Schema, search,
//     sanitizer and Markdown libraries among them), not before all.
//   - Command, which main calls first: the heap may grow to eleven times
//     what is live (GOGC=1000) but never past SoftLimit, so a small
//     command never collects at all. Once a collection finds more than
//     LargeLive bytes live, the command is a large one, and the collector
//     goes back to Go's defaults (GOGC=100, no limit): a large live heap
//     under a fixed limit would make the collector run over and over.
//   - History, for commands that read the whole history (log, receipts
//     verify): the heap may grow to five times what is live, never past
//     1 GiB.
//   - Pipeline, for ingest and enrich: Go's defaults (GOGC=100), but the
//     heap is held to PipelineLimit. A large ingest keeps a hundred MB or
//     more live at its one commit (the rendered pages) and would otherwise
//     let its heap grow to twice that; under the limit the collector runs
//     more often near the commit instead (Go bounds the collector's share
//     of the CPU, so a run whose live heap passes the limit slows, never
//     stops). 192 MiB keeps the peak of 1,000 real documents (16 MB)
//     at about 250 MB instead of 350 MB for about a sixth more CPU
//     (docs/benchmarks.md, "ingest at scale").
//
// GOGC or GOMEMLIMIT in the environment win over all of this.
package gctune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// SoftLimit bounds the heap of a small command; LargeLive is the live heap
// past which a command is a large one.
const (
	SoftLimit = 96 << 20
	LargeLive = 24 << 20
)

var (
	envPercent = debug.SetGCPercent(-1) // off while the packages initialize

	// mu orders the settings; tuned says Command's tuning is in force, so
	// the hook may end it (not when the environment sets the collector,
	// nor once History has set it).
	mu    sync.Mutex
	tuned bool
)

func fromEnv() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" }

// Command sets the collector for a command (see the package doc).
func Command() {
	if fromEnv() {
		debug.SetGCPercent(envPercent)
		return
	}
	mu.Lock()
	defer mu.Unlock()
	debug.SetGCPercent(1000)
	debug.SetMemoryLimit(SoftLimit)
	tuned = true
	armAfterGC()
}

// PipelineLimit is the heap limit of Pipeline.
const PipelineLimit = 192 << 20

// Pipeline sets the collector for ingest and enrich (see the package doc).
func Pipeline() {
	if fromEnv() {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	tuned = false
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(PipelineLimit)
}

// History sets the collector for a command that reads the whole history.
func History() {
	if fromEnv() {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	tuned = false
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(1 << 30)
}

// armAfterGC runs afterGC once the next collection has run: a cleanup of
// an object nothing references runs after the cycle that frees it.
func armAfterGC() {
	// 16 bytes: an object under 16 bytes without pointers may share a
	// block with others (the tiny allocator), and its cleanup might never
	// run.
	runtime.AddCleanup(new([16]byte), func(struct{}) { afterGC() }, struct{}{})
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

func afterGC() {
	mu.Lock()
	defer mu.Unlock()
	if !tuned {
		return
	}
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() == metrics.KindUint64 && liveSample[0].Value.Uint64() > LargeLive {
		tuned = false
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		return
	}
	armAfterGC()
}
