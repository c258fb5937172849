// Package transport is the HTTP layer under every network provider: one
// http.RoundTripper that bounds each attempt with a timeout, retries 429,
// 5xx and dropped connections with exponential backoff honouring
// Retry-After, and keeps the last failed answer so the provider can quote
// the provider's own message. It also turns a failure into a model.Error
// with every credential redacted.
//
// It must never log, and never put a request header (where keys travel)
// into an error.
package transport
