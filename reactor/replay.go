package reactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// RecordingFormat names the render-recording format (docs/runtime.md
// §Replay renders).
const RecordingFormat = "prose.render-recording/1"

// maxRecording bounds a recording file.
const maxRecording = 64 << 20

// Recording is a replay render's file: recorded renders of one node, tried
// in order; the first whose Match holds is the render.
type Recording struct {
	Format  string           `json:"format"`
	Renders []RecordedRender `json:"renders"`
}

// RecordedRender is one recorded render.
type RecordedRender struct {
	// Match maps input paths (relative to PROSE_INPUTS: producer/file) to
	// the content they must hold, final line ends aside; "" asks only that
	// the file exists. An empty Match matches every render.
	Match map[string]string `json:"match,omitempty"`
	// Files is the node's whole output world-model, path → content.
	Files map[string]string `json:"files,omitempty"`
	// Error, when set, fails the render with this reason instead.
	Error string `json:"error,omitempty"`
	// Cost is what the recorded render spent.
	Cost *RecordedCost `json:"cost,omitempty"`
}

// RecordedCost is a recorded render's provider, model and tokens.
type RecordedCost struct {
	Provider string         `json:"provider"`
	Model    string         `json:"model"`
	Tokens   receipt.Tokens `json:"tokens"`
}

// LoadRecording reads and checks a recording file.
func LoadRecording(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("recording %s does not exist: write one (docs/runtime.md §Replay renders) or set ### Runtime recording", path)
		}
		return nil, fmt.Errorf("recording: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRecording+1))
	if err != nil {
		return nil, fmt.Errorf("recording %s: %w", path, err)
	}
	if len(data) > maxRecording {
		return nil, fmt.Errorf("recording %s is larger than %d MiB", path, maxRecording>>20)
	}
	return ParseRecording(path, data)
}

// ParseRecording checks a recording's content: its format, and that every
// recorded output path is a relative path inside the node's directory.
func ParseRecording(name string, data []byte) (*Recording, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var rec Recording
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("recording %s is not a %s file: %v", name, RecordingFormat, err)
	}
	if rec.Format != RecordingFormat {
		return nil, fmt.Errorf("recording %s: format is %q, want %q", name, rec.Format, RecordingFormat)
	}
	for i, r := range rec.Renders {
		if r.Error != "" && len(r.Files) > 0 {
			return nil, fmt.Errorf("recording %s: renders[%d] has both files and error; a recorded render either publishes or fails", name, i)
		}
		for p := range r.Files {
			if np, err := published.NormalizePath(p); err != nil || np != p || p == "__error.md" {
				return nil, fmt.Errorf("recording %s: renders[%d] file %q is not a path inside the node's world-model", name, i, p)
			}
		}
		for p := range r.Match {
			if !localPath(p) {
				return nil, fmt.Errorf("recording %s: renders[%d] match %q is not a path under PROSE_INPUTS (producer/file)", name, i, p)
			}
		}
	}
	return &rec, nil
}

// localPath reports whether p is a relative slash path that stays below
// its root.
func localPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && !strings.Contains(p, "\\") && filepath.IsLocal(filepath.FromSlash(p))
}

// ReplayRenderer serves a node's renders from its recording (render:
// replay): the first recorded render whose match holds against the
// inputs replaces the output with its files, or fails with its error.
type ReplayRenderer struct {
	// Dir is the project directory: a relative recording path is relative
	// to it.
	Dir string
}

// RecordingPath is where n's recording is read from.
func (rr *ReplayRenderer) RecordingPath(n *Node) string {
	p := n.Runtime.Recording
	if p == "" {
		p = filepath.Join("recordings", published.EscapeNode(n.ID)+".json")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(rr.Dir, p)
	}
	return p
}

// Render implements Renderer.
func (rr *ReplayRenderer) Render(ctx context.Context, req *Request) (Result, error) {
	path := rr.RecordingPath(req.Node)
	rec, err := LoadRecording(path)
	if err != nil {
		return Result{}, err
	}
	for _, r := range rec.Renders {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if !matches(req.InputsDir, r.Match) {
			continue
		}
		res := Result{Provider: "replay", Model: filepath.Base(path)}
		if r.Cost != nil {
			res.Tokens = r.Cost.Tokens
			if r.Cost.Provider != "" || r.Cost.Model != "" {
				res.Model = strings.Trim(r.Cost.Provider+":"+r.Cost.Model, ":")
			}
		}
		if r.Error != "" {
			return res, errors.New(r.Error)
		}
		if err := clearDir(req.Out); err != nil {
			return res, err
		}
		files := make(map[string][]byte, len(r.Files))
		for p, c := range r.Files {
			files[p] = []byte(c)
		}
		return res, writeFiles(req.Out, files)
	}
	return Result{}, fmt.Errorf("no recorded render in %s matches these inputs (%d recorded): add one, or fix its match", filepath.Base(path), len(rec.Renders))
}

func matches(inputs string, m map[string]string) bool {
	for p, want := range m {
		data, err := os.ReadFile(filepath.Join(inputs, filepath.FromSlash(p)))
		if err != nil || (want != "" && strings.TrimRight(string(data), "\r\n") != strings.TrimRight(want, "\r\n")) {
			return false
		}
	}
	return true
}

// clearDir removes everything in dir, keeping dir.
func clearDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// ContractText is a contract as Markdown: its title, preamble and
// sections as written.
func ContractText(c *forme.Contract) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\nkind: %s\n---\n\n", c.Name, c.Kind)
	if c.Title != "" {
		fmt.Fprintf(&b, "# %s\n\n", c.Title)
	}
	if c.Preamble != "" {
		b.WriteString(c.Preamble + "\n\n")
	}
	for _, s := range c.Sections {
		h := s.Heading
		if s.Value != "" && !strings.Contains(h, ":") {
			h += ": " + s.Value
		}
		fmt.Fprintf(&b, "### %s\n\n", h)
		if s.Body != "" {
			b.WriteString(s.Body + "\n\n")
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}
