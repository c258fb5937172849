// Package fakeserver is a scripted loopback stand-in for the provider APIs
// (OpenAI Responses, Chat Completions, Anthropic Messages), for tests and
// for re-making recordings: it answers each request with the next scripted
// reply in the API's own wire format and keeps every request body it saw.
//
// It is test support: it must never be used to answer a real user's call.
package fakeserver
