package reactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// Reader is the state a detached render reads: each node's last receipt
// and world-model (a vault's, or a merge's before it lands).
type Reader interface {
	Last(node string) (*receipt.Receipt, error)
	Files(node string) (map[string][]byte, error)
}

// Output is the output of a detached render and the memo key it
// rendered at.
type Output struct {
	Files             map[string][]byte
	InputFingerprints []string
	Provider, Model   string
	Tokens            receipt.Tokens
}

// RenderAgainst renders node id of g once against src, as a reconciler's
// render does (the same request: inputs copied per edge with their
// tokens, PROSE_OUT seeded with the node's world-model in src, the
// workspace under workDir; and the same checks on the output: an error,
// edited inputs, __error.md, an empty output where the node had state, a
// broken postcondition), but publishes nothing and records no receipt:
// the caller lands the output (prose resolve NODE --render). A failure is
// an error naming its reason.
func RenderAgainst(ctx context.Context, g *Graph, id string, rend Renderer, src Reader, workDir, tempDir string, now time.Time, wake receipt.Wake) (*Output, error) {
	n := g.Node(id)
	if n == nil {
		return nil, fmt.Errorf("no node %s in the graph", id)
	}
	if rend == nil {
		return nil, errors.New("no render declared: give the node a ### Runtime with render: command (docs/runtime.md)")
	}
	var inputs []Input
	var tokens []string
	for _, e := range g.Inputs(id) {
		last, err := src.Last(e.Producer)
		if err != nil {
			return nil, err
		}
		tok := ColdStart
		if last != nil {
			if t, ok := last.Fingerprints[e.Facet]; ok {
				tok = t
			} else {
				tok = last.Fingerprints[receipt.AtomicFacet]
			}
		}
		inputs = append(inputs, Input{Producer: e.Producer, Facet: e.Facet, Token: tok, Dir: published.EscapeNode(e.Producer)})
		tokens = append(tokens, tok)
	}
	files, err := src.Files(id)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(tempDir, "prose-render-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	req := &Request{Node: n, Inputs: inputs, InputsDir: filepath.Join(tmp, "inputs"), Out: filepath.Join(tmp, "out"),
		Changed: filepath.Join(tmp, "changed"), Wake: wake, HadState: len(files) > 0, Now: now}
	req.Workspace = filepath.Join(workDir, published.EscapeNode(id), "workspace")
	if err := os.MkdirAll(req.Workspace, 0o755); err != nil {
		return nil, err
	}
	if err := writeFiles(req.Out, files); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(req.InputsDir, 0o755); err != nil {
		return nil, err
	}
	copied := map[string]bool{}
	for _, in := range inputs {
		if copied[in.Producer] {
			continue
		}
		copied[in.Producer] = true
		pf, err := src.Files(in.Producer)
		if err != nil {
			return nil, err
		}
		if err := writeFiles(filepath.Join(req.InputsDir, in.Dir), pf); err != nil {
			return nil, err
		}
	}
	idx, _ := json.MarshalIndent(nonNilInputs(inputs), "", "  ")
	if err := os.WriteFile(filepath.Join(req.InputsDir, "inputs.json"), append(idx, '\n'), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(req.Changed, nil, 0o644); err != nil {
		return nil, err
	}
	before, err := treeDigest(req.InputsDir)
	if err != nil {
		return nil, err
	}
	res, err := rend.Render(ctx, req)
	if err != nil {
		return nil, err
	}
	if after, err := treeDigest(req.InputsDir); err != nil || after != before {
		return nil, errors.New("the render changed its inputs (PROSE_INPUTS is read-only to a render)")
	}
	if data, err := os.ReadFile(filepath.Join(req.Out, "__error.md")); err == nil {
		msg := strings.TrimSpace(string(data))
		if msg == "" {
			msg = "(empty)"
		}
		return nil, errors.New("the render wrote __error.md: " + msg)
	}
	out, err := readOutput(req.Out)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 && req.HadState {
		return nil, errors.New("the render left its output empty, and the node had a world-model")
	}
	if _, err := checkPostconditions(n, req.Out); err != nil {
		return nil, err
	}
	r := &Output{Files: out, InputFingerprints: nonNil(tokens), Provider: res.Provider, Model: res.Model, Tokens: res.Tokens}
	if r.Provider == "" {
		r.Provider = "prose"
	}
	if r.Model == "" {
		r.Model = n.Runtime.Render
	}
	return r, nil
}

// readOutput reads every file a render left under dir, by slash path; a
// symbolic link or other special file is refused, as a publish refuses it.
func readOutput(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.Type().IsRegular() {
			return fmt.Errorf("the render left %s, which is not a regular file", filepath.ToSlash(rel))
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = data
		return nil
	})
	return out, err
}
