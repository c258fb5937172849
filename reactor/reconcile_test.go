package reactor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/receipt"
)

func chain(t *testing.T) *world {
	w := newWorld(t, []Node{{ID: "g", Wake: receipt.WakeExternal}, {ID: "a"}, {ID: "b"}},
		[]Edge{{"a", "g", "@atomic"}, {"b", "a", "@atomic"}}, nil)
	w.ingest("g", map[string]string{"in.json": `{"n":1}`})
	return w
}

// Cold start: every node without a receipt renders once, producers first,
// and each receipt records the tokens it consumed.
func TestColdStart(t *testing.T) {
	w := newWorld(t, []Node{{ID: "g", Wake: receipt.WakeExternal}, {ID: "a"}, {ID: "b"}},
		[]Edge{{"a", "g", "@atomic"}, {"b", "a", "@atomic"}}, nil)
	r := w.reconciler()
	w.ingestInto(r, "g", map[string]string{"in.json": `{"n":1}`})
	// b is dirty too (cold start) and must wait for a.
	if err := r.Wake(Seed{Node: "b", Source: receipt.WakeInput, Why: "cold start"}); err != nil {
		t.Fatal(err)
	}
	rep := w.drain(r)
	if got := w.renders(); !eq(got, []string{"a", "b"}) {
		t.Fatalf("renders %v, want [a b] (producers first, once each); table %v", got, table(rep))
	}
	ra, rb, rg := w.last("a"), w.last("b"), w.last("g")
	if ra.Status != receipt.Rendered || rb.Status != receipt.Rendered {
		t.Fatalf("statuses %s %s", ra.Status, rb.Status)
	}
	if !eq(ra.InputFingerprints, []string{rg.Fingerprints["@atomic"]}) || !eq(rb.InputFingerprints, []string{ra.Fingerprints["@atomic"]}) {
		t.Fatalf("input fingerprints a %v b %v", ra.InputFingerprints, rb.InputFingerprints)
	}
	if ra.Wake.Source != receipt.WakeInput || len(ra.Wake.Refs) != 1 || ra.Wake.Refs[0] != rg.ContentHash {
		t.Fatalf("a's wake %+v, want input from g's receipt %s", ra.Wake, rg.ContentHash)
	}
	if ra.ContractFingerprint != "contract:a@1" {
		t.Fatalf("contract fingerprint %q", ra.ContractFingerprint)
	}
	// A second run finds nothing dirty.
	if rep := w.dirty(); len(rep.Outcomes) != 0 {
		t.Fatalf("second run: %v, want nothing", table(rep))
	}
}

// Dirty on a fresh graph wakes every node (cold start) and renders each once.
func TestColdStartThroughDirty(t *testing.T) {
	w := newWorld(t, []Node{{ID: "a"}, {ID: "b"}, {ID: "c"}}, []Edge{{"b", "a", "@atomic"}, {"c", "b", "@atomic"}, {"c", "a", "@atomic"}}, nil)
	rep := w.dirty()
	if got := w.renders(); !eq(got, []string{"a", "b", "c"}) {
		t.Fatalf("renders %v; table %v", got, table(rep))
	}
	if rep.Count(Rendered) != 3 || len(rep.Outcomes) != 3 {
		t.Fatalf("table %v", table(rep))
	}
}

// An unmoved re-wake writes a skipped receipt: no render, zero cost, no
// branch commit, and wakes nobody.
func TestUnmovedReWake(t *testing.T) {
	w := chain(t)
	tip := w.tip()
	prev := w.last("a")
	rep := w.wake("a")
	if len(w.renders()) != 0 {
		t.Fatalf("rendered %v on an unmoved wake", w.renders())
	}
	r := w.last("a")
	if r.Status != receipt.Skipped || r.Cost.Tokens.Fresh != 0 || len(r.SemanticDiff) != 0 {
		t.Fatalf("receipt %s fresh %d diff %v", r.Status, r.Cost.Tokens.Fresh, r.SemanticDiff)
	}
	if r.Prev == nil || *r.Prev != prev.ContentHash || r.Fingerprints["@atomic"] != prev.Fingerprints["@atomic"] {
		t.Fatal("a skipped receipt chains to the last and copies its fingerprints")
	}
	if w.tip() != tip {
		t.Fatal("a skipped receipt made a branch commit")
	}
	if d := dispositions(rep); len(d["a"]) != 1 || d["a"][0] != Skipped || len(d["b"]) != 1 || d["b"][0] != Pruned {
		t.Fatalf("table %v, want a skipped, b pruned", table(rep))
	}
}

