package model_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/fakeserver"
)

// TestProviderAnswerIsBounded: an answer larger than the transport's bound
// (8 MiB) is refused while it is read, once (not retried), with an error
// saying what came back, for every provider.
func TestProviderAnswerIsBounded(t *testing.T) {
	huge := `{"id":"x","choices":[{"message":{"role":"assistant","content":"` + strings.Repeat("a", 9<<20) + `"}}]}`
	for _, p := range providers {
		t.Run(p.api, func(t *testing.T) {
			srv := fakeserver.New(t, p.api, fakeserver.Reply{Status: 200, Body: huge}, ok("never asked"))
			m, err := model.Open(p.spec, model.Config{Getenv: srv.Env()})
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("hi")}})
			if model.KindOf(err) != model.KindResponse || !strings.Contains(err.Error(), "larger than 8 MiB") {
				t.Fatalf("err = %v", err)
			}
			if n := len(srv.Bodies()); n != 1 {
				t.Fatalf("%d requests; a too-large answer is not retried", n)
			}
		})
	}
}
