// Package wiki owns the vault's wiki: HTML pages with one meta block and
// named slots (docs/wiki-format.md), the built-in and vault templates that
// render a page's shell, the slot sanitizer, folder indexes, search and
// lint, and the operations people and pipelines write through.
//
// The wiki is the vault's built-in node "wiki": its pages live under
// published/wiki/, and every write goes through a Tx that commits a set of
// page changes to the node as one receipt (vault.WriteNode). A page's
// structured truth is its meta and slot contents, never its rendered shell;
// the package registers that view with the vault, so publish, fsck and diff
// fingerprint pages the same way.
//
// The package never writes outside published/wiki/, never writes a page
// that has no prose meta block (a page it does not own), never writes a
// slot its template does not declare, and never lets a slot keep markup
// that could run code in a reader's browser. It knows nothing of models:
// ingest and enrich drive it through the same calls the CLI uses.
package wiki
