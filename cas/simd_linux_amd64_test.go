package cas

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// TestBlake3SeesTheCPUsSIMD: prose builds zeebo/blake3 against its own
// stand-in for klauspost/cpuid (internal/cpuid, go.mod's replace), whose
// answers pick blake3's AVX2 and SSE4.1 code. They are the kernel's: the
// flags of /proc/cpuinfo, which name avx2 only when the OS saves the YMM
// registers too. A stand-in answering no would hash correctly but slowly,
// which no other test sees.
func TestBlake3SeesTheCPUsSIMD(t *testing.T) {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, line := range strings.Split(string(data), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "flags" {
			flags = strings.Fields(value)
			break
		}
	}
	if len(flags) == 0 {
		t.Fatal("/proc/cpuinfo lists no flags")
	}
	for _, f := range []struct {
		id   cpuid.FeatureID
		flag string
	}{{cpuid.AVX2, "avx2"}, {cpuid.SSE4, "sse4_1"}} {
		if got, want := cpuid.CPU.Has(f.id), slices.Contains(flags, f.flag); got != want {
			t.Errorf("cpuid.CPU.Has(%s) = %v, /proc/cpuinfo says %v", f.flag, got, want)
		}
	}
	if cpuid.CPU.Has(cpuid.UNKNOWN) {
		t.Error("cpuid.CPU.Has(UNKNOWN) = true")
	}
}
