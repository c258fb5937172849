// Package parallel runs independent iterations of a loop on every core. It
// owns no state and never decides order: callers write results into slots
// indexed by iteration and read them after For returns.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls fn(0) … fn(n-1), spread over GOMAXPROCS goroutines, and returns
// when every call has returned. fn must be safe to call concurrently for
// different i.
func For(n int, fn func(i int)) { Workers(n, runtime.GOMAXPROCS(0), fn) }

// Workers is For with the number of goroutines given: for loops that wait
// on the file system far more than on the processor.
func Workers(n, workers int, fn func(i int)) {
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}
