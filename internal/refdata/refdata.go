// Package refdata locates, for tests, the repository root and the shared
// reference data (../shared beside the checkout: the OpenProse
// specification, its examples and the reference reactor's receipts and
// world-model versions). Conformance tests skip when the data is absent on
// a developer's machine and fail when it is absent under CI (CI=true).
package refdata

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot returns the directory holding go.mod, above the working
// directory of the test.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// Shared returns ../shared beside the repository joined with sub. When that
// path is absent the test is skipped, except under CI, where it fails.
func Shared(t testing.TB, sub ...string) string {
	t.Helper()
	dir := filepath.Join(append([]string{RepoRoot(t), "..", "shared"}, sub...)...)
	probe := dir
	if len(sub) == 0 {
		probe = filepath.Join(dir, "reference-data")
	}
	if _, err := os.Stat(probe); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("reference data missing under CI: %v", err)
		}
		t.Skipf("reference data absent: %v", err)
	}
	return dir
}
