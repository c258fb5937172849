// Package testtmp is for test binaries only: it puts the temporary files of
// a short test run (go test -short) on a RAM file system.
//
// Why: t.TempDir lives under $TMPDIR, /tmp by default. On an ext4 file
// system without a journal (as on the 2-core build machine), creating a
// file or directory makes the kernel look for recently deleted inodes to
// skip, reading inode-table blocks on every creation; the tests create and
// delete hundreds of thousands of files, and that search was most of the
// system time of go test -short ./... (perf: find_get_block_common under
// recently_deleted under ext4_create and ext4_mkdir). On tmpfs the same
// tests spend less than half the system time.
//
// Only the short run moves: the full go test ./... keeps $TMPDIR on the
// disk it is on. The product code is unchanged either way — every fsync and
// rename still happens, tmpfs just makes them cheap — and the tests that
// check the order of those calls (fault injection, strace) see the same
// calls. A TMPDIR set in the environment is always kept.
package testtmp

import (
	"flag"
	"os"
	"testing"
)

// ramDir is a RAM file system a short run's temporary files may go to.
const ramDir = "/dev/shm"

// Main runs the tests of m, as a TestMain calls it, and returns the exit
// code for os.Exit. Under -short, with TMPDIR unset and ramDir a tmpfs it
// can write to, it first points TMPDIR at a fresh directory there (so
// t.TempDir, os.MkdirTemp and child processes use it) and removes that
// directory when the tests are done.
func Main(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if testing.Short() && os.Getenv("TMPDIR") == "" && isRAM(ramDir) {
		if dir, err := os.MkdirTemp(ramDir, "prose-test-"); err == nil {
			os.Setenv("TMPDIR", dir)
			defer os.RemoveAll(dir)
			defer os.Unsetenv("TMPDIR")
		}
	}
	return m.Run()
}
