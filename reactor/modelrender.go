package reactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/receipt"
)

// ModelRenderer renders a node through the model layer (render: model):
// the contract, the wake and the inputs go in the prompt; the model reads
// inputs and its current world-model and writes its new one through
// tools confined to PROSE_OUT (docs/runtime.md §Model renders).
type ModelRenderer struct {
	// Open opens a model spec (PROVIDER:NAME).
	Open func(spec string) (model.Model, error)
	// Default is the spec used when ### Runtime gives no model or only a
	// hint without a provider (sonnet): the run's model (--model,
	// $PROSE_MODEL, prose.yaml).
	Default string
	// Aliases map a model hint (sonnet) to PROVIDER:NAME (prose.yaml
	// models).
	Aliases map[string]string
	// MaxIterations caps the model calls of one render (0: the loop's
	// default).
	MaxIterations int
}

// Limits of a model render's tools.
const (
	maxModelFile   = 4 << 20  // one file written or read
	maxModelOutput = 32 << 20 // everything written by one render
	maxPromptFile  = 16 << 10 // an input file inlined in the prompt
	maxPromptTotal = 64 << 10 // all inlined input files
)

// Spec is the model spec n renders with.
func (mr *ModelRenderer) Spec(n *Node) string {
	m := strings.TrimSpace(n.Runtime.Model)
	if strings.Contains(m, ":") || m == model.Offline {
		return m
	}
	if a, ok := mr.Aliases[m]; ok && m != "" {
		return a
	}
	return mr.Default
}

// Render implements Renderer.
func (mr *ModelRenderer) Render(ctx context.Context, req *Request) (Result, error) {
	spec := mr.Spec(req.Node)
	if spec == "" {
		return Result{}, errors.New("render: model names no model: give ### Runtime `model: PROVIDER:NAME`, or choose one with --model, $PROSE_MODEL or prose.yaml model")
	}
	if spec == model.Offline {
		return Result{}, errors.New("the offline engine cannot render a node (it serves the wiki pipeline only): give ### Runtime `model: PROVIDER:NAME`, or choose a model with --model, $PROSE_MODEL or prose.yaml model")
	}
	provider, name, err := model.ParseSpec(spec)
	if err != nil {
		return Result{}, err
	}
	m, err := mr.Open(spec)
	if err != nil {
		return Result{Provider: provider, Model: name}, err
	}
	tools := &renderTools{in: req.InputsDir, out: req.Out}
	prompt, err := modelPrompt(req)
	if err != nil {
		return Result{}, err
	}
	lctx := ctx
	if t := req.Node.Runtime.Timeout; t > 0 {
		var cancel context.CancelFunc
		lctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	lr, lerr := model.Loop(lctx, m, model.Request{System: modelSystem, Messages: []model.Message{model.UserText(prompt)}, Tools: tools.list()},
		model.LoopOptions{MaxIterations: mr.MaxIterations})
	res := Result{Provider: provider, Model: name, Tokens: tokensOf(lr.Usage)}
	if lerr != nil {
		if ctx.Err() == nil && errors.Is(lctx.Err(), context.DeadlineExceeded) {
			return res, fmt.Errorf("timed out after %s (### Runtime timeout)", req.Node.Runtime.Timeout)
		}
		return res, lerr
	}
	if tools.failed != "" {
		// The model signalled a declared error: the reconciler reads
		// __error.md and fails the render with it.
		return res, os.WriteFile(filepath.Join(req.Out, "__error.md"), []byte(tools.failed+"\n"), 0o644)
	}
	return res, nil
}

// tokensOf turns a loop's usage into a receipt's tokens: fresh are the
// input not served from the cache plus the output, reused the cached
// input.
func tokensOf(u model.Usage) receipt.Tokens {
	fresh := u.Input - u.CachedInput + u.Output
	if fresh < 0 {
		fresh = 0
	}
	return receipt.Tokens{Fresh: fresh, Reused: u.CachedInput}
}

const modelSystem = `You are the render of one node of an OpenProse world-model. The node's contract says what world-model it maintains. Read its inputs (the published world-models of the nodes it subscribes to) and its current world-model, then leave its new world-model in the output with the tools: write_output writes a file, delete_output removes one; files you do not touch stay as they are. Keep the contract's ### Maintains postconditions before you finish. If you cannot satisfy the contract, call fail with the reason instead of writing unmet work. A function's outputs are its ### Returns: write each as a file named after it. When done, answer with one line saying what changed.`

// modelPrompt is the render's user message: the contract, the wake, the
// inputs (inputs.json and the files, small ones inlined) and the current
// output's file list.
func modelPrompt(req *Request) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Node: %s\nWake: %s\nNow: %s\n\n## Contract\n\n%s\n", req.Node.ID, req.Wake.Source, req.Now.UTC().Format("2006-01-02T15:04:05Z"), req.Node.Runtime.Contract)
	b.WriteString("## Inputs\n\n")
	if len(req.Inputs) == 0 {
		b.WriteString("(none: the node subscribes to nothing)\n")
	}
	for _, in := range req.Inputs {
		fmt.Fprintf(&b, "- %s.%s (token %s) under %s/\n", in.Producer, in.Facet, in.Token, in.Dir)
	}
	files, err := listFiles(req.InputsDir)
	if err != nil {
		return "", err
	}
	budget := maxPromptTotal
	for _, f := range files {
		if f == "inputs.json" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(req.InputsDir, filepath.FromSlash(f)))
		if err != nil {
			return "", err
		}
		if len(data) <= maxPromptFile && len(data) <= budget {
			budget -= len(data)
			fmt.Fprintf(&b, "\n### input %s\n\n```\n%s\n```\n", f, strings.TrimRight(string(data), "\n"))
		} else {
			fmt.Fprintf(&b, "\n### input %s (%d bytes: read it with read_input)\n", f, len(data))
		}
	}
	out, err := listFiles(req.Out)
	if err != nil {
		return "", err
	}
	b.WriteString("\n## Current world-model\n\n")
	if len(out) == 0 {
		b.WriteString("(empty: this is the first render)\n")
	}
	for _, f := range out {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	return b.String(), nil
}

