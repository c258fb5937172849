package model_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/prose-store/prose/model"
)

// scripted is a Model that answers from a list, for the example.
type scripted []model.Response

func (s *scripted) Name() string { return "example:scripted" }

func (s *scripted) Call(ctx context.Context, req model.Request) (model.Response, error) {
	r := (*s)[0]
	*s = (*s)[1:]
	return r, nil
}

// The agent loop checks each call against the tool's schema before running
// it; the model sees the error and corrects itself.
func ExampleLoop() {
	m := &scripted{
		{ToolCalls: []model.ToolCall{{ID: "1", Name: "greet", Arguments: json.RawMessage(`{"who": 42}`)}}, StopReason: model.StopToolUse},
		{ToolCalls: []model.ToolCall{{ID: "2", Name: "greet", Arguments: json.RawMessage(`{"who": "Ada"}`)}}, StopReason: model.StopToolUse},
		{Text: "Greeted Ada.", StopReason: model.StopEnd, Usage: model.Usage{Input: 30, Output: 5}},
	}
	greet := model.Tool{
		Name:   "greet",
		Schema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}`),
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			var a struct{ Who string }
			json.Unmarshal(args, &a)
			return "hello " + a.Who, nil
		},
	}
	res, err := model.Loop(context.Background(), m, model.Request{Messages: []model.Message{model.UserText("greet Ada")}, Tools: []model.Tool{greet}}, model.LoopOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Messages[2].ToolResults[0].Content)
	fmt.Println(res.Messages[4].ToolResults[0].Content)
	fmt.Println(res.Final.Text, res.Usage.Input)
	// Output:
	// error: the arguments of greet are invalid: at /who: got number, want string; call greet again with arguments that match its schema
	// hello Ada
	// Greeted Ada. 30
}
