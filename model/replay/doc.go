// Package replay records model exchanges and serves them back with no
// network: `--record FILE` wraps any model so each successful exchange
// (the provider-neutral request and response) is saved, and
// `--model replay:FILE` answers the same requests, in order, from the
// file. A request that differs from its record fails with the JSON pointer
// of the first difference and both values.
//
// A recording holds requests as prose builds them, before any provider
// adds credentials, so it never contains a key. Requests carry nothing
// machine- or day-specific beyond what a prompt declares (dates come from
// the injectable clock, model.Now), so a recording replays on another
// machine and another day.
//
// The file format is documented in docs/models.md.
package replay
