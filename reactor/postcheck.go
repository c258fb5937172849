package reactor

import (
	"fmt"
	"strings"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/published"
)

// Postconditions are a node's compiled postconditions: the checks prose
// runs on a render's output before publishing it, and the conditions
// outside the checkable form, which are the render's own to keep (reported
// as unchecked, never as passed).
type Postconditions struct {
	Checks    []forme.PostCheck `json:"checked"`
	Unchecked []string          `json:"unchecked"`
}

func postconditionsOf(p forme.Postcondition) Postconditions {
	var pc Postconditions
	checked := map[string]bool{}
	for _, c := range p.Checks {
		pc.Checks = append(pc.Checks, c)
		checked[c.Condition] = true
	}
	for _, c := range p.Conditions {
		if !checked[c] {
			pc.Unchecked = append(pc.Unchecked, c)
		}
	}
	return pc
}

// checkPostconditions checks n's postconditions on the output directory a
// render left. A broken one is an error naming it (the render fails and
// nothing is published); otherwise it returns what the rendered receipt's
// semantic_diff says about them: {"postconditions": {"checked": […],
// "unchecked": […]}}, or nil when the node declares none.
func checkPostconditions(n *Node, out string) (map[string]any, error) {
	p := n.Post
	if len(p.Checks) == 0 && len(p.Unchecked) == 0 {
		return nil, nil
	}
	if len(p.Checks) > 0 {
		truth, err := published.ReadTruth(out)
		if err != nil {
			return nil, fmt.Errorf("the postconditions cannot be checked: the output is not readable as structured truth: %v", err)
		}
		for _, c := range p.Checks {
			if why := c.Check(truth); why != "" {
				return nil, fmt.Errorf("postcondition broken: %s (%s)", strings.TrimRight(strings.TrimSpace(c.Condition), ".;"), why)
			}
		}
	}
	checked := make([]any, 0, len(p.Checks))
	for _, c := range p.Checks {
		checked = append(checked, c.Condition)
	}
	unchecked := make([]any, 0, len(p.Unchecked))
	for _, c := range p.Unchecked {
		unchecked = append(unchecked, c)
	}
	return map[string]any{"postconditions": map[string]any{"checked": checked, "unchecked": unchecked}}, nil
}
