package ingest

import (
	"strings"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/prompt"
)

// PromptVersion names the revision of the plan protocol and the tools; the
// memo key also holds the text of the prompts in force (built-in or the
// vault's overrides), so changing a prompt re-runs ingests that would
// otherwise be skipped.
const PromptVersion = "wiki-pipeline-2"

// prompts are the three prompts of the pipeline as a vault sees them.
type prompts struct {
	analysis, generation, enrichment *prompt.Template
}

func loadPrompts(root string) (*prompts, error) {
	var p prompts
	for _, x := range []struct {
		name string
		dst  **prompt.Template
	}{{"analysis", &p.analysis}, {"generation", &p.generation}, {"enrichment", &p.enrichment}} {
		t, err := prompt.Load(root, x.name)
		if err != nil {
			return nil, err
		}
		*x.dst = t
	}
	return &p, nil
}

// version is the token of the protocol revision and the prompts' text.
func (p *prompts) version() string {
	var sb strings.Builder
	sb.WriteString(PromptVersion)
	for _, t := range []*prompt.Template{p.analysis, p.generation, p.enrichment} {
		sb.WriteString("\x00" + string(t.Dialect) + "\x00" + t.Text)
	}
	return canon.BLAKE3.Token([]byte(sb.String()))
}
