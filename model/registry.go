package model

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Config is what a provider needs to open a model. The zero value reads
// the process environment and uses default limits.
type Config struct {
	// Getenv reads settings and keys (OPENAI_API_KEY, OPENAI_BASE_URL,
	// ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL); nil means os.Getenv.
	Getenv func(string) string
	// HTTPClient carries provider requests; nil means a fresh client.
	HTTPClient *http.Client
	// Timeout bounds one attempt of one call; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how often a call is retried after a 429, a 5xx or a
	// dropped connection; 0 means DefaultMaxRetries, negative means none.
	MaxRetries int
	// Sleep waits between retries; nil waits on a timer, honouring ctx.
	// Tests replace it so no test sleeps.
	Sleep func(ctx context.Context, d time.Duration) error
	// RateLimitWait caps the time one call waits in total on 429s (every
	// call of the model waits while one is told to); 0 means
	// DefaultRateLimitWait.
	RateLimitWait time.Duration
	// Record, when set, names a file every exchange is appended to
	// (model/replay); `--model replay:FILE` serves it back.
	Record string
	// Notice, when set, is told once of a provider falling back from
	// what prose asked for (a server refusing structured output); nil
	// says nothing.
	Notice func(msg string)
}

// Defaults for Config.
const (
	DefaultTimeout    = 10 * time.Minute
	DefaultMaxRetries = 3
	// DefaultRateLimitWait is the default of Config.RateLimitWait.
	DefaultRateLimitWait = 10 * time.Minute
)

// Env returns the value of key from c.Getenv or the process environment.
func (c Config) Env(key string) string {
	if c.Getenv != nil {
		return c.Getenv(key)
	}
	return os.Getenv(key)
}

// Opener opens the model NAME of one provider.
type Opener func(name string, cfg Config) (Model, error)

var (
	registryMu sync.RWMutex
	providers  = map[string]Opener{}
	recorder   func(m Model, path string) (Model, error)
)

// Register makes a provider available to Open under name. It panics if the
// name is registered twice: registration happens in init functions.
func Register(name string, open Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := providers[name]; dup {
		panic("model: provider " + name + " registered twice")
	}
	providers[name] = open
}

// RegisterRecorder installs the function that wraps a model so each
// exchange is recorded (model/replay does, in its init).
func RegisterRecorder(wrap func(m Model, path string) (Model, error)) {
	registryMu.Lock()
	defer registryMu.Unlock()
	recorder = wrap
}

// Providers lists the registered provider names, sorted.
func Providers() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(providers))
	for n := range providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Offline is the provider name of the built-in engine that needs no network.
const Offline = "offline"

// ParseSpec splits "PROVIDER:NAME" (or a bare "offline") into its parts.
func ParseSpec(spec string) (provider, name string, err error) {
	provider, name, _ = strings.Cut(strings.TrimSpace(spec), ":")
	if provider == "" {
		return "", "", &Error{Op: "open model", Kind: KindConfig, Message: fmt.Sprintf("model %q has no provider", spec), Hint: "write PROVIDER:NAME, e.g. openai:gpt-5, anthropic:claude-sonnet-4-5, openai-chat:llama3.1, replay:FILE or offline"}
	}
	for _, r := range provider {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return "", "", &Error{Op: "open model", Kind: KindConfig, Message: fmt.Sprintf("model %q has an invalid provider name %q", spec, provider), Hint: "write PROVIDER:NAME with a lower-case provider such as openai, openai-chat, anthropic, replay or offline"}
		}
	}
	if name == "" && provider != Offline && !slices.Contains(Providers(), provider) {
		// A bare model name (gpt-4): it needs its provider in front.
		return "", "", &Error{Op: "open model", Kind: KindConfig, Message: fmt.Sprintf("model %q names no provider", spec), Hint: fmt.Sprintf("write PROVIDER:NAME, e.g. openai:%s; the providers are %s", provider, strings.Join(Providers(), ", "))}
	}
	if name == "" && provider != Offline {
		return "", "", &Error{Op: "open model", Kind: KindConfig, Message: fmt.Sprintf("model %q names no model", spec), Hint: fmt.Sprintf("write %s:NAME", provider)}
	}
	return provider, name, nil
}

// Open opens the model a spec names, wrapped in a recorder when
// cfg.Record is set.
func Open(spec string, cfg Config) (Model, error) {
	provider, name, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	registryMu.RLock()
	open, ok := providers[provider]
	wrap := recorder
	registryMu.RUnlock()
	if !ok {
		if provider == Offline {
			return nil, &Error{Op: "open model", Provider: provider, Kind: KindUnavailable, Message: "the built-in offline engine is not available in this build yet", Hint: "pass --model PROVIDER:NAME (openai, openai-chat, anthropic or replay:FILE)"}
		}
		return nil, &Error{Op: "open model", Provider: provider, Kind: KindConfig, Message: fmt.Sprintf("unknown model provider %q", provider), Hint: "known providers: " + strings.Join(Providers(), ", ")}
	}
	m, err := open(name, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Record != "" {
		if wrap == nil {
			return nil, &Error{Op: "open model", Kind: KindUnavailable, Message: "recording is not available in this build"}
		}
		return wrap(m, cfg.Record)
	}
	return m, nil
}
