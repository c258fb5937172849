package replay_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/prose-store/prose/model"
	_ "github.com/prose-store/prose/model/anthropic"
	"github.com/prose-store/prose/model/fakeserver"
	_ "github.com/prose-store/prose/model/openai"
	"github.com/prose-store/prose/model/replay"
)

var update = flag.Bool("update", false, "re-make testdata/*.recording.json against the loopback fakes")

func loopRequest(calls *[]string) model.Request {
	return model.Request{System: "You keep notes.", Messages: []model.Message{model.UserText("Write the note.")}, Tools: fakeserver.LoopTools(calls)}
}

// TestRecordThenReplay records an agent loop against each fake API, then
// replays it with no server: the same tool calls run and the results are
// identical.
func TestRecordThenReplay(t *testing.T) {
	for _, p := range []struct{ spec, api string }{{"openai:gpt-test", fakeserver.Responses}, {"openai-chat:gpt-test", fakeserver.Chat}, {"anthropic:claude-test", fakeserver.Anthropic}} {
		t.Run(p.api, func(t *testing.T) {
			srv := fakeserver.New(t, p.api, fakeserver.LoopScript()...)
			path := filepath.Join(t.TempDir(), "rec.json")
			live, err := model.Open(p.spec, model.Config{Getenv: srv.Env(), Record: path})
			if err != nil {
				t.Fatal(err)
			}
			var liveCalls []string
			want, err := model.Loop(context.Background(), live, loopRequest(&liveCalls), model.LoopOptions{})
			if err != nil {
				t.Fatal(err)
			}
			srv.Close() // nothing may reach the network from here on
			data, _ := os.ReadFile(path)
			if strings.Contains(string(data), "SECRET") || strings.Contains(string(data), srv.URL) {
				t.Fatal("the recording holds the key or the endpoint")
			}
			player, err := model.Open("replay:"+path, model.Config{})
			if err != nil {
				t.Fatal(err)
			}
			var replayCalls []string
			got, err := model.Loop(context.Background(), player, loopRequest(&replayCalls), model.LoopOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(liveCalls, replayCalls) {
				t.Fatalf("tool calls differ:\nlive   %v\nreplay %v", liveCalls, replayCalls)
			}
			if asJSON(t, want) != asJSON(t, got) {
				t.Fatalf("results differ:\nlive   %s\nreplay %s", asJSON(t, want), asJSON(t, got))
			}
		})
	}
}

func asJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReplayNamesFirstDifference: a changed request fails with the JSON
// pointer of the first difference and both values.
func TestReplayNamesFirstDifference(t *testing.T) {
	path := filepath.Join("testdata", "loop.recording.json")
	cases := []struct {
		name   string
		change func(*model.Request)
		want   []string
	}{
		{"user text", func(r *model.Request) { r.Messages[0].Text = "Write the other note." },
			[]string{"request 1 differs from its record at /messages/0/text", `recorded "Write the note."`, `got "Write the other note."`, "first difference at character 11"}},
		{"system text", func(r *model.Request) { r.System = "You keep lists." }, []string{"at /system"}},
		{"tool schema", func(r *model.Request) { r.Tools[1].Schema = json.RawMessage(`{"type":"object"}`) },
			[]string{"at /tools/1/schema/properties", "got nothing"}},
		{"extra tool", func(r *model.Request) {
			r.Tools = append(r.Tools, model.Tool{Name: "x", Schema: json.RawMessage(`{"type":"object","properties":{}}`)})
		}, []string{"at /tools/2", "recorded nothing"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			player, err := model.Open("replay:"+path, model.Config{})
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			req := loopRequest(&calls)
			c.change(&req)
			_, err = model.Loop(context.Background(), player, req, model.LoopOptions{})
			if model.KindOf(err) != model.KindReplay {
				t.Fatalf("err = %v, want a replay mismatch", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if len(calls) != 0 {
				t.Errorf("tools ran on a mismatched replay: %v", calls)
			}
		})
	}
}

// TestCommittedRecording replays testdata/loop.recording.json with no
// network. Re-make it against the loopback fake with:
//
//	go test ./model/replay -run TestCommittedRecording -update
func TestCommittedRecording(t *testing.T) {
	path := filepath.Join("testdata", "loop.recording.json")
	if *update {
		srv := fakeserver.New(t, fakeserver.Responses, fakeserver.LoopScript()...)
		tmp := filepath.Join(t.TempDir(), "rec.json")
		m, err := model.Open("openai:gpt-test", model.Config{Getenv: srv.Env(), Record: tmp})
		if err != nil {
			t.Fatal(err)
		}
		var calls []string
		if _, err := model.Loop(context.Background(), m, loopRequest(&calls), model.LoopOptions{}); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	player, err := replay.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	res, err := model.Loop(context.Background(), player, loopRequest(&calls), model.LoopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Final.Text != "All done." || len(calls) != 2 || res.ToolErrors != 1 || player.Remaining() != 0 {
		t.Fatalf("replay: %q, calls %v, %d errors, %d left", res.Final.Text, calls, res.ToolErrors, player.Remaining())
	}
	// One more request than recorded is refused.
	if _, err := player.Call(context.Background(), loopRequest(&calls)); err == nil || !strings.Contains(err.Error(), "the recording holds 3 exchanges") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadRefusesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"empty": ``, "array": `[]`, "noformat": `{"exchanges":[]}`, "future": `{"prose_recording":9,"exchanges":[]}`, "extra": `{"prose_recording":1,"exchanges":[],"x":1}`} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		if _, err := replay.Open(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestReplayByContent: a recording's exchanges are served by request,
// whatever order the requests come in (sources worked in parallel), and
// a recording older than answer formats matches a request with one.
func TestReplayByContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.json")
	f := &replay.File{Format: replay.FormatVersion, Model: "openai:x", Exchanges: []replay.Exchange{
		{Request: model.Request{Messages: []model.Message{model.UserText("one")}}, Response: replay.Response{Text: "first"}},
		{Request: model.Request{Messages: []model.Message{model.UserText("two")}}, Response: replay.Response{Text: "second"}},
	}}
	data, err := replay.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, data, 0o644)
	p, err := replay.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	format := &model.Format{Name: "plan", Schema: []byte(`{"type":"object","properties":{}}`)}
	for _, c := range []struct{ ask, want string }{{"two", "second"}, {"one", "first"}} {
		resp, err := p.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText(c.ask)}, Format: format})
		if err != nil || resp.Text != c.want {
			t.Fatalf("%s: %+v %v", c.ask, resp, err)
		}
	}
	if _, err := p.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("one")}}); model.KindOf(err) != model.KindReplay {
		t.Errorf("a request served once was served again: %v", err)
	}
}

