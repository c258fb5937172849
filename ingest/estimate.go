package ingest

import (
	"context"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/model"
)

// Estimate is what a source's conversation is expected to cost, from the
// prompts the run would send (nothing is asked): tokens are counted as
// the budget counts them, four bytes each.
type Estimate struct {
	Source string `json:"source,omitempty"`
	Page   string `json:"page,omitempty"` // an enrich's page

	Calls  int   `json:"calls"`
	Input  int64 `json:"input_tokens"`
	Output int64 `json:"output_tokens"`
}

// The estimate's rule for what it cannot know before asking: a plan
// answer of estPlanBytes, a generation of estTurns calls (the tool calls,
// then the final answer) whose tool calls write about as many bytes as
// the source holds (at most estWriteBytes) and whose later turns re-send
// the prompt with them.
const (
	estPlanBytes  = 1200
	estTurns      = 2
	estWriteBytes = 32 << 10
)

func estTokens(n int) int64 { return int64(n+3) / 4 }

// estimate is the estimate of d's conversation.
func (r *run) estimate(ctx context.Context, d *source.Document) (Estimate, error) {
	e := Estimate{Source: d.Name, Calls: 1 + estTurns}
	sys, text, err := r.analysisPrompt(d)
	if err != nil {
		return e, err
	}
	tools := toolBytes(r.callTools(r.toolbox()))
	e.Input += estTokens(len(sys) + len(text) + len(plan.Format().Schema) + tools)
	e.Output += estTokens(estPlanBytes)
	gsys, gtext, err := r.generationPrompt(d.Name, plan.Field("analysis", string(make([]byte, estPlanBytes))), quoteSource(d))
	if err != nil {
		return e, err
	}
	size := len(d.Data)
	if size == 0 {
		size = d.Size // the bytes let go of (Document.Reload)
	}
	written := min(size, estWriteBytes)
	prompt := len(gsys) + len(gtext) + tools
	e.Input += estTokens(prompt) + estTokens(prompt+written) // each turn re-sends the conversation
	e.Output += estTokens(written) + estTokens(200)
	return e, ctx.Err()
}

// toolBytes is how many bytes the tools' names, descriptions and schemas
// add to every call that offers them.
func toolBytes(ts []model.Tool) int {
	n := 0
	for _, t := range ts {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return n
}
