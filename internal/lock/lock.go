package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gofrs/flock"
)

// HolderSuffix is appended to the lock path to name the holder record.
const HolderSuffix = ".holder"

// Holder describes the process that holds (or held) a lock.
type Holder struct {
	PID   int       `json:"pid"`
	Who   string    `json:"who"`  // what the holder is doing, e.g. "prose publish"
	Host  string    `json:"host"` // the holder's host name
	Since time.Time `json:"since"`
}

// Lock is a held writer lock. Release it when done; the operating system
// releases it if the process exits first.
type Lock struct {
	mu     sync.Mutex
	fl     *flock.Flock
	path   string
	holder Holder
}

// Acquire takes the exclusive lock on the file at path, creating the file if
// needed (its directory must exist). While another process holds the lock it
// polls with a growing interval until timeout has passed; a timeout of zero
// tries once, a negative timeout waits until ctx is done. who says what the
// caller is doing and is shown to anyone who waits.
//
// When the wait ends without the lock, Acquire returns a *HeldError naming
// the holder (errors.Is(err, ErrLocked) holds); when ctx ends first it
// returns an error wrapping ctx.Err().
func Acquire(ctx context.Context, path string, timeout time.Duration, who string) (*Lock, error) {
	start := time.Now()
	fl := flock.New(path, flock.SetPermissions(0o644))
	delay := 2 * time.Millisecond
	for {
		ok, err := fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("acquire lock %s: %w", path, err)
		}
		if ok {
			return newLock(fl, path, who), nil
		}
		waited := time.Since(start)
		if timeout >= 0 && waited >= timeout {
			// Report the wait the caller asked for, not the few extra
			// milliseconds of polling.
			return nil, heldError(path, timeout)
		}
		wait := delay
		if timeout >= 0 && timeout-waited < wait {
			wait = timeout - waited
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			h, _ := ReadHolder(path)
			return nil, fmt.Errorf("acquire lock %s: gave up waiting for %s: %w", path, describe(h), ctx.Err())
		case <-t.C:
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
}

// TryAcquire takes the lock if it is free and otherwise returns a *HeldError
// at once.
func TryAcquire(path, who string) (*Lock, error) {
	return Acquire(context.Background(), path, 0, who)
}

func newLock(fl *flock.Flock, path, who string) *Lock {
	host, _ := os.Hostname()
	l := &Lock{fl: fl, path: path, holder: Holder{PID: os.Getpid(), Who: who, Host: host, Since: time.Now()}}
	// The record is informational: failing to write it must not fail the
	// lock, so the error is dropped.
	_ = writeHolder(path, l.holder)
	return l
}

// Path returns the lock file's path.
func (l *Lock) Path() string { return l.path }

// Holder returns this lock's holder record.
func (l *Lock) Holder() Holder { return l.holder }

// Release empties the holder record and releases the lock. Releasing an
// already released lock does nothing.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fl == nil {
		return nil
	}
	// Still holding the lock, so the record is ours to clear. It is
	// emptied, not removed: the next holder writes into the same file
	// rather than creating one (a new inode, and a freed one, per write).
	_ = os.Truncate(l.path+HolderSuffix, 0)
	err := l.fl.Unlock()
	cerr := l.fl.Close()
	l.fl = nil
	if err != nil {
		return fmt.Errorf("release lock %s: %w", l.path, err)
	}
	if cerr != nil {
		return fmt.Errorf("release lock %s: %w", l.path, cerr)
	}
	return nil
}

// ReadHolder returns the holder record of the lock at path. The record may
// be missing or empty (no holder, or a holder that has not written it yet) or stale
// (a holder that died); treat it as a hint.
func ReadHolder(path string) (*Holder, error) {
	data, err := os.ReadFile(path + HolderSuffix)
	if err != nil {
		return nil, fmt.Errorf("read lock holder %s: %w", path, err)
	}
	var h Holder
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("read lock holder %s: %w", path, err)
	}
	return &h, nil
}

// writeHolder replaces the holder record, in place: the file stays from
// one holder to the next (Release empties it), so taking the lock creates
// no file. Only the lock holder writes it; a reader that comes while it is
// written may find no record or a partial one, which reads as no record
// (the record is a hint).
func writeHolder(path string, h Holder) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	f, err := os.OpenFile(path+HolderSuffix, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ErrLocked matches every *HeldError with errors.Is.
var ErrLocked = errors.New("locked by another process")

// HeldError reports that a lock could not be taken because another process
// holds it.
type HeldError struct {
	Path   string        // the lock file
	Holder *Holder       // the holder's record, nil if unknown
	Waited time.Duration // how long the caller waited: its timeout
}

func heldError(path string, waited time.Duration) *HeldError {
	h, _ := ReadHolder(path)
	return &HeldError{Path: path, Holder: h, Waited: waited}
}

// Error reads, for example: vault is locked by pid 1234 (prose publish,
// since 12:01:02); waited 60s — retry later or raise --lock-timeout.
func (e *HeldError) Error() string {
	msg := "vault is locked by " + describe(e.Holder)
	if e.Waited > 0 {
		msg += "; waited " + formatWait(e.Waited)
	}
	return msg + " — retry later or raise --lock-timeout"
}

// Is makes errors.Is(err, ErrLocked) true for a *HeldError.
func (e *HeldError) Is(target error) bool { return target == ErrLocked }

// describe names a holder: "pid 1234 (prose publish, since 12:01:02)".
func describe(h *Holder) string {
	if h == nil || h.PID == 0 {
		return "another process"
	}
	s := fmt.Sprintf("pid %d", h.PID)
	if me, err := os.Hostname(); err == nil && h.Host != "" && h.Host != me {
		s += " on " + printable(h.Host)
	}
	var details []string
	if h.Who != "" {
		details = append(details, printable(h.Who))
	}
	if !h.Since.IsZero() {
		since := h.Since.Local()
		layout := "15:04:05"
		if since.Format(time.DateOnly) != time.Now().Format(time.DateOnly) {
			layout = time.DateTime
		}
		details = append(details, "since "+since.Format(layout))
	}
	if len(details) > 0 {
		s += " (" + strings.Join(details, ", ") + ")"
	}
	return s
}

// printable makes a field of a holder record, which any process could have
// written, safe to print in one line: control characters become spaces,
// invalid UTF-8 becomes "?", and it is cut to 80 characters.
func printable(s string) string {
	const limit = 80
	out := []rune{}
	for _, r := range strings.ToValidUTF8(s, "?") {
		if len(out) == limit {
			return string(out) + "…"
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			r = ' '
		} else if r == utf8.RuneError {
			r = '?'
		}
		out = append(out, r)
	}
	return string(out)
}

// formatWait prints whole seconds ("60s") for waits of a second or more and
// milliseconds below.
func formatWait(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%ds", int64(d.Round(time.Second)/time.Second))
	}
	return d.Round(time.Millisecond).String()
}
