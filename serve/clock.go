package serve

import (
	"sort"
	"sync"
	"time"
)

// Clock is the server's time: schedules, cadences, valid_until and
// signature tolerances read it. Tests inject a ManualClock.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// WallClock is the real clock.
type WallClock struct{}

// Now implements Clock.
func (WallClock) Now() time.Time { return time.Now() }

// After implements Clock.
func (WallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// ManualClock is a clock that moves only when told: Set fires every timer
// whose time has come.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []manualTimer
	// Waiting receives (without blocking) each time a timer is made, so a
	// test knows the server has planned its next event.
	Waiting chan time.Time
}

type manualTimer struct {
	at time.Time
	c  chan time.Time
}

// NewManualClock returns a clock reading now.
func NewManualClock(now time.Time) *ManualClock {
	return &ManualClock{now: now, Waiting: make(chan time.Time, 64)}
}

// Now implements Clock.
func (m *ManualClock) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// After implements Clock.
func (m *ManualClock) After(d time.Duration) <-chan time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := make(chan time.Time, 1)
	at := m.now.Add(d)
	if d <= 0 {
		c <- m.now
		return c
	}
	m.timers = append(m.timers, manualTimer{at: at, c: c})
	select {
	case m.Waiting <- at:
	default:
	}
	return c
}

// Set moves the clock to t and fires the timers that are due.
func (m *ManualClock) Set(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = t
	kept := m.timers[:0]
	for _, tm := range m.timers {
		if !tm.at.After(t) {
			tm.c <- t
			continue
		}
		kept = append(kept, tm)
	}
	m.timers = kept
}

// Pending returns the times of the timers not yet fired, earliest first.
func (m *ManualClock) Pending() []time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]time.Time, 0, len(m.timers))
	for _, tm := range m.timers {
		out = append(out, tm.at)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}
