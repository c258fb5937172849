package reactor

import (
	"context"
	"errors"
	"time"

	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
)

// Store is where receipts and world-models live: the vault, through its one
// write path (VaultStore).
type Store interface {
	// Last returns node's newest receipt; nil when the node has none.
	Last(node string) (*receipt.Receipt, error)
	// When returns when node's newest receipt was recorded (zero when it
	// has none). Only cadences need it.
	When(node string) (time.Time, error)
	// Files returns node's current published world-model, path → bytes.
	Files(node string) (map[string][]byte, error)
	// Publish publishes the world-model a render wrote to dir: rendered
	// (with the facets that moved, @atomic first) or skipped when nothing
	// material changed.
	Publish(ctx context.Context, node, dir string, run Run) (*receipt.Receipt, []string, error)
	// Record appends a skipped or failed receipt; reason is a failure's
	// cause.
	Record(ctx context.Context, node string, status receipt.Status, run Run, reason error) (*receipt.Receipt, error)
}

// Run is what a receipt records about a wake: its memo key, its wake and
// what it spent.
type Run struct {
	ContractFingerprint string
	InputFingerprints   []string
	Wake                receipt.Wake
	Provider, Model     string
	Tokens              receipt.Tokens
	// Changed, when not nil, names the only paths the render changed
	// (an informed publish).
	Changed []string
	// AllowEmpty publishes an empty world-model (a node that had none).
	AllowEmpty bool
	// Diff is added to a rendered receipt's semantic_diff.
	Diff map[string]any
}

// VaultStore is the Store of a vault.
type VaultStore struct {
	V   *vault.Vault
	Who string // the command named in the lock holder file
	Now func() time.Time

	when map[string]time.Time // last receipt time per node, read once
}

// NewVaultStore returns the store of v.
func NewVaultStore(v *vault.Vault, who string, now func() time.Time) *VaultStore {
	return &VaultStore{V: v, Who: who, Now: now}
}

// Last implements Store.
func (s *VaultStore) Last(node string) (*receipt.Receipt, error) {
	return s.V.LastReceipt(node)
}

// When implements Store: the ledger is walked once, on the first call.
func (s *VaultStore) When(node string) (time.Time, error) {
	if s.when == nil {
		s.when = map[string]time.Time{}
		err := s.V.Receipts(func(rec vault.Record) error {
			if t, ok := s.when[rec.Receipt.Node]; !ok || rec.When.After(t) {
				s.when[rec.Receipt.Node] = rec.When
			}
			return nil
		})
		if err != nil {
			s.when = nil
			return time.Time{}, err
		}
	}
	return s.when[node], nil
}

func (s *VaultStore) remember(node string) {
	if s.when != nil {
		s.when[node] = s.now()
	}
}

func (s *VaultStore) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Files implements Store.
func (s *VaultStore) Files(node string) (map[string][]byte, error) {
	_, tree, err := s.V.NodeHead(node)
	if err != nil {
		return nil, err
	}
	ids, err := s.V.NodeFiles(tree)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(ids))
	for p, h := range ids {
		data, err := s.V.Blob(h)
		if err != nil {
			return nil, err
		}
		out[p] = data
	}
	return out, nil
}

// Publish implements Store.
func (s *VaultStore) Publish(ctx context.Context, node, dir string, run Run) (*receipt.Receipt, []string, error) {
	wake := run.Wake
	provider := run.Provider
	if provider == "" {
		provider = "prose"
	}
	model := run.Model
	if model == "" {
		model = node
	}
	res, err := s.V.Publish(ctx, node, dir, vault.PublishOptions{
		ContractFingerprint: run.ContractFingerprint,
		InputFingerprints:   nonNil(run.InputFingerprints),
		Wake:                &wake,
		Provider:            provider,
		Model:               model,
		Tokens:              run.Tokens,
		Changed:             run.Changed,
		AllowEmpty:          run.AllowEmpty,
		Diff:                run.Diff,
		Who:                 s.Who,
		Now:                 s.Now,
	})
	if err != nil {
		var le *vault.LandedError
		if res == nil || !errors.As(err, &le) {
			return nil, nil, err
		}
	}
	s.remember(node)
	moved := res.Moved
	if res.Receipt.Status != receipt.Rendered {
		moved = nil
	}
	return res.Receipt, moved, err
}

// Record implements Store.
func (s *VaultStore) Record(ctx context.Context, node string, status receipt.Status, run Run, reason error) (*receipt.Receipt, error) {
	model := run.Model
	if model == "" {
		model = node
	}
	r, err := s.V.RecordReceipt(ctx, node, status, vault.ReceiptOptions{
		Who:                 s.Who,
		Refs:                nonNil(run.Wake.Refs),
		Source:              run.Wake.Source,
		Provider:            run.Provider,
		Model:               model,
		Tokens:              run.Tokens,
		Reason:              reason,
		Now:                 s.Now,
		InputFingerprints:   nonNil(run.InputFingerprints),
		ContractFingerprint: run.ContractFingerprint,
	})
	if err == nil {
		s.remember(node)
	}
	return r, err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
