package openai

import (
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/internal/transport"
)

// DefaultBaseURL is the OpenAI endpoint used when OPENAI_BASE_URL is unset.
const DefaultBaseURL = "https://api.openai.com/v1"

func init() {
	model.Register("openai", func(name string, cfg model.Config) (model.Model, error) {
		c, err := newClient("openai", cfg)
		if err != nil {
			return nil, err
		}
		return &Responses{client: c, name: name}, nil
	})
	model.Register("openai-chat", func(name string, cfg model.Config) (model.Model, error) {
		c, err := newClient("openai-chat", cfg)
		if err != nil {
			return nil, err
		}
		return &Chat{client: c, name: name, notice: cfg.Notice}, nil
	})
}

type client struct {
	provider string
	sdk      openai.Client
	key      string
}

// newClient configures the SDK from cfg alone. A key is required for the
// OpenAI endpoint; a compatible server at OPENAI_BASE_URL may need none.
func newClient(provider string, cfg model.Config) (*client, error) {
	key := cfg.Env("OPENAI_API_KEY")
	base := strings.TrimRight(cfg.Env("OPENAI_BASE_URL"), "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if key == "" && base == DefaultBaseURL {
		return nil, &model.Error{Op: "open " + provider, Provider: provider, Kind: model.KindConfig,
			Message: "OPENAI_API_KEY is not set",
			Hint:    "export OPENAI_API_KEY, or point OPENAI_BASE_URL at a local OpenAI-compatible server (e.g. http://127.0.0.1:11434/v1)"}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base + "/"),
		option.WithAPIKey(key),
		option.WithMaxRetries(0),
		option.WithHTTPClient(transport.Client(cfg)),
	}
	return &client{provider: provider, sdk: openai.NewClient(opts...), key: key}, nil
}

// arguments returns a tool call's arguments as a JSON object; an empty
// string (some servers send one for a call without arguments) is {}.
func arguments(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}
