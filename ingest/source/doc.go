// Package source reads what people hand to `prose ingest` — Markdown,
// plain text, HTML pages, JSON conversation transcripts (arrays or JSON
// Lines), directories of them, or standard input — into a Document: a
// title and an outline of sections whose blocks say what kind of text they
// hold (paragraphs, lists, numbered steps, definitions, tables, code,
// conversation turns) plus the links found.
//
// Secrets are redacted before anything is parsed (receipt.RedactText), so
// the Document, the bytes kept in the vault and every prompt built from it
// are free of them, and Document.Redactions says how many were replaced.
// A Document's ID is the BLAKE3 token of its redacted bytes: the address of
// the copy the vault keeps.
//
// The package never writes anything, never reaches the network and never
// decides what a page should be: it only says what a source contains.
package source
