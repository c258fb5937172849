// Package ingest is the wiki pipeline: `prose ingest` turns sources into
// pages and `prose enrich` improves pages already there, with any model —
// the offline engine by default.
//
// An ingest reads each source (package ingest/source), asks the model for
// a plan with the analysis prompt, lets it write pages with the wiki tools
// in an agent loop (generation), then keeps the books: every page written
// records the source it came from, folders get descriptions where they
// have none, the source's redacted bytes and the review queue are stored,
// and everything lands as one wiki receipt — one commit — naming the
// sources and pages. A source whose memo key (its id, the model, the
// options, the prompt version) was seen before is not sent to any model;
// a run with nothing new records a skipped receipt and commits nothing.
//
// Every write happens inside one wiki.Tx: a failure at any step discards
// it, so the branch, index, working tree and search index stay exactly as
// they were, and a failed receipt on the ledger says why.
//
// The package never talks to a provider directly (package model does),
// never writes outside the vault, and never writes a page through anything
// but the wiki's Tx.
package ingest
