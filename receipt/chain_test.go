package receipt

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/prose-store/prose/canon"
)

// newReceipt returns an unsealed BLAKE3 receipt that satisfies CheckShape
// once sealed.
func newReceipt(node string, prev *Receipt, status Status) *Receipt {
	r := &Receipt{
		Schema:              Schema,
		HashAlgorithm:       canon.BLAKE3,
		Node:                node,
		ContractFingerprint: "contract:" + node,
		Wake:                Wake{Source: WakeInput, Refs: []string{}},
		InputFingerprints:   []string{"cold-start"},
		Fingerprints:        map[string]string{AtomicFacet: "blake3:" + strings.Repeat("ab", 32)},
		SemanticDiff:        map[string]any{},
		Status:              status,
		Cost:                Cost{Provider: "offline", Model: "offline", SurpriseCause: WakeInput},
		Sig:                 UnsignedSig(),
	}
	if status == Rendered {
		r.SemanticDiff["summary"] = "changed " + node
		r.Cost.Tokens = Tokens{Fresh: 10, Reused: 2}
	}
	if prev != nil {
		h := prev.ContentHash
		r.Prev = &h
	}
	return r
}

// chain builds sealed receipts from a script of node names, each linked to
// the previous receipt of its node.
func chain(t testing.TB, nodes ...string) []*Receipt {
	t.Helper()
	last := map[string]*Receipt{}
	var rs []*Receipt
	for i, n := range nodes {
		r := newReceipt(n, last[n], Rendered)
		r.SemanticDiff["i"] = float64(i) // distinct content, distinct hashes
		if err := r.Seal(); err != nil {
			t.Fatal(err)
		}
		last[n] = r
		rs = append(rs, r)
	}
	return rs
}

