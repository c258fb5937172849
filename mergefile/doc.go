// Package mergefile merges one file of a vault three ways — a base and
// the two sides that changed it — by the rules prose knows for that file
// (docs/vault-format.md, "Merges"):
//
//   - a wiki page (published/wiki/…/*.html holding a prose meta block)
//     merges slot by slot; prose's own meta by rule (generated per slot,
//     sources as a union, created the earlier and updated the later date,
//     source_mark kept only where the sides agree); the shell is not
//     merged, it is rendered again. Only a slot or a meta key a person or
//     a model set, changed differently on both sides, is a conflict;
//   - review/queue.json as a union of items by id, an item resolved on
//     either side resolved;
//   - sources/index.json and sources/pages/*.tsv as a union of records.
//
// Any other path is not handled (Result.Handled false): the caller merges
// it as it merges any file. The package reads bytes and returns bytes; it
// never touches a vault, a working tree or git, so the same rules serve
// prose pull and git's merge driver.
package mergefile
