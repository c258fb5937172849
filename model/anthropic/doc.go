// Package anthropic provides the "anthropic" model provider: the Messages
// API (POST {base}/v1/messages) spoken with net/http and encoding/json,
// no SDK, through model/internal/transport, which retries, times each
// attempt, bounds the answer and turns failures into model errors. Every
// request carries Authorization: Bearer KEY and anthropic-version
// APIVersion.
//
// Settings: ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL without /v1. Fixed-field
// tools carry "strict": true and their strict form; tools holding an open
// mapping carry their ordinary input_schema with no strict flag, the
// mapping left open.
//
// The package must never write the key anywhere.
package anthropic
