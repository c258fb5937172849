package replay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/replay"
)

// scribe is a model that answers every request with a tool call and text
// made from it, so each exchange is distinct and about 2 KB once recorded.
type scribe struct{}

func (scribe) Name() string { return "fake:scribe" }

func (scribe) Call(_ context.Context, req model.Request) (model.Response, error) {
	ask := req.Messages[0].Text
	return model.Response{
		Text: "Noted " + ask + " — <done> & filed.",
		ToolCalls: []model.ToolCall{{ID: "call-" + ask, Name: "write_note",
			Arguments: json.RawMessage(`{"path": "notes/` + ask + `.md", "text": "a <b>bold</b> note"}`)}},
		Usage:      model.Usage{Input: int64(len(ask)), CachedInput: 1, Output: 7},
		StopReason: model.StopEnd,
	}, nil
}

var temperature = 0.25

// request i is a conversation with HTML characters, non-ASCII text, a
// tool whose schema has whitespace to compact, and an answer format, so
// an exchange exercises every part of the encoding Marshal chooses.
func request(i int) model.Request {
	return model.Request{
		System: "You keep notes. Answer <briefly> & well; ünïcödé “quotes”.",
		Messages: []model.Message{
			model.UserText("note-" + strconv.Itoa(i)),
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "t1", Name: "read", Arguments: json.RawMessage(`{ "path" : "x" }`)}}},
			{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "t1", Name: "read", Content: strings.Repeat("line of the note\n", 40)}}},
		},
		Tools: []model.Tool{{Name: "write_note", Description: "Write a note.",
			Schema: json.RawMessage(`{"type": "object",
				"properties": {"path": {"type": "string"}, "text": {"type": "string"}, "tags": {"type": "array", "items": {}}},
				"additionalProperties": false}`)}},
		MaxTokens:   1000 + i,
		Temperature: &temperature,
		Format:      &model.Format{Name: "plan", Schema: json.RawMessage(`{"type":"object","properties":{}}`)},
	}
}

// exchange is request i and scribe's answer as a recording holds them.
func exchange(t testing.TB, i int) replay.Exchange {
	resp, _ := scribe{}.Call(context.Background(), request(i))
	ex := replay.Exchange{Request: request(i), Response: replay.Response{Text: resp.Text, Usage: resp.Usage, StopReason: resp.StopReason}}
	for _, c := range resp.ToolCalls {
		ex.Response.ToolCalls = append(ex.Response.ToolCalls, replay.ToolCall{ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)})
	}
	return ex
}