// listFiles lists the files below dir as sorted slash paths.
func listFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// renderTools are a model render's tools: reads of the inputs and the
// output, writes confined to the output.
type renderTools struct {
	in, out string
	written int
	failed  string
}

var pathSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a relative path, forward slashes"}},"required":["path"]}`)

func (t *renderTools) list() []model.Tool {
	type pathArg struct{ Path string }
	type writeArg struct{ Path, Content string }
	read := func(root string) func(ctx context.Context, args json.RawMessage) (string, error) {
		return func(ctx context.Context, args json.RawMessage) (string, error) {
			var a pathArg
			if err := json.Unmarshal(args, &a); err != nil {
				return "", err
			}
			p, err := confined(root, a.Path)
			if err != nil {
				return "", err
			}
			fi, err := os.Stat(p)
			if err != nil {
				return "", fmt.Errorf("%s does not exist; list the files first", a.Path)
			}
			if fi.Size() > maxModelFile {
				return "", fmt.Errorf("%s is %d bytes, more than the %d a read returns", a.Path, fi.Size(), maxModelFile)
			}
			data, err := os.ReadFile(p)
			return string(data), err
		}
	}
	lister := func(root string) func(ctx context.Context, args json.RawMessage) (string, error) {
		return func(ctx context.Context, args json.RawMessage) (string, error) {
			files, err := listFiles(root)
			if err != nil {
				return "", err
			}
			if len(files) == 0 {
				return "(no files)", nil
			}
			return strings.Join(files, "\n"), nil
		}
	}
	return []model.Tool{
		{Name: "list_inputs", Description: "List the input files (producer/path; inputs.json describes the edges).", Schema: json.RawMessage(`{"type":"object","properties":{}}`), Run: lister(t.in)},
		{Name: "read_input", Description: "Read one input file.", Schema: pathSchema, Run: read(t.in)},
		{Name: "list_output", Description: "List the files of the node's world-model as it stands.", Schema: json.RawMessage(`{"type":"object","properties":{}}`), Run: lister(t.out)},
		{Name: "read_output", Description: "Read one file of the node's world-model.", Schema: pathSchema, Run: read(t.out)},
		{Name: "write_output", Description: "Write one file of the node's new world-model (created or replaced).",
			Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`),
			Run: func(ctx context.Context, args json.RawMessage) (string, error) {
				var a writeArg
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				p, err := confined(t.out, a.Path)
				if err != nil {
					return "", err
				}
				if filepath.Base(p) == "__error.md" {
					return "", errors.New("__error.md is the failure signal: call fail instead")
				}
				if len(a.Content) > maxModelFile || t.written+len(a.Content) > maxModelOutput {
					return "", fmt.Errorf("too large: a file holds at most %d bytes and a render writes at most %d", maxModelFile, maxModelOutput)
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return "", err
				}
				if err := os.WriteFile(p, []byte(a.Content), 0o644); err != nil {
					return "", err
				}
				t.written += len(a.Content)
				return fmt.Sprintf("wrote %s (%d bytes)", a.Path, len(a.Content)), nil
			}},
		{Name: "delete_output", Description: "Remove one file of the node's world-model.", Schema: pathSchema,
			Run: func(ctx context.Context, args json.RawMessage) (string, error) {
				var a pathArg
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				p, err := confined(t.out, a.Path)
				if err != nil {
					return "", err
				}
				if err := os.Remove(p); err != nil {
					return "", fmt.Errorf("%s does not exist", a.Path)
				}
				return "removed " + a.Path, nil
			}},
		{Name: "fail", Description: "Give up: the render fails with this reason and nothing is published.",
			Schema: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"}},"required":["reason"]}`),
			Run: func(ctx context.Context, args json.RawMessage) (string, error) {
				var a struct{ Reason string }
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				t.failed = strings.TrimSpace(a.Reason)
				if t.failed == "" {
					t.failed = "the model gave up without a reason"
				}
				return "recorded: the render will fail; answer now without further tool calls", nil
			}},
	}
}

// confined resolves a tool's path under root: relative, no "..", no
// backslash, no symlink on the way.
func confined(root, p string) (string, error) {
	if !localPath(p) {
		return "", fmt.Errorf("path %q is not a relative path inside the directory (no leading /, no .., forward slashes)", p)
	}
	full := filepath.Join(root, filepath.FromSlash(p))
	rel, _ := filepath.Rel(root, full)
	cur := root
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		cur = filepath.Join(cur, seg)
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("path %q goes through a symbolic link", p)
		}
	}
	return full, nil
}
