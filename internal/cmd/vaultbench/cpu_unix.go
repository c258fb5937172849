//go:build unix

package main

import (
	"syscall"
	"time"
)

// childrenCPU is the user+system time of every child process waited for
// so far.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
