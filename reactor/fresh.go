package reactor

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prose-store/prose/internal/lazyre"
	"github.com/prose-store/prose/published"
)

var everyRe = lazyre.New(`(?i)^(?:every\s+)?(\d+)?\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|weeks?)$`)

// ParseCadence reads a self-driven cadence: a Go duration ("15m", "1h30m"),
// "every N unit(s)" ("every 15 minutes", "every hour"), or one of hourly,
// daily, nightly, weekly. The text may carry prose after a comma, a
// semicolon, " — " or " (".
func ParseCadence(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	for _, sep := range []string{",", ";", " — ", " - ", " (", "."} {
		if i := strings.Index(t, sep); i > 0 {
			t = strings.TrimSpace(t[:i])
		}
	}
	t = strings.Trim(t, "`")
	switch strings.ToLower(t) {
	case "hourly":
		return time.Hour, nil
	case "daily", "nightly":
		return 24 * time.Hour, nil
	case "weekly":
		return 7 * 24 * time.Hour, nil
	}
	if d, err := time.ParseDuration(t); err == nil && d > 0 {
		return d, nil
	}
	if m := everyRe().FindStringSubmatch(strings.TrimSpace(t)); m != nil {
		n := 1
		if m[1] != "" {
			n, _ = strconv.Atoi(m[1])
		}
		unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[strings.ToLower(m[2])[0]]
		if n > 0 {
			return time.Duration(n) * unit, nil
		}
	}
	return 0, fmt.Errorf("cadence %q is not understood: write a duration (15m, 1h), \"every N minutes|hours|days\", hourly, daily or weekly", s)
}

// lapsedValidUntil returns the path of the first valid_until in the
// world-model that is before now ("" when none lapsed). Values are RFC 3339
// times or dates (a date lapses at its end, UTC).
func lapsedValidUntil(files map[string][]byte, now time.Time) string {
	if len(files) == 0 {
		return ""
	}
	truth, err := published.TruthOfFiles(files)
	if err != nil {
		return ""
	}
	var found []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if k == "valid_until" {
					if s, ok := c.(string); ok {
						if t, ok := parseTime(s); ok && now.After(t) {
							found = append(found, p)
						}
					}
					continue
				}
				walk(c, p)
			}
		case []any:
			for _, c := range x {
				walk(c, path)
			}
		}
	}
	walk(truth, "")
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	return found[0]
}

func parseTime(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.Add(24 * time.Hour), true
	}
	return time.Time{}, false
}
