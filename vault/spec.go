package vault

import "github.com/prose-store/prose/canon"

// specJSON writes a spec in the reference shape as canonical JSON, the form
// the vault stores at dist/canonicalizers/<node>.json.
func specJSON(s *canon.Spec) ([]byte, error) {
	fields := make([]any, 0, len(s.Fields))
	for _, f := range s.Fields {
		m := map[string]any{"path": f.Path, "material": f.Material}
		if f.Text != nil {
			t := map[string]any{"case_insensitive": f.Text.CaseInsensitive}
			if f.Text.CollapseWhitespace != nil {
				t["collapse_whitespace"] = *f.Text.CollapseWhitespace
			}
			m["text"] = t
		}
		if f.Number != nil {
			m["number"] = map[string]any{"quantum": f.Number.Quantum}
		}
		if f.Collection != "" {
			m["collection"] = f.Collection
		}
		fields = append(fields, m)
	}
	facets := make([]any, 0, len(s.Facets))
	for _, f := range s.Facets {
		paths := make([]any, len(f.Paths))
		for i, p := range f.Paths {
			paths[i] = p
		}
		facets = append(facets, map[string]any{"facet": f.Facet, "paths": paths})
	}
	doc := map[string]any{"node": s.Node, "fields": fields, "facets": facets}
	if s.DefaultMaterial != nil {
		doc["default_material"] = *s.DefaultMaterial
	}
	return canon.Marshal(doc)
}
