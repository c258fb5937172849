// Package cpuid stands in for github.com/klauspost/cpuid/v2 in prose's
// build (the replace directive in prose's go.mod). Its one user there is
// zeebo/blake3, which asks it two questions at init: can this CPU and OS
// run AVX2, and SSE4.1 code. The library answers them by running its
// whole detection in its initializer — some forty CPUID instructions,
// each a trap to the hypervisor on a virtual machine, ≈ 0.3–0.4 ms of
// every prose command's start (docs/benchmarks.md). golang.org/x/sys/cpu,
// linked into prose anyway and already initialized, knows both answers,
// the operating system's support for the AVX registers included.
//
// Only the part of the library's API that blake3 uses is here; a library
// that needs more fails to build, and this is where to add it.
package cpuid

import "golang.org/x/sys/cpu"

// FeatureID names a CPU feature.
type FeatureID int

// The features blake3 asks about.
const (
	UNKNOWN FeatureID = iota
	AVX2              // AVX2 instructions, with the OS saving the YMM registers
	SSE4              // SSE4.1 instructions
)

// CPUInfo answers feature questions about the CPU the process runs on.
type CPUInfo struct{}

// CPU is the CPU the process runs on.
var CPU CPUInfo

// Has reports whether the CPU (and, for AVX2, the OS) supports id.
func (CPUInfo) Has(id FeatureID) bool {
	switch id {
	case AVX2:
		return cpu.X86.HasAVX2
	case SSE4:
		return cpu.X86.HasSSE41
	}
	return false
}
