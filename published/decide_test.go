package published

import (
	"slices"
	"testing"
)

func TestDecide(t *testing.T) {
	snap := &Snapshot{
		Facets:       []string{"@atomic", "x", "y"},
		Fingerprints: map[string]string{"@atomic": "A1", "x": "X1", "y": "Y1"},
	}
	tests := []struct {
		name    string
		prev    map[string]string
		hasPrev bool
		status  string
		moved   []string
	}{
		{"no previous receipt", nil, false, "rendered", []string{"@atomic", "x", "y"}},
		{"nothing moved", map[string]string{"@atomic": "A1", "x": "X1", "y": "Y1"}, true, "skipped", nil},
		{"one facet moved", map[string]string{"@atomic": "A0", "x": "X1", "y": "Y0"}, true, "rendered", []string{"@atomic", "y"}},
		{"root file moved", map[string]string{"@atomic": "A0", "x": "X1", "y": "Y1"}, true, "rendered", []string{"@atomic"}},
		{"new facet", map[string]string{"@atomic": "A1", "x": "X1"}, true, "rendered", []string{"y"}},
		{"facets gone", map[string]string{"@atomic": "A1", "x": "X1", "y": "Y1", "w": "W", "v": "V"}, true, "rendered", []string{"v", "w"}},
		{"previous cold start", map[string]string{"@atomic": "cold-start"}, true, "rendered", []string{"@atomic", "x", "y"}},
		{"other algorithm", map[string]string{"@atomic": "sha256:A1", "x": "sha256:X1", "y": "sha256:Y1"}, true, "rendered", []string{"@atomic", "x", "y"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, moved := Decide(tc.prev, tc.hasPrev, snap)
			if status != tc.status || !slices.Equal(moved, tc.moved) {
				t.Errorf("Decide = %s %q, want %s %q", status, moved, tc.status, tc.moved)
			}
		})
	}
	// The result never aliases the snapshot's facet list.
	_, moved := Decide(nil, false, snap)
	moved[0] = "changed"
	if snap.Facets[0] != "@atomic" {
		t.Error("Decide returned the snapshot's own slice")
	}
}