// marshalled is the recording Marshal makes of exchanges 0..n-1.
func marshalled(t testing.TB, n int) []byte {
	f := &replay.File{Format: replay.FormatVersion, Model: scribe{}.Name(), Exchanges: []replay.Exchange{}}
	for i := 0; i < n; i++ {
		f.Exchanges = append(f.Exchanges, exchange(t, i))
	}
	data, err := replay.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func record(t testing.TB, r *replay.Recorder, i int) {
	if _, err := r.Call(context.Background(), request(i)); err != nil {
		t.Fatalf("exchange %d: %v", i, err)
	}
}

// TestRecordingIsMarshal: after every exchange the file is byte for byte
// the recording Marshal makes of the exchanges so far, and it replays.
func TestRecordingIsMarshal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.json")
	r := replay.NewRecorder(scribe{}, path)
	defer r.Close()
	const n = 30
	for i := 0; i < n; i++ {
		record(t, r, i)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := marshalled(t, i+1); !bytes.Equal(got, want) {
			t.Fatalf("after exchange %d the file differs from Marshal's recording at byte %d:\n%s", i, firstDiff(got, want), excerptAt(got, firstDiff(got, want)))
		}
	}
	p, err := replay.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := n - 1; i >= 0; i-- { // any order: a recording is served by content
		resp, err := p.Call(context.Background(), request(i))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("Noted note-%d — <done> & filed.", i); resp.Text != want || string(resp.ToolCalls[0].Arguments) != `{"path": "notes/note-`+strconv.Itoa(i)+`.md", "text": "a <b>bold</b> note"}` {
			t.Fatalf("replayed %d: %q %s", i, resp.Text, resp.ToolCalls[0].Arguments)
		}
	}
	if p.Remaining() != 0 {
		t.Fatalf("%d exchanges left", p.Remaining())
	}
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func excerptAt(b []byte, i int) string {
	return string(b[max(i-80, 0):min(i+80, len(b))])
}

// TestRecordingWritesGrowLinearly: recording N exchanges writes about the
// recording's size in all, not the whole file again per exchange. It
// counts the bytes the process hands to write(2) (wchar in /proc/self/io).
func TestRecordingWritesGrowLinearly(t *testing.T) {
	if _, err := written(); err != nil {
		t.Skipf("cannot count the bytes written: %v", err)
	}
	path := filepath.Join(t.TempDir(), "rec.json")
	r := replay.NewRecorder(scribe{}, path)
	defer r.Close()
	const n = 200
	before, _ := written()
	for i := 0; i < n; i++ {
		record(t, r, i)
	}
	after, _ := written()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if total, size := after-before, info.Size(); total > 3*size {
		t.Fatalf("recording %d exchanges wrote %d bytes for a %d-byte file (%.1f times its size); want at most 3 times", n, total, size, float64(total)/float64(size))
	}
}

// written is the number of bytes this process has passed to write calls.
func written() (int64, error) {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "wchar: "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("/proc/self/io has no wchar")
}

// TestRecordingInParallel: conversations recording at once each get their
// exchange written exactly once, whole, in a file Marshal would write.
func TestRecordingInParallel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.json")
	r := replay.NewRecorder(scribe{}, path)
	defer r.Close()
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * each; i < (w+1)*each; i++ {
				record(t, r, i)
			}
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := replay.Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := replay.Marshal(f); !bytes.Equal(again, data) || f.Cut != "" {
		t.Fatalf("the file is not the recording Marshal writes of its exchanges (cut: %q)", f.Cut)
	}
	var asks []string
	for _, ex := range f.Exchanges {
		asks = append(asks, ex.Request.Messages[0].Text)
	}
	sort.Strings(asks)
	var want []string
	for i := 0; i < workers*each; i++ {
		want = append(want, "note-"+strconv.Itoa(i))
	}
	sort.Strings(want)
	if strings.Join(asks, " ") != strings.Join(want, " ") {
		t.Fatalf("recorded %d exchanges, want each of %d once: %v", len(asks), len(want), asks)
	}
}

