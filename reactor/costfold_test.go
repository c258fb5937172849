package reactor

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/refdata"
	"github.com/prose-store/prose/receipt"
)

// The reference's eval shape (reactor-evals): a feed gateway → digest →
// brief0, brief1, brief2, 1,000 ticks; a cron renders all five nodes every
// tick. Tokens per render are the reference's: the reactor's digest 9 and
// briefs 7 (fresh), the cron's 41,690 over 5,000 renders.
var evalTokens = map[string]int64{"feed": 0, "digest": 9, "brief0": 7, "brief1": 7, "brief2": 7}

const (
	cronTokens1000 = 41690 // the reference cron's fresh tokens over 1,000 ticks
	cronRenders    = 5     // per tick
)

func evalWorld(t *testing.T) *world {
	return newWorld(t, []Node{{ID: "feed", Wake: receipt.WakeExternal}, {ID: "digest"}, {ID: "brief0"}, {ID: "brief1"}, {ID: "brief2"}},
		[]Edge{{"digest", "feed", "@atomic"}, {"brief0", "digest", "@atomic"}, {"brief1", "digest", "@atomic"}, {"brief2", "digest", "@atomic"}}, nil)
}

// runEval drives ticks through prose: at each tick the feed is given its
// payload (changed at the ticks in changes), then the drain runs. It
// returns the renders and the fresh tokens they cost at the reference's
// prices.
func runEval(t *testing.T, ticks int, changes map[int]bool) (renders int, tokens int64) {
	w := evalWorld(t)
	version := 0
	for i := 0; i < ticks; i++ {
		if i == 0 || changes[i] {
			version++
		}
		rep := w.ingest("feed", map[string]string{"items.json": fmt.Sprintf(`{"version":%d}`, version)})
		for _, o := range rep.Outcomes {
			if o.Disposition == Rendered {
				renders++
				tokens += evalTokens[o.Node]
			}
		}
	}
	return renders, tokens
}

// TestCostFold re-runs the reference's headline: at a 1% material-change
// rate its reactor spends 240 fresh tokens and 40 renders where the cron
// spends 41,690 and 5,000 (173.7×). The 1% run takes the reference's own
// change ticks from its ledger; 10%, 50% and 100% draw theirs from a seeded
// generator. prose renders exactly the dirty path: five renders per change.
func TestCostFold(t *testing.T) {
	dir := refdata.Shared(t, "reference-data", "reactor", "packages", "reactor-evals", "runs-sample", "reactor__lambda-0.01")
	data, err := os.ReadFile(filepath.Join(dir, "receipts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var refs []refReceipt
	if err := json.Unmarshal(data, &refs); err != nil {
		t.Fatal(err)
	}
	// -short drives a fifth of the ticks: the reference's first 250 (two
	// of its material changes), compared with its ledger up to there, and
	// each drawn rate over a fifth of its ticks.
	refTicks, scale := 1000, 1
	if testing.Short() {
		refTicks, scale = 250, 5
	}
	refChanges := map[int]bool{}
	tick, prev := -1, ""
	refRenders, shortRenders := 0, 0
	var refTokens, shortTokens int64
	for _, r := range refs {
		if r.Node == "feed" {
			tick++
			if a := r.Fingerprints["@atomic"]; tick > 0 && a != prev && tick < refTicks {
				refChanges[tick] = true
			}
			prev = r.Fingerprints["@atomic"]
		}
		if r.Status == "rendered" {
			refRenders++
			refTokens += evalTokens[r.Node]
			if tick < refTicks {
				shortRenders++
				shortTokens += evalTokens[r.Node]
			}
		}
	}
	if refRenders != 40 || refTokens != 240 {
		t.Fatalf("the reference ledger reads as %d renders, %d tokens; want 40, 240", refRenders, refTokens)
	}
	refRenders, refTokens = shortRenders, shortTokens
	type row struct {
		rate           string
		ticks, changes int
		renders        int
		tokens         int64
	}
	var rows []row
	renders, tokens := runEval(t, refTicks, refChanges)
	rows = append(rows, row{"1% (reference ticks)", refTicks, len(refChanges) + 1, renders, tokens})
	for _, c := range []struct {
		rate  float64
		ticks int
	}{{0.10, 300 / scale}, {0.50, 100 / scale}, {1.00, 60 / scale}} {
		rng := rand.New(rand.NewPCG(22, uint64(c.rate*100)))
		ch := map[int]bool{}
		for i := 1; i < c.ticks; i++ {
			if rng.Float64() < c.rate {
				ch[i] = true
			}
		}
		r, tk := runEval(t, c.ticks, ch)
		rows = append(rows, row{fmt.Sprintf("%.0f%%", c.rate*100), c.ticks, len(ch) + 1, r, tk})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| rate | ticks | material changes (incl. cold start) | prose renders | prose tokens | cron renders | cron tokens | fold (tokens) |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if r.renders != 5*r.changes {
			t.Errorf("%s: %d renders for %d changes, want exactly 5 per change", r.rate, r.renders, r.changes)
		}
		if r.tokens != 30*int64(r.changes) {
			t.Errorf("%s: %d tokens for %d changes, want 30 per change", r.rate, r.tokens, r.changes)
		}
		cron := float64(cronTokens1000) * float64(r.ticks) / 1000
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %.0f | %.1f× |\n", r.rate, r.ticks, r.changes, r.renders, r.tokens, cronRenders*r.ticks, cron, cron/float64(r.tokens))
	}
	if rows[0].renders != refRenders || rows[0].tokens != refTokens {
		t.Errorf("at the reference's 1%% ticks prose spends %d renders, %d tokens; the reference %d, %d", rows[0].renders, rows[0].tokens, refRenders, refTokens)
	}
	t.Log(b.String())
}
