package main

import (
	"os"
	"runtime/debug"
)

// historyMemory tunes the garbage collector for a command that reads the
// whole history (log, receipts verify): it allocates many small values that
// all stay live to the end, so the default collector runs over and over
// for nothing (≈ 20 % of `receipts verify` on 5,000 receipts). The heap may
// grow to five times what is live, never past 1 GiB, where the collector
// works as usual. GOGC or GOMEMLIMIT in the environment win.
func historyMemory() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(1 << 30)
}
