// Package anthropic provides the "anthropic" model provider: the Messages
// API through the official SDK (github.com/anthropics/anthropic-sdk-go/v2),
// with its retries turned off (model/internal/transport retries).
//
// Settings: ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL without /v1, as the SDK
// reads it. Fixed-field tools carry "strict": true and their strict form;
// tools holding an open mapping carry their ordinary input_schema with no
// strict flag, the mapping left open.
//
// The package must never write the key anywhere.
package anthropic