func reseal(t *testing.T, r *Receipt) {
	t.Helper()
	if err := r.Seal(); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyChains(t *testing.T) {
	tests := []struct {
		name   string
		build  func(t *testing.T) []*Receipt
		index  []int    // indexes of the problems expected, in order
		reason []string // a fragment of each problem's reason
	}{
		{name: "empty", build: func(t *testing.T) []*Receipt { return nil }},
		{name: "good interleaved chains", build: func(t *testing.T) []*Receipt { return chain(t, "a", "b", "a", "c", "b", "a") }},
		{
			name: "altered status",
			build: func(t *testing.T) []*Receipt {
				rs := chain(t, "a", "b", "a", "a")
				rs[2].Status = Skipped
				return rs
			},
			index: []int{2}, reason: []string{"content_hash mismatch"},
		},
		{
			name: "prev null twice",
			build: func(t *testing.T) []*Receipt {
				rs := chain(t, "a", "a")
				rs[1].Prev = nil
				reseal(t, rs[1])
				return rs
			},
			index: []int{1}, reason: []string{"prev is null, but node \"a\" already has receipt 0"},
		},
		{
			name: "first receipt with prev",
			build: func(t *testing.T) []*Receipt {
				rs := chain(t, "a")
				p := "blake3:" + strings.Repeat("0", 64)
				rs[0].Prev = &p
				reseal(t, rs[0])
				return rs
			},
			index: []int{0}, reason: []string{"is no earlier receipt; want null"},
		},
		{
			name: "prev into another node",
			build: func(t *testing.T) []*Receipt {
				rs := chain(t, "a", "b", "a")
				p := rs[1].ContentHash
				rs[2].Prev = &p
				reseal(t, rs[2])
				return rs
			},
			index: []int{2}, reason: []string{`links to receipt 1 of node "b", another node's chain`},
		},
		{
			name: "fork",
			build: func(t *testing.T) []*Receipt {
				rs := chain(t, "a", "a", "a")
				p := rs[0].ContentHash
				rs[2].Prev = &p
				reseal(t, rs[2])
				return rs
			},
			index: []int{2}, reason: []string{"older receipt of this node, so the chain forks"},
		},
		{
			name: "renamed node",
			build: func(t *testing.T) []*Receipt {
				rs := chain(t, "a", "a", "a")
				rs[1].Node = "b"
				reseal(t, rs[1])
				return rs
			},
			index:  []int{1, 2},
			reason: []string{`links to receipt 0 of node "a"`, `want ` /* receipt 2 of a skips its true predecessor */},
		},
		{
			name: "duplicate",
			build: func(t *testing.T) []*Receipt {
				rs := chain(t, "a", "a")
				return append(rs, rs[1])
			},
			index: []int{2}, reason: []string{"duplicate of receipt 1"},
		},
		{
			name: "nil entry",
			build: func(t *testing.T) []*Receipt {
				return append(chain(t, "a"), nil)
			},
			index: []int{1}, reason: []string{"missing receipt"},
		},
		{
			name: "bad shape",
			build: func(t *testing.T) []*Receipt {
				rs := chain(t, "a")
				delete(rs[0].Fingerprints, AtomicFacet)
				rs[0].Wake.Source = "cron"
				reseal(t, rs[0])
				return rs
			},
			index: []int{0, 0}, reason: []string{`wake.source "cron"`, `no "@atomic" entry`},
		},
		{
			name: "unknown algorithm",
			build: func(t *testing.T) []*Receipt {
				rs := chain(t, "a")
				rs[0].HashAlgorithm = "md5"
				return rs
			},
			index: []int{0, 0}, reason: []string{`hash_algorithm "md5"`, "cannot be recomputed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems := VerifyChains(tt.build(t))
			if len(problems) != len(tt.index) {
				t.Fatalf("got %d problems %v; want %d", len(problems), problems, len(tt.index))
			}
			for i, p := range problems {
				if p.Index != tt.index[i] || !strings.Contains(p.Reason, tt.reason[i]) {
					t.Errorf("problem %d = %v; want index %d, reason containing %q", i, p, tt.index[i], tt.reason[i])
				}
			}
		})
	}
}

func TestProblemString(t *testing.T) {
	p := Problem{Index: 3, Node: "a::b", ContentHash: "sha256:00", Reason: "content_hash mismatch"}
	want := `receipt 3 (node "a::b", sha256:00): content_hash mismatch`
	if p.String() != want || p.Error() != want {
		t.Fatalf("String = %q; want %q", p.String(), want)
	}
}

func BenchmarkVerifyChains(b *testing.B) {
	nodes := make([]string, 5000)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("node-%02d", i%50)
	}
	rs := chain(b, nodes...)
	b.ResetTimer()
	for b.Loop() {
		if problems := VerifyChains(rs); len(problems) != 0 {
			b.Fatal(problems)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rs)), "ns/receipt")
}

