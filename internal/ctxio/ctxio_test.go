package ctxio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReaderStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader(ctx, strings.NewReader(strings.Repeat("x", 100)))
	buf := make([]byte, 10)
	if n, err := r.Read(buf); n != 10 || err != nil {
		t.Fatalf("before cancel: %d, %v", n, err)
	}
	cancel()
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %d, %v; want 0, context.Canceled", n, err)
	}
	// A context that can never end reads straight through.
	var out bytes.Buffer
	if _, err := io.Copy(&out, Reader(context.Background(), strings.NewReader("abc"))); err != nil || out.String() != "abc" {
		t.Fatalf("background: %q, %v", out.String(), err)
	}
}
