package receipt

import (
	"strings"
	"testing"
)

func TestCheckShape(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *Receipt)
		basic  string // fragment of the CheckBasic error; "" for none
		strict string // fragment of the CheckShape error; "" for none
	}{
		{name: "rendered", change: func(r *Receipt) {}},
		{name: "skipped", change: func(r *Receipt) { r.Status = Skipped; r.SemanticDiff = map[string]any{}; r.Cost.Tokens.Fresh = 0 }},
		{name: "failed without reason", change: func(r *Receipt) { r.Status = Failed; r.SemanticDiff = nil }},
		{name: "failed with reason", change: func(r *Receipt) {
			r.Status = Failed
			r.SemanticDiff = map[string]any{"failure_reason": "upstream 503"}
		}},
		{name: "other schema", change: func(r *Receipt) { r.Schema = "x" }, basic: `schema "x"`, strict: `schema "x"`},
		{name: "unknown status", change: func(r *Receipt) { r.Status = "done" }, basic: `status "done"`, strict: `status "done"`},
		{name: "unknown wake", change: func(r *Receipt) { r.Wake.Source = "cron"; r.Cost.SurpriseCause = "cron" }, basic: `wake.source "cron"`, strict: `wake.source "cron"`},
		{name: "no atomic", change: func(r *Receipt) { r.Fingerprints = map[string]string{"facet": "x"} }, basic: `no "@atomic"`, strict: `no "@atomic"`},
		{name: "opaque fingerprints", change: func(r *Receipt) {
			r.Fingerprints = map[string]string{AtomicFacet: "cold-start:empty", "inbox": "inbox:1", "m": "mat-3"}
			r.InputFingerprints = []string{"stale:x", "cron-1"}
		}},
		{name: "empty node", change: func(r *Receipt) { r.Node = "" }, basic: "node is empty", strict: "node is empty"},
		{name: "bad prev", change: func(r *Receipt) { p := "sha256:00"; r.Prev = &p }, basic: `prev "sha256:00" is not a hash token`, strict: "prev"},
		{name: "prev other algorithm", change: func(r *Receipt) { p := "sha256:" + strings.Repeat("0", 64); r.Prev = &p }, basic: "is not a blake3 token", strict: "is not a blake3 token"},
		{name: "bad ref", change: func(r *Receipt) { r.Wake.Refs = []string{"inbox:1"} }, basic: `wake.refs[0] "inbox:1"`, strict: "wake.refs[0]"},
		{name: "negative tokens", change: func(r *Receipt) { r.Cost.Tokens.Reused = -1 }, basic: "cost.tokens.reused -1", strict: "cost.tokens.reused -1"},
		{name: "surprise differs", change: func(r *Receipt) { r.Cost.SurpriseCause = WakeSelf }, strict: `cost.surprise_cause "self" differs from wake.source "input"`},
		{name: "skipped with diff", change: func(r *Receipt) { r.Status = Skipped; r.Cost.Tokens.Fresh = 0 }, strict: "empty semantic_diff"},
		{name: "skipped with fresh tokens", change: func(r *Receipt) { r.Status = Skipped; r.SemanticDiff = nil }, strict: "no fresh tokens, found 10"},
		{name: "failed with summary", change: func(r *Receipt) { r.Status = Failed }, strict: `holds only failure_reason, found "summary"`},
		{name: "failed reason not a string", change: func(r *Receipt) {
			r.Status = Failed
			r.SemanticDiff = map[string]any{"failure_reason": 3.0}
		}, strict: "must be a string"},
		{name: "failed reason empty", change: func(r *Receipt) {
			r.Status = Failed
			r.SemanticDiff = map[string]any{"failure_reason": " "}
		}, strict: "failure_reason is empty"},
		{name: "failed reason two lines", change: func(r *Receipt) {
			r.Status = Failed
			r.SemanticDiff = map[string]any{"failure_reason": "a\nb"}
		}, strict: "single line"},
		{name: "failed reason long", change: func(r *Receipt) {
			r.Status = Failed
			r.SemanticDiff = map[string]any{"failure_reason": strings.Repeat("é", 501)}
		}, strict: "501 characters"},
		{name: "failed reason with secret", change: func(r *Receipt) {
			r.Status = Failed
			r.SemanticDiff = map[string]any{"failure_reason": "401 for sk-abcdefghijklmnop"}
		}, strict: "looks like a secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReceipt("n", nil, Rendered)
			tt.change(r)
			if err := r.Seal(); err != nil && tt.basic == "" {
				t.Fatal(err)
			}
			check := func(what string, err error, want string) {
				if want == "" {
					if err != nil {
						t.Errorf("%s = %v; want nil", what, err)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s = %v; want an error containing %q", what, err, want)
				}
			}
			check("CheckBasic", r.CheckBasic(), tt.basic)
			check("CheckShape", r.CheckShape(), tt.strict)
		})
	}
}

func TestCheckShapeListsEveryRule(t *testing.T) {
	r := newReceipt("n", nil, Skipped)
	r.Cost.SurpriseCause = WakeSelf
	r.Cost.Tokens.Fresh = 3
	r.SemanticDiff = map[string]any{"x": 1.0}
	if err := r.Seal(); err != nil {
		t.Fatal(err)
	}
	err := r.CheckShape()
	if err == nil || !strings.Contains(err.Error(), "breaks 3 rules") {
		t.Fatalf("CheckShape = %v; want all 3 rules", err)
	}
}