// TestTornAppend: a crash in the middle of writing the last exchange can
// leave the file ending anywhere in it or its trailer, or zeros where the
// file grew before its data landed. Load reads every such file as the
// recording of the exchanges before (or of all of them, when only the
// trailer is torn), says it is cut short, and the replay says so when a
// request finds no record.
func TestTornAppend(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rec.json")
	r := replay.NewRecorder(scribe{}, path)
	const n = 4
	for i := 0; i < n-1; i++ {
		record(t, r, i)
	}
	prev, _ := os.ReadFile(path)
	record(t, r, n-1)
	r.Close()
	full, _ := os.ReadFile(path)
	// The last write started where the old trailer did.
	start := len(prev) - len("\n  ]\n}\n")
	if !bytes.Equal(full[:start], prev[:start]) {
		t.Fatal("the last write changed bytes before the old trailer")
	}
	lastEnd := len(full) - len("\n  ]\n}\n") // after the last exchange's closing brace
	torn := filepath.Join(dir, "torn.json")
	recordings := map[int][]byte{n - 1: marshalled(t, n-1), n: marshalled(t, n)}
	check := func(what string, data []byte) {
		t.Helper()
		os.WriteFile(torn, data, 0o644)
		f, err := replay.Load(torn)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		want := n - 1
		if len(data) >= lastEnd && bytes.Equal(data[:lastEnd], full[:lastEnd]) {
			want = n // the last exchange landed whole, only its trailer is torn
		}
		if bytes.Equal(data, full) || bytes.Equal(data, full[:len(full)-1]) {
			if f.Cut != "" { // whole, or missing only the final newline
				t.Fatalf("%s: a whole recording is said to be cut: %s", what, f.Cut)
			}
		} else if !strings.Contains(f.Cut, "as a crash while recording leaves it; the ") {
			t.Fatalf("%s: a torn recording is not said to be cut (Cut %q)", what, f.Cut)
		}
		if len(f.Exchanges) != want {
			t.Fatalf("%s: %d exchanges, want %d (%s)", what, len(f.Exchanges), want, f.Cut)
		}
		again, _ := replay.Marshal(&replay.File{Format: f.Format, Model: f.Model, Exchanges: f.Exchanges})
		if !bytes.Equal(again, recordings[want]) {
			t.Fatalf("%s: the exchanges read differ from those recorded", what)
		}
	}
	// Every offset near where the write starts and where the exchange
	// ends (the separator, the braces, the trailer), every 7th between.
	for cut := start; cut <= len(full); cut++ {
		if cut > start+64 && cut < lastEnd-64 && cut%7 != 0 {
			continue
		}
		check(fmt.Sprintf("cut at byte %d", cut), full[:cut])
		zeros := append(append([]byte{}, full[:cut]...), make([]byte, len(full)-cut)...)
		check(fmt.Sprintf("zeros from byte %d", cut), zeros)
	}
	// The old trailer stayed and a later part of the write landed after it.
	check("old trailer, then the write's end", append(append([]byte{}, prev...), append(make([]byte, 100), full[len(prev)+100:]...)...))

	os.WriteFile(torn, full[:start+200], 0o644)
	p, err := replay.Open(torn)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n-1; i++ {
		if _, err := p.Call(context.Background(), request(i)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = p.Call(context.Background(), request(n-1))
	if model.KindOf(err) != model.KindReplay || !strings.Contains(err.Error(), "the recording holds 3 exchanges; it is cut short: the file breaks off inside exchange 4 (unexpected EOF), as a crash while recording leaves it; the 3 exchanges up to byte "+strconv.Itoa(start)+" are whole") {
		t.Fatalf("err = %v", err)
	}
	var notice string
	if _, err := model.Open("replay:"+torn, model.Config{Notice: func(m string) { notice = m }}); err != nil || !strings.Contains(notice, "is cut short") {
		t.Fatalf("open: %v, notice %q", err, notice)
	}
}

// TestCutFilesThatAreNotTorn: only what a torn write leaves is read as
// cut short; a recording with an exchange of another shape, or whose
// head is incomplete, is still refused.
func TestCutFilesThatAreNotTorn(t *testing.T) {
	good := string(marshalled(t, 2))
	cut := good[:len(good)-40]
	for name, content := range map[string]string{
		// The torn exchange may hold anything; the whole one before may not.
		"wrong type":     strings.Replace(cut, `"max_tokens": 1000`, `"max_tokens": "many"`, 1),
		"unknown field":  strings.Replace(cut, `"max_tokens": 1000`, `"max_tokenz": 1000`, 1),
		"cut in head":    good[:20],
		"no format":      strings.Replace(cut, `"prose_recording": 1,`, ``, 1),
		"future format":  strings.Replace(cut, `"prose_recording": 1`, `"prose_recording": 9`, 1),
		"not an array":   `{"prose_recording": 1, "model": "m", "exchanges": {`,
		"foreign object": `{"prose_recording": 1, "model": "m", "other": [`,
	} {
		if f, err := replay.Parse(name, []byte(content)); err == nil {
			t.Errorf("%s: accepted with %d exchanges (%s)", name, len(f.Exchanges), f.Cut)
		}
	}
}

// TestRecordingWriteFailureLosesNothing: an exchange whose write fails is
// written with the next one.
func TestRecordingWriteFailureLosesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.json")
	r := replay.NewRecorder(scribe{}, path)
	defer r.Close()
	record(t, r, 0)
	for _, step := range []durable.Step{durable.StepWrite, durable.StepFsync} {
		restore := durable.SetFault(durable.FailAt(step, "rec.json"))
		_, err := r.Call(context.Background(), request(1))
		restore()
		if err == nil || !strings.Contains(err.Error(), "written with the next one") {
			t.Fatalf("%s fault: err = %v", step, err)
		}
		record(t, r, 2)
		got, _ := os.ReadFile(path)
		f := &replay.File{Format: replay.FormatVersion, Model: scribe{}.Name(), Exchanges: []replay.Exchange{exchange(t, 0), exchange(t, 1), exchange(t, 2)}}
		want, _ := replay.Marshal(f)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s fault: the file is not the recording of the three exchanges", step)
		}
		// Start again from one exchange for the next step.
		r.Close()
		r = replay.NewRecorder(scribe{}, path)
		record(t, r, 0)
	}
	r.Close()
	if _, err := r.Call(context.Background(), request(3)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("a call after Close: %v", err)
	}
}

// BenchmarkRecord records N exchanges of about 2 KB; ns/exchange stays
// flat as N grows when recording is linear.
func BenchmarkRecord(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			dir := b.TempDir()
			for it := 0; it < b.N; it++ {
				path := filepath.Join(dir, "rec.json")
				os.Remove(path)
				r := replay.NewRecorder(scribe{}, path)
				for i := 0; i < n; i++ {
					record(b, r, i)
				}
				r.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/exchange")
		})
	}
}