// A moved input renders the subscriber and what its move wakes.
func TestMovedInput(t *testing.T) {
	w := chain(t)
	before := w.files("a")["value.json"]
	rep := w.ingest("g", map[string]string{"in.json": `{"n":2}`})
	if got := w.renders(); !eq(got, []string{"a", "b"}) {
		t.Fatalf("renders %v; table %v", got, table(rep))
	}
	if w.files("a")["value.json"] == before {
		t.Fatal("a's world-model did not follow its moved input")
	}
	if !strings.Contains(outcome(t, rep, "a").Why, "input moved: g.@atomic") {
		t.Fatalf("why %q", outcome(t, rep, "a").Why)
	}
	// The same payload again moves nothing and wakes nobody.
	rep = w.ingest("g", map[string]string{"in.json": `{"n":2}`})
	if len(w.renders()) != 0 || w.last("g").Status != receipt.Skipped {
		t.Fatalf("same payload: renders %v table %v", w.renders(), table(rep))
	}
}

// facetWorld: p (gateway) has facets f1, f2; s1 reads f1, s2 reads f2, both
// reads f1 and f2.
func facetWorld(t *testing.T) *world {
	w := newWorld(t, []Node{{ID: "p", Wake: receipt.WakeExternal}, {ID: "s1"}, {ID: "s2"}, {ID: "both"}},
		[]Edge{{"s1", "p", "f1"}, {"s2", "p", "f2"}, {"both", "p", "f1"}, {"both", "p", "f2"}},
		map[string][]string{"p": {"f1", "f2"}})
	w.ingest("p", map[string]string{"f1/v.json": `{"x":1}`, "f2/v.json": `{"y":1}`})
	if got := sorted(w.renders()); !eq(got, []string{"both", "s1", "s2"}) {
		t.Fatalf("cold renders %v", got)
	}
	return w
}

// A facet that moves wakes only its subscribers.
func TestFacetSelectiveWake(t *testing.T) {
	w := facetWorld(t)
	rep := w.ingest("p", map[string]string{"f1/v.json": `{"x":2}`, "f2/v.json": `{"y":1}`})
	if got := w.renders(); !eq(got, []string{"both", "s1"}) {
		t.Fatalf("renders %v, want [both s1]; table %v", got, table(rep))
	}
	if o := outcome(t, rep, "s2"); o.Disposition != Pruned || !strings.Contains(o.Why, "p moved @atomic, f1, not f2") {
		t.Fatalf("s2: %+v", o)
	}
	p := w.last("p")
	if s1 := w.last("s1"); !eq(s1.InputFingerprints, []string{p.Fingerprints["f1"]}) {
		t.Fatalf("s1 read %v, want p's f1 token", s1.InputFingerprints)
	}
	// s2's memo key is p's f2 token, which did not move: waking it skips.
	w.wake("s2")
	if len(w.renders()) != 0 {
		t.Fatal("s2 rendered though its facet did not move")
	}
}

// The same through a rendered producer: r renders facets f1, f2 from its
// input; only f1 changes, so only its subscriber renders.
func TestFacetSelectiveWakeFromARender(t *testing.T) {
	w := newWorld(t, []Node{{ID: "g", Wake: receipt.WakeExternal}, {ID: "r"}, {ID: "s1"}, {ID: "s2"}},
		[]Edge{{"r", "g", "@atomic"}, {"s1", "r", "f1"}, {"s2", "r", "f2"}}, map[string][]string{"r": {"f1", "f2"}})
	n := 0
	w.rend["r"] = func(req *Request) (Result, error) {
		n++
		os.MkdirAll(filepath.Join(req.Out, "f1"), 0o755)
		os.MkdirAll(filepath.Join(req.Out, "f2"), 0o755)
		os.WriteFile(filepath.Join(req.Out, "f2", "v.json"), []byte(`{"same":true}`), 0o644)
		return Result{}, os.WriteFile(filepath.Join(req.Out, "f1", "v.json"), []byte(`{"n":`+string(rune('0'+n))+`}`), 0o644)
	}
	w.ingest("g", map[string]string{"in.json": `{"n":1}`})
	rep := w.ingest("g", map[string]string{"in.json": `{"n":2}`})
	if got := w.renders(); !eq(got, []string{"r", "s1"}) {
		t.Fatalf("renders %v, want [r s1]; table %v", got, table(rep))
	}
	if o := outcome(t, rep, "s2"); o.Disposition != Pruned {
		t.Fatalf("s2: %+v", o)
	}
}

