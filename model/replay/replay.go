package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// Cut, when set, says how the file breaks off where a crash while
	// recording tore its last write; Exchanges are the whole ones before.
	// It is not part of the file.
	Cut string `json:"-"`
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
	model.Register("replay", func(name string, cfg model.Config) (model.Model, error) {
		p, err := Open(name)
		if err == nil && p.file.Cut != "" && cfg.Notice != nil {
			cfg.Notice(fmt.Sprintf("recording %s is cut short: %s", name, p.file.Cut))
		}
		return p, err
	})
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

// Parse decodes a recording; name is used in errors. A recording cut
// short inside its exchanges — what a crash in the middle of recording
// leaves, see NewRecorder — is read up to its last whole exchange, and
// File.Cut says where and why it ends.
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
		g, ok := salvage(data)
		if !ok {
			return nil, &model.Error{Op: "open replay", Provider: "replay", Kind: model.KindConfig, Message: fmt.Sprintf("%s is not a prose recording: %v", name, err), Hint: "record one with --record FILE"}
		}
		f = *g
	}
	if f.Format > FormatVersion {
		return nil, &model.Error{Op: "open replay", Provider: "replay", Kind: model.KindConfig, Message: fmt.Sprintf("%s has recording format %d; this prose reads %d", name, f.Format, FormatVersion), Hint: "upgrade prose"}
	}
	return &f, nil
}

// salvage reads a recording that a torn write cut short: its head whole
// (the Recorder writes it once, with the first exchange, durably), then
// exchanges up to the first that does not decode because the text ends
// or turns to bytes that are not JSON (the unwritten part of a torn
// write, zeros where the file grew before its data landed) — never one
// that is JSON of another shape, which is a different file, not a torn
// one. It also takes a whole recording followed by other bytes (the part
// of a torn write that landed after an old trailer that stayed).
func salvage(data []byte) (*File, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	f := File{Exchanges: []Exchange{}}
	for {
		key, err := dec.Token()
		if err != nil {
			return nil, false
		}
		if key == "exchanges" {
			break
		}
		var into any
		switch key {
		case "prose_recording":
			into = &f.Format
		case "model":
			into = &f.Model
		default:
			return nil, false
		}
		if dec.Decode(into) != nil {
			return nil, false
		}
	}
	if f.Format == 0 {
		return nil, false // the head, written whole, names the format first
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, false
	}
	// whole is the offset just after the last whole exchange (or the "[").
	whole := dec.InputOffset()
	cut := func(how string) (*File, bool) {
		f.Cut = fmt.Sprintf("%s, as a crash while recording leaves it; the %d exchanges up to byte %d are whole", how, len(f.Exchanges), whole)
		return &f, true
	}
	for dec.More() {
		var ex Exchange
		if err := dec.Decode(&ex); err != nil {
			if !torn(err) {
				return nil, false
			}
			return cut(fmt.Sprintf("the file breaks off inside exchange %d (%v)", len(f.Exchanges)+1, err))
		}
		f.Exchanges = append(f.Exchanges, ex)
		whole = dec.InputOffset()
	}
	for _, want := range []json.Delim{']', '}'} {
		if t, err := dec.Token(); err != nil || t != want {
			if err == nil || !torn(err) {
				return nil, false
			}
			return cut(fmt.Sprintf("the file breaks off in the trailer after the last exchange (%v)", err))
		}
	}
	return cut(fmt.Sprintf("other bytes follow the end of the recording at byte %d", dec.InputOffset()))
}

// torn says whether a decoding error is one a torn write makes: the text
// ends, or is not JSON.
func torn(err error) bool {
	var syntax *json.SyntaxError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &syntax)
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

// RecordedModel is the spec of the model the recording's answers came
// from ("offline", "openai:NAME"): a pipeline replaying it builds the
// prompts it built for that model (the same prompt budget).
func (p *Player) RecordedModel() string { return p.file.Model }

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
			Message: fmt.Sprintf("request %d has no record: the recording holds %d exchanges%s", served+1, len(p.file.Exchanges), p.cut()), Hint: hint}
	}
	// The difference is shown against the unserved exchange most like
	// the request (the longest common start): with sources worked in
	// parallel, the first unserved one is often another source's.
	best, bestLen := first, -1
	for i := range p.file.Exchanges {
		if p.used[i] {
			continue
		}
		key := exact
		if p.file.Exchanges[i].Request.Format == nil {
			key = plain
		}
		if n := commonPrefix(string(p.keys[i]), string(key)); n > bestLen {
			best, bestLen = i, n
		}
	}
	first = best
	ptr, rec, got, _ := FirstDifference(p.file.Exchanges[first].Request, lenient(p.file.Exchanges[first].Request, req))
	return model.Response{}, &model.Error{Op: op, Provider: "replay", Kind: model.KindReplay,
		Message: fmt.Sprintf("request %d differs from its record at %s: recorded %s, got %s%s", served+1, ptr, rec, got, p.cut()), Hint: hint}
}

// cut is what an error says of a recording cut short.
func (p *Player) cut() string {
	if p.file.Cut == "" {
		return ""
	}
	return "; it is cut short: " + p.file.Cut
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

	mu sync.Mutex
	// out is the recording, open for writing once its first exchange is on
	// disk; end is where its trailer starts, where the next exchange goes.
	out *os.File
	end int64
	// count is the number of exchanges recorded so far; pending holds, with
	// their separators, those not on disk yet because a write failed (they
	// go with the next exchange, so a passing failure loses nothing).
	count   int
	pending []byte
	closed  bool
}

