package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// providerAt points both providers at a loopback server answering with
// handle, with key as their key.
func providerAt(t *testing.T, key string, handle http.HandlerFunc) {
	t.Helper()
	srv := httptest.NewServer(handle)
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", key)
	t.Setenv("PROSE_MODEL_TIMEOUT", "")
}

// vaultText is every byte a vault holds, its git objects decompressed:
// what a secret must never be found in.
func vaultText(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			b.Write(data)
		}
		return nil
	})
	cmd := exec.Command(needGit(t), "-C", dir, "cat-file", "--batch-all-objects", "--batch")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	b.Write(out)
	return b.String()
}

func ingestSource(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "deploy.md")
	if err := os.WriteFile(src, []byte("# Deploying\n\nWe deploy on Tuesdays.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestIngestReportsAnOKThatIsNotJSON: a base URL answering 200 with a web
// page makes `prose ingest` fail saying what came back — the status, the
// content type, the start of the page — and naming the base URL to check,
// never "the connection failed"; the key in the page is not quoted.
func TestIngestReportsAnOKThatIsNotJSON(t *testing.T) {
	const key = "ZZTOKEN123456"
	providerAt(t, key, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head><title>Welcome to nginx!</title></head><body>session "+key+"</body></html>")
	})
	src := ingestSource(t)
	for _, spec := range []string{"openai-chat:local", "anthropic:claude-test"} {
		dir := newIngestVault(t)
		out, errs, code := prose(t, "--vault", dir, "ingest", "--model", spec, src)
		if code != 1 {
			t.Fatalf("%s: exit %d\n%s%s", spec, code, out, errs)
		}
		for _, w := range []string{"HTTP 200", "not JSON", "text/html", "Welcome to nginx!", "_BASE_URL", "nothing was written"} {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", spec, w, errs)
			}
		}
		if strings.Contains(errs, "connection failed") || strings.Contains(errs, key) || strings.Contains(vaultText(t, dir), key) {
			t.Errorf("%s: stderr:\n%s", spec, errs)
		}
	}
}

// TestIngestTimeoutNamesItsFlag: --model-timeout bounds one attempt, the
// timeout's hint names the flag, and a bad value is a usage error.
func TestIngestTimeoutNamesItsFlag(t *testing.T) {
	providerAt(t, "k", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
	src := ingestSource(t)
	dir := newIngestVault(t)
	_, errs, code := prose(t, "--vault", dir, "ingest", "--model", "openai-chat:local", "--model-timeout", "80ms", src)
	if code != 1 || !strings.Contains(errs, "no answer within 80ms") || !strings.Contains(errs, "--model-timeout DURATION") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	t.Setenv("PROSE_MODEL_TIMEOUT", "60ms")
	if _, errs, code = prose(t, "--vault", dir, "ingest", "--model", "openai-chat:local", src); code != 1 || !strings.Contains(errs, "no answer within 60ms") {
		t.Fatalf("$PROSE_MODEL_TIMEOUT: exit %d\n%s", code, errs)
	}
	for _, bad := range []string{"soon", "-5s", "0"} {
		if _, errs, code = prose(t, "--vault", dir, "ingest", "--model", "openai-chat:local", "--model-timeout", bad, src); code != 2 || !strings.Contains(errs, "--model-timeout") || !strings.Contains(errs, "30m") {
			t.Errorf("--model-timeout %s: exit %d\n%s", bad, code, errs)
		}
	}
}

// TestAKeyOfNoKnownShapeNeverLeaves: a compatible server's token with no
// key shape, echoed back in a 401, reaches no output, no file of the
// vault (its failed receipt and git objects included) and no recording.
func TestAKeyOfNoKnownShapeNeverLeaves(t *testing.T) {
	const key = "ZZTOKEN123456"
	providerAt(t, key, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+key+` (ZZTOKEN1****456)"}}`)
	})
	src := ingestSource(t)
	for _, spec := range []string{"openai-chat:local", "openai:gpt-test", "anthropic:claude-test"} {
		dir := newIngestVault(t)
		rec := filepath.Join(t.TempDir(), "rec.json")
		out, errs, code := prose(t, "--vault", dir, "ingest", "--model", spec, "--record", rec, src)
		logOut, logErr, _ := prose(t, "--vault", dir, "--json", "log")
		recData, _ := os.ReadFile(rec)
		stored := vaultText(t, dir)
		for where, text := range map[string]string{"output": out + errs, "log": logOut + logErr, "vault": stored, "recording": string(recData)} {
			if strings.Contains(text, "ZZTOKEN") {
				t.Errorf("%s: the key is in the %s", spec, where)
			}
		}
		if code != 1 || !strings.Contains(errs, "HTTP 401") || !strings.Contains(errs, "[redacted]") {
			t.Fatalf("%s: exit %d\n%s%s", spec, code, out, errs)
		}
		if !strings.Contains(stored, "HTTP 401") {
			t.Fatalf("%s: the vault holds no failed receipt quoting the error", spec)
		}
	}
}
