package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/model"
)

// FormatVersion is the recording format this build writes and reads.
const FormatVersion = 1

// File is a recording.
type File struct {
	Format    int        `json:"prose_recording"`
	Model     string     `json:"model"` // the model that answered
	Exchanges []Exchange `json:"exchanges"`
}

// Exchange is one request and the answer it got.
type Exchange struct {
	Request  model.Request `json:"request"`
	Response Response      `json:"response"`
}

// Response is a model.Response as recorded: tool-call arguments are kept
// as the exact text the model sent, so an indented file replays them byte
// for byte.
type Response struct {
	Text       string           `json:"text,omitempty"`
	ToolCalls  []ToolCall       `json:"tool_calls,omitempty"`
	Usage      model.Usage      `json:"usage"`
	StopReason model.StopReason `json:"stop_reason"`
}

// ToolCall is a model.ToolCall with its arguments as text.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func recorded(r model.Response) Response {
	out := Response{Text: r.Text, Usage: r.Usage, StopReason: r.StopReason}
	for _, c := range r.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)})
	}
	return out
}

// Model returns the response as the model gave it.
func (r Response) Model() model.Response {
	out := model.Response{Text: r.Text, Usage: r.Usage, StopReason: r.StopReason}
	for _, c := range r.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: c.ID, Name: c.Name, Arguments: []byte(c.Arguments)})
	}
	return out
}

func init() {
	model.Register("replay", func(name string, cfg model.Config) (model.Model, error) { return Open(name) })
	model.RegisterRecorder(func(m model.Model, path string) (model.Model, error) { return NewRecorder(m, path), nil })
}

// Load reads the recording at path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &model.Error{Op: "open replay", Provider: "replay", Kind: model.KindConfig, Message: err.Error(), Hint: "record one with --record FILE"}
	}
	return Parse(path, data)
}

// Parse decodes a recording; name is used in errors.
func Parse(name string, data []byte) (*File, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&f)
	if err == nil && f.Format == 0 {
		err = fmt.Errorf("no prose_recording format")
	}
	if err == nil && dec.More() {
		err = fmt.Errorf("data after the recording")
	}
	if err != nil {
		return nil, &model.Error{Op: "open replay", Provider: "replay", Kind: model.KindConfig, Message: fmt.Sprintf("%s is not a prose recording: %v", name, err), Hint: "record one with --record FILE"}
	}
	if f.Format > FormatVersion {
		return nil, &model.Error{Op: "open replay", Provider: "replay", Kind: model.KindConfig, Message: fmt.Sprintf("%s has recording format %d; this prose reads %d", name, f.Format, FormatVersion), Hint: "upgrade prose"}
	}
	return &f, nil
}

// Player answers requests from a recording. A request is served by the
// first exchange not served yet whose request equals it, so a recording
// of sources worked in parallel (exchanges in any order) replays at any
// --jobs; one that matches none is reported against the first exchange
// not served yet.
type Player struct {
	path string
	file *File
	mu   sync.Mutex
	used []bool
	left int
	// keys are the exchanges' requests as JSON, made when first needed.
	keys [][]byte
}

// Open loads the recording at path.
func Open(path string) (*Player, error) {
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	return &Player{path: path, file: f, used: make([]bool, len(f.Exchanges)), left: len(f.Exchanges)}, nil
}

// Name returns "replay:PATH".
func (p *Player) Name() string { return "replay:" + p.path }

// Remaining is the number of exchanges not served yet.
func (p *Player) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.left
}

