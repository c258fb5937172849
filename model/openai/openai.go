package openai

import (
	"net/http"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/internal/transport"
)

// DefaultBaseURL is the OpenAI endpoint used when OPENAI_BASE_URL is unset.
const DefaultBaseURL = "https://api.openai.com/v1"

func init() {
	model.Register("openai", func(name string, cfg model.Config) (model.Model, error) {
		api, err := endpoint("openai", "/responses", cfg)
		if err != nil {
			return nil, err
		}
		return &Responses{api: api, name: name}, nil
	})
	model.Register("openai-chat", func(name string, cfg model.Config) (model.Model, error) {
		api, err := endpoint("openai-chat", "/chat/completions", cfg)
		if err != nil {
			return nil, err
		}
		return &Chat{api: api, name: name, notice: cfg.Notice}, nil
	})
}

// endpoint configures the API at path under the base URL from cfg alone.
// A key is required for the OpenAI endpoint; a compatible server at
// OPENAI_BASE_URL may need none, and then no Authorization is sent.
// OPENAI_ORG_ID and OPENAI_PROJECT_ID, when set, are sent as
// OpenAI-Organization and OpenAI-Project.
func endpoint(provider, path string, cfg model.Config) (transport.Endpoint, error) {
	op := "open " + provider
	key := cfg.Env("OPENAI_API_KEY")
	base := cfg.Env("OPENAI_BASE_URL")
	if base == "" {
		base = DefaultBaseURL
	}
	base, err := transport.BaseURL(op, provider, "OPENAI_BASE_URL", base)
	if err != nil {
		return transport.Endpoint{}, err
	}
	if key == "" && base == DefaultBaseURL {
		return transport.Endpoint{}, &model.Error{Op: op, Provider: provider, Kind: model.KindConfig,
			Message: "OPENAI_API_KEY is not set",
			Hint:    "export OPENAI_API_KEY, or point OPENAI_BASE_URL at a local OpenAI-compatible server (e.g. http://127.0.0.1:11434/v1)"}
	}
	header := http.Header{}
	if key != "" {
		header.Set("Authorization", "Bearer "+key)
	}
	if org := cfg.Env("OPENAI_ORG_ID"); org != "" {
		header.Set("OpenAI-Organization", org)
	}
	if project := cfg.Env("OPENAI_PROJECT_ID"); project != "" {
		header.Set("OpenAI-Project", project)
	}
	return transport.Endpoint{Provider: provider, URL: base + path, Header: header, Key: key, Client: transport.Client(cfg)}, nil
}
