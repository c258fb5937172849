package wiki

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/browsertest"
)

// TestPagesInABrowser opens a page and a folder index in headless Chromium
// with no network: both render with the embedded styles, a palette
// component is styled, and a script or handler placed in the file by hand
// does not run (the Content-Security-Policy blocks it).
func TestPagesInABrowser(t *testing.T) {
	w := newWiki(t)
	var removed []string
	mustUpdate(t, w, func(tx *Tx) error {
		if _, _, err := tx.New("ml/attention", NewOptions{Template: "concept", Title: "Attention"}); err != nil {
			return err
		}
		r, err := tx.WriteSlot("ml/attention", "summary", `<div class="alert alert-info" id="al">Palette alert.</div><p class="plain" id="pl">Plain.</p>`+
			`<script>document.title="ran"</script><img src="x.png" onerror="document.title='ran'">`)
		removed = r.Removed
		if err != nil {
			return err
		}
		_, err = tx.WriteSlot("ml/README", "description", "<p>Machine learning pages.</p>")
		return err
	})
	if !strings.Contains(strings.Join(removed, ";"), "script") || !strings.Contains(strings.Join(removed, ";"), "onerror") {
		t.Fatalf("sanitizer did not report the script and the handler: %v", removed)
	}
	slot, _ := w.SlotOf("ml/attention", "summary")
	if strings.Contains(slot, "<script") || strings.Contains(slot, "onerror") {
		t.Fatalf("script survived sanitizing: %s", slot)
	}
	page := filepath.Join(w.Root(), "ml", "attention.html")
	index := filepath.Join(w.Root(), "ml", "README.html")

	// A copy of the page with a script and a handler put in by hand.
	data, _ := os.ReadFile(page)
	hostile := filepath.Join(t.TempDir(), "hostile.html")
	evil := `<script>document.title="ran";window.ran=1</script><img src="missing.png" onerror="document.title='ran';window.ran=2"><div onclick="x()">c</div>`
	os.WriteFile(hostile, []byte(strings.Replace(string(data), "Palette alert.", "Palette alert."+evil, 1)), 0o644)

	b := browsertest.Start(t)
	for _, f := range []string{page, index} {
		b.Open(t, f)
		if n := browsertest.Colors(t, b.Screenshot(t)); n < 3 {
			t.Errorf("%s: the screenshot looks blank (%d colors)", f, n)
		}
		font := browsertest.Eval[string](t, b, `getComputedStyle(document.body).fontFamily`)
		if !strings.Contains(font, "system-ui") {
			t.Errorf("%s: the embedded styles did not apply (font %q)", f, font)
		}
	}
	b.Open(t, page)
	alertBg := browsertest.Eval[string](t, b, `getComputedStyle(document.querySelector(".alert-info")).backgroundColor`)
	plainBg := browsertest.Eval[string](t, b, `getComputedStyle(document.querySelector("p.plain")).backgroundColor`)
	alertBorder := browsertest.Eval[string](t, b, `getComputedStyle(document.querySelector(".alert-info")).borderLeftWidth`)
	if alertBg == plainBg || alertBg == "rgba(0, 0, 0, 0)" || alertBorder != "4px" {
		t.Errorf("alert-info is not styled: background %q (plain %q), border %q", alertBg, plainBg, alertBorder)
	}
	// Phone width: nothing overflows sideways.
	b.SetViewport(t, 390, 844)
	b.Open(t, page)
	if over := browsertest.Eval[bool](t, b, `document.documentElement.scrollWidth > window.innerWidth`); over {
		t.Error("the page overflows a phone's width")
	}
	b.SetViewport(t, 1024, 768)

	b.Open(t, hostile)
	if title := browsertest.Eval[string](t, b, `document.title`); title != "Attention" {
		t.Errorf("a hand-placed script ran: title %q", title)
	}
	if ran := browsertest.Eval[bool](t, b, `typeof window.ran !== "undefined"`); ran {
		t.Error("a hand-placed script or handler ran")
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll("script").length`); n != 1 {
		t.Errorf("the hostile copy should hold the script (found %d): the test would prove nothing", n)
	}
}