// Call serves the first exchange not served yet whose request matches req.
// A recording made before requests asked for a structured answer (its
// requests have no format) is matched with req's format left out.
func (p *Player) Call(ctx context.Context, req model.Request) (model.Response, error) {
	if err := ctx.Err(); err != nil {
		return model.Response{}, &model.Error{Op: "call " + p.Name(), Provider: "replay", Kind: model.KindCanceled, Message: "canceled", Err: err}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	op := "call " + p.Name()
	hint := "the inputs, prompts or tools changed since the recording was made; re-make it (see docs/models.md)"
	if p.keys == nil {
		p.keys = make([][]byte, len(p.file.Exchanges))
		for i, ex := range p.file.Exchanges {
			p.keys[i], _ = json.Marshal(ex.Request)
		}
	}
	exact, _ := json.Marshal(req)
	plain, _ := json.Marshal(lenient(model.Request{}, req))
	first := -1
	for i, ex := range p.file.Exchanges {
		if p.used[i] {
			continue
		}
		if first < 0 {
			first = i
		}
		key := exact
		if ex.Request.Format == nil {
			key = plain
		}
		if bytes.Equal(p.keys[i], key) || (len(p.keys[i]) == len(key) && matches(ex.Request, req)) {
			p.used[i] = true
			p.left--
			return ex.Response.Model(), nil
		}
	}
	served := len(p.file.Exchanges) - p.left
	if first < 0 {
		return model.Response{}, &model.Error{Op: op, Provider: "replay", Kind: model.KindReplay,
			Message: fmt.Sprintf("request %d has no record: the recording holds %d exchanges", served+1, len(p.file.Exchanges)), Hint: hint}
	}
	ptr, rec, got, _ := FirstDifference(p.file.Exchanges[first].Request, lenient(p.file.Exchanges[first].Request, req))
	return model.Response{}, &model.Error{Op: op, Provider: "replay", Kind: model.KindReplay,
		Message: fmt.Sprintf("request %d differs from its record at %s: recorded %s, got %s", served+1, ptr, rec, got), Hint: hint}
}

func matches(recorded, req model.Request) bool {
	_, _, _, same := FirstDifference(recorded, lenient(recorded, req))
	return same
}

// lenient is req as compared with recorded: without its answer format
// when recorded has none (a recording older than structured answers).
func lenient(recorded, req model.Request) model.Request {
	if recorded.Format == nil {
		req.Format = nil
	}
	return req
}

// Recorder passes calls to a model and saves each successful exchange.
type Recorder struct {
	inner model.Model
	path  string
	mu    sync.Mutex
	file  File
}

// NewRecorder wraps m so every exchange is written to path, the whole file
// replaced durably after each one (a crash leaves the last complete
// recording).
func NewRecorder(m model.Model, path string) *Recorder {
	return &Recorder{inner: m, path: path, file: File{Format: FormatVersion, Model: m.Name(), Exchanges: []Exchange{}}}
}

// Name is the wrapped model's name.
func (r *Recorder) Name() string { return r.inner.Name() }

// Recording is the path of the file the exchanges are written to. A
// caller that works differently for a model that makes no call (the
// offline engine) works as for any other model when it is recorded, so
// the recording replays.
func (r *Recorder) Recording() string { return r.path }

// Call forwards req and records the exchange when it succeeds.
func (r *Recorder) Call(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := r.inner.Call(ctx, req)
	if err != nil {
		return resp, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.file.Exchanges = append(r.file.Exchanges, Exchange{Request: clone(req), Response: recorded(resp)})
	data, merr := Marshal(&r.file)
	if merr == nil {
		merr = durable.WriteFile(r.path, data, 0o644)
	}
	if merr != nil {
		return resp, &model.Error{Op: "record " + r.path, Kind: model.KindConfig, Message: merr.Error(), Hint: "check that the recording's directory exists and is writable"}
	}
	return resp, nil
}

// Marshal encodes a recording as indented JSON, one stable form so
// recordings diff well in review.
func Marshal(f *File) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// clone copies req through JSON, the form it is compared in.
func clone(req model.Request) model.Request {
	data, _ := json.Marshal(req)
	var out model.Request
	_ = json.Unmarshal(data, &out)
	return out
}

// FirstDifference compares two requests as JSON documents and returns the
// JSON pointer of the first difference (in key order) and both values.
func FirstDifference(recorded, got model.Request) (ptr, rec, cur string, same bool) {
	a, b := asJSON(recorded), asJSON(got)
	p, x, y, diff := walk(a, b, "")
	if !diff {
		return "", "", "", true
	}
	if p == "" {
		p = "/"
	}
	if xs, ok := x.(string); ok {
		if ys, ok := y.(string); ok {
			return p, excerpt(xs, ys), excerpt(ys, xs) + fmt.Sprintf(" (first difference at character %d)", commonPrefix(xs, ys)+1), false
		}
	}
	return p, show(x), show(y), false
}

func asJSON(v any) any {
	data, _ := json.Marshal(v)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	_ = dec.Decode(&out)
	return out
}

type missing struct{}

func walk(a, b any, ptr string) (string, any, any, bool) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return ptr, a, b, true
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			va, oka := x[k]
			vb, okb := y[k]
			p := ptr + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			if !oka {
				return p, missing{}, vb, true
			}
			if !okb {
				return p, va, missing{}, true
			}
			if q, u, v, d := walk(va, vb, p); d {
				return q, u, v, true
			}
		}
		return "", nil, nil, false
	case []any:
		y, ok := b.([]any)
		if !ok {
			return ptr, a, b, true
		}
		for i := 0; i < max(len(x), len(y)); i++ {
			p := ptr + "/" + strconv.Itoa(i)
			if i >= len(x) {
				return p, missing{}, y[i], true
			}
			if i >= len(y) {
				return p, x[i], missing{}, true
			}
			if q, u, v, d := walk(x[i], y[i], p); d {
				return q, u, v, true
			}
		}
		return "", nil, nil, false
	default:
		if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
			return ptr, a, b, true
		}
		return "", nil, nil, false
	}
}

func show(v any) string {
	if _, ok := v.(missing); ok {
		return "nothing"
	}
	data, _ := json.Marshal(v)
	s := string(data)
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func commonPrefix(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	i := 0
	for i < len(ra) && i < len(rb) && ra[i] == rb[i] {
		i++
	}
	return i
}

// excerpt shows s around its first difference from other.
func excerpt(s, other string) string {
	r := []rune(s)
	i := commonPrefix(s, other)
	start, end := max(i-30, 0), min(i+50, len(r))
	out := strconv.Quote(string(r[start:end]))
	if start > 0 {
		out = "…" + out
	}
	if end < len(r) {
		out += "…"
	}
	return out
}
