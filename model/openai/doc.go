// Package openai provides the OpenAI model providers: "openai" speaks the
// Responses API and "openai-chat" the Chat Completions API, which local
// OpenAI-compatible servers (Ollama, llama.cpp, vLLM) also serve. Both use
// the official SDK (github.com/openai/openai-go/v3) to build and send
// requests, with its retries turned off: model/internal/transport retries.
//
// Settings: OPENAI_API_KEY; OPENAI_BASE_URL, which includes /v1 as the SDK
// reads it (http://127.0.0.1:11434/v1 for Ollama). Fixed-field tools are
// sent with strict true and their strict form; tools holding an open
// mapping with an explicit strict false and the mapping left open.
//
// The package must never write the key anywhere: errors quote the
// provider's message with keys redacted.
package openai
