package receipt

import (
	"github.com/prose-store/prose/internal/refdata"

	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/canon"
)

// referenceLedgers returns the paths of every reference receipts.json.
func referenceLedgers(t testing.TB) []string {
	root := filepath.Join(refdata.Shared(t), "reference-data", "reactor")
	var paths []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "receipts.json" {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// TestReferenceLedgers verifies every reference ledger and checks that each
// receipt keeps its canonical bytes through Parse.
func TestReferenceLedgers(t *testing.T) {
	var ledgers, receipts, nodes, strict int
	statuses := map[Status]int{}
	for _, path := range referenceLedgers(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := VerifyReactorLedger(data)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		for _, p := range rep.Problems {
			t.Errorf("%s: %v", path, p)
		}
		ledgers++
		receipts += rep.Receipts
		nodes += rep.Nodes

		v, _ := canon.Decode(data)
		for i, item := range v.([]any) {
			r, err := FromValue(item)
			if err != nil {
				t.Fatalf("%s: receipt %d: %v", path, i, err)
			}
			statuses[r.Status]++
			if r.CheckShape() == nil {
				strict++
			}
			want, _ := canon.Marshal(item)
			if got, err := r.Canonical(); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: receipt %d: canonical bytes change through Parse (%v)", path, i, err)
			}
		}
	}
	if ledgers != 20 || receipts != 7216 {
		t.Errorf("verified %d ledgers with %d receipts; want 20 and 7216", ledgers, receipts)
	}
	t.Logf("verified %d ledgers, %d receipts, %d chains; statuses %v; %d also pass CheckShape", ledgers, receipts, nodes, statuses, strict)
}

// tamper loads the first reference ledger holding at least n receipts,
// applies fn to the decoded array, and returns the re-encoded ledger.
func tamper(t *testing.T, fn func(rs []any)) []byte {
	t.Helper()
	for _, path := range referenceLedgers(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := canon.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		rs := v.([]any)
		if len(rs) < 50 {
			continue
		}
		fn(rs)
		out, err := json.Marshal(rs)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatal("no reference ledger with 50 receipts")
	return nil
}

func TestTamperedLedger(t *testing.T) {
	const at = 40
	tests := []struct {
		name   string
		change func(r map[string]any)
		reason string
	}{
		{"status", func(r map[string]any) {
			if r["status"] == "skipped" {
				r["status"] = "rendered"
			} else {
				r["status"] = "skipped"
			}
		}, "content_hash mismatch"},
		{"fingerprint", func(r map[string]any) {
			r["fingerprints"].(map[string]any)["@atomic"] = "sha256:" + strings.Repeat("0", 64)
		}, "content_hash mismatch"},
		{"semantic diff", func(r map[string]any) { r["semantic_diff"] = map[string]any{"summary": "edited"} }, "content_hash mismatch"},
		{"prev", func(r map[string]any) { r["prev"] = "sha256:" + strings.Repeat("1", 64) }, "content_hash mismatch"},
		{"unknown key", func(r map[string]any) { r["extra"] = true }, `unreadable: receipt: unknown key "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var node, hash string
			data := tamper(t, func(rs []any) {
				r := rs[at].(map[string]any)
				node, hash = r["node"].(string), r["content_hash"].(string)
				tt.change(r)
			})
			rep, err := VerifyReactorLedger(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Problems) == 0 {
				t.Fatal("tampered ledger verifies")
			}
			p := rep.Problems[0]
			if p.Index != at || p.Node != node || p.ContentHash != hash || !strings.Contains(p.Reason, tt.reason) {
				t.Fatalf("first problem %v; want receipt %d (node %q, %s) with reason %q", p, at, node, hash, tt.reason)
			}
			for _, s := range []string{"receipt 40", node, hash, tt.reason} {
				if !strings.Contains(p.String(), s) {
					t.Errorf("%q does not name %q", p.String(), s)
				}
			}
		})
	}
}

// TestBrokenPrevLink re-seals a receipt after pointing its prev elsewhere,
// so only the chain is wrong: the receipt and its orphaned successor are
// reported.
func TestBrokenPrevLink(t *testing.T) {
	var at, next int
	data := tamper(t, func(rs []any) {
		// Find a receipt with a prev whose node has a later receipt.
		for i := 10; i < len(rs) && at == 0; i++ {
			r := rs[i].(map[string]any)
			if r["prev"] == nil {
				continue
			}
			for j := i + 1; j < len(rs); j++ {
				if rs[j].(map[string]any)["node"] == r["node"] {
					at, next = i, j
					break
				}
			}
		}
		r, err := FromValue(rs[at])
		if err != nil {
			t.Fatal(err)
		}
		p := "sha256:" + strings.Repeat("2", 64)
		r.Prev = &p
		if err := r.Seal(); err != nil {
			t.Fatal(err)
		}
		rs[at] = r.ToValue()
	})
	rep, err := VerifyReactorLedger(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 2 {
		t.Fatalf("problems %v; want 2", rep.Problems)
	}
	if p := rep.Problems[0]; p.Index != at || !strings.Contains(p.Reason, "is no earlier receipt") {
		t.Errorf("problem %v; want receipt %d with a dangling prev", p, at)
	}
	if p := rep.Problems[1]; p.Index != next || !strings.Contains(p.Reason, "is no earlier receipt") {
		t.Errorf("problem %v; want receipt %d, whose prev is the old hash", p, next)
	}
}

func TestVerifyReactorLedgerRejects(t *testing.T) {
	for _, in := range []string{``, `{}`, `[1,]`, `"x"`} {
		if _, err := VerifyReactorLedger([]byte(in)); err == nil {
			t.Errorf("VerifyReactorLedger(%q) succeeded", in)
		}
	}
	rep, err := VerifyReactorLedger([]byte(`[]`))
	if err != nil || rep.Receipts != 0 || !rep.OK() {
		t.Errorf("empty ledger: %+v, %v", rep, err)
	}
	rep, err = VerifyReactorLedger([]byte(`[1, ` + referenceJSON + `]`))
	if err != nil || rep.Receipts != 2 || rep.Nodes != 1 || len(rep.Problems) != 1 || rep.Problems[0].Index != 0 {
		t.Errorf("ledger with a number: %+v, %v", rep, err)
	}
}
