package reactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/prose-store/prose/model"
)

// Verdict is a judge's reading of one assertion against a world-model.
type Verdict struct {
	// Holds is whether the statement holds of the world-model.
	Holds bool `json:"holds"`
	// Evidence is what the judge observed, in a sentence or two.
	Evidence string `json:"evidence"`
}

// Judge reads whether a statement holds of a subject's published
// world-model, by judgment rather than string matching (prose test).
type Judge struct {
	M model.Model
}

// Limits of what a judge is shown.
const (
	maxJudgeFile  = 32 << 10
	maxJudgeTotal = 128 << 10
)

const judgeSystem = `You judge one assertion of an OpenProse test. You are shown the subject's contract, the world-model its render published, and one statement about that world-model. Decide whether the statement holds, using judgment, not string matching: test observable behaviour and contract satisfaction, not exact phrasing. Answer with exactly one JSON object and nothing else: {"holds": true or false, "evidence": "what you observed in the world-model that decides it, citing the file"}.`

// Judge asks the model whether statement holds of files (the subject's
// world-model, path → content). An answer that is not the verdict object
// is an error, never a verdict.
func (j *Judge) Judge(ctx context.Context, subject, contract string, files map[string][]byte, statement string) (Verdict, model.Usage, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "## Subject: %s\n\n%s\n## Published world-model\n", subject, contract)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if len(paths) == 0 {
		b.WriteString("\n(empty: the render published no file)\n")
	}
	budget := maxJudgeTotal
	for _, p := range paths {
		data := files[p]
		switch {
		case !utf8.Valid(data):
			fmt.Fprintf(&b, "\n### %s\n\n(binary, %d bytes)\n", p, len(data))
		case len(data) > maxJudgeFile || len(data) > budget:
			n := min(maxJudgeFile, max(budget, 0))
			for n > 0 && !utf8.RuneStart(data[n]) {
				n--
			}
			budget -= n
			fmt.Fprintf(&b, "\n### %s (%d bytes; the first %d shown)\n\n```\n%s\n```\n", p, len(data), n, data[:n])
		default:
			budget -= len(data)
			fmt.Fprintf(&b, "\n### %s\n\n```\n%s\n```\n", p, strings.TrimRight(string(data), "\n"))
		}
	}
	fmt.Fprintf(&b, "\n## Statement\n\n%s\n", statement)
	zero := 0.0
	resp, err := j.M.Call(ctx, model.Request{System: judgeSystem, Messages: []model.Message{model.UserText(b.String())}, MaxTokens: 1024, Temperature: &zero})
	if err != nil {
		return Verdict{}, resp.Usage, err
	}
	v, err := parseVerdict(resp.Text)
	return v, resp.Usage, err
}

// parseVerdict reads the judge's JSON object (a fenced block or prose
// around it is tolerated; a missing holds is not).
func parseVerdict(text string) (Verdict, error) {
	start, end := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if start < 0 || end < start {
		return Verdict{}, fmt.Errorf("the judge did not answer with a verdict object: %q", cutText(text, 200))
	}
	var raw struct {
		Holds    *bool  `json:"holds"`
		Evidence string `json:"evidence"`
	}
	if err := json.Unmarshal([]byte(text[start:end+1]), &raw); err != nil {
		return Verdict{}, fmt.Errorf("the judge's verdict is not valid JSON (%v): %q", err, cutText(text, 200))
	}
	if raw.Holds == nil {
		return Verdict{}, errors.New("the judge's verdict has no holds: true|false")
	}
	return Verdict{Holds: *raw.Holds, Evidence: strings.TrimSpace(raw.Evidence)}, nil
}

func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
