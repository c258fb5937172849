package model_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/fakeserver"
)

func limited(n int) []fakeserver.Reply {
	var out []fakeserver.Reply
	for i := 0; i < n; i++ {
		out = append(out, fakeserver.Reply{Status: 429, Header: map[string]string{"Retry-After": "1"}})
	}
	return append(out, ok("fine"))
}

// TestRateLimitIsWaitedOut: 429s do not use up the retries (five in a
// row, more than the three retries, still succeed) until the total wait
// passes the cap, which fails the call as rate limited.
func TestRateLimitIsWaitedOut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cap   time.Duration
		fails bool
	}{{"under the cap", 0, false}, {"over the cap", 3 * time.Second, true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeserver.New(t, fakeserver.Chat, limited(5)...)
			var sl sleeps
			m, err := model.Open("openai-chat:x", model.Config{Getenv: srv.Env(), Sleep: sl.sleep, RateLimitWait: tc.cap})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("hi")}})
			if tc.fails {
				if model.KindOf(err) != model.KindRateLimit {
					t.Fatalf("err = %v, want rate_limit", err)
				}
				if len(sl.d) != 3 {
					t.Errorf("waits %v, want three of 1s (the cap is 3s)", sl.d)
				}
				return
			}
			if err != nil || resp.Text != "fine" || len(sl.d) != 5 {
				t.Fatalf("%+v %v, waits %v", resp, err, sl.d)
			}
		})
	}
}

// TestRateLimitHoldsThePool: while one call waits out a 429, another
// call of the same model waits too before it sends anything.
func TestRateLimitHoldsThePool(t *testing.T) {
	var second sync.WaitGroup
	second.Add(1)
	srv := fakeserver.New(t, fakeserver.Chat, fakeserver.Reply{Status: 429, Header: map[string]string{"Retry-After": "30"}}, ok("fine"), ok("fine"))
	var mu sync.Mutex
	var waits []string
	var m model.Model
	started := false
	sleep := func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		first := !started
		started = true
		waits = append(waits, d.Round(10*time.Second).String())
		mu.Unlock()
		if first {
			// The first call was told to wait: a second call starts now.
			go func() {
				defer second.Done()
				m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("second")}})
			}()
			second.Wait()
		}
		return nil
	}
	var err error
	m, err = model.Open("openai-chat:x", model.Config{Getenv: srv.Env(), Sleep: sleep})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("first")}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(waits) != 2 || waits[1] != "30s" {
		t.Errorf("waits %v: the second call did not wait for the first one's rate limit", waits)
	}
}
