package progress

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestSilentWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 10, "files", Items)
	if b.Enabled() {
		t.Fatal("a bar on a bytes.Buffer is enabled")
	}
	b.Add(5)
	b.Describe("x")
	b.Finish()
	if buf.Len() != 0 {
		t.Fatalf("drew %q on a non-terminal", buf.String())
	}
	var nilBar *Bar
	nilBar.Add(1) // must not panic
	nilBar.Finish()
}

func TestDrawsWhenForced(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 200, "hashing", Bytes, Options{Force: true, Delay: -1})
	r := b.Reader(strings.NewReader(strings.Repeat("x", 100)))
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	if !b.Drawn() {
		t.Fatal("a forced bar with no delay did not draw")
	}
	if !strings.Contains(buf.String(), "hashing") {
		t.Fatalf("bar output %q lacks its description", buf.String())
	}
	b.Finish()
}

func TestDelayKeepsQuickWorkSilent(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 3, "quick", Items, Options{Force: true, Delay: 1 << 62})
	b.Add(3)
	b.Finish()
	if b.Drawn() || buf.Len() != 0 {
		t.Fatalf("quick work drew %q", buf.String())
	}
}
