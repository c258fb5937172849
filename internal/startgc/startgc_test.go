package startgc

import (
	"os"
	"runtime/debug"
	"strconv"
	"testing"
)

// TestRestore: the collector is off once the package has initialized, and
// Restore gives back the GOGC setting (100 unless the environment says).
func TestRestore(t *testing.T) {
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("after init the GC percent is %d, want -1 (off)", p)
	}
	Restore()
	want := 100
	if v, err := strconv.Atoi(os.Getenv("GOGC")); err == nil {
		want = v
	}
	p := debug.SetGCPercent(want)
	if p != want {
		t.Fatalf("after Restore the GC percent is %d, want %d", p, want)
	}
}
