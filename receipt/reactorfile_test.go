//go:build unix

package receipt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestVerifyReactorFileRefuses: named pipes, devices and directories are
// refused before anything is read (a pipe never blocks the open), and so
// are files beyond the size limit, ledgers with too many elements and
// elements holding too many values.
func TestVerifyReactorFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte("["), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxReactorLedger+1); err != nil {
		t.Fatal(err)
	}
	many := filepath.Join(dir, "many.json")
	os.WriteFile(many, []byte("["+strings.Repeat("{},", MaxReactorReceipts)+"{}]"), 0o644)
	deep := filepath.Join(dir, "deep.json")
	os.WriteFile(deep, []byte("[["+strings.Repeat("0,", maxReceiptValues)+"0]]"), 0o644)
	tests := []struct {
		path string
		want error
		text string
	}{
		{fifo, ErrNotRegular, "named pipe"},
		{"/dev/zero", ErrNotRegular, "character device"},
		{dir, ErrNotRegular, "directory"},
		{big, ErrTooLarge, "limit"},
		{many, nil, "more than 100000 elements"},
		{deep, nil, "more than 10000 values"},
	}
	for _, tt := range tests {
		_, err := VerifyReactorFile(context.Background(), tt.path)
		if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("VerifyReactorFile(%s): %v; want %v mentioning %q", tt.path, err, tt.want, tt.text)
		}
	}
}

// TestVerifyReactorFileStopsWhenCancelled: a cancelled context stops the
// read.
func TestVerifyReactorFileStopsWhenCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.json")
	os.WriteFile(path, []byte("[]"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := VerifyReactorFile(ctx, path); !errors.Is(err, context.Canceled) {
		t.Fatalf("VerifyReactorFile with a cancelled context: %v", err)
	}
	if rep, err := VerifyReactorFile(context.Background(), path); err != nil || rep.Receipts != 0 {
		t.Fatalf("empty ledger: %+v %v", rep, err)
	}
}