// NewRecorder wraps m so every exchange is written to path. The file is
// created whole and durably with the first exchange (replacing whatever
// was at path); each later exchange is written once, over the trailer
// that closes the exchanges array and followed by a new one, then
// fsynced: recording costs the bytes recorded, not the file's size per
// exchange. Once Call returns, the file on disk is the complete recording
// of every exchange so far; a crash in the middle of a write leaves a
// file Load reads as the recording up to the last whole exchange.
func NewRecorder(m model.Model, path string) *Recorder {
	return &Recorder{inner: m, path: path}
}

// Name is the wrapped model's name.
func (r *Recorder) Name() string { return r.inner.Name() }

// Recording is the path of the file the exchanges are written to. A
// caller that works differently for a model that makes no call (the
// offline engine) works as for any other model when it is recorded, so
// the recording replays.
func (r *Recorder) Recording() string { return r.path }

// The layout Marshal gives a recording, which the Recorder writes piece by
// piece: a head ending in the exchanges array's "[", each exchange on a
// new line indented two levels and separated from the one before by a
// comma, and a trailer closing the array and the document.
const (
	exchangeIndent = "    "
	trailer        = "\n  ]\n}\n"
	emptyTrailer   = "]\n}\n" // the trailer of a recording with no exchange
)

// head is the start of a recording of model up to its exchanges' "[", cut
// from Marshal's own output so the two cannot drift apart.
func head(modelName string) ([]byte, error) {
	data, err := Marshal(&File{Format: FormatVersion, Model: modelName, Exchanges: []Exchange{}})
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(data, []byte(emptyTrailer)) {
		return nil, fmt.Errorf("a recording with no exchange does not end in %q", emptyTrailer)
	}
	return data[:len(data)-len(emptyTrailer)], nil
}

// encodeExchange is ex as Marshal writes it inside a recording, without
// the separator before it.
func encodeExchange(ex Exchange) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent(exchangeIndent, "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ex); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Call forwards req and records the exchange when it succeeds.
func (r *Recorder) Call(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := r.inner.Call(ctx, req)
	if err != nil {
		return resp, err
	}
	// Encoded here, outside the lock, so parallel conversations encode in
	// parallel; only the write is serialised.
	ex, err := encodeExchange(Exchange{Request: req, Response: recorded(resp)})
	if err != nil {
		return resp, &model.Error{Op: "record " + r.path, Kind: model.KindConfig, Message: "the exchange cannot be encoded as JSON: " + err.Error(), Hint: "a tool call's arguments or a schema is not valid JSON"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.write(ex); err != nil {
		return resp, &model.Error{Op: "record " + r.path, Kind: model.KindConfig, Message: err.Error(), Hint: "check that the recording's directory exists and is writable; the exchanges not written yet are written with the next one"}
	}
	return resp, nil
}

// write appends one encoded exchange, with every pending one before it,
// and makes the file durable. A write that fails leaves them pending and
// r.end where it was: the next write starts at the same offset and is
// longer than the failed one, so it covers whatever part of it landed.
func (r *Recorder) write(ex []byte) error {
	if r.closed {
		return fmt.Errorf("the recorder is closed")
	}
	sep := ",\n" + exchangeIndent
	if r.count == 0 {
		sep = "\n" + exchangeIndent
	}
	r.pending = append(append(r.pending, sep...), ex...)
	r.count++
	n := len(r.pending)
	chunk := append(r.pending, trailer...)
	if r.out == nil {
		// The first write makes the whole file, durably: a crash leaves
		// what was at the path before or the new recording.
		h, err := head(r.inner.Name())
		if err != nil {
			return err
		}
		if err := durable.WriteFile(r.path, append(h, chunk...), 0o644); err != nil {
			return err
		}
		out, err := os.OpenFile(r.path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		r.out, r.end = out, int64(len(h))
	} else {
		// One write over the old trailer, then fsync. A crash before the
		// fsync completes can leave any part of the chunk on disk (pages
		// are written back in no set order, the file may grow before its
		// data lands), so the file can end inside the new exchange or its
		// trailer, hold zeros there, or keep the old trailer with part of
		// the new exchange after it. Ordering the writes would not make
		// that parse strictly: writing the exchange after the old trailer
		// first, fsyncing, then the few bytes that replace the trailer,
		// costs a second fsync per exchange and still leaves, between the
		// two, a recording with bytes after its end. So Parse reads every
		// such file as the recording up to its last whole exchange and
		// says so (salvage). What it relies on holds here: the head and
		// every exchange before r.end are never written again.
		if err := durable.Inject(durable.StepWrite, r.path); err != nil {
			return err
		}
		if _, err := r.out.WriteAt(chunk, r.end); err != nil {
			return err
		}
		if err := durable.Inject(durable.StepFsync, r.path); err != nil {
			return err
		}
		if err := r.out.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", r.path, err)
		}
	}
	r.end += int64(n)
	r.pending = r.pending[:0]
	return nil
}

// Close closes the recording's file; every exchange recorded is already
// on disk. A Call after Close fails. A Recorder never closed keeps its
// file open until the process exits, which loses nothing.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.out == nil {
		return nil
	}
	err := r.out.Close()
	r.out = nil
	return err
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