// BenchmarkParseStored parses one receipt as the vault stores it (indented
// JSON in a commit message) and recomputes its content hash: the per-receipt
// work of `prose receipts verify`.
func BenchmarkParseStored(b *testing.B) {
	r := newReceipt("node-01", nil, Rendered)
	r.Fingerprints["facet-a"] = r.Fingerprints[AtomicFacet]
	r.SemanticDiff = map[string]any{"moved": []any{"@atomic", "facet-a"}, "version": "blake3:00", "files": 12.0}
	if err := r.Seal(); err != nil {
		b.Fatal(err)
	}
	data, err := r.Canonical()
	if err != nil {
		b.Fatal(err)
	}
	v, _ := canon.Decode(data)
	pretty, _ := json.MarshalIndent(v, "", "  ")
	b.SetBytes(int64(len(pretty)))
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			if _, err := Parse(pretty); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("general", func(b *testing.B) { // Parse before its direct reader
		for b.Loop() {
			v, err := canon.Decode(pretty)
			if err == nil {
				_, err = FromValue(v)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hash", func(b *testing.B) {
		for b.Loop() {
			if h, err := r.ComputeContentHash(); err != nil || h != r.ContentHash {
				b.Fatal(h, err)
			}
		}
	})
}

// fork builds a node's receipts on two sides of a merge: a base, one
// receipt on each side, and (when join) the merge receipt joining them.
func fork(t *testing.T, join bool, edit func(m *Receipt)) []*Receipt {
	t.Helper()
	base := newReceipt("wiki", nil, Rendered)
	seal := func(r *Receipt, i int) *Receipt {
		r.SemanticDiff["i"] = float64(i)
		if err := r.Seal(); err != nil {
			t.Fatal(err)
		}
		return r
	}
	seal(base, 0)
	ours := seal(newReceipt("wiki", base, Rendered), 1)
	other := seal(newReceipt("notes", nil, Rendered), 2)
	theirs := seal(newReceipt("wiki", base, Rendered), 3)
	rs := []*Receipt{base, ours, other, theirs}
	if join {
		m := newReceipt("wiki", ours, Rendered)
		m.Wake = Wake{Source: WakeExternal, Refs: []string{theirs.ContentHash}}
		m.Cost.SurpriseCause = WakeExternal
		m.SemanticDiff["merge"] = map[string]any{"ours": ours.ContentHash, "theirs": theirs.ContentHash, "taken": "both"}
		if edit != nil {
			edit(m)
		}
		rs = append(rs, seal(m, 4))
	}
	return rs
}

func TestVerifyAcceptsAForkOnlyWhereAMergeReceiptJoinsIt(t *testing.T) {
	if p := VerifyChains(fork(t, true, nil)); len(p) != 0 {
		t.Fatalf("a joined fork is reported: %v", p)
	}
	p := VerifyChains(fork(t, false, nil))
	if len(p) != 1 || !strings.Contains(p[0].Reason, "forks") {
		t.Fatalf("an unjoined fork: %v", p)
	}
	rs := fork(t, false, nil)
	// The fork is reported as before when the node holds no merge receipt.
	if p := VerifyChains(rs); !strings.Contains(p[0].Reason, "forks") {
		t.Fatalf("fork without merge receipts: %v", p)
	}
	for name, c := range map[string]struct {
		edit func(m *Receipt)
		want string
	}{
		"theirs differs from wake.refs": {func(m *Receipt) { m.Wake.Refs = []string{m.SemanticDiff["merge"].(map[string]any)["ours"].(string)} }, "wake.refs[0]"},
		"theirs names another node": {func(m *Receipt) {
			m.SemanticDiff["merge"].(map[string]any)["theirs"] = "x"
			m.Wake.Refs = []string{"x"}
		}, "no earlier receipt"},
		"ours is not prev": {func(m *Receipt) { m.SemanticDiff["merge"].(map[string]any)["ours"] = m.Wake.Refs[0] }, "must equal its prev"},
	} {
		p := VerifyChains(fork(t, true, c.edit))
		found := false
		for _, q := range p {
			found = found || strings.Contains(q.Reason, c.want)
		}
		if !found {
			t.Errorf("%s: want a problem saying %q, got %v", name, c.want, p)
		}
	}
	// Two first receipts (both sides created the node), joined.
	a := newReceipt("wiki", nil, Rendered)
	a.SemanticDiff["i"] = 1.0
	b := newReceipt("wiki", nil, Rendered)
	b.SemanticDiff["i"] = 2.0
	a.Seal()
	b.Seal()
	m := newReceipt("wiki", a, Rendered)
	m.Wake = Wake{Source: WakeExternal, Refs: []string{b.ContentHash}}
	m.Cost.SurpriseCause = WakeExternal
	m.SemanticDiff["merge"] = map[string]any{"ours": a.ContentHash, "theirs": b.ContentHash}
	m.Seal()
	if p := VerifyChains([]*Receipt{a, b, m}); len(p) != 0 {
		t.Fatalf("two first receipts joined: %v", p)
	}
	if p := VerifyChains([]*Receipt{a, b}); len(p) != 1 {
		t.Fatalf("two first receipts unjoined: %v", p)
	}
}

func TestVerifyReportsAForkLeftBesideAJoinedOne(t *testing.T) {
	rs := fork(t, true, nil)
	stray := newReceipt("wiki", rs[0], Rendered) // a third side, never joined
	stray.SemanticDiff["i"] = 9.0
	if err := stray.Seal(); err != nil {
		t.Fatal(err)
	}
	p := VerifyChains(append(rs, stray))
	if len(p) != 1 || !strings.Contains(p[0].Reason, "no merge receipt joins it") || !strings.Contains(p[0].Reason, stray.ContentHash) {
		t.Fatalf("a stray fork beside a joined one: %v", p)
	}
}
