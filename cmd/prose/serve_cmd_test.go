//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/refdata"
	"github.com/prose-store/prose/serve"
)

// TestServeSIGTERMMidRender runs prose serve on the hooks fixture, takes
// a delivery whose downstream render is held, and sends SIGTERM while the
// render is in flight: serve says it abandoned the render at a safe
// point and exits 0, fsck and receipts verify pass, the delivery's gateway
// receipt stands, and prose run then renders what was abandoned.
func TestServeSIGTERMMidRender(t *testing.T) {
	needGit(t)
	root := refdata.RepoRoot(t)
	dir := t.TempDir()
	v := filepath.Join(dir, "v")
	mustProse(t, "init", v)
	if out, err := exec.Command("cp", "-r", filepath.Join(root, "fixtures/runtime/hooks/src"), filepath.Join(root, "fixtures/runtime/hooks/render.sh"), v).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	mustProse(t, "--vault", v, "compile", "--activate")
	hold := filepath.Join(dir, "hold")
	os.MkdirAll(hold, 0o755)
	secret := "sigterm-test-secret"
	cmd := exec.Command(os.Args[0], "--vault", v, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "PROSE_TEST_CHILD=1", "HOOKS_HOLD="+hold, "PROSE_WEBHOOK_SECRET_EVENTS="+secret)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var log strings.Builder
	url := ""
	for url == "" {
		l, ok := <-lines
		if !ok {
			t.Fatalf("serve ended before listening:\n%s", log.String())
		}
		log.WriteString(l + "\n")
		if _, u, found := strings.Cut(l, "listening on "); found {
			url, _, _ = strings.Cut(u, " ")
		}
	}
	// The cold start renders every node; wait for it to settle.
	idle := func() {
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			resp, err := http.Get(url + "/status")
			if err != nil {
				t.Fatal(err)
			}
			var st struct{ Rendering, Queued []string }
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if len(st.Rendering) == 0 && len(st.Queued) == 0 {
				return
			}
		}
		t.Fatal("serve never settled")
	}
	idle()
	os.WriteFile(filepath.Join(hold, "hold-tally"), nil, 0o644)
	body := `{"orders":[{"id":"a"},{"id":"b"},{"id":"c"}]}`
	req, _ := http.NewRequest(http.MethodPost, url+"/hooks/events", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Hub-Signature-256", serve.SignGitHub(secret, []byte(body)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Fatalf("delivery: %d %s", resp.StatusCode, b)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(hold, "started-tally")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("tally's render never started")
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	for l := range lines {
		log.WriteString(l + "\n")
	}
	err = cmd.Wait()
	if err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "serve: stopped: the render of tally was abandoned at a safe point") {
		t.Fatalf("serve did not say what it abandoned:\n%s", log.String())
	}
	if strings.Contains(log.String(), secret) {
		t.Fatal("the log holds the secret")
	}
	if out, errs, code := prose(t, "--vault", v, "fsck"); code != 0 {
		t.Fatalf("fsck exit %d\n%s%s", code, out, errs)
	}
	if out := mustProse(t, "--vault", v, "receipts", "verify"); !strings.Contains(out, " 0 problems") {
		t.Fatalf("verify: %s", out)
	}
	if got, _ := os.ReadFile(filepath.Join(v, "published/events/orders.json")); string(got) != `[{"id":"a"},{"id":"b"},{"id":"c"}]` {
		t.Fatalf("the delivery is not the gateway's world-model: %q", got)
	}
	os.Remove(filepath.Join(hold, "hold-tally"))
	t.Setenv("HOOKS_HOLD", hold)
	out := mustProse(t, "--vault", v, "run")
	if !strings.Contains(out, "tally") || !strings.Contains(out, "rendered") {
		t.Fatalf("prose run after the abandoned render:\n%s", out)
	}
	if got, _ := os.ReadFile(filepath.Join(v, "published/tally/count.json")); string(got) != `{"count":3}`+"\n" {
		t.Fatalf("tally holds %q after the resume", got)
	}
}

// TestTriggerDataMapsJSONLikeServe: prose trigger --data FILE.json gives
// the gateway the world-model a serve delivery of the same body gives it
// (a top-level object, one file per key, so facets move one by one); a
// malformed payload is a usage error that publishes nothing.
func TestTriggerDataMapsJSONLikeServe(t *testing.T) {
	needGit(t)
	root := refdata.RepoRoot(t)
	dir := t.TempDir()
	v := filepath.Join(dir, "v")
	mustProse(t, "init", v)
	if out, err := exec.Command("cp", "-r", filepath.Join(root, "fixtures/runtime/hooks/src"), filepath.Join(root, "fixtures/runtime/hooks/render.sh"), v).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	mustProse(t, "--vault", v, "compile", "--activate")
	data := filepath.Join(dir, "event.json")
	os.WriteFile(data, []byte(`{"orders":[{"id":"a"},{"id":"b"}]}`), 0o644)
	out := mustProse(t, "--vault", v, "trigger", "events", "--data", data)
	if !strings.Contains(out, "tally") || strings.Contains(out, "digest   rendered") {
		t.Fatalf("trigger:\n%s", out)
	}
	if got, _ := os.ReadFile(filepath.Join(v, "published/events/orders.json")); string(got) != `[{"id":"a"},{"id":"b"}]` {
		t.Fatalf("events/orders.json = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(v, "published/tally/count.json")); string(got) != `{"count":2}`+"\n" {
		t.Fatalf("tally holds %q", got)
	}
	before := mustProse(t, "--vault", v, "receipts", "verify")
	os.WriteFile(data, []byte(`{"orders":[`), 0o644)
	if _, errs, code := prose(t, "--vault", v, "trigger", "events", "--data", data); code != 2 || !strings.Contains(errs, "not valid JSON") {
		t.Fatalf("malformed --data: exit %d: %s", code, errs)
	}
	if after := mustProse(t, "--vault", v, "receipts", "verify"); after != before {
		t.Fatalf("a refused payload changed the ledger: %s → %s", before, after)
	}
}
