package receipt

import (
	"context"
	"errors"
	"fmt"
	"github.com/prose-store/prose/internal/fsmode"
	"io"
	"os"
	"syscall"
)

// MaxReactorLedger is the largest reactor receipts.json VerifyReactorFile
// reads: the ledger is parsed whole, and parsed JSON takes many times its
// size in memory (docs/limits.md). Reference ledgers hold well under 1 MiB.
const MaxReactorLedger = 16 << 20

// ErrNotRegular is wrapped by the error for a reactor ledger path that is
// not a regular file (a named pipe, a device such as /dev/zero, a
// directory): such a source may never end.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error for a reactor ledger larger than
// MaxReactorLedger.
var ErrTooLarge = errors.New("larger than the limit")

// VerifyReactorFile reads the reactor ledger at path and verifies it as
// VerifyReactorLedger does. It refuses, before reading anything, a path that
// is not a regular file and a file larger than MaxReactorLedger; it opens
// the file without blocking and stops between reads when ctx is done.
func VerifyReactorFile(ctx context.Context, path string) (Report, error) {
	data, err := readReactorFile(ctx, path)
	if err != nil {
		return Report{}, err
	}
	return VerifyReactorLedger(data)
}

func readReactorFile(ctx context.Context, path string) ([]byte, error) {
	check := func(fi os.FileInfo) error {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is %w (%s); pass a receipts.json file", path, ErrNotRegular, fsmode.Describe(fi.Mode()))
		}
		if fi.Size() > MaxReactorLedger {
			return fmt.Errorf("%s holds %d bytes, %w of %d bytes (%d MiB) for a reactor ledger (see docs/limits.md)", path, fi.Size(), ErrTooLarge, MaxReactorLedger, MaxReactorLedger>>20)
		}
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(fi); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should the path become a named pipe after the stat, the
	// open does not wait for a writer, and the check below refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := check(fi); err != nil {
		return nil, err
	}
	data := make([]byte, 0, fi.Size())
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := f.Read(buf)
		data = append(data, buf[:n]...)
		if len(data) > MaxReactorLedger {
			return nil, fmt.Errorf("%s grew past %d bytes while it was read, %w of %d bytes for a reactor ledger (see docs/limits.md)", path, len(data), ErrTooLarge, MaxReactorLedger)
		}
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
