// Package model is the call primitive between prose and a language model.
//
// It owns the provider-neutral types — a Request (system text, messages,
// tools, limits) and a Response (text, tool calls, usage, stop reason) — the
// Model interface every provider implements, the registry that opens a
// model from a `PROVIDER:NAME` spec, and the agent loop (Loop) that calls a
// model, validates each tool call against the tool's canonical schema, runs
// the tool and hands results or readable errors back, up to an iteration
// limit, totalling the usage.
//
// Providers live in sub-packages by variant (model/openai, model/anthropic,
// model/replay) and register themselves; canonical tool schemas and their
// validation live in model/schema.
//
// This package knows nothing of vaults, wikis or pages: a tool is a schema
// plus a function handed to it. It must never read credentials other than
// through Config.Getenv, and never put a key in an error, a log line or a
// recording.
package model
