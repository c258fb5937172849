package published

import "slices"

// The publish decision statuses.
const (
	StatusRendered = "rendered"
	StatusSkipped  = "skipped"
)

// Decide compares a snapshot's fingerprints with those of the node's last
// receipt (prev; hasPrev false when the node has none) and returns the
// publish status and the facets whose token moved: "@atomic" first, then the
// snapshot's facets in order, then facets of prev the snapshot no longer
// has, sorted. A facet appearing or disappearing counts as moved, since
// subscribers of it see a different token.
//
// Without a previous receipt every facet of the snapshot moved and the
// status is "rendered". Otherwise the status is "rendered" exactly when
// something moved, else "skipped".
// snap.Facets lists "@atomic" first, so moved does too whenever the whole
// truth moved.
func Decide(prev map[string]string, hasPrev bool, snap *Snapshot) (status string, moved []string) {
	if !hasPrev {
		return StatusRendered, slices.Clone(snap.Facets)
	}
	seen := make(map[string]bool, len(snap.Facets))
	for _, f := range snap.Facets {
		seen[f] = true
		if tok, ok := prev[f]; !ok || tok != snap.Fingerprints[f] {
			moved = append(moved, f)
		}
	}
	var gone []string
	for f := range prev {
		if !seen[f] {
			gone = append(gone, f)
		}
	}
	slices.Sort(gone)
	moved = append(moved, gone...)
	if len(moved) == 0 {
		return StatusSkipped, nil
	}
	return StatusRendered, moved
}