// A subscriber of two facets that both move wakes once.
func TestTwoFacetSubscriberWakesOnce(t *testing.T) {
	w := facetWorld(t)
	rep := w.ingest("p", map[string]string{"f1/v.json": `{"x":3}`, "f2/v.json": `{"y":3}`})
	n := 0
	for _, r := range w.renders() {
		if r == "both" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("both rendered %d times, want 1; table %v", n, table(rep))
	}
	if got := dispositions(rep)["both"]; len(got) != 1 {
		t.Fatalf("both: %v", got)
	}
	if r := w.last("both"); r.Status != receipt.Rendered || len(r.Wake.Refs) != 1 {
		t.Fatalf("both's receipt %s refs %v", r.Status, r.Wake.Refs)
	}
}

// Wakes that arrive while a node renders coalesce into one follow-up that
// renders against the latest inputs.
func TestCoalescing(t *testing.T) {
	w := chain(t)
	r := w.reconciler()
	w.during["a"] = func() {
		// Three payloads land while a renders; each wakes a.
		for i := 3; i <= 5; i++ {
			w.ingestInto(r, "g", map[string]string{"in.json": `{"n":` + string(rune('0'+i)) + `}`})
		}
	}
	w.ingestInto(r, "g", map[string]string{"in.json": `{"n":2}`})
	rep := w.drain(r)
	var as []string
	for _, n := range w.renders() {
		if n == "a" {
			as = append(as, n)
		}
	}
	if len(as) != 2 {
		t.Fatalf("a rendered %d times, want 2 (one, then one follow-up); table %v", len(as), table(rep))
	}
	if c := rep.Count(Coalesced); c != 3 {
		t.Fatalf("%d coalesced, want 3; table %v", c, table(rep))
	}
	seen := w.seen["a"]
	if got, want := seen[len(seen)-1][0].Token, w.last("g").Fingerprints["@atomic"]; got != want {
		t.Fatalf("the follow-up saw %s, want the latest payload's token %s", got, want)
	}
}

// A staggered diamond (g → a → j, g → x1 → x2 → j) renders its join once,
// after both arms settled (by id alone j would run before x1).
func TestStaggeredDiamond(t *testing.T) {
	w := newWorld(t, []Node{{ID: "g", Wake: receipt.WakeExternal}, {ID: "a"}, {ID: "x1"}, {ID: "x2"}, {ID: "j"}},
		[]Edge{{"a", "g", "@atomic"}, {"x1", "g", "@atomic"}, {"x2", "x1", "@atomic"}, {"j", "a", "@atomic"}, {"j", "x2", "@atomic"}}, nil)
	rep := w.ingest("g", map[string]string{"in.json": "{}"})
	if got := w.renders(); !eq(got, []string{"a", "x1", "x2", "j"}) {
		t.Fatalf("renders %v, want [a x1 x2 j]; table %v", got, table(rep))
	}
	rep = w.ingest("g", map[string]string{"in.json": `{"v":2}`})
	if got := w.renders(); !eq(got, []string{"a", "x1", "x2", "j"}) {
		t.Fatalf("renders %v; table %v", got, table(rep))
	}
	j := w.last("j")
	if !eq(j.InputFingerprints, []string{w.last("a").Fingerprints["@atomic"], w.last("x2").Fingerprints["@atomic"]}) {
		t.Fatal("j rendered against unsettled inputs")
	}
	if len(j.Wake.Refs) != 2 {
		t.Fatalf("j's wake refs %v, want both producers' receipts", j.Wake.Refs)
	}
}

