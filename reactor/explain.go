package reactor

import (
	"slices"
	"time"

	"github.com/prose-store/prose/receipt"
)

// InputState is one input edge now and at the node's last receipt.
type InputState struct {
	Producer string `json:"producer"`
	Facet    string `json:"facet"`
	Token    string `json:"token"`
	// Recorded is the token the node's last receipt consumed for this
	// edge ("" when it has none).
	Recorded string `json:"recorded"`
	Moved    bool   `json:"moved"`
}

// Explanation is what the reconciler would do with a node now.
type Explanation struct {
	Node                string             `json:"node"`
	Height              int                `json:"height"`
	ContractFingerprint string             `json:"contract_fingerprint"`
	Wake                receipt.WakeSource `json:"wake"`
	Cadence             string             `json:"cadence,omitempty"`
	Render              string             `json:"render"`
	Command             string             `json:"command,omitempty"`
	Timeout             string             `json:"timeout"`
	Inputs              []InputState       `json:"inputs"`
	Subscribers         []Edge             `json:"-"`
	LastStatus          string             `json:"last_status,omitempty"`
	LastReceipt         string             `json:"last_receipt,omitempty"`
	LastAt              *time.Time         `json:"last_at,omitempty"`
	// Dirty is true when prose run (without NODE) would wake the node;
	// Why says why, or why not.
	Dirty bool   `json:"dirty"`
	Why   string `json:"why"`
}

// Explain says what the reconciler would do with node now, from its
// contract, its inputs and their fingerprints, and its last receipt.
func (r *Reconciler) Explain(id string) (*Explanation, error) {
	n := r.g.Node(id)
	if n == nil {
		return nil, nil
	}
	inputs, tokens, err := r.memo(n)
	if err != nil {
		return nil, err
	}
	last, err := r.opt.Store.Last(id)
	if err != nil {
		return nil, err
	}
	when, err := r.opt.Store.When(id)
	if err != nil {
		return nil, err
	}
	timeout := n.Runtime.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	e := &Explanation{Node: id, Height: r.g.Height(id), ContractFingerprint: n.ContractFingerprint, Wake: n.Wake,
		Render: n.Runtime.Render, Command: n.Runtime.Command, Timeout: timeout.String(), Inputs: []InputState{}}
	if e.Render == "" {
		e.Render = "none"
	}
	if n.Cadence > 0 {
		e.Cadence = n.Cadence.String()
	}
	for i, in := range inputs {
		st := InputState{Producer: in.Producer, Facet: in.Facet, Token: in.Token}
		if last != nil && i < len(last.InputFingerprints) {
			st.Recorded = last.InputFingerprints[i]
		}
		st.Moved = st.Recorded != st.Token
		e.Inputs = append(e.Inputs, st)
	}
	if last != nil {
		e.LastStatus, e.LastReceipt = string(last.Status), last.ContentHash
		if !when.IsZero() {
			e.LastAt = &when
		}
	}
	seeds, err := r.Dirty()
	if err != nil {
		return nil, err
	}
	for _, s := range seeds {
		if s.Node == id {
			e.Dirty, e.Why = true, s.Why
		}
	}
	if !e.Dirty {
		switch {
		case last != nil && last.Status == receipt.Failed && slices.Equal(last.InputFingerprints, tokens):
			e.Why = "its last render failed at these inputs: prose run retries it when an input or the contract moves, or when named (prose run " + id + ")"
		case last != nil:
			e.Why = "memo key unmoved: a wake would skip"
			if n.Cadence > 0 && !when.IsZero() {
				e.Why += "; next tick due " + when.Add(n.Cadence).UTC().Format(time.RFC3339)
			}
		}
	}
	return e, nil
}
