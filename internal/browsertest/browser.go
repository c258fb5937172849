package browsertest

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser is one headless Chromium with a fresh profile.
type Browser struct {
	ctx    context.Context
	cancel func()
}

// find returns the Chromium executable, or "".
func find() string {
	if p := os.Getenv("PROSE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Start starts a browser for the test and stops it when the test ends. It
// skips the test when no browser is installed, unless CI=true.
func Start(t testing.TB) *Browser {
	t.Helper()
	exe := find()
	if exe == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (.ci/run installs the Debian package chromium)")
		}
		t.Skip("chromium is not installed; apt-get install chromium to run browser tests")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("mute-audio", true),
		// No network: every host resolves nowhere and the proxy is closed.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.ProxyServer("127.0.0.1:9"),
		chromedp.WindowSize(1024, 768),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, tcancel := context.WithTimeout(ctx, 90*time.Second)
	if err := chromedp.Do(ctx); err != nil {
		tcancel()
		cancel()
		acancel()
		if os.Getenv("CI") == "true" {
			t.Fatalf("start chromium: %v", err)
		}
		t.Skipf("chromium does not start here: %v", err)
	}
	b := &Browser{ctx: ctx, cancel: func() { tcancel(); cancel(); acancel() }}
	t.Cleanup(b.cancel)
	return b
}

// Open loads a local file and waits for its body.
func (b *Browser) Open(t testing.TB, path string) {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
}

// SetViewport sets the window size in CSS pixels (a phone is 390×844).
func (b *Browser) SetViewport(t testing.TB, w, h int64) {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(w, h)); err != nil {
		t.Fatal(err)
	}
}

// Eval evaluates a JavaScript expression through the DevTools protocol
// (which a page's Content-Security-Policy does not restrict).
func Eval[T any](t testing.TB, b *Browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// Screenshot returns a PNG of the viewport.
func (b *Browser) Screenshot(t testing.TB) []byte {
	t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return buf
}

// Colors counts the distinct colors of a PNG (sampled every 4 pixels): a
// blank page has one.
func Colors(t testing.TB, pngData []byte) int {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	seen := map[[4]uint32]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 4 {
		for x := r.Min.X; x < r.Max.X; x += 4 {
			cr, cg, cb, ca := img.At(x, y).RGBA()
			seen[[4]uint32{cr, cg, cb, ca}] = true
		}
	}
	return len(seen)
}
