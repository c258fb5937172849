// Package testknob holds the limits a test may lower, so that a short run
// (go test -short) can show a bound on an input a fraction of the size the
// product's limit needs. The product never sets them: unset, every limit is
// the product's own constant. The full test run shows each bound at the
// product's limit.
package testknob

import "sync/atomic"

var toolWriteBytes atomic.Int64

// ToolWriteBytes is the most slot HTML and meta one agent loop's tool calls
// may write: limit (ingest.MaxToolWriteBytes), unless a test lowered it.
func ToolWriteBytes(limit int) int {
	if n := toolWriteBytes.Load(); n > 0 {
		return int(n)
	}
	return limit
}

// SetToolWriteBytes makes ToolWriteBytes n (0: the product's limit) and
// returns a function that restores the previous value. Use it only in tests:
//
//	defer testknob.SetToolWriteBytes(512 << 10)()
func SetToolWriteBytes(n int) (restore func()) {
	old := toolWriteBytes.Swap(int64(n))
	return func() { toolWriteBytes.Store(old) }
}

var spillBytes atomic.Int64

// SpillBytes is how many bytes of written pages a wiki transaction holds
// in memory before it spills them to a file: limit, unless a test lowered
// it.
func SpillBytes(limit int) int {
	if n := spillBytes.Load(); n > 0 {
		return int(n)
	}
	return limit
}

// SetSpillBytes makes SpillBytes n (0: the product's limit) and returns a
// function that restores the previous value. Use it only in tests.
func SetSpillBytes(n int) (restore func()) {
	old := spillBytes.Swap(int64(n))
	return func() { spillBytes.Store(old) }
}
