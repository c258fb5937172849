package forme

import (
	"github.com/prose-store/prose/internal/lazyre"
	"strings"
)

// WakeSource is what can wake a node: ir-v0's wake_source.
type WakeSource string

// The three wake sources.
const (
	WakeInput    WakeSource = "input"
	WakeSelf     WakeSource = "self"
	WakeExternal WakeSource = "external"
)

// Continuity is a node's reading of its ### Continuity section.
type Continuity struct {
	Mode     WakeSource
	Declared bool   // a mode keyword was written
	Inferred bool   // no keyword; the mode was read from the wording
	Cadence  string // the text after "self-driven:", when given
	Text     string
	Pos      Pos
}

var (
	externalRe = lazyre.New(`(?i)\bexternal[- ]driven\b`)
	selfRe     = lazyre.New(`(?i)\bself[- ]driven\b\s*:?\s*([^\n]*)`)
	inputRe    = lazyre.New(`(?i)\binput[- ]driven\b`)
	cadenceRe  = lazyre.New(`(?i)\b(every|daily|hourly|weekly|monthly|nightly|cadence|poll|polls|polled|polling|cron|periodic|periodically|tick|ticks|schedule|scheduled)\b`)
)

// readContinuity reads the wake source. Keywords decide: external-driven,
// then self-driven, then input-driven (a node may declare both input- and
// self-driven wakes; ir-v0 calls it self-driven when it declares a cadence).
// Without a keyword, wording that names a cadence reads as self-driven and
// anything else as input-driven, the default.
func readContinuity(c *Contract) Continuity {
	secs := c.sections("continuity")
	out := Continuity{Mode: WakeInput}
	if len(secs) == 0 {
		return out
	}
	out.Pos = secs[0].Pos
	out.Text = c.body("continuity")
	t := out.Text
	switch {
	case externalRe().MatchString(t):
		out.Mode, out.Declared = WakeExternal, true
	case selfRe().MatchString(t):
		out.Mode, out.Declared = WakeSelf, true
		m := selfRe().FindStringSubmatch(t)
		out.Cadence = strings.TrimSpace(m[1])
	case inputRe().MatchString(t):
		out.Mode, out.Declared = WakeInput, true
	case strings.TrimSpace(t) == "":
	case cadenceRe().MatchString(t):
		out.Mode, out.Inferred = WakeSelf, true
	default:
		out.Inferred = true
	}
	return out
}
