package model

import (
	"fmt"
	"time"
)

// Now returns the time a request may mention (a prompt's today): the
// PROSE_NOW setting read through getenv when set — RFC 3339 or a date
// (2006-01-02) — else the wall clock. Recordings made with PROSE_NOW set
// replay on any day.
func Now(getenv func(string) string) (time.Time, error) {
	v := getenv("PROSE_NOW")
	if v == "" {
		return time.Now(), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, &Error{Op: "read PROSE_NOW", Kind: KindConfig, Message: fmt.Sprintf("PROSE_NOW=%q is neither a date nor an RFC 3339 time", v), Hint: "write e.g. PROSE_NOW=2026-01-31 or PROSE_NOW=2026-01-31T12:00:00Z"}
}
