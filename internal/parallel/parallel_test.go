package parallel

import (
	"sync/atomic"
	"testing"
)

func TestForCallsEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 1000} {
		calls := make([]atomic.Int32, n)
		For(n, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("n=%d: index %d called %d times", n, i, c)
			}
		}
	}
}

func TestWorkersRunsAtMostThatMany(t *testing.T) {
	for _, workers := range []int{1, 3, 8} {
		var running, peak atomic.Int32
		calls := make([]atomic.Int32, 200)
		Workers(len(calls), workers, func(i int) {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			calls[i].Add(1)
			running.Add(-1)
		})
		if p := peak.Load(); p > int32(workers) {
			t.Fatalf("workers=%d: %d ran at once", workers, p)
		}
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("workers=%d: index %d called %d times", workers, i, c)
			}
		}
	}
}