// TestReplayShowsTheDifferenceFromTheNearestRecord: a request that matches
// no record is shown against the record most like it (the longest common
// start), not the first one left — with sources worked in parallel, that
// is usually another source's request.
func TestReplayShowsTheDifferenceFromTheNearestRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.json")
	rec := replay.NewRecorder(echo{}, path)
	ctx := context.Background()
	for _, text := range []string{"Plan the source docs/alpha.md: its queue depth.", "Plan the source docs/beta.md: its drain window."} {
		if _, err := rec.Call(ctx, model.Request{System: "You plan.", Messages: []model.Message{model.UserText(text)}}); err != nil {
			t.Fatal(err)
		}
	}
	player, err := replay.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = player.Call(ctx, model.Request{System: "You plan.", Messages: []model.Message{model.UserText("Plan the source docs/beta.md: its drain hour.")}})
	if model.KindOf(err) != model.KindReplay {
		t.Fatalf("err = %v, want a replay mismatch", err)
	}
	if !strings.Contains(err.Error(), "drain window") || strings.Contains(err.Error(), "alpha") {
		t.Errorf("the mismatch is not shown against the nearest record (beta's): %v", err)
	}
}

// echo answers every request with its own text.
type echo struct{}

func (echo) Name() string { return "echo" }
func (echo) Call(_ context.Context, req model.Request) (model.Response, error) {
	return model.Response{Text: req.Messages[0].Text, StopReason: model.StopEnd}, nil
}
