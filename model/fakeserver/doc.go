// Package fakeserver is a scripted loopback stand-in for the provider APIs
// (OpenAI Responses, Chat Completions, Anthropic Messages), for tests and
// for re-making recordings: it answers each request with the next scripted
// reply in the API's own wire format and keeps every request body it saw,
// from which ToolResults reads what each tool call answered (a test
// scripting a hostile model asserts the model was told of each refusal).
//
// It is test support: it must never be used to answer a real user's call.
package fakeserver
