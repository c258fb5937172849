package testtmp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// runChild runs this test binary's TestTempDirProbe with args and with
// TMPDIR set to tmpdir (unset when empty), and
// returns the temporary directory it saw and whether that was a tmpfs.
func runChild(t *testing.T, tmpdir string, args ...string) (dir string, ram bool) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"-test.run=^TestTempDirProbe$", "-test.v"}, args...)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	if tmpdir != "" {
		env = append(env, "TMPDIR="+tmpdir)
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if _, rest, ok := strings.Cut(line, "probe: "); ok {
			if _, err := fmt.Sscanf(rest, "%s %t", &dir, &ram); err != nil {
				t.Fatalf("probe line %q: %v", line, err)
			}
			return dir, ram
		}
	}
	t.Fatalf("no probe line in\n%s", out)
	return "", false
}

// startTMPDIR is TMPDIR as the test binary started, before Main.
var startTMPDIR = os.Getenv("TMPDIR")

// TestTempDirProbe logs where t.TempDir put its directory and whether that
// is a tmpfs (the children TestShortRunsUseRAM starts run only this test),
// and checks that this run put it where Main says.
func TestTempDirProbe(t *testing.T) {
	dir := t.TempDir()
	t.Logf("probe: %s %t", dir, isRAM(dir))
	want := testing.Short() && startTMPDIR == "" && isRAM(ramDir)
	moved := strings.HasPrefix(dir, filepath.Join(ramDir, "prose-test-"))
	if startTMPDIR == "" && moved != want {
		t.Errorf("temporary directory %s: moved to %s %t, want %t (short %t)", dir, ramDir, moved, want, testing.Short())
	}
}

func TestShortRunsUseRAM(t *testing.T) {
	if !isRAM(ramDir) {
		t.Skip(ramDir + " is not a tmpfs here")
	}
	// -short, TMPDIR unset: a fresh directory on the RAM file system,
	// removed when the tests are done.
	dir, ram := runChild(t, "", "-test.short")
	if !ram || !strings.HasPrefix(dir, ramDir+string(filepath.Separator)+"prose-test-") {
		t.Errorf("short run: temporary directory %s (tmpfs %t), want one under %s/prose-test-*", dir, ram, ramDir)
	}
	runDir := filepath.Dir(filepath.Dir(dir)) // TMPDIR/TestName123/001
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Errorf("short run left %s behind (stat: %v)", runDir, err)
	}
	// The full run keeps the default TMPDIR.
	if dir, _ := runChild(t, ""); strings.HasPrefix(dir, ramDir) {
		t.Errorf("full run: temporary directory %s, want the default one, not %s", dir, ramDir)
	}
	// A TMPDIR the environment sets is kept, short or not.
	mine := t.TempDir()
	if dir, _ := runChild(t, mine, "-test.short"); !strings.HasPrefix(dir, mine) {
		t.Errorf("short run with TMPDIR=%s: temporary directory %s", mine, dir)
	}
}
