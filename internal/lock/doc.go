// Package lock is the cross-process writer lock: one writer at a time per
// vault, a bounded wait for the others, and an error that names the holder.
//
// The lock is an exclusive flock(2) on a lock file (for a vault,
// .prose/lock). The operating system releases it when the holding process
// exits or dies, so a crashed writer never leaves a vault locked: the package
// never holds a lock past the process. Each Acquire opens its own file
// description, so two Acquire calls in one process exclude each other as two
// processes do.
//
// While it holds the lock, the holder records who it is (pid, a label such as
// "prose publish", host name, start time) in a side file, the lock path plus
// ".holder". That record is informational only: a waiter uses it to say who
// it is waiting for, and a stale record left by a dead process blocks nobody.
//
// Readers never take the lock.
package lock
