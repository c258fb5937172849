package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/wiki"
)

// A provider's prompt cache serves a request's leading part (tools, then
// system text, then messages) again at a lower price. So that every call
// of a run — the analysis of each source and every turn of its
// generation — starts with the same leading part, a run's calls share one
// tool list (the toolbox's tools, then the plan tool) and one system text
// (the fixed parts of the analysis and generation prompts, in that order);
// what each call is for is said at the head of its own message. The
// analysis carries the tools but may call none of them (its answer is the
// plan, asked for in the provider's structured form); a generation turn
// that calls the plan tool is told the plan is made.
// The offline engine is asked the same way, so a recording made with it
// replays as a provider's calls would be sent.

const (
	analysisHead = "## Analysis: planning one source\n\n"
	generateHead = "## Generation: writing the planned pages with the tools\n\n"
	sharedHead   = "This wiki's ingest makes two kinds of call; the message of each says which it is and which part of these instructions it follows.\n\n"
	analysisLead = "This call is the analysis: follow the part \"Analysis\" of the instructions and answer with the plan; call no tool.\n\n"
	generateLead = "This call is the generation: follow the part \"Generation\" of the instructions and write the pages with the tools.\n\n"
)

// fixedParts renders the fixed parts of the analysis and generation
// prompts (the same for every call of the run).
func (r *run) fixedParts() (analysis, generation string, err error) {
	vals := r.generationValues("", "", "")
	r.parts.mu.Lock()
	if r.parts.fixed && r.parts.today == vals["today"] {
		defer r.parts.mu.Unlock()
		return r.parts.analysis, r.parts.generation, nil
	}
	r.parts.mu.Unlock()
	names, details := r.templateFields()
	analysis, _, err = r.prompts.analysis.RenderParts(map[string]string{
		"purpose": r.opt.Purpose, "audience": r.opt.Audience, "templates": names, "template_details": details,
		"index": "", "tree": "", "source_title": "", "source": "",
	})
	if err != nil {
		return "", "", err
	}
	generation, _, err = r.prompts.generation.RenderParts(vals)
	if err != nil {
		return "", "", err
	}
	r.parts.mu.Lock()
	defer r.parts.mu.Unlock()
	r.parts.fixed, r.parts.today, r.parts.analysis, r.parts.generation = true, vals["today"], analysis, generation
	r.parts.system = ""
	return analysis, generation, nil
}

// partsMemo is what fixedParts and templateFields made: the fixed parts
// depend on the run's options, its wiki's templates and the day alone.
type partsMemo struct {
	mu                   sync.Mutex
	fields               bool // names and details are made
	names, details       string
	fixed                bool // analysis and generation are made, for today
	today                string
	analysis, generation string
	system               string // shared's system text of them, once made
}

// sharedSystem is the system text of analysis and generation, made once
// for the fixed parts the memo holds.
func (r *run) sharedSystem(a, g string) string {
	r.parts.mu.Lock()
	defer r.parts.mu.Unlock()
	if r.parts.system != "" && r.parts.fixed && r.parts.analysis == a && r.parts.generation == g {
		return r.parts.system
	}
	sys := sharedHead + analysisHead + a + "\n\n" + generateHead + g
	if r.parts.fixed && r.parts.analysis == a && r.parts.generation == g {
		r.parts.system = sys
	}
	return sys
}

// generationValues are the generation prompt's fields.
func (r *run) generationValues(slug, analysis, source string) map[string]string {
	_, details := r.templateFields()
	return map[string]string{
		"vault_root": ".", "today": r.opt.Now().UTC().Format("2006-01-02"), "audience": r.opt.Audience,
		"source_slug": slug, "analysis": analysis, "template_details": details,
		"component_palette": wiki.ComponentPalette(), "source": source,
	}
}

// shared lays out one call: the run's shared system text, and the call's
// message (its lead, then its prompt's variable part). fixed is the
// call's own prompt's fixed part; an override written before prompts had a fixed part has none, and its
// message is sent whole, without a lead.
func (r *run) shared(analysis bool, fixed, variable string) (string, string, error) {
	a, g, err := r.fixedParts()
	if err != nil {
		return "", "", err
	}
	if a == "" || g == "" {
		return a + g, variable, nil
	}
	lead := generateLead
	if analysis {
		lead = analysisLead
	}
	if fixed == "" {
		lead = ""
	}
	return r.sharedSystem(a, g), lead + variable, nil
}

// errPlanMade answers a generation turn's call of the plan tool.
var errPlanMade = errors.New("the plan is made already; this call writes the planned pages with the other tools")

// callTools is the run's one tool list: tb's tools, then the plan tool
// (the analysis's structured answer on Anthropic, a forced call of it).
func (r *run) callTools(tb *toolbox) []model.Tool {
	f := plan.Format()
	return append(tb.tools(true), model.Tool{Name: f.Name, Description: "Give the plan of one source: used by the analysis call only.", Schema: f.Schema,
		Run: func(context.Context, json.RawMessage) (string, error) { return "", errPlanMade }})
}

// generationPrompt is a generation call: the shared system text and the
// call's message for one part of a source and its plan.
func (r *run) generationPrompt(slug, analysis, source string) (string, string, error) {
	fixed, variable, err := r.prompts.generation.RenderParts(r.generationValues(slug, analysis, source))
	if err != nil {
		return "", "", err
	}
	return r.shared(false, fixed, variable)
}
