// Package openai provides the OpenAI model providers: "openai" speaks the
// Responses API and "openai-chat" the Chat Completions API, which local
// OpenAI-compatible servers (Ollama, llama.cpp, vLLM) also serve. Both are
// spoken with net/http and encoding/json, no SDK, through
// model/internal/transport, which retries, times each attempt, bounds the
// answer and turns failures into model errors.
//
// Settings: OPENAI_API_KEY (sent as Authorization: Bearer KEY; none is
// sent when it is unset, for a local server); OPENAI_BASE_URL, which
// includes /v1 (http://127.0.0.1:11434/v1 for Ollama); OPENAI_ORG_ID and
// OPENAI_PROJECT_ID, sent as OpenAI-Organization and OpenAI-Project when
// set. Fixed-field tools are sent with strict true and their strict form;
// tools holding an open mapping with an explicit strict false and the
// mapping left open.
//
// The package must never write the key anywhere: errors quote the
// provider's message with keys redacted.
package openai