// A symmetric diamond (g → a, g → b, a+b → d) renders d once; ties by id.
func TestSymmetricDiamond(t *testing.T) {
	w := newWorld(t, []Node{{ID: "g", Wake: receipt.WakeExternal}, {ID: "b"}, {ID: "a"}, {ID: "d"}},
		[]Edge{{"a", "g", "@atomic"}, {"b", "g", "@atomic"}, {"d", "a", "@atomic"}, {"d", "b", "@atomic"}}, nil)
	rep := w.ingest("g", map[string]string{"in.json": "{}"})
	if got := w.renders(); !eq(got, []string{"a", "b", "d"}) {
		t.Fatalf("renders %v, want [a b d]; table %v", got, table(rep))
	}
}

// A node no producer propagated to is pruned: a's render moves nothing, so
// b never wakes.
func TestPruning(t *testing.T) {
	w := chain(t)
	w.rend["a"] = func(req *Request) (Result, error) { return Result{}, nil } // keeps the seeded output
	rep := w.ingest("g", map[string]string{"in.json": `{"n":9}`})
	if got := w.renders(); !eq(got, []string{"a"}) {
		t.Fatalf("renders %v; table %v", got, table(rep))
	}
	if o := outcome(t, rep, "a"); o.Disposition != Skipped || !strings.Contains(o.Why, "output moved no fingerprint") {
		t.Fatalf("a: %+v", o)
	}
	if o := outcome(t, rep, "b"); o.Disposition != Pruned || !strings.Contains(o.Why, "a skipped") {
		t.Fatalf("b: %+v", o)
	}
	// a recorded the new memo key: waking it again skips without a render.
	w.wake("a")
	if len(w.renders()) != 0 {
		t.Fatal("a rendered again with an unmoved memo key")
	}
}

// A failure commits nothing, keeps the prior truth, records a failed
// receipt with its redacted reason, and wakes nobody.
func TestContainedFailure(t *testing.T) {
	cases := map[string]func(req *Request) (Result, error){
		"error": func(req *Request) (Result, error) {
			return Result{}, errors.New("upstream said no (key sk-abcdefghijklmnopqrstuvwx0123)\nsecond line")
		},
		"__error.md": func(req *Request) (Result, error) {
			return Result{}, os.WriteFile(filepath.Join(req.Out, "__error.md"), []byte("cannot reach the feed\n"), 0o644)
		},
		"empty": func(req *Request) (Result, error) {
			return Result{}, os.RemoveAll(filepath.Join(req.Out, "value.json"))
		},
		"edits inputs": func(req *Request) (Result, error) {
			return Result{}, os.WriteFile(filepath.Join(req.InputsDir, req.Inputs[0].Dir, "in.json"), []byte("{}"), 0o644)
		},
	}
	want := map[string]string{"error": "upstream said no", "__error.md": "cannot reach the feed", "empty": "output empty", "edits inputs": "changed its inputs"}
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			w := chain(t)
			tip, prior, priorA := w.tip(), w.files("a"), w.last("a")
			w.rend["a"] = fn
			rep := w.ingest("g", map[string]string{"in.json": `{"n":7}`})
			tipAfterG := w.tip()
			if tipAfterG == tip {
				t.Fatal("g's payload made no commit")
			}
			r := w.last("a")
			if r.Status != receipt.Failed {
				t.Fatalf("status %s", r.Status)
			}
			reason, _ := r.SemanticDiff["failure_reason"].(string)
			if !strings.Contains(reason, want[name]) || strings.Contains(reason, "sk-abcdef") || strings.Contains(reason, "second line") {
				t.Fatalf("failure_reason %q", reason)
			}
			if r.Fingerprints["@atomic"] != priorA.Fingerprints["@atomic"] {
				t.Fatal("a failed receipt must copy the prior fingerprints")
			}
			if got := w.files("a"); got["value.json"] != prior["value.json"] || len(got) != len(prior) {
				t.Fatalf("prior truth changed: %v", got)
			}
			if _, err := os.Stat(filepath.Join(w.v.Root(), "published", "a", "__error.md")); err == nil {
				t.Fatal("__error.md was published")
			}
			if o := outcome(t, rep, "b"); o.Disposition != Pruned || !strings.Contains(o.Why, "a failed") {
				t.Fatalf("b: %+v; table %v", o, table(rep))
			}
			if eq(w.renders(), []string{"a", "b"}) {
				t.Fatal("b rendered after a failed")
			}
			if w.tip() != tipAfterG {
				t.Fatal("the failure made a branch commit")
			}
			// Not retried while nothing moves; retried when named.
			if rep := w.dirty(); len(rep.Outcomes) != 0 {
				t.Fatalf("dirty after a failure: %v", table(rep))
			}
			delete(w.rend, "a")
			rep = w.wake("a")
			if o := outcome(t, rep, "a"); o.Disposition != Rendered || !strings.Contains(o.Why, "last render failed") {
				t.Fatalf("retry: %+v", o)
			}
		})
	}
}

