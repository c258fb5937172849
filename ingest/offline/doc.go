// Package offline is the built-in model "offline": a deterministic engine
// that needs no network and no key. It answers the same prompts a
// language model is sent and speaks through the same tool calls, so the
// whole ingest and enrich pipeline — prompts rendered, plans parsed, tool
// calls validated, receipts written — runs on a fresh machine.
//
// It reads what a prompt quotes (the fields plan.Field wraps) by
// structure: numbered steps make a procedure page, definitions make
// concept or entity pages, every source gets a source page, and a source
// with neither gets a note. Summaries come from leading sentences; pages
// link to the pages whose titles they mention; pages go to a folder named
// for the source's topic. Enrichment fills empty slots it can derive and
// adds related links found with the search tool.
//
// The engine never reads files, the clock or the environment: the same
// prompt always gets the same answer.
package offline
