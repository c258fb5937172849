// Package progress shows a progress bar for long work on a terminal, and
// nothing at all otherwise. It is the one progress helper of the project:
// commands that read, hash, scan or write many things report through it.
//
// A Bar is safe to use when it is nil or disabled, so callers never branch
// on whether a terminal is present: progress.New returns a bar that draws
// only when its writer is a terminal, and every method is a no-op otherwise.
// Output goes to the writer given (stderr in commands), never to stdout, so
// piped and --json output stays clean.
package progress

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Unit says how a bar counts.
type Unit int

const (
	// Items counts things: files, pages, receipts.
	Items Unit = iota
	// Bytes counts bytes and shows a rate.
	Bytes
	// Steps shows the step under way and the time elapsed, no count: for
	// work of known phases but no meaningful size (a publish).
	Steps
)

// Options tune a bar.
type Options struct {
	// Force draws even when the writer is not a terminal (tests only).
	Force bool
	// Delay hides the bar until the work has run this long, so quick
	// commands stay silent. Zero means the default (300 ms unless a test
	// changed it with SetDefaultDelay); negative draws at once.
	Delay time.Duration
}

var defaultDelay atomic.Int64

func init() { defaultDelay.Store(int64(300 * time.Millisecond)) }

// SetDefaultDelay makes d the delay of every bar whose Options leave it zero
// and returns a function that restores the previous one. Only tests call it:
// a test of a command's bar on a terminal cannot rely on the work outlasting
// 300 ms on a fast machine.
func SetDefaultDelay(d time.Duration) (restore func()) {
	old := defaultDelay.Swap(int64(d))
	return func() { defaultDelay.Store(old) }
}

// Bar is a progress bar, or nothing. The zero value and nil are disabled.
type Bar struct {
	mu    sync.Mutex
	on    bool
	w     io.Writer
	total int64
	desc  string
	unit  Unit
	start time.Time
	delay time.Duration
	done  int64
	bar   *progressbar.ProgressBar
}

// IsTerminal reports whether w, or the writer under it (Raw), is a
// terminal.
func IsTerminal(w io.Writer) bool {
	if r, ok := w.(interface{ Raw() io.Writer }); ok {
		w = r.Raw()
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// New returns a bar of total units described by desc, drawn on w only when w
// is a terminal. A total of -1 means unknown (a spinner). Nothing is drawn
// until the work has run for Options.Delay, so quick commands stay silent.
func New(w io.Writer, total int64, desc string, unit Unit, opt ...Options) *Bar {
	var o Options
	if len(opt) > 0 {
		o = opt[0]
	}
	if r, ok := w.(interface{ Raw() io.Writer }); ok {
		// A writer that filters what it passes on (prose's stderr escapes
		// control characters) draws the bar on the terminal under it.
		w = r.Raw()
	}
	if w == nil || (!o.Force && !IsTerminal(w)) {
		return &Bar{}
	}
	if o.Delay == 0 {
		o.Delay = time.Duration(defaultDelay.Load())
	}
	return &Bar{on: true, w: w, total: total, desc: desc, unit: unit, start: time.Now(), delay: o.Delay}
}

// draw creates the underlying bar once the delay has passed; b.mu is held.
func (b *Bar) draw() {
	if b.bar != nil || time.Since(b.start) < b.delay {
		return
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription(b.desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(b.total > 0),
	}
	switch b.unit {
	case Bytes:
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowBytes(true))
	case Items:
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts())
	}
	b.bar = progressbar.NewOptions64(b.total, opts...)
	_ = b.bar.RenderBlank()
	_ = b.bar.Add64(b.done)
}

// Add advances the bar by n units.
func (b *Bar) Add(n int64) {
	if b == nil || !b.on {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	if b.bar == nil {
		b.draw()
		return
	}
	_ = b.bar.Add64(n)
}

// Describe changes the text shown before the bar.
func (b *Bar) Describe(desc string) {
	if b == nil || !b.on {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.desc = desc
	if b.bar != nil {
		b.bar.Describe(desc)
	}
}

// Finish completes and clears the bar.
func (b *Bar) Finish() {
	if b == nil || !b.on {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		_ = b.bar.Finish()
		_ = b.bar.Clear()
	}
	b.on = false
}

// Drawn reports whether anything has been drawn yet (tests).
func (b *Bar) Drawn() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bar != nil
}

// Enabled reports whether the bar draws anything.
func (b *Bar) Enabled() bool { return b != nil && b.on }

// Reader wraps r so that every read advances the bar by the bytes read.
func (b *Bar) Reader(r io.Reader) io.Reader {
	if !b.Enabled() {
		return r
	}
	return &reader{r: r, b: b}
}

// Writer wraps w so that every write advances the bar by the bytes written.
func (b *Bar) Writer(w io.Writer) io.Writer {
	if !b.Enabled() {
		return w
	}
	return &writer{w: w, b: b}
}

type reader struct {
	r io.Reader
	b *Bar
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.b.Add(int64(n))
	return n, err
}

type writer struct {
	w io.Writer
	b *Bar
}

func (w *writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.b.Add(int64(n))
	return n, err
}