// A self-driven node ticks on its cadence: a plain tick skips; a lapsed
// valid_until renders it, and the refreshed facet wakes only its
// subscribers.
func TestLapsedValidUntil(t *testing.T) {
	w := newWorld(t, []Node{{ID: "s", Wake: receipt.WakeSelf, Cadence: time.Hour}, {ID: "t1"}, {ID: "t2"}},
		[]Edge{{"t1", "s", "fresh"}, {"t2", "s", "other"}}, map[string][]string{"s": {"fresh", "other"}})
	w.rend["s"] = func(req *Request) (Result, error) {
		until := w.now.Add(90 * time.Minute).Format(time.RFC3339)
		os.MkdirAll(filepath.Join(req.Out, "fresh"), 0o755)
		os.MkdirAll(filepath.Join(req.Out, "other"), 0o755)
		os.WriteFile(filepath.Join(req.Out, "other", "v.json"), []byte(`{"k":1}`), 0o644)
		return Result{}, os.WriteFile(filepath.Join(req.Out, "fresh", "v.json"), []byte(`{"price":3,"valid_until":"`+until+`"}`), 0o644)
	}
	rep := w.dirty()
	if got := w.renders(); !eq(got, []string{"s", "t1", "t2"}) {
		t.Fatalf("cold start %v; table %v", got, table(rep))
	}
	// Before the cadence: nothing is due.
	w.now = w.now.Add(30 * time.Minute)
	if rep := w.dirty(); len(rep.Outcomes) != 0 {
		t.Fatalf("before the cadence: %v", table(rep))
	}
	// One cadence later, valid_until still ahead: a plain tick skips.
	w.now = w.now.Add(45 * time.Minute)
	rep = w.dirty()
	if o := outcome(t, rep, "s"); o.Disposition != Skipped || o.Wake != receipt.WakeSelf || len(w.renders()) != 0 {
		t.Fatalf("plain tick: %+v renders %v", o, w.renders())
	}
	// Past valid_until: the tick renders, fresh moves, t1 wakes, t2 not.
	w.now = w.now.Add(61 * time.Minute)
	rep = w.dirty()
	if got := w.renders(); !eq(got, []string{"s", "t1"}) {
		t.Fatalf("lapsed tick renders %v; table %v", got, table(rep))
	}
	if o := outcome(t, rep, "s"); o.Disposition != Rendered || !strings.Contains(o.Why, "valid_until lapsed at fresh.v.valid_until") {
		t.Fatalf("s: %+v", o)
	}
	if o := outcome(t, rep, "t2"); o.Disposition != Pruned {
		t.Fatalf("t2: %+v", o)
	}
	if r := w.last("s"); r.Wake.Source != receipt.WakeSelf {
		t.Fatalf("s's wake %s", r.Wake.Source)
	}
}

func TestGraphRejectsCycles(t *testing.T) {
	_, err := NewGraph([]Node{{ID: "a"}, {ID: "b"}}, []Edge{{"a", "b", "@atomic"}, {"b", "a", "@atomic"}})
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("err %v", err)
	}
}

func TestParseCadence(t *testing.T) {
	for in, want := range map[string]time.Duration{"15m": 15 * time.Minute, "every 15 minutes": 15 * time.Minute, "hourly": time.Hour,
		"every hour": time.Hour, "daily, at dawn": 24 * time.Hour, "every 2 days": 48 * time.Hour} {
		if got, err := ParseCadence(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseCadence("when the moon is full"); err == nil {
		t.Error("nonsense cadence accepted")
	}
}

var _ = context.Background
