package forme

import (
	"bytes"
	"encoding/json"
)

// ManifestKind and ManifestVersion identify the ir-v0 compile-phase IR.
const (
	ManifestKind    = "openprose.compile-phase-ir"
	ManifestVersion = 2
)

// Manifest is the compiled intent: the ir-v0 compile-phase IR plus the
// documented additions ids, wiring, requirements, patterns, instances,
// tests and ingress (a reader that ignores unknown keys still accepts it). Every slice
// is non-nil so it encodes as [] rather than null.
type Manifest struct {
	Kind                 string               `json:"kind"`
	Version              int                  `json:"version"`
	Sources              []ManifestSource     `json:"sources"`
	Topology             Topology             `json:"topology"`
	Canonicalizers       []Canonicalizer      `json:"canonicalizers"`
	Postconditions       []Postcondition      `json:"postconditions"`
	ContractFingerprints map[string]string    `json:"contract_fingerprints"`
	Diagnostics          []ManifestDiagnostic `json:"diagnostics"`

	IDs          map[string]string `json:"ids"`
	Wiring       []Binding         `json:"wiring"`
	Requirements []Requirement     `json:"requirements"`
	Patterns     []Pattern         `json:"patterns"`
	Instances    []Instance        `json:"instances"`
	Tests        []TestSpec        `json:"tests"`
	Ingress      []Ingress         `json:"ingress"`
}

// ManifestSource is one discovered contract file.
type ManifestSource struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
}

// Topology is Forme's wired graph.
type Topology struct {
	Nodes       []TopologyNode `json:"nodes"`
	Edges       []Edge         `json:"edges"`
	EntryPoints []string       `json:"entry_points"`
	Acyclic     bool           `json:"acyclic"`
}

// TopologyNode is one mounted node.
type TopologyNode struct {
	Node                string     `json:"node"`
	ContractFingerprint string     `json:"contract_fingerprint"`
	WakeSource          WakeSource `json:"wake_source"`
}

// Canonicalizer is a node's compiled canonicalizer: ir-v0's node, artifact
// and facets, plus the spec itself in canon.Spec's JSON shape.
type Canonicalizer struct {
	Node     string    `json:"node"`
	Artifact string    `json:"artifact"`
	Facets   []string  `json:"facets"`
	Spec     CanonSpec `json:"spec"`
}

// Postcondition is a node's postcondition validator: ir-v0's node, artifact
// and mode, plus the conditions read from the contract.
type Postcondition struct {
	Node       string   `json:"node"`
	Artifact   string   `json:"artifact"`
	Mode       string   `json:"mode"`
	Conditions []string `json:"conditions"`
	// Checks are the conditions in the checkable form
	// (docs/diagnostics.md §Checked postconditions), which the runtime
	// checks on a render's output before publishing it; the rest are
	// unchecked (left to the render).
	Checks []PostCheck `json:"checks,omitempty"`
}

// ManifestDiagnostic is ir-v0's {severity, message, sourcePath} plus code,
// line and column.
type ManifestDiagnostic struct {
	Severity   Severity `json:"severity"`
	Message    string   `json:"message"`
	SourcePath string   `json:"sourcePath,omitempty"`
	Code       string   `json:"code"`
	Line       int      `json:"line,omitempty"`
	Column     int      `json:"column,omitempty"`
}

// TestSpec is a kind: test contract's subject and assertions.
type TestSpec struct {
	Name       string     `json:"name"`
	Source     string     `json:"source"`
	Subject    string     `json:"subject"`
	Fixtures   []TestItem `json:"fixtures"`
	Expects    []TestItem `json:"expects"`
	ExpectsNot []TestItem `json:"expects_not"`
}

// TestItem is one fixture or assertion bullet.
type TestItem struct {
	Name string `json:"name,omitempty"`
	Text string `json:"text"`
}

func newManifest() *Manifest {
	return &Manifest{
		Kind:                 ManifestKind,
		Version:              ManifestVersion,
		Sources:              []ManifestSource{},
		Topology:             Topology{Nodes: []TopologyNode{}, Edges: []Edge{}, EntryPoints: []string{}, Acyclic: true},
		Canonicalizers:       []Canonicalizer{},
		Postconditions:       []Postcondition{},
		ContractFingerprints: map[string]string{},
		Diagnostics:          []ManifestDiagnostic{},
		IDs:                  map[string]string{},
		Wiring:               []Binding{},
		Requirements:         []Requirement{},
		Patterns:             []Pattern{},
		Instances:            []Instance{},
		Tests:                []TestSpec{},
		Ingress:              []Ingress{},
	}
}

// HasErrors reports whether the manifest records an error diagnostic; such
// a manifest must not be written as dist/manifest.next.json.
func (m *Manifest) HasErrors() bool {
	for _, d := range m.Diagnostics {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// JSON encodes the manifest deterministically: fixed field order, sorted map
// keys, two-space indent, no HTML escaping, a final newline.
func (m *Manifest) JSON() ([]byte, error) {
	return encodeJSON(m)
}

// Artifacts returns the files the manifest refers to, keyed by their
// root-relative artifact path: each node's canonicalization spec
// (dist/canonicalizers/<node>.json, canon.Spec's shape) and postcondition
// list (dist/postconditions/<node>.json). Node names are escaped with
// published.EscapeNode, so no path leaves dist/.
func (m *Manifest) Artifacts() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, c := range m.Canonicalizers {
		data, err := encodeJSON(c.Spec)
		if err != nil {
			return nil, err
		}
		out[c.Artifact] = data
	}
	for _, p := range m.Postconditions {
		data, err := encodeJSON(struct {
			Node       string      `json:"node"`
			Mode       string      `json:"mode"`
			Conditions []string    `json:"conditions"`
			Checks     []PostCheck `json:"checks,omitempty"`
		}{p.Node, p.Mode, p.Conditions, p.Checks})
		if err != nil {
			return nil, err
		}
		out[p.Artifact] = data
	}
	return out, nil
}

func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
