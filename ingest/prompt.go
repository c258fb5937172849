package ingest

import (
	"embed"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

//go:embed prompts/*.txt
var promptFiles embed.FS

// PromptVersion names the revision of the built-in prompts and the plan
// protocol; it is part of every memo key, so changing a prompt re-runs
// ingests that would otherwise be skipped.
const PromptVersion = "wiki-prompts-1"

// prompt is a template whose {field} markers are replaced for its declared
// fields only; every other brace — alert-{info|warning|success|error}, JSON
// examples — stays as written, and a substituted value is never read
// again.
type prompt struct {
	name   string
	text   string
	fields []string
}

var fieldRe = regexp.MustCompile(`\{([a-z_]+)\}`)

func loadPrompt(name string, fields ...string) prompt {
	data, err := promptFiles.ReadFile("prompts/" + name + ".txt")
	if err != nil {
		panic(err) // the file is embedded
	}
	return prompt{name: name, text: string(data), fields: fields}
}

var (
	analysisPrompt   = loadPrompt("analysis", "purpose", "audience", "templates", "template_details", "index", "tree", "source_title", "source")
	generationPrompt = loadPrompt("generation", "vault_root", "today", "audience", "source_slug", "analysis", "template_details", "component_palette", "source")
	enrichmentPrompt = loadPrompt("enrichment", "audience", "page_path", "template", "slots_dump", "component_palette")
)

// render fills the declared fields in one pass. A declared field without a
// value is an error naming it.
func (p prompt) render(values map[string]string) (string, error) {
	var pairs []string
	for _, f := range p.fields {
		v, ok := values[f]
		if !ok {
			return "", fmt.Errorf("prompt %s: no value for its field {%s}", p.name, f)
		}
		pairs = append(pairs, "{"+f+"}", v)
	}
	return strings.NewReplacer(pairs...).Replace(p.text), nil
}

// usedFields lists the {name} markers of the text that are declared.
func (p prompt) usedFields() []string {
	seen := map[string]bool{}
	for _, m := range fieldRe.FindAllStringSubmatch(p.text, -1) {
		for _, f := range p.fields {
			if f == m[1] {
				seen[f] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}
